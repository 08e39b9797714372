// SPDX-License-Identifier: GPL-2.0-only
//! `reader diff --format json`'s report as `diff-check` and `cause-check`
//! read it: a JSON object a line, each a difference between the two runs
//! or the summary. A difference names its call in run A and in run B by
//! the tag the workload put in argument word 5; the summary counts the
//! calls of both runs.

use std::path::PathBuf;

use serde_json::Value;

/// The options of `diff-check` and `cause-check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The workload's log of run A.
    #[arg(long)]
    pub(crate) workload_a: PathBuf,
    /// The workload's log of run B.
    #[arg(long)]
    pub(crate) workload_b: PathBuf,
    /// `reader diff --format json` of the two runs' traces.
    #[arg(long)]
    diff: PathBuf,
}

impl Args {
    /// The report `--diff` names.
    ///
    /// # Errors
    /// An unreadable file, or a line that is not JSON.
    pub(crate) fn report(&self) -> Result<Report, String> {
        let text = std::fs::read_to_string(&self.diff)
            .map_err(|e| format!("reading {}: {e}", self.diff.display()))?;
        Report::parse(&text, &self.diff.display().to_string())
    }
}

/// A workload call: (thread, seq).
pub(crate) type CallId = (u32, u32);

/// The (thread, seq) a tag names: `0xa5 << 56 | script << 40 | thread << 24 | seq`.
pub(crate) fn untag(tag: u64) -> Option<CallId> {
    (tag >> 56 == 0xa5).then(|| {
        let thread = u32::try_from((tag >> 24) & 0xffff).expect("16 bits");
        let seq = u32::try_from(tag & 0xff_ffff).expect("24 bits");
        (thread, seq)
    })
}

/// The lines of `text` that are not blank, each with its line number
/// (from 1, blank lines counted), as JSON Lines files are read here.
pub(crate) fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i + 1, l))
}

/// One difference line.
#[derive(Debug)]
pub(crate) struct Difference {
    /// Its line number in the report, from 1.
    pub(crate) line: usize,
    /// The call of run A and of run B, by their tags (`None`: the line has
    /// no call of that run, or one without a tag).
    pub(crate) a: Option<CallId>,
    pub(crate) b: Option<CallId>,
    /// Where each run's call is in its thread (`index`).
    pub(crate) index: (Option<u64>, Option<u64>),
    /// What differs (`ret`, `input`, `only_in_a`, ...).
    pub(crate) kinds: Vec<String>,
    /// `cause` or `consequence`, when `reader diff` told them apart.
    pub(crate) role: Option<String>,
    /// A consequence's cause, as the line names it.
    pub(crate) cause: Value,
    /// The whole line, for messages.
    pub(crate) json: Value,
}

impl Difference {
    fn new(line: usize, json: Value) -> Self {
        let call = |side: &str| json[side]["args.5"].as_u64().and_then(untag);
        Difference {
            line,
            a: call("a"),
            b: call("b"),
            index: (json["a"]["index"].as_u64(), json["b"]["index"].as_u64()),
            kinds: json["kinds"]
                .as_array()
                .map(|k| {
                    k.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            role: json["role"].as_str().map(str::to_owned),
            cause: json["cause"].clone(),
            json,
        }
    }

    /// The call the line names: A's, or B's where A has none.
    ///
    /// # Errors
    /// A line without a tagged call, or one whose two calls `paired` does
    /// not accept as a pair (the same call, for `diff-check`; calls of one
    /// thread, for `cause-check`).
    pub(crate) fn call(&self, paired: impl Fn(CallId, CallId) -> bool) -> Result<CallId, String> {
        match (self.a, self.b) {
            (Some(x), Some(y)) if !paired(x, y) => Err(format!(
                "line {}: pairs thread {} seq {} with thread {} seq {}",
                self.line, x.0, x.1, y.0, y.1
            )),
            (Some(id), _) | (None, Some(id)) => Ok(id),
            (None, None) => Err(format!(
                "line {}: a call without a workload tag: {}",
                self.line, self.json
            )),
        }
    }

    /// Whether `kind` is one of the line's kinds.
    pub(crate) fn has(&self, kind: &str) -> bool {
        self.kinds.iter().any(|k| k == kind)
    }

    /// Whether the call is in one run only.
    pub(crate) fn one_run_only(&self) -> bool {
        self.kinds.iter().any(|k| k.starts_with("only_in"))
    }
}

/// The summary line.
#[derive(Debug)]
pub(crate) struct Summary(Value);

impl Summary {
    /// Where the summary disagrees with logs of `a` and `b` calls: it must
    /// count them all, and say `equal` exactly when nothing must differ.
    fn mismatches(&self, a: usize, b: usize, equal: bool) -> Vec<String> {
        let calls = &self.0["calls"];
        let counted =
            calls["a"].as_u64() == Some(a as u64) && calls["b"].as_u64() == Some(b as u64);
        let counts = (!counted).then(|| {
            format!(
                "the traces hold {} and {} calls, the workloads made {a} and {b}",
                calls["a"], calls["b"],
            )
        });
        let equality = (self.0["equal"].as_bool() != Some(equal))
            .then(|| format!("the summary says equal = {}", self.0["equal"]));
        counts.into_iter().chain(equality).collect()
    }

    /// The causes and the consequences it counts, as JSON values.
    pub(crate) fn roles(&self) -> (&Value, &Value) {
        (&self.0["calls"]["causes"], &self.0["calls"]["consequences"])
    }
}

/// A report: its differences and its summary lines, each in line order.
#[derive(Debug)]
pub(crate) struct Report {
    pub(crate) differences: Vec<Difference>,
    summaries: Vec<Summary>,
}

impl Report {
    /// The report in `text` (`name` for the errors); blank lines are left
    /// out.
    ///
    /// # Errors
    /// A line that is not JSON.
    pub(crate) fn parse(text: &str, name: &str) -> Result<Self, String> {
        let mut report = Report {
            differences: Vec::new(),
            summaries: Vec::new(),
        };
        for (n, line) in numbered_lines(text) {
            let json: Value =
                serde_json::from_str(line).map_err(|e| format!("{name}:{n}: not JSON: {e}"))?;
            if json["event"] == "summary" {
                report.summaries.push(Summary(json));
            } else {
                report.differences.push(Difference::new(n, json));
            }
        }
        Ok(report)
    }

    /// The one summary line.
    ///
    /// # Errors
    /// None or several summary lines.
    pub(crate) fn summary(&self) -> Result<&Summary, String> {
        match self.summaries.as_slice() {
            [summary] => Ok(summary),
            more => Err(format!("{} summary lines instead of one", more.len())),
        }
    }

    /// Where the summary disagrees with logs of `a` and `b` calls, of
    /// which `equal` says whether they must compare equal; or that the
    /// report has not one summary line.
    pub(crate) fn summary_mismatches(&self, a: usize, b: usize, equal: bool) -> Vec<String> {
        self.summary()
            .map_or_else(|f| vec![f], |s| s.mismatches(a, b, equal))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{untag, Report};

    fn tag(thread: u32, seq: u32) -> u64 {
        (0xa5 << 56) | (5 << 40) | (u64::from(thread) << 24) | u64::from(seq)
    }

    #[test]
    fn a_tag_names_its_thread_and_seq() {
        assert_eq!(untag(tag(3, 0x12_3456)), Some((3, 0x12_3456)));
        assert_eq!(untag(tag(0xffff, 0)), Some((0xffff, 0)));
        // Not a workload's tag: another high byte.
        assert_eq!(untag(0xa4 << 56 | 1), None);
        assert_eq!(untag(0), None);
    }

    #[test]
    fn a_difference_line_gives_its_calls_kinds_role_and_cause() {
        let line = json!({
            "event": "difference", "kinds": ["ret", "required_size"], "role": "consequence",
            "cause": { "a": 1, "b": 1 },
            "a": { "index": 4, "args.5": tag(2, 7) },
            "b": { "index": 5, "args.5": tag(2, 8) },
        });
        let text = format!("\n{line}\n  \n");
        let report = Report::parse(&text, "diff").unwrap();
        assert!(report.summary().is_err());
        let [d] = report.differences.as_slice() else {
            panic!("{report:?}")
        };
        assert_eq!(d.line, 2);
        assert_eq!((d.a, d.b), (Some((2, 7)), Some((2, 8))));
        assert_eq!(d.index, (Some(4), Some(5)));
        assert_eq!(d.kinds, ["ret", "required_size"]);
        assert!(d.has("ret") && !d.has("input") && !d.one_run_only());
        assert_eq!(d.role.as_deref(), Some("consequence"));
        assert_eq!(d.cause, json!({ "a": 1, "b": 1 }));
        // One thread, two calls: a pair for cause-check, not for diff-check.
        assert_eq!(d.call(|x, y| x.0 == y.0), Ok((2, 7)));
        assert_eq!(
            d.call(|x, y| x == y),
            Err("line 2: pairs thread 2 seq 7 with thread 2 seq 8".to_owned())
        );
    }

    #[test]
    fn a_call_of_one_run_or_of_none() {
        let only_b =
            json!({ "kinds": ["only_in_b"], "a": null, "b": { "index": 0, "args.5": tag(1, 2) } });
        let untagged = json!({ "kinds": ["ret"], "a": { "index": 0 }, "b": { "args.5": 17 } });
        let report = Report::parse(&format!("{only_b}\n{untagged}"), "diff").unwrap();
        let [b, none] = report.differences.as_slice() else {
            panic!("{report:?}")
        };
        assert!(b.one_run_only() && b.role.is_none() && b.cause.is_null());
        assert_eq!((b.a, b.index), (None, (None, Some(0))));
        assert_eq!(b.call(|x, y| x == y), Ok((1, 2)));
        let Err(e) = none.call(|x, y| x == y) else {
            panic!("{none:?}")
        };
        assert!(
            e.starts_with("line 2: a call without a workload tag: {"),
            "{e}"
        );
    }

    #[test]
    fn the_summary_is_checked_against_the_logs() {
        let line = json!({
            "event": "summary", "equal": false,
            "calls": { "a": 3, "b": 4, "causes": 1, "consequences": 2 },
        });
        let report = Report::parse(&line.to_string(), "diff").unwrap();
        assert!(report.differences.is_empty());
        assert!(report.summary_mismatches(3, 4, false).is_empty());
        assert_eq!(
            report.summary_mismatches(3, 5, true),
            [
                "the traces hold 3 and 4 calls, the workloads made 3 and 5",
                "the summary says equal = false"
            ]
        );
        assert_eq!(report.summary().unwrap().roles(), (&json!(1), &json!(2)));
    }

    #[test]
    fn not_one_summary_or_not_json_is_reported() {
        let none = Report::parse("", "diff").unwrap();
        assert_eq!(
            none.summary_mismatches(0, 0, true),
            ["0 summary lines instead of one"]
        );
        let two =
            Report::parse("{\"event\":\"summary\"}\n{\"event\":\"summary\"}", "diff").unwrap();
        assert_eq!(two.summary().unwrap_err(), "2 summary lines instead of one");
        let e = Report::parse("{}\nnot json", "out/diff.jsonl").unwrap_err();
        assert!(e.starts_with("out/diff.jsonl:2: not JSON: "), "{e}");
    }
}
