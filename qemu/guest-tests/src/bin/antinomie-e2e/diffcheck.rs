// SPDX-License-Identifier: GPL-2.0-only
//! `antinomie-e2e diff-check --workload-a A.jsonl --workload-b B.jsonl
//! --diff DIFF.jsonl`: checks `reader diff --format json` against the two
//! workloads' own logs.
//!
//! The two logs are the same seeded workload (`antinomie-workload random
//! --seed S`) run on two kernels, each under capture. From the logs alone,
//! per call (thread, seq): the result class (success, or the errno), the
//! size read back after `E2BIG` and the `u32` at offset 4 after the call
//! give the exact set of calls whose outcome differs. `reader diff` must
//! report every one of them and no other call, name each by the tag the
//! workload put in argument word 5, report `ret` exactly where the result
//! class differs, and count all calls of both logs (nothing lost).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;

use crate::diffreport::{numbered_lines, Args, CallId, Difference};

/// What the check needs of one logged call.
#[derive(Debug, Deserialize)]
pub(crate) struct Logged {
    pub(crate) case: String,
    pub(crate) thread: u32,
    pub(crate) seq: u32,
    pub(crate) args: [u64; 6],
    /// The caller's `getpid()` and `gettid()`.
    #[serde(default)]
    pid: Option<i32>,
    #[serde(default)]
    tid: Option<i32>,
    ret: i64,
    errno: Option<i32>,
    pub(crate) required_size: Option<u32>,
    pub(crate) size_after: Option<u32>,
}

/// An argument word as two runs of one workload compare it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Word {
    /// The `pid` word (1) naming the caller itself, by its pid or its
    /// tid: the number differs between runs, the call does not.
    Own,
    Raw(u64),
}

impl Logged {
    /// Argument word `w`, with a `pid` equal to the caller's own pid or
    /// tid as [`Word::Own`] (as `reader diff` compares it).
    pub(crate) fn word(&self, w: usize) -> Word {
        // The kernel reads the pid word as a pid_t: its low 32 bits.
        let pid_t = |id: i32| u64::from(u32::from_ne_bytes(id.to_ne_bytes()));
        let own = |id: Option<i32>| id.is_some_and(|id| self.args[w] & 0xffff_ffff == pid_t(id));
        if w == 1 && (own(self.pid) || own(self.tid)) {
            Word::Own
        } else {
            Word::Raw(self.args[w])
        }
    }

    /// Success, or the errno.
    pub(crate) fn class(&self) -> Option<i32> {
        (self.ret < 0).then_some(self.errno.unwrap_or(0))
    }

    pub(crate) fn describe(&self) -> String {
        let class = match self.class() {
            None => "success".to_owned(),
            Some(e) => format!("errno {e}"),
        };
        format!(
            "{class}, required_size {:?}, size after {:?}",
            self.required_size, self.size_after
        )
    }
}

/// A workload's log: its calls by (thread, seq).
pub(crate) type Log = BTreeMap<CallId, Logged>;

/// "thread T seq S" and both logs' outcomes of that call.
pub(crate) fn describe_call(log_a: &Log, log_b: &Log, id: CallId) -> String {
    let side = |m: &Log| {
        m.get(&id)
            .map_or_else(|| "no such call".to_owned(), Logged::describe)
    };
    format!(
        "thread {} seq {}: A {} | B {}",
        id.0,
        id.1,
        side(log_a),
        side(log_b)
    )
}

pub(crate) fn read_log(path: &Path) -> Result<Log, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    parse_log(&text, &path.display().to_string())
}

/// The calls of a workload log's `text` (`name` for the errors).
pub(crate) fn parse_log(text: &str, name: &str) -> Result<Log, String> {
    let mut out = BTreeMap::new();
    for (n, line) in numbered_lines(text) {
        let l: Logged = serde_json::from_str(line)
            .map_err(|e| format!("{name}:{n}: not a workload line: {e}"))?;
        if out.insert((l.thread, l.seq), l).is_some() {
            return Err(format!(
                "{name}:{n}: a second call with this thread and seq"
            ));
        }
    }
    Ok(out)
}

/// What the two logs say must differ: the call, and whether its result
/// class differs (`None`: a call of one log only).
fn expected(a: &Log, b: &Log) -> Result<BTreeMap<CallId, Option<bool>>, String> {
    let mut out = BTreeMap::new();
    for (id, la) in a {
        let Some(lb) = b.get(id) else {
            out.insert(*id, None);
            continue;
        };
        // Word 3 (group_fd) may be an fd, whose number varies.
        if la.case != lb.case || [1, 2, 4, 5].iter().any(|&w| la.word(w) != lb.word(w)) {
            return Err(format!(
                "thread {} seq {}: the logs made different calls ({} / {}): not one workload",
                id.0, id.1, la.case, lb.case
            ));
        }
        let ret = la.class() != lb.class();
        if ret || la.required_size != lb.required_size || la.size_after != lb.size_after {
            out.insert(*id, Some(ret));
        }
    }
    for id in b.keys().filter(|id| !a.contains_key(id)) {
        out.insert(*id, None);
    }
    Ok(out)
}

/// The check's state: the logs, what must differ, what was found.
struct Check {
    log_a: Log,
    log_b: Log,
    want: BTreeMap<CallId, Option<bool>>,
    seen: BTreeSet<CallId>,
    fails: Vec<String>,
}

impl Check {
    fn who(&self, id: CallId) -> String {
        describe_call(&self.log_a, &self.log_b, id)
    }

    /// One difference line of `reader diff`: one call of both runs.
    fn difference(&mut self, diff: &Difference) {
        let id = match diff.call(|x, y| x == y) {
            Ok(id) => id,
            Err(f) => {
                self.fails.push(f);
                return;
            }
        };
        if !self.seen.insert(id) {
            self.fails.push(format!("{}: reported twice", self.who(id)));
        }
        let ok = match self.want.get(&id) {
            // The workloads agree.
            None => false,
            Some(None) => diff.one_run_only(),
            Some(Some(ret)) => !diff.one_run_only() && *ret == diff.has("ret"),
        };
        if !ok {
            self.fails.push(format!(
                "{}: reported as [{}]",
                self.who(id),
                diff.kinds.join(", ")
            ));
        }
    }
}

/// Runs the check; `Ok(false)` with the mismatches on stderr.
///
/// # Errors
/// An unreadable file, or logs of two different workloads.
pub fn run(args: &Args) -> Result<bool, String> {
    let log_a = read_log(&args.workload_a)?;
    let log_b = read_log(&args.workload_b)?;
    let want = expected(&log_a, &log_b)?;
    let mut check = Check {
        log_a,
        log_b,
        want,
        seen: BTreeSet::new(),
        fails: Vec::new(),
    };
    let report = args.report()?;
    for diff in &report.differences {
        check.difference(diff);
    }
    let summary_mismatches =
        report.summary_mismatches(check.log_a.len(), check.log_b.len(), check.want.is_empty());
    check.fails.extend(summary_mismatches);
    let missing: Vec<CallId> = check
        .want
        .keys()
        .filter(|id| !check.seen.contains(id))
        .copied()
        .collect();
    for id in missing {
        let f = format!("{}: not reported", check.who(id));
        check.fails.push(f);
    }
    for f in &check.fails {
        eprintln!("diff-check: {f}");
    }
    let by_ret = check.want.values().filter(|r| **r == Some(true)).count();
    println!(
        "diff-check: {} calls in A, {} in B; {} must differ ({by_ret} by result); reader diff reported {}; {} mismatches",
        check.log_a.len(),
        check.log_b.len(),
        check.want.len(),
        check.seen.len(),
        check.fails.len()
    );
    Ok(check.fails.is_empty())
}

#[cfg(test)]
mod tests {
    use super::{parse_log, Word};

    /// One call of thread 1 whose pid word is `pid_word`, made by
    /// process `pid`, thread `tid`.
    fn call(pid_word: u64, pid: i32, tid: i32) -> String {
        serde_json::json!({
            "case": "random", "thread": 1, "seq": 0, "pid": pid, "tid": tid,
            "args": [4096, pid_word, u64::MAX, u64::MAX, 8, 0],
            "ret": -22, "errno": 22, "required_size": null, "size_after": 64,
        })
        .to_string()
    }

    fn pid_word(line: &str) -> Word {
        parse_log(line, "log").unwrap()[&(1, 0)].word(1)
    }

    #[test]
    fn the_callers_own_pid_or_tid_compares_as_own() {
        assert_eq!(pid_word(&call(301, 300, 301)), Word::Own);
        assert_eq!(pid_word(&call(300, 300, 301)), Word::Own);
        // A pid_t is the word's low 32 bits.
        assert_eq!(pid_word(&call(0x1_0000_012d, 300, 301)), Word::Own);
        assert_eq!(pid_word(&call(30000, 300, 301)), Word::Raw(30000));
        assert_eq!(pid_word(&call(u64::MAX, 300, 301)), Word::Raw(u64::MAX));
    }
}
