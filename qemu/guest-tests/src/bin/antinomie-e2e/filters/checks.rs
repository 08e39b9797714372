// SPDX-License-Identifier: GPL-2.0-only
//! Running `reader show --filter` (and `reader fields`) and checking what
//! it printed: exactly each case's calls, every LOST line kept, each field
//! exercised, bad filters refused.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::process::Command;

use serde::Deserialize;

use crate::compare::Tally;
use crate::expect::CALL_KEYS;
use crate::model;

use super::field_cases::{field_cases, size_names};
use super::ground_truth::Trace;
use super::{Args, Call, Case, Field, Ids, ATTR};

/// One bad filter of each kind, and the kind its message must name.
const BAD_FILTERS: &[(&str, &str)] = &[
    ("ret = -EINVAL", "syntax error"),
    (
        "args.attr_uptr.sampel_type & PERF_SAMPLE_IP",
        "unknown field",
    ),
    ("syscall.success == 1", "type mismatch"),
    ("args.flags & PERF_FLAG_FD_CLOEXC", "unknown constant"),
    ("args.flags & PERF_SAMPLE_IP", "misplaced constant"),
];

/// What `ids_of` reads of a line. serde skips every other key without
/// building it: the check runs the reader a thousand times, each output
/// can be most of the trace, and building every line whole costs the
/// comparator four times its instructions (callgrind: 42.5 G against
/// 9.3 G for the e2e workload's 742 calls).
#[derive(Deserialize)]
struct LineId {
    event: Option<String>,
    call_id: Option<u64>,
}

/// The call ids of the call lines of JSON Lines `text`, and how many
/// LOST lines it has.
fn ids_of(text: &str) -> Result<(Ids, usize), String> {
    let (mut ids, mut lost) = (Ids::new(), 0);
    for (i, l) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        // serde reads a struct from a JSON array as well; the reader
        // prints an object per line.
        if !l.trim_start().starts_with('{') {
            return Err(format!("line {}: not a JSON object: {l}", i + 1));
        }
        let line: LineId = serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1))?;
        match line.event.as_deref() {
            Some("lost") => lost += 1,
            Some("call") => {
                let id = line
                    .call_id
                    .ok_or_else(|| format!("line {}: a call without call_id: {l}", i + 1))?;
                if !ids.insert(id) {
                    return Err(format!("line {}: call {id} printed twice", i + 1));
                }
            }
            _ => return Err(format!("line {}: unexplained: {l}", i + 1)),
        }
    }
    Ok((ids, lost))
}

pub(super) struct Reader<'a> {
    pub(super) args: &'a Args<'a>,
    pub(super) runs: u64,
}

impl Reader<'_> {
    /// `reader show FILES --format json [--filter F]`: (exit code, stdout, stderr).
    pub(super) fn show(&mut self, filter: Option<&str>) -> Result<(i32, String, String), String> {
        let mut cmd = Command::new(self.args.reader);
        cmd.args(["show", "--format", "json", "--no-summary"]);
        for p in self.args.pmu {
            cmd.args(["--pmu", p]);
        }
        if let Some(f) = filter {
            cmd.args(["--filter", f]);
        }
        cmd.args(self.args.files);
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.args.reader.display()))?;
        self.runs += 1;
        let code = out.status.code().unwrap_or(-1);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let stdout = String::from_utf8(out.stdout).map_err(|e| {
            format!(
                "reader exited with {code} and printed bytes that are not UTF-8 ({e}): {}",
                stderr.trim()
            )
        })?;
        Ok((code, stdout, stderr))
    }
}

/// The field list of `reader fields`.
pub(super) fn reader_fields(reader: &Path) -> Result<Vec<Field>, String> {
    let out = Command::new(reader)
        .arg("fields")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", reader.display()))?;
    if !out.status.success() {
        return Err(format!("reader fields exited with {}", out.status));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("FIELD "))
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            Some(Field {
                name: words.next()?.to_owned(),
                ty: words.next()?.to_owned(),
            })
        })
        .collect())
}

fn describe(calls: &[Call], ids: &Ids) -> String {
    let by_id: HashMap<u64, &Call> = calls.iter().map(|c| (c.id, c)).collect();
    let mut names: Vec<String> = ids
        .iter()
        .take(8)
        .map(|id| match by_id.get(id) {
            Some(c) => format!("{} #{} (call {id})", c.work.case, c.work.seq),
            None => format!("call {id} (not in the unfiltered output)"),
        })
        .collect();
    if ids.len() > 8 {
        names.push(format!("… {} more", ids.len() - 8));
    }
    names.join(", ")
}

/// Checks one case's output: exactly the expected calls, and every LOST
/// line of the unfiltered output. Returns whether the case selected a
/// non-empty proper subset.
fn check_case(
    trace: &Trace,
    case: &Case,
    got: Result<(i32, String, String), String>,
    tally: &mut Tally,
) -> bool {
    let who = format!("filter `{}` ({})", case.filter, case.about);
    let (code, stdout, stderr) = match got {
        Ok(r) => r,
        Err(e) => {
            tally.fail(format!("{who}: {e}"));
            return false;
        }
    };
    if code != 0 {
        tally.fail(format!(
            "{who}: reader exited with {code}: {}",
            stderr.trim()
        ));
        return false;
    }
    match ids_of(&stdout) {
        Ok((ids, lost)) => {
            if ids != case.expect {
                let missing: Ids = case.expect.difference(&ids).copied().collect();
                let extra: Ids = ids.difference(&case.expect).copied().collect();
                tally.fail(format!(
                    "{who}: selected {} calls, expected {}; missing: [{}]; unexpected: [{}]",
                    ids.len(),
                    case.expect.len(),
                    describe(&trace.calls, &missing),
                    describe(&trace.calls, &extra)
                ));
            }
            if lost != trace.lost_lines {
                tally.fail(format!(
                    "{who}: {lost} LOST lines, the unfiltered output has {}",
                    trace.lost_lines
                ));
            }
        }
        Err(e) => tally.fail(format!("{who}: {e}")),
    }
    !case.expect.is_empty() && case.expect.len() < trace.calls.len()
}

/// `reader fields` must list exactly the comparator's own fields: the JSON
/// keys and `args.attr_uptr.<member>` for every member of its model.
pub(super) fn check_field_list(fields: &[Field], tally: &mut Tally) {
    let listed: BTreeSet<String> = fields.iter().map(|f| f.name.clone()).collect();
    let own: BTreeSet<String> = CALL_KEYS
        .iter()
        .map(|k| (*k).to_owned())
        .chain(model::member_names().map(|m| format!("{ATTR}{m}")))
        .collect();
    for missing in own.difference(&listed) {
        tally.fail(format!("reader fields: {missing}: not listed"));
    }
    for extra in listed.difference(&own) {
        tally.fail(format!("reader fields: {extra}: unknown to the comparator"));
    }
    if listed.len() != fields.len() {
        tally.fail("reader fields: a field is listed twice".into());
    }
}

/// Every field's cases; each field must have been exercised.
pub(super) fn check_fields(
    trace: &Trace,
    fields: &[Field],
    reader: &mut Reader<'_>,
    tally: &mut Tally,
) {
    let calls = &trace.calls;
    let cases = field_cases(calls, fields, &size_names(calls));
    let mut split: BTreeMap<&str, bool> = BTreeMap::new();
    for case in &cases {
        let got = reader.show(Some(&case.filter));
        let proper = check_case(trace, case, got, tally);
        *split.entry(case.about.as_str()).or_default() |= proper;
        if reader.args.verbose {
            println!("  {} -> {} calls", case.filter, case.expect.len());
        }
    }
    let uniform: Vec<&str> = split
        .iter()
        .filter(|(_, s)| !**s)
        .map(|(f, _)| *f)
        .collect();
    println!(
        "antinomie-e2e: filters: {} fields, {} filters; {} fields split the calls, {} hold one value \
         (or none) on every call of this workload: {}",
        split.len(),
        cases.len(),
        split.len() - uniform.len(),
        uniform.len(),
        uniform.join(" ")
    );
    for f in fields {
        if !split.contains_key(f.name.as_str()) {
            tally.fail(format!("field {}: no filter exercised it", f.name));
        }
    }
}

/// The scenario cases, both ways round, each a non-empty proper subset.
pub(super) fn check_scenarios(
    trace: &Trace,
    scenarios: &[Case],
    reader: &mut Reader<'_>,
    tally: &mut Tally,
) {
    let calls = &trace.calls;
    for case in scenarios {
        let inverse = Case {
            about: case.about.clone(),
            filter: format!("!({})", case.filter),
            expect: calls
                .iter()
                .map(|c| c.id)
                .filter(|id| !case.expect.contains(id))
                .collect(),
        };
        for c in [case, &inverse] {
            let got = reader.show(Some(&c.filter));
            if !check_case(trace, c, got, tally) {
                tally.fail(format!(
                    "filter `{}` ({}): expected a non-empty proper subset, the workload gives {} of {} calls",
                    c.filter,
                    c.about,
                    c.expect.len(),
                    calls.len()
                ));
            }
        }
        println!(
            "antinomie-e2e: filters: {:<28} {:>4} of {} calls: {}",
            case.about,
            case.expect.len(),
            calls.len(),
            case.filter
        );
    }
}

/// What `reader --follow --filter FILTER` printed, against its case.
pub(super) fn check_live(
    trace: &Trace,
    scenarios: &[Case],
    live: &Path,
    filter: &str,
    tally: &mut Tally,
) -> Result<(), String> {
    let Some(case) = scenarios.iter().find(|c| c.filter == filter) else {
        tally.fail(format!(
            "--live-filter `{filter}` is none of the scenario cases"
        ));
        return Ok(());
    };
    let text = std::fs::read_to_string(live).map_err(|e| format!("{}: {e}", live.display()))?;
    let printed = ids_of(&text).map_or(0, |(ids, _)| ids.len());
    check_case(trace, case, Ok((0, text, String::new())), tally);
    println!(
        "antinomie-e2e: filters: live `reader --follow --filter` printed {printed} calls, expected {}",
        case.expect.len()
    );
    Ok(())
}

/// Each kind of bad filter: status 2, the kind named, nothing printed.
pub(super) fn check_bad_filters(reader: &mut Reader<'_>, tally: &mut Tally) {
    for (filter, kind) in BAD_FILTERS {
        let who = format!("bad filter `{filter}`");
        match reader.show(Some(filter)) {
            Ok((2, stdout, stderr)) if stdout.is_empty() && stderr.contains(kind) => {
                println!(
                    "antinomie-e2e: filters: {kind}: {}",
                    stderr.lines().next().unwrap_or_default()
                );
            }
            Ok((code, stdout, stderr)) => tally.fail(format!(
                "{who}: expected exit 2, `{kind}` and no output; got {code}, {} bytes out, {}",
                stdout.len(),
                stderr.trim()
            )),
            Err(e) => tally.fail(format!("{who}: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ids_of;

    #[test]
    fn ids_of_counts_calls_and_lost_lines() {
        let text = concat!(
            r#"{"event":"call","call_id":7,"ret":-22,"args":{"flags":8},"arg0.perf_event_attr":{"type":1}}"#,
            "\n\n",
            r#"{"event":"lost","cpu":1,"records":3}"#,
            "\n",
            r#"{"call_id":9,"event":"call","comm":"a \"quoted\" name"}"#,
            "\n"
        );
        let (ids, lost) = ids_of(text).unwrap();
        assert_eq!(ids.into_iter().collect::<Vec<_>>(), [7, 9]);
        assert_eq!(lost, 1);
    }

    #[test]
    fn ids_of_refuses_what_it_cannot_explain() {
        for (text, says) in [
            (
                "{\"event\":\"call\",\"call_id\":1}\n{\"event\":\"call\",\"call_id\":1}",
                "line 2: call 1 printed twice",
            ),
            ("{\"event\":\"call\"}", "line 1: a call without call_id"),
            ("{\"event\":\"summary\"}", "line 1: unexplained"),
            ("{\"call_id\":1}", "line 1: unexplained"),
            (
                "{\"event\":\"call\",\"call_id\":\"1\"}",
                "line 1: invalid type",
            ),
            ("{\"event\":\"call\",", "line 1: EOF"),
            ("[\"call\",7]", "line 1: not a JSON object"),
        ] {
            let err = ids_of(text).unwrap_err();
            assert!(err.starts_with(says), "{text:?}: {err}");
        }
    }
}
