// SPDX-License-Identifier: GPL-2.0-only
//! The calls of the trace as the model sees them: each unfiltered reader
//! line matched to its workload call and checked field by field, giving
//! the expected line every filter is evaluated over.

use serde_json::{Map, Value};

use crate::compare::{compare_line, Tally};
use crate::expect::{derive, Derived, Exp, State};
use crate::model::Pmus;
use crate::worklog::Works;

use super::checks::Reader;
use super::{Args, Call};

/// The calls of the trace and its LOST lines.
pub(super) struct Trace {
    pub(super) calls: Vec<Call>,
    pub(super) lost_lines: usize,
}

/// The PMU names the model uses: `--pmu`'s, as `reader show` is told, or
/// sysfs's.
fn model_pmus(args: &Args<'_>) -> Result<Pmus, String> {
    if args.pmu.is_empty() {
        return Ok(Pmus::read(args.sysfs));
    }
    let mut named = Vec::new();
    for spec in args.pmu {
        let (name, ty) = spec
            .split_once('=')
            .and_then(|(n, t)| Some((n.to_owned(), t.parse::<u32>().ok()?)))
            .ok_or_else(|| format!("--pmu {spec}: expected NAME=TYPE"))?;
        named.push((ty, name));
    }
    Ok(Pmus(named))
}

/// The line the model expects, with the reader's values for the keys the
/// model only bounds (`compare_line` checked them against the bounds).
fn expected_line(derived: Derived, shown: &Map<String, Value>) -> Map<String, Value> {
    let mut line = Map::new();
    for (key, exp) in derived.keys {
        let expected = match exp {
            Exp::Eq(v) => v,
            Exp::Object(members) => Value::Object(members),
            Exp::Range(..) => shown.get(key).cloned().unwrap_or(Value::Null),
        };
        line.insert(key.to_owned(), expected);
    }
    line
}

/// The model's view of every call of the trace, checked field by field
/// against the unfiltered output (as `compare` does).
pub(super) fn ground_truth(
    args: &Args<'_>,
    reader: &mut Reader<'_>,
    tally: &mut Tally,
) -> Result<Trace, String> {
    let pmus = model_pmus(args)?;
    let Works {
        calls: works,
        by_tag,
    } = Works::read(args.workload)?;
    let mut taken = vec![false; works.len()];
    let (code, stdout, stderr) = reader.show(None)?;
    if code != 0 {
        return Err(format!("reader show exited with {code}: {}", stderr.trim()));
    }
    let mut lines = Vec::new();
    for (i, text) in stdout.lines().enumerate() {
        let parsed: Value =
            serde_json::from_str(text).map_err(|e| format!("reader line {}: {e}", i + 1))?;
        match parsed {
            Value::Object(line) => lines.push(line),
            other => return Err(format!("reader line {}: not an object: {other}", i + 1)),
        }
    }
    // LOST lines first: their call id ranges say which unfinished calls
    // may have lost their EXIT.
    let lost: Vec<(u64, u64)> = lines
        .iter()
        .filter(|l| l.get("event").and_then(Value::as_str) == Some("lost"))
        .map(|l| {
            let id = |k: &str| l.get(k).and_then(Value::as_u64).unwrap_or(0);
            (id("lost.min_call_id"), id("lost.max_call_id"))
        })
        .collect();
    if !args.lossy && !lost.is_empty() {
        return Err(format!(
            "{} LOST records where nothing may be lost (not --lossy)",
            lost.len()
        ));
    }
    let mut calls = Vec::new();
    for (i, shown) in lines.iter().enumerate() {
        let text = |k: &str| shown.get(k).and_then(Value::as_str);
        let state = match (text("event"), text("state")) {
            (Some("lost"), _) => continue,
            (Some("call"), Some("complete")) => State::Complete,
            (Some("call"), Some("unfinished")) if args.lossy => State::Unfinished,
            (Some("call"), Some("entry_lost")) if args.lossy => State::EntryLost,
            _ => {
                return Err(format!(
                    "reader line {}: unexpected here: {}",
                    i + 1,
                    Value::Object(shown.clone())
                ))
            }
        };
        let id = shown
            .get("call_id")
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("reader line {}: no call_id", i + 1))?;
        let index = Works::index_of(&works, &by_tag, shown, |j| !taken[j])
            .filter(|&j| !taken[j])
            .ok_or_else(|| format!("reader line {}: no workload call (left) made it", i + 1))?;
        taken[index] = true;
        let work = works[index].clone();
        let who = format!(
            "call {} #{} thread {} (call {id})",
            work.case, work.seq, work.thread
        );
        let maybe_lost =
            state == State::Unfinished && lost.iter().any(|&(lo, hi)| (lo..=hi).contains(&id));
        // The filter scenarios' workloads run as root: kernel access.
        let derived =
            derive(&work, state, maybe_lost, &pmus, true).map_err(|e| format!("{who}: {e}"))?;
        compare_line(&who, &derived, shown, tally, false);
        let line = expected_line(derived, shown);
        calls.push(Call { id, work, line });
    }
    let left: Vec<&str> = works
        .iter()
        .zip(&taken)
        .filter(|(_, t)| !**t)
        .map(|(w, _)| w.case.as_str())
        .collect();
    if !args.lossy && !left.is_empty() {
        return Err(format!(
            "{} workload calls are not in the trace: {left:?}",
            left.len()
        ));
    }
    Ok(Trace {
        calls,
        lost_lines: lost.len(),
    })
}
