// SPDX-License-Identifier: GPL-2.0-only
//! `antinomie-e2e cause-check --workload-a A.jsonl --workload-b B.jsonl
//! --diff DIFF.jsonl`: checks the roles in `reader diff --format json`
//! against the two workloads' own logs.
//!
//! The two logs are one seeded workload whose calls depend on earlier
//! results (`antinomie-workload dependent --seed S`) run on two kernels.
//! Such a program makes the same calls in both runs up to the first result
//! that changed, and other calls after it. From the logs alone, per thread:
//! the first call (by its position, seq) whose outcome differs — the result
//! class (success, or the errno), the size read back after `E2BIG`, the
//! `u32` at offset 4 after the call — is the thread's cause; the logs must
//! make the same calls before it. `reader diff` must report, per thread
//! whose log changed, exactly one cause, that call (named by the tag the
//! workload put in argument word 5); every other difference of the thread
//! as a consequence pointing at that cause and lying after it in both runs;
//! at least one consequence where the logs differ after the cause; nothing
//! for a thread whose logs agree; and a summary that counts every call of
//! both logs and the causes and consequences it reported.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::diffcheck::{describe_call, read_log, Log, Logged};
use crate::diffreport::{Args, CallId, Difference, Report};

/// The same call in both logs: the case and every argument word but
/// `group_fd`'s fd number (whether it is an fd is the same) and the
/// caller's own pid or tid.
fn same_call(a: &Logged, b: &Logged) -> bool {
    // A non-negative int, as the kernel reads the word.
    let is_fd = |l: &Logged| (0..=0x7fff_ffff).contains(&l.args[3]);
    a.case == b.case && [1, 2, 4, 5].iter().all(|&w| a.word(w) == b.word(w)) && is_fd(a) == is_fd(b)
}

fn same_outcome(a: &Logged, b: &Logged) -> bool {
    a.class() == b.class() && a.required_size == b.required_size && a.size_after == b.size_after
}

/// A thread whose logs differ: the cause's seq, and whether anything
/// differs after it (a later call, or one log's calls running on).
#[derive(Debug, Clone, Copy)]
struct Changed {
    cause: u32,
    more: bool,
}

/// Thread `t`'s calls in order.
fn thread_calls(log: &Log, t: u32) -> Vec<&Logged> {
    log.range((t, 0)..=(t, u32::MAX)).map(|(_, l)| l).collect()
}

/// Per thread, where the logs part, from the logs alone.
fn expected(log_a: &Log, log_b: &Log) -> Result<BTreeMap<u32, Changed>, String> {
    let threads: BTreeSet<u32> = log_a.keys().chain(log_b.keys()).map(|id| id.0).collect();
    let mut out = BTreeMap::new();
    for t in threads {
        let (ca, cb) = (thread_calls(log_a, t), thread_calls(log_b, t));
        let first = ca
            .iter()
            .zip(&cb)
            .position(|(x, y)| !same_call(x, y) || !same_outcome(x, y));
        let Some(parted) = first.or((ca.len() != cb.len()).then(|| ca.len().min(cb.len()))) else {
            continue;
        };
        let (Some(x), Some(y)) = (ca.get(parted), cb.get(parted)) else {
            return Err(format!(
                "thread {t}: one log has {} calls, the other {}, all alike before: no result changed",
                ca.len(),
                cb.len()
            ));
        };
        if !same_call(x, y) {
            return Err(format!(
                "thread {t} seq {}: the logs made different calls ({} / {}) before any result changed: not one workload",
                x.seq, x.case, y.case
            ));
        }
        let more = ca.len() != cb.len()
            || ca
                .iter()
                .zip(&cb)
                .skip(parted + 1)
                .any(|(x, y)| !same_call(x, y) || !same_outcome(x, y));
        out.insert(t, Changed { cause: x.seq, more });
    }
    Ok(out)
}

/// A reported cause: where it is in each run's thread.
#[derive(Debug)]
struct Cause {
    id: CallId,
    index: (Option<u64>, Option<u64>),
}

/// A reported consequence: its line, the cause indexes it names, its
/// calls in A and B.
#[derive(Debug)]
struct Consequence {
    line: usize,
    names: Value,
    a: Option<CallId>,
    b: Option<CallId>,
}

/// The check's state.
struct Check {
    log_a: Log,
    log_b: Log,
    want: BTreeMap<u32, Changed>,
    causes: BTreeMap<u32, Vec<Cause>>,
    consequences: BTreeMap<u32, Vec<Consequence>>,
    fails: Vec<String>,
}

impl Check {
    fn who(&self, id: CallId) -> String {
        describe_call(&self.log_a, &self.log_b, id)
    }

    /// One difference line of `reader diff`: calls of one thread.
    fn difference(&mut self, diff: &Difference) {
        let thread = match diff.call(|x, y| x.0 == y.0) {
            Ok(id) => id.0,
            Err(f) => {
                self.fails.push(f);
                return;
            }
        };
        let line = diff.line;
        if !self.want.contains_key(&thread) {
            self.fails.push(format!(
                "line {line}: a difference in thread {thread}, whose logs agree: {}",
                diff.json
            ));
            return;
        }
        let (a, b) = (diff.a, diff.b);
        match diff.role.as_deref() {
            Some("cause") => {
                let id = a.or(b).expect("the thread came from a tag");
                if a == b {
                    let ret_changed = self.log_a.get(&id).map(Logged::class)
                        != self.log_b.get(&id).map(Logged::class);
                    if diff.has("input") || diff.one_run_only() || diff.has("ret") != ret_changed {
                        self.fails.push(format!(
                            "{}: the cause is reported as [{}]",
                            self.who(id),
                            diff.kinds.join(", ")
                        ));
                    }
                } else {
                    self.fails.push(format!(
                        "line {line}: thread {thread}'s cause is not one call of both runs (A {a:?}, B {b:?})"
                    ));
                }
                self.causes.entry(thread).or_default().push(Cause {
                    id,
                    index: diff.index,
                });
            }
            Some("consequence") => {
                self.consequences
                    .entry(thread)
                    .or_default()
                    .push(Consequence {
                        line,
                        names: diff.cause.clone(),
                        a,
                        b,
                    });
            }
            other => self.fails.push(format!(
                "line {line}: role {other:?}, not cause or consequence"
            )),
        }
    }

    /// Per thread: one cause, the expected call; consequences after it,
    /// naming it.
    fn roles(&mut self) {
        for (&t, changed) in &self.want {
            let causes = self.causes.get(&t).map_or(&[][..], Vec::as_slice);
            let consequences = self.consequences.get(&t).map_or(&[][..], Vec::as_slice);
            let [cause] = causes else {
                let ids: Vec<String> = causes.iter().map(|c| format!("seq {}", c.id.1)).collect();
                self.fails.push(format!(
                    "thread {t}: {} causes reported ({}), not one: the first changed result is {}",
                    causes.len(),
                    ids.join(", "),
                    self.who((t, changed.cause))
                ));
                continue;
            };
            if cause.id.1 != changed.cause {
                self.fails.push(format!(
                    "thread {t}: the cause reported is seq {}, the first changed result is {}",
                    cause.id.1,
                    self.who((t, changed.cause))
                ));
            }
            let named = serde_json::json!({ "a": cause.index.0, "b": cause.index.1 });
            for Consequence { line, names, a, b } in consequences {
                if *names != named {
                    self.fails.push(format!(
                        "line {line}: a consequence in thread {t} names the cause {names}, not {named}"
                    ));
                }
                if [a, b]
                    .iter()
                    .any(|id| id.is_some_and(|id| id.1 <= cause.id.1))
                {
                    self.fails.push(format!(
                        "line {line}: a consequence in thread {t} (A {a:?}, B {b:?}) is not after its cause (seq {})",
                        cause.id.1
                    ));
                }
            }
            if changed.more && consequences.is_empty() {
                self.fails.push(format!(
                    "thread {t}: the logs differ after the cause (seq {}), but no consequence is reported",
                    changed.cause
                ));
            }
        }
    }

    /// The summary: every call of both logs counted, `equal` right, and
    /// the causes and consequences the report has.
    fn summary(&mut self, report: &Report) {
        let mismatches =
            report.summary_mismatches(self.log_a.len(), self.log_b.len(), self.want.is_empty());
        self.fails.extend(mismatches);
        let Ok(summary) = report.summary() else {
            return;
        };
        let (said_causes, said_consequences) = summary.roles();
        let causes = self.causes.values().map(Vec::len).sum::<usize>() as u64;
        let consequences = self.consequences.values().map(Vec::len).sum::<usize>() as u64;
        if said_causes.as_u64() != Some(causes) || said_consequences.as_u64() != Some(consequences)
        {
            self.fails.push(format!(
                "the summary counts {said_causes} causes and {said_consequences} consequences, the report has {causes} and {consequences}"
            ));
        }
    }

    /// Checks `report` (`reader diff --format json`) against the logs.
    ///
    /// # Errors
    /// Logs of two different workloads.
    fn new(log_a: Log, log_b: Log, report: &Report) -> Result<Self, String> {
        let want = expected(&log_a, &log_b)?;
        let mut check = Check {
            log_a,
            log_b,
            want,
            causes: BTreeMap::new(),
            consequences: BTreeMap::new(),
            fails: Vec::new(),
        };
        for diff in &report.differences {
            check.difference(diff);
        }
        check.summary(report);
        check.roles();
        Ok(check)
    }
}

/// Runs the check; `Ok(false)` with the mismatches on stderr.
///
/// # Errors
/// An unreadable file, or logs of two different workloads.
pub fn run(args: &Args) -> Result<bool, String> {
    let log_a = read_log(&args.workload_a)?;
    let log_b = read_log(&args.workload_b)?;
    let report = args.report()?;
    let check = Check::new(log_a, log_b, &report)?;
    for f in &check.fails {
        eprintln!("cause-check: {f}");
    }
    let threads: BTreeSet<u32> = check.log_a.keys().map(|id| id.0).collect();
    let causes: Vec<String> = check
        .want
        .iter()
        .map(|(t, c)| format!("thread {t} seq {}", c.cause))
        .collect();
    println!(
        "cause-check: {} calls in A, {} in B, {} threads; {} changed, first changed results at {}; reader diff reported {} causes and {} consequences; {} mismatches",
        check.log_a.len(),
        check.log_b.len(),
        threads.len(),
        check.want.len(),
        if causes.is_empty() {
            "none".to_owned()
        } else {
            causes.join(", ")
        },
        check.causes.values().map(Vec::len).sum::<usize>(),
        check.consequences.values().map(Vec::len).sum::<usize>(),
        check.fails.len()
    );
    Ok(check.fails.is_empty())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Check;
    use crate::diffcheck::parse_log;
    use crate::diffreport::Report;

    const E2BIG: i64 = 7;

    fn tag(thread: u32, seq: u32) -> u64 {
        (0xa5 << 56) | (6 << 40) | (u64::from(thread) << 24) | u64::from(seq)
    }

    /// A log line: `ret` 3 is an fd, a negative one an errno.
    fn call(thread: u32, seq: u32, case: &str, ret: i64) -> String {
        let errno = (ret < 0).then_some(-ret);
        let size = (ret == -E2BIG).then_some(136);
        json!({
            "case": case, "thread": thread, "seq": seq,
            "args": [4096, 0, u64::MAX, u64::MAX, 8, tag(thread, seq)],
            "ret": ret, "errno": errno, "required_size": size, "size_after": size.or(Some(64)),
        })
        .to_string()
    }

    /// A difference line of thread `thread`: A's and B's (index, seq).
    fn diff(
        thread: u32,
        a: Option<(u64, u32)>,
        b: Option<(u64, u32)>,
        kinds: &[&str],
        cause: Option<(u64, u64)>,
    ) -> String {
        let side = |s: Option<(u64, u32)>| {
            s.map_or(
                serde_json::Value::Null,
                |(i, seq)| json!({ "index": i, "args.5": tag(thread, seq) }),
            )
        };
        json!({
            "event": "difference", "kinds": kinds,
            "role": if cause.is_some() { "consequence" } else { "cause" },
            "cause": cause.map(|(a, b)| json!({ "a": a, "b": b })),
            "a": side(a), "b": side(b),
        })
        .to_string()
    }

    fn summary(a: usize, b: usize, causes: usize, consequences: usize) -> String {
        json!({
            "event": "summary", "equal": causes == 0,
            "calls": { "a": a, "b": b, "causes": causes, "consequences": consequences },
        })
        .to_string()
    }

    /// Thread 1: seq 0 alike, seq 1 succeeds in A and gets E2BIG in B,
    /// which B retries (seq 2); thread 2 alike.
    fn logs() -> (String, String) {
        let a = [
            call(1, 0, "leader-size-136", 3),
            call(1, 1, "sibling-1-size-64", 4),
            call(2, 0, "leader-size-72", 3),
        ];
        let b = [
            call(1, 0, "leader-size-136", 3),
            call(1, 1, "sibling-1-size-64", -E2BIG),
            call(1, 2, "sibling-1-retry-size-136", 4),
            call(2, 0, "leader-size-72", 3),
        ];
        (a.join("\n"), b.join("\n"))
    }

    /// Thread 1's cause as `reader diff` must report it: seq 1, at index 1
    /// in both runs, whose result and size written back changed.
    fn the_cause() -> String {
        diff(
            1,
            Some((1, 1)),
            Some((1, 1)),
            &["ret", "required_size"],
            None,
        )
    }

    /// B's retry of thread 1's seq 1 (seq 2, at index 2 in B only) naming
    /// `cause` as its cause (`None`: reported as a cause itself).
    fn the_retry(cause: Option<(u64, u64)>) -> String {
        diff(1, None, Some((2, 2)), &["only_in_b"], cause)
    }

    fn fails(report: &[String]) -> Vec<String> {
        let (a, b) = logs();
        let (a, b) = (parse_log(&a, "A").unwrap(), parse_log(&b, "B").unwrap());
        let report = Report::parse(&report.join("\n"), "diff").unwrap();
        Check::new(a, b, &report).unwrap().fails
    }

    #[test]
    fn the_right_roles_pass() {
        let report = [the_cause(), the_retry(Some((1, 1))), summary(3, 4, 1, 1)];
        assert_eq!(fails(&report), Vec::<String>::new());
    }

    #[test]
    fn a_consequence_reported_as_a_second_cause_fails() {
        let report = [the_cause(), the_retry(None), summary(3, 4, 2, 0)];
        let f = fails(&report);
        assert!(f.iter().any(|f| f.contains("2 causes reported")), "{f:?}");
    }

    #[test]
    fn the_cause_on_a_later_call_fails() {
        let report = [the_retry(None), summary(3, 4, 1, 0)];
        let f = fails(&report);
        assert!(
            f.iter().any(|f| f.contains("is not one call of both runs")),
            "{f:?}"
        );
        assert!(
            f.iter().any(|f| f.contains("the cause reported is seq 2")),
            "{f:?}"
        );
    }

    #[test]
    fn a_consequence_naming_another_cause_or_none_fails() {
        let report = [the_cause(), the_retry(Some((0, 0))), summary(3, 4, 1, 1)];
        assert!(fails(&report).iter().any(|f| f.contains("names the cause")));
        let report = [the_cause(), summary(3, 4, 1, 0)];
        assert!(fails(&report)
            .iter()
            .any(|f| f.contains("no consequence is reported")));
    }

    #[test]
    fn a_difference_in_a_thread_that_agrees_fails() {
        let report = [
            the_cause(),
            the_retry(Some((1, 1))),
            diff(2, Some((0, 0)), Some((0, 0)), &["ret"], None),
            summary(3, 4, 2, 1),
        ];
        assert!(fails(&report)
            .iter()
            .any(|f| f.contains("whose logs agree")));
    }
}
