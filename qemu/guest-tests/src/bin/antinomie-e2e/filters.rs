// SPDX-License-Identifier: GPL-2.0-only
//! `antinomie-e2e filters`: the Syscall Trace filter, end to end.
//!
//! Runs `reader show FILES --filter EXPR` (the real CLI, on the trace the
//! guest's `reader --follow -w` saved, or on ring images) for many
//! filters and checks that each prints exactly the calls it must:
//!
//! * the calls' ground truth is the comparator's model (`derive()`): every
//!   value the model can predict exactly comes from the workload's log
//!   through the model, never from the reader; only times, durations,
//!   unpinned CPUs and call ids come from the reader's unfiltered output,
//!   after `derive()` checked each against the workload's own bounds;
//! * every field `reader fields` lists (which must be exactly the
//!   comparator's own list: the JSON keys and `args.attr_uptr.<member>` for
//!   every member of its model of the attr) gets `exists()`, its negation
//!   and, by type, comparisons around a value the run holds, `in`, bit tests
//!   per set bit, bool tests, string equality, and its named constants
//!   (taken from the model's rendering of the same values);
//! * the scenario cases — by errno, by flag bit, by attr member on sized-down
//!   attrs, by duration, precedence, by an attr changed during the call —
//!   take their expected subsets straight
//!   from the workload's log (errno, flags, attr bytes, case names) and must
//!   select a non-empty proper subset, both ways round (`F` and `!(F)`);
//! * a live filter (`reader --follow --filter`, its output given with
//!   `--live`) must have printed exactly its subset;
//! * each kind of bad filter exits with status 2, names its kind and prints
//!   no call;
//! * with `--lossy` (a stalled reader's trace: LOST records, unfinished
//!   and entry-lost calls), the same for every field — so that `state`,
//!   `exit_maybe_lost` and the absent EXIT fields split the calls — and
//!   every filtered output keeps the LOST lines; the scenario cases, written
//!   for the `e2e` scripts, are not run.
//!
//! Calls are identified by their `call_id` (the reader's unfiltered output
//! gives it; the workload call behind each is found by the tag it puts in
//! argument word 5, or for an entry-lost call by thread and result).

mod checks;
mod field_cases;
mod ground_truth;
mod scenario_cases;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Map, Value};

use crate::compare::Tally;
use antinomie_workloads::log::LoggedCall;
use checks::{
    check_bad_filters, check_field_list, check_fields, check_live, check_scenarios, reader_fields,
    Reader,
};
use ground_truth::ground_truth;
use scenario_cases::scenario_cases;

/// Where the calls come from and what else to check.
#[derive(Debug)]
pub struct Args<'a> {
    pub workload: &'a [PathBuf],
    /// The `reader` binary to run.
    pub reader: &'a Path,
    /// What `reader show` reads: a trace file, or ring images.
    pub files: &'a [PathBuf],
    /// `--pmu NAME=TYPE` for `reader show`, and the model's PMU names.
    pub pmu: &'a [String],
    /// The output of `reader --follow --format json --filter LIVE_FILTER`.
    pub live: Option<&'a Path>,
    pub live_filter: Option<&'a str>,
    /// LOST records and half calls are allowed (a stalled reader).
    pub lossy: bool,
    pub sysfs: &'a Path,
    pub verbose: bool,
}

/// One call: the workload's record and the line the model expects.
struct Call {
    /// The kernel's call id, as the reader's unfiltered output shows it.
    id: u64,
    work: LoggedCall,
    /// The expected JSON line: the model's values, and the reader's for
    /// the keys the model bounds (times, durations, unpinned CPUs, ids).
    line: Map<String, Value>,
}

/// A set of calls, by call id.
type Ids = BTreeSet<u64>;

/// One filter and the calls it must select.
struct Case {
    /// The field (or the scenario case's category) it exercises.
    about: String,
    filter: String,
    expect: Ids,
}

/// A field as `reader fields` lists it.
struct Field {
    name: String,
    ty: String,
}

const ATTR: &str = "args.attr_uptr.";

/// The value of `field` in `line`, `None` when absent (null or missing).
fn value<'a>(line: &'a Map<String, Value>, field: &str) -> Option<&'a Value> {
    let v = match field.strip_prefix(ATTR) {
        Some(member) => line.get("arg0.perf_event_attr")?.as_object()?.get(member)?,
        None => line.get(field)?,
    };
    (!v.is_null()).then_some(v)
}

fn select(calls: &[Call], pred: impl Fn(&Call) -> bool) -> Ids {
    calls.iter().filter(|c| pred(c)).map(|c| c.id).collect()
}

/// Runs every check; `Ok(false)` when any failed.
pub fn run(args: &Args<'_>) -> Result<bool, String> {
    let started = Instant::now();
    let mut reader = Reader { args, runs: 0 };
    let mut tally = Tally::default();
    let trace = ground_truth(args, &mut reader, &mut tally)?;
    println!(
        "antinomie-e2e: filters: {} calls and {} LOST records in the trace, the unfiltered output \
         matches the model: {}",
        trace.calls.len(),
        trace.lost_lines,
        if tally.failures.is_empty() {
            "yes"
        } else {
            "NO"
        }
    );
    let fields = reader_fields(args.reader)?;
    check_field_list(&fields, &mut tally);
    check_fields(&trace, &fields, &mut reader, &mut tally);
    if args.lossy {
        println!(
            "antinomie-e2e: filters: --lossy: the scenario cases (written for the e2e scripts) are not run"
        );
    } else {
        let scenarios = scenario_cases(&trace.calls);
        check_scenarios(&trace, &scenarios, &mut reader, &mut tally);
        if let (Some(live), Some(filter)) = (args.live, args.live_filter) {
            check_live(&trace, &scenarios, live, filter, &mut tally)?;
        }
    }
    check_bad_filters(&mut reader, &mut tally);
    let ok = tally.failures.is_empty();
    println!(
        "antinomie-e2e: filters: {}: {} filters checked over {} calls ({} reader runs, {:.1} s), {} failures",
        if ok { "ok" } else { "FAILED" },
        reader.runs - 1 + u64::from(args.live.is_some() && !args.lossy),
        trace.calls.len(),
        reader.runs,
        started.elapsed().as_secs_f64(),
        tally.failures.len()
    );
    Ok(ok)
}
