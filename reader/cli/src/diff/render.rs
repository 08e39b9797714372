// SPDX-License-Identifier: GPL-2.0-only
//! `reader diff`'s report as text (one line per differing call, both
//! outcomes side by side, a consequence indented under its thread's
//! cause, then the summary) or as JSON Lines.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};

use serde_json::{json, Map, Value};

use antinomie_reader::diff::{DiffCall, Difference, Kind, Role, Summary};

use super::loss;

/// One side's outcome as text: `3`, `-1 E2BIG (required_size=136, written)`.
fn outcome_text(c: Option<&DiffCall>, duration: bool) -> String {
    let Some(c) = c else {
        return "(no such call)".to_owned();
    };
    let o = &c.outcome;
    let mut s = match (o.ret, &o.errno_name, o.errno) {
        (None, _, _) => "? <unfinished>".to_owned(),
        (Some(_), Some(name), _) => format!("-1 {name}"),
        (Some(_), None, Some(e)) => format!("-1 errno {e}"),
        (Some(r), None, None) => r.to_string(),
    };
    let mut extra = Vec::new();
    if let Some(r) = o.required_size {
        let w = if o.size_written == Some(true) {
            "written"
        } else {
            "not written"
        };
        extra.push(format!("required_size={r}, {w}"));
    }
    if let Some(st) = o.status.as_deref().filter(|s| *s != "complete") {
        match o.fault_offset {
            Some(f) => extra.push(format!("capture {st} at {f}")),
            None => extra.push(format!("capture {st}")),
        }
    }
    if !o.has_entry {
        extra.push(o.state.replace('_', " "));
    }
    if duration {
        if let Some(d) = o.duration_ns {
            extra.push(format!("{d} ns"));
        }
    }
    if !extra.is_empty() {
        let _ = write!(s, " ({})", extra.join(", "));
    }
    s
}

fn side_json(side: Option<&(usize, DiffCall)>, thread: Option<(i64, i64)>) -> Value {
    let Some((index, c)) = side else {
        return Value::Null;
    };
    let o = &c.outcome;
    let mut side = json!({
        "index": index,
        "pid": thread.map(|t| t.0),
        "tid": thread.map(|t| t.1),
        "call_id": c.call_id,
        "time_ns": c.time_ns,
        "args.5": c.word5,
        "state": o.state,
        "ret": o.ret,
        "syscall.errno": o.errno,
        "syscall.errno_name": o.errno_name,
        "syscall.duration_ns": o.duration_ns,
    });
    // The captured pointer's keys, as its syscall's row names them.
    if let Some(k) = c.capture_keys {
        side[k.required_size] = json!(o.required_size);
        side[k.size_written] = json!(o.size_written);
        side[k.status] = json!(o.status);
        side[k.fault_offset] = json!(o.fault_offset);
    }
    side
}

fn thread_label(d: &Difference) -> String {
    match d.thread {
        (Some(a), Some(b)) if a.1 == b.1 => format!("tid {}", a.1),
        (Some(a), Some(b)) => format!("tid {}/{}", a.1, b.1),
        (Some(a), None) => format!("tid {}/-", a.1),
        (None, Some(b)) => format!("tid -/{}", b.1),
        (None, None) => "tid ?".to_owned(),
    }
}

fn kinds_json(kinds: &BTreeMap<Kind, usize>) -> Value {
    let mut m = Map::new();
    for k in Kind::ALL {
        m.insert(
            k.name().to_owned(),
            json!(kinds.get(&k).copied().unwrap_or(0)),
        );
    }
    Value::Object(m)
}

/// One differing call as a line (and B's call under it when the inputs
/// differ); a consequence indented, `then`, under its thread's cause.
///
/// # Errors
/// Only if writing fails.
pub(crate) fn difference_text<W: Write>(
    d: &Difference,
    duration_shown: bool,
    out: &mut W,
) -> io::Result<()> {
    let index = match (&d.a, &d.b) {
        (Some((i, _)), Some((j, _))) if i == j => format!("#{i}"),
        (Some((i, _)), Some((j, _))) => format!("#{i}/#{j}"),
        (Some((i, _)), None) => format!("#{i}/-"),
        (None, Some((j, _))) => format!("-/#{j}"),
        (None, None) => "#?".to_owned(),
    };
    let call = d.a.as_ref().or(d.b.as_ref()).map(|(_, c)| c.text());
    let call = call.as_deref().unwrap_or("");
    let kinds: Vec<&str> = d.kinds.iter().map(|k| k.name()).collect();
    let lead = match d.role {
        Role::Cause => "",
        Role::Consequence { .. } => "  then ",
    };
    writeln!(
        out,
        "{lead}{} {index} {call}: A = {} | B = {} [{}]",
        thread_label(d),
        outcome_text(d.a.as_ref().map(|x| &x.1), duration_shown),
        outcome_text(d.b.as_ref().map(|x| &x.1), duration_shown),
        kinds.join(", "),
    )?;
    if let (Some(_), Some((_, b)), true) = (&d.a, &d.b, d.kinds.contains(&Kind::Input)) {
        writeln!(out, "    B's call: {}", b.text())?;
    }
    Ok(())
}

/// The summary, after the differences.
///
/// # Errors
/// Only if writing fails.
pub(crate) fn summary_text<W: Write>(s: &Summary, out: &mut W) -> io::Result<()> {
    writeln!(
        out,
        "summary: {} calls differ; {} compared (A: {} calls in {} threads, B: {} calls in {} threads; {} threads matched by {}){}",
        s.differing,
        s.compared,
        s.calls.0,
        s.threads.0,
        s.calls.1,
        s.threads.1,
        s.threads.2,
        s.matched_by,
        s.loss
            .as_ref()
            .map_or_else(String::new, |(a, b)| format!("; {}", loss::headline(a, b))),
    )?;
    if let Some((a, b)) = &s.loss {
        loss::write_rings(a, b, out)?;
    }
    writeln!(out, "  {:<17} {}", "causes", s.causes)?;
    writeln!(out, "  {:<17} {}", "consequences", s.consequences)?;
    for k in Kind::ALL {
        if k == Kind::Duration && !s.duration_shown {
            continue;
        }
        writeln!(
            out,
            "  {:<17} {}",
            k.name(),
            s.kinds.get(&k).copied().unwrap_or(0)
        )?;
    }
    writeln!(out, "  {:<17} {}", "threads_only_in_a", s.threads_only.0)?;
    writeln!(out, "  {:<17} {}", "threads_only_in_b", s.threads_only.1)?;
    writeln!(out, "  {:<17} {}", "window_overflows", s.window_overflows)?;
    writeln!(
        out,
        "{}",
        if s.equal() {
            "equal"
        } else {
            "the runs differ"
        }
    )
}

/// One differing call as a JSON object: its role, and for a consequence
/// the indexes of its thread's cause.
///
/// # Errors
/// Only if writing fails.
pub(crate) fn difference_json<W: Write>(d: &Difference, out: &mut W) -> io::Result<()> {
    let kinds: Vec<&str> = d.kinds.iter().map(|k| k.name()).collect();
    let (role, cause) = match d.role {
        Role::Cause => ("cause", Value::Null),
        Role::Consequence { a, b } => ("consequence", json!({ "a": a, "b": b })),
    };
    let input_differs = d.kinds.contains(&Kind::Input);
    let v = json!({
        "event": "difference",
        "kinds": kinds,
        "role": role,
        "cause": cause,
        "input_differs": input_differs,
        "call": d.a.as_ref().or(d.b.as_ref()).map(|(_, c)| c.text()),
        "b_call": d.b.as_ref().filter(|_| input_differs).map(|(_, c)| c.text()),
        "a": side_json(d.a.as_ref(), d.thread.0),
        "b": side_json(d.b.as_ref(), d.thread.1),
    });
    serde_json::to_writer(&mut *out, &v)?;
    out.write_all(b"\n")
}

/// The summary object, after the differences.
///
/// # Errors
/// Only if writing fails.
pub(crate) fn summary_json<W: Write>(s: &Summary, out: &mut W) -> io::Result<()> {
    let v = json!({
        "event": "summary",
        "equal": s.equal(),
        "matched_by": s.matched_by,
        "threads": {
            "a": s.threads.0,
            "b": s.threads.1,
            "matched": s.threads.2,
            "only_in_a": s.threads_only.0,
            "only_in_b": s.threads_only.1,
        },
        "calls": {
            "a": s.calls.0,
            "b": s.calls.1,
            "compared": s.compared,
            "differing": s.differing,
            "causes": s.causes,
            "consequences": s.consequences,
        },
        "differences": kinds_json(&s.kinds),
        "lost_records": { "a": s.lost_records.0, "b": s.lost_records.1 },
        "loss": s.loss.as_ref().map(|(a, b)| loss::loss_json(a, b)),
        "window": { "calls": s.window, "overflows": s.window_overflows },
    });
    serde_json::to_writer(&mut *out, &v)?;
    out.write_all(b"\n")
}
