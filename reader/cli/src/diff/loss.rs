// SPDX-License-Identifier: GPL-2.0-only
//! What the runs of `reader diff` lost, as text and JSON: the headline's
//! clause, one line per ring that lost records (the call ids it concerns),
//! and the report of a comparison refused as inconclusive.

use std::io::{self, Write};

use serde_json::{json, Value};

use antinomie_reader::call::lost_reason;
use antinomie_reader::diff::{RingLoss, RunLoss};

/// The most LOST records' call-id ranges a text line lists (the JSON
/// lists them all).
const RANGES_SHOWN: usize = 8;

/// The headline's clause: `A: 128 records produced = 96 consumed + 32
/// lost (…); B: …`.
pub(super) fn headline(a: &RunLoss, b: &RunLoss) -> String {
    format!("A: {}; B: {}", a.total(), b.total())
}

/// Which runs lost records: `A`, `B` or `A and B`.
fn lossy_runs(a: &RunLoss, b: &RunLoss) -> &'static str {
    match (a.total().is_lossy(), b.total().is_lossy()) {
        (true, true) => "A and B",
        (true, false) => "A",
        _ => "B",
    }
}

/// `ring_full 7, bad_consumer 1`: the reasons with a non-zero count.
fn reasons_text(r: &RingLoss) -> String {
    r.lost_by_reason()
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(i, n)| format!("{} {n}", lost_reason(i)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One ring's loss: how many, which call ids the LOST records name, and
/// where the drops no LOST record reported happened.
fn ring_text(r: &RingLoss) -> String {
    let mut parts = Vec::new();
    if !r.stretches.is_empty() {
        let ranges: Vec<String> = r
            .stretches
            .iter()
            .take(RANGES_SHOWN)
            .map(|s| {
                if s.min_call_id == s.max_call_id {
                    s.min_call_id.to_string()
                } else {
                    format!("{}..={}", s.min_call_id, s.max_call_id)
                }
            })
            .collect();
        let more = r.stretches.len().saturating_sub(RANGES_SHOWN);
        parts.push(format!(
            "{} reported by {} LOST records, call ids {}{}",
            r.reported_total(),
            r.stretches.len(),
            ranges.join(", "),
            if more > 0 {
                format!(" and {more} more ranges")
            } else {
                String::new()
            }
        ));
    }
    match (r.unreported(), r.last) {
        (Some(0), _) => {}
        // No LOST record came after them: the kernel writes one before
        // the ring's next record, so they were dropped after its last.
        (Some(n), Some(last)) => parts.push(format!(
            "{n} not reported by any LOST record, dropped after its last record (call id {}, time_ns {})",
            last.call_id, last.time_ns
        )),
        (Some(n), None) => parts.push(format!(
            "{n} not reported by any LOST record (the ring gave no record)"
        )),
        (None, _) => parts.push("final counters unknown: at least this many".to_owned()),
    }
    format!(
        "{} lost ({}): {}",
        r.lost(),
        reasons_text(r),
        parts.join("; ")
    )
}

/// One line per ring that lost records, run A's first.
pub(super) fn write_rings<W: Write>(a: &RunLoss, b: &RunLoss, out: &mut W) -> io::Result<()> {
    for (name, run) in [("A", a), ("B", b)] {
        for (cpu, r) in run.rings.iter().filter(|(_, r)| r.lost() > 0) {
            writeln!(out, "  {name} cpu {cpu}: {}", ring_text(r))?;
        }
    }
    Ok(())
}

/// The report of a comparison refused because a run lost records: the
/// headline, the rings, and what to do.
pub(super) fn write_inconclusive_text<W: Write>(
    a: &RunLoss,
    b: &RunLoss,
    out: &mut W,
) -> io::Result<()> {
    writeln!(
        out,
        "summary: inconclusive, not compared: {} lost records; {}",
        lossy_runs(a, b),
        headline(a, b)
    )?;
    write_rings(a, b, out)?;
    writeln!(
        out,
        "inconclusive: the calls whose records were lost would show as differences; --allow-loss compares what the runs hold"
    )
}

/// The same as one JSON object.
pub(super) fn write_inconclusive_json<W: Write>(
    a: &RunLoss,
    b: &RunLoss,
    out: &mut W,
) -> io::Result<()> {
    let v = json!({
        "event": "inconclusive",
        "why": format!("{} lost records: not compared without --allow-loss", lossy_runs(a, b)),
        "loss": loss_json(a, b),
    });
    serde_json::to_writer(&mut *out, &v)?;
    out.write_all(b"\n")
}

/// Both runs' loss, for the summary object: `{"a": …, "b": …}`.
pub(super) fn loss_json(a: &RunLoss, b: &RunLoss) -> Value {
    json!({ "a": run_json(a), "b": run_json(b) })
}

fn run_json(run: &RunLoss) -> Value {
    let total = run.total();
    let rings: Vec<Value> = run
        .rings
        .iter()
        .filter(|(_, r)| r.lost() > 0)
        .map(|(cpu, r)| {
            json!({
                "cpu": cpu,
                "lost": r.lost(),
                "reported": r.reported_total(),
                "unreported": r.unreported(),
                "reported_call_ids": r.stretches.iter().map(|s| json!({
                    "records": s.records,
                    "min_call_id": s.min_call_id,
                    "max_call_id": s.max_call_id,
                })).collect::<Vec<_>>(),
                "last_record": r.last.map(|l| json!({"call_id": l.call_id, "time_ns": l.time_ns})),
            })
        })
        .collect();
    json!({
        "headline": total.to_string(),
        "lost": total.lost,
        "lost_is_lower_bound": total.is_partial(),
        "reported": total.reported,
        "consumed": total.consumed,
        "rings": rings,
    })
}
