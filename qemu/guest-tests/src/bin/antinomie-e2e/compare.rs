// SPDX-License-Identifier: GPL-2.0-only
//! `antinomie-e2e compare`: every reader line against the call the workload
//! logged, field by field and attr member by member, and with `--lossy`
//! the loss accounting against the kernel's counters.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::expect::{derive, Derived, Exp, State, CALL_KEYS};
use crate::model::Pmus;
use crate::worklog::{read_jsonl, Works};

/// The keys of a LOST line, in order.
const LOST_KEYS: &[&str] = &[
    "event",
    "time_ns",
    "cpu",
    "lost.ring_full",
    "lost.bad_consumer",
    "lost.other",
    "lost.first_time_ns",
    "lost.last_time_ns",
    "lost.min_call_id",
    "lost.max_call_id",
];

/// Counts and failures of a comparison.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub(crate) fields: u64,
    pub(crate) members: u64,
    pub(crate) failures: Vec<String>,
    /// Failures by key, for the summary.
    pub(crate) by_key: BTreeMap<String, u64>,
}

impl Tally {
    pub(crate) fn fail(&mut self, what: String) {
        if self.failures.len() < 100 {
            eprintln!("antinomie-e2e: FAIL {what}");
        }
        // "who: key: ..." -> key
        let key = what.split(": ").nth(1).unwrap_or("other").to_owned();
        *self.by_key.entry(key).or_default() += 1;
        self.failures.push(what);
    }
}

fn check_key_order(line: &Map<String, Value>, want: &[&str], who: &str, t: &mut Tally) {
    let got: Vec<&str> = line.keys().map(String::as_str).collect();
    if got != want {
        t.fail(format!("{who}: keys {got:?}, schema says {want:?}"));
    }
}

fn compare_object(
    who: &str,
    key: &str,
    want: &Map<String, Value>,
    got: &Value,
    t: &mut Tally,
    verbose: bool,
) {
    let Some(got) = got.as_object() else {
        t.fail(format!("{who}: {key}: expected an object, got {got}"));
        return;
    };
    let wk: Vec<&String> = want.keys().collect();
    let gk: Vec<&String> = got.keys().collect();
    if wk != gk {
        let missing: Vec<_> = wk
            .iter()
            .filter(|k| !got.contains_key(k.as_str()))
            .collect();
        let extra: Vec<_> = gk
            .iter()
            .filter(|k| !want.contains_key(k.as_str()))
            .collect();
        t.fail(format!(
            "{who}: {key}: members differ: missing {missing:?}, unexpected {extra:?} (or order)"
        ));
    }
    for (m, v) in want {
        t.members += 1;
        match got.get(m) {
            Some(g) if g == v && verbose => println!("  {who}: {key}.{m} = {v}"),
            Some(g) if g == v => {}
            Some(g) => t.fail(format!("{who}: {key}.{m}: expected {v}, got {g}")),
            None => {}
        }
    }
}

pub(crate) fn compare_line(
    who: &str,
    d: &Derived,
    line: &Map<String, Value>,
    t: &mut Tally,
    verbose: bool,
) {
    check_key_order(line, CALL_KEYS, who, t);
    for e in &d.kernel_model_errors {
        t.fail(format!("{who}: kernel vs model: {e}"));
    }
    for (key, exp) in &d.keys {
        t.fields += 1;
        let got = line.get(*key).unwrap_or(&Value::Null);
        match exp {
            Exp::Eq(v) => {
                if got != v {
                    t.fail(format!("{who}: {key}: expected {v}, got {got}"));
                } else if verbose {
                    println!("  {who}: {key} = {v}");
                }
            }
            Exp::Range(lo, hi) => match got.as_u64() {
                Some(g) if (*lo..=*hi).contains(&g) => {
                    if verbose {
                        println!("  {who}: {key} = {g} in [{lo}, {hi}]");
                    }
                }
                _ => t.fail(format!(
                    "{who}: {key}: expected a number in [{lo}, {hi}], got {got}"
                )),
            },
            Exp::Object(want) => compare_object(who, key, want, got, t, verbose),
        }
    }
}

/// Per-CPU counters as `device counters` prints them.
#[derive(Debug, Deserialize)]
struct CpuCounters {
    cpu: u32,
    produced: u64,
    lost: Vec<u64>,
}

/// What `--lossy` allows and checks.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lossy<'a> {
    pub(crate) on: bool,
    pub(crate) subset: bool,
    pub(crate) counters: Option<&'a Path>,
    pub(crate) half_calls: bool,
}

#[allow(clippy::too_many_lines)]
pub(crate) fn compare(
    workload: &[PathBuf],
    reader: &Path,
    lossy: Lossy<'_>,
    sysfs: &Path,
    kernel_access: bool,
    verbose: bool,
) -> Result<bool, String> {
    let counters = lossy.counters;
    let half_calls = lossy.half_calls;
    let subset = lossy.subset;
    // Which lines are allowed.
    let lossy_lines = lossy.on || subset;
    let lossy = lossy.on;
    let pmus = Pmus::read(sysfs);
    let Works {
        calls: works,
        by_tag,
    } = Works::read(workload)?;
    let lines = read_jsonl(reader)?;
    let mut tally = Tally::default();
    // LOST lines first: their call id ranges, with the time of the last
    // record they dropped, say which unfinished calls may have lost their
    // EXIT (an EXIT is not earlier than its ENTRY).
    let mut lost_ranges: Vec<(u64, u64, u64)> = Vec::new();
    let mut lost_by_cpu: BTreeMap<u64, u64> = BTreeMap::new();
    let mut lost_total = 0u64;
    for (i, v) in lines.iter().enumerate() {
        let Some(obj) = v.as_object() else {
            tally.fail(format!("reader line {}: not an object", i + 1));
            continue;
        };
        if obj.get("event").and_then(Value::as_str) == Some("lost") {
            check_key_order(
                obj,
                LOST_KEYS,
                &format!("reader line {} (lost)", i + 1),
                &mut tally,
            );
            let n = |k: &str| obj.get(k).and_then(Value::as_u64).unwrap_or(0);
            let sum = n("lost.ring_full") + n("lost.bad_consumer") + n("lost.other");
            if n("lost.bad_consumer") + n("lost.other") != 0 {
                tally.fail(format!(
                    "reader line {}: losses other than ring_full: {v}",
                    i + 1
                ));
            }
            lost_total += sum;
            *lost_by_cpu.entry(n("cpu")).or_default() += sum;
            lost_ranges.push((
                n("lost.min_call_id"),
                n("lost.max_call_id"),
                n("lost.last_time_ns"),
            ));
            if !lossy_lines {
                tally.fail(format!(
                    "reader line {}: a LOST record where nothing may be lost: {v}",
                    i + 1
                ));
            }
        }
    }
    let mut matched: Vec<Option<(u64, u64)>> = vec![None; works.len()]; // (call_id, time_ns)
    let (mut complete, mut unfinished, mut entry_lost) = (0u64, 0u64, 0u64);
    let mut read_earlier = 0u64;
    let mut records_by_cpu: BTreeMap<u64, u64> = BTreeMap::new();
    let mut call_ids: HashMap<u64, usize> = HashMap::new();
    for (i, v) in lines.iter().enumerate() {
        let Some(obj) = v.as_object() else { continue };
        match obj.get("event").and_then(Value::as_str) {
            Some("lost") => continue,
            Some("call") => {}
            _ => {
                tally.fail(format!("reader line {}: unexplained: {v}", i + 1));
                continue;
            }
        }
        let u = |k: &str| obj.get(k).and_then(Value::as_u64);
        let call_id = u("call_id").unwrap_or(0);
        if let Some(prev) = call_ids.insert(call_id, i) {
            tally.fail(format!(
                "reader lines {} and {}: same call_id {call_id}",
                prev + 1,
                i + 1
            ));
        }
        let state = match obj.get("state").and_then(Value::as_str) {
            Some("complete") => State::Complete,
            Some("unfinished") if lossy_lines => State::Unfinished,
            Some("entry_lost") if lossy_lines => State::EntryLost,
            // A reader started after the workload: a reader before it
            // (the test's or capture-boot's) may have read an ENTRY.
            Some("entry_read_earlier") if subset => State::EntryReadEarlier,
            other => {
                tally.fail(format!(
                    "reader line {}: unexplained call state {other:?}: {v}",
                    i + 1
                ));
                continue;
            }
        };
        let idx = Works::index_of(&works, &by_tag, obj, |j| matched[j].is_none());
        let Some(idx) = idx else {
            tally.fail(format!(
                "reader line {}: unexplained: no workload call made it: {v}",
                i + 1
            ));
            continue;
        };
        let w = &works[idx];
        let who = format!(
            "call {} #{} thread {} ({}, tag {:#x})",
            w.case, w.seq, w.thread, w.script, w.args[5]
        );
        if matched[idx].is_some() {
            tally.fail(format!("{who}: captured twice (reader line {})", i + 1));
            continue;
        }
        matched[idx] = Some((call_id, u("time_ns").unwrap_or(0)));
        let time_ns = u("time_ns").unwrap_or(0);
        let maybe_lost = state == State::Unfinished
            && lost_ranges
                .iter()
                .any(|&(lo, hi, last)| (lo..=hi).contains(&call_id) && time_ns <= last);
        match derive(w, state, maybe_lost, &pmus, kernel_access) {
            Ok(d) => compare_line(&who, &d, obj, &mut tally, verbose),
            Err(why) => tally.fail(format!("{who}: cannot derive the expectation: {why}")),
        }
        let cpu = u("cpu").unwrap_or(u64::MAX);
        match state {
            State::Complete => {
                complete += 1;
                *records_by_cpu.entry(cpu).or_default() += 1;
                *records_by_cpu
                    .entry(u("exit_cpu").unwrap_or(u64::MAX))
                    .or_default() += 1;
            }
            State::Unfinished => {
                unfinished += 1;
                *records_by_cpu.entry(cpu).or_default() += 1;
            }
            State::EntryLost => {
                entry_lost += 1;
                *records_by_cpu.entry(cpu).or_default() += 1;
            }
            State::EntryReadEarlier => {
                read_earlier += 1;
                *records_by_cpu.entry(cpu).or_default() += 1;
            }
        }
    }
    // Program order per thread = call id order = time order.
    let mut per_tid: BTreeMap<i32, Vec<(u32, u64, u64)>> = BTreeMap::new();
    for (w, m) in works.iter().zip(&matched) {
        if let Some((id, time)) = m {
            per_tid.entry(w.tid).or_default().push((w.seq, *id, *time));
        }
    }
    for (tid, mut calls) in per_tid {
        calls.sort_unstable();
        for p in calls.windows(2) {
            if p[1].1 <= p[0].1 || p[1].2 < p[0].2 {
                tally.fail(format!(
                    "tid {tid}: call #{} (call_id {}, time {}) and #{} (call_id {}, time {}) are out of order",
                    p[0].0, p[0].1, p[0].2, p[1].0, p[1].1, p[1].2
                ));
            }
        }
    }
    let n = works.len() as u64;
    let seen = matched.iter().filter(|m| m.is_some()).count() as u64;
    let shown = 2 * complete + unfinished + entry_lost;
    if lossy {
        println!(
            "antinomie-e2e: losses: the workload made {n} calls = {} records; the reader showed {shown} records \
             ({complete} complete calls, {unfinished} unfinished, {entry_lost} entry lost) and LOST records \
             reported {lost_total}; shown + lost = {}",
            2 * n,
            shown + lost_total
        );
        if shown + lost_total != 2 * n {
            tally.fail(format!(
                "produced {} != shown {shown} + lost {lost_total}",
                2 * n
            ));
        }
        if lost_total == 0 {
            tally.fail("the stalled reader lost nothing: the test did not test losses".into());
        }
        if complete == 0 {
            tally.fail("no complete call was shown".into());
        }
        if half_calls && (unfinished == 0 || entry_lost == 0) {
            tally.fail(format!(
                "expected unfinished and entry-lost calls, got {unfinished} and {entry_lost}"
            ));
        }
        match counters {
            Some(p) => {
                let text =
                    std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
                let cs: Vec<CpuCounters> =
                    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?;
                let (mut kp, mut kl) = (0, 0);
                for c in &cs {
                    let lost: u64 = c.lost.iter().sum();
                    kp += c.produced;
                    kl += lost;
                    let cpu = u64::from(c.cpu);
                    let shown_here = records_by_cpu.get(&cpu).copied().unwrap_or(0);
                    let lost_here = lost_by_cpu.get(&cpu).copied().unwrap_or(0);
                    println!(
                        "antinomie-e2e: losses: cpu {}: kernel produced {} lost {lost}; reader showed {shown_here} \
                         records, LOST records {lost_here}",
                        c.cpu, c.produced
                    );
                    if c.produced != shown_here || lost != lost_here {
                        tally.fail(format!(
                            "cpu {}: kernel produced {} lost {lost}, reader shows {shown_here} and LOST {lost_here}",
                            c.cpu, c.produced
                        ));
                    }
                }
                println!(
                    "antinomie-e2e: losses: kernel counters: produced {kp} + lost {kl} = {} (= 2 x {n} calls: {})",
                    kp + kl,
                    if kp + kl == 2 * n { "exact" } else { "MISMATCH" }
                );
                if kp + kl != 2 * n {
                    tally.fail(format!("kernel produced {kp} + lost {kl} != 2 x {n} calls"));
                }
            }
            None => tally.fail("--lossy needs --counters".into()),
        }
    } else if subset {
        println!(
            "antinomie-e2e: subset: {complete} complete calls, {unfinished} unfinished, {entry_lost} entry lost, \
             {read_earlier} entry read by an earlier reader; LOST records report {lost_total} records"
        );
    } else {
        for (w, m) in works.iter().zip(&matched) {
            if m.is_none() {
                tally.fail(format!(
                    "call {} #{} thread {} ({}, tag {:#x}): not captured",
                    w.case, w.seq, w.thread, w.script, w.args[5]
                ));
            }
        }
    }
    let ok = tally.failures.is_empty();
    for (key, n) in &tally.by_key {
        println!("antinomie-e2e: {n} failures at {key}");
    }
    println!(
        "antinomie-e2e: {}: {n} workload calls, {seen} captured calls compared field by field \
         ({} fields, {} attr members), {} reader lines, {} failures",
        if ok { "ok" } else { "FAILED" },
        tally.fields,
        tally.members,
        lines.len(),
        tally.failures.len()
    );
    Ok(ok)
}
