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
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

/// The options of `diff-check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The workload's log of run A.
    #[arg(long)]
    workload_a: PathBuf,
    /// The workload's log of run B.
    #[arg(long)]
    workload_b: PathBuf,
    /// `reader diff --format json` of the two runs' traces.
    #[arg(long)]
    diff: PathBuf,
}

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

pub(crate) type CallId = (u32, u32);

pub(crate) fn read_log(path: &Path) -> Result<BTreeMap<CallId, Logged>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    parse_log(&text, &path.display().to_string())
}

/// The calls of a workload log's `text` (`name` for the errors).
pub(crate) fn parse_log(text: &str, name: &str) -> Result<BTreeMap<CallId, Logged>, String> {
    let mut out = BTreeMap::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let l: Logged = serde_json::from_str(line)
            .map_err(|e| format!("{name}:{}: not a workload line: {e}", i + 1))?;
        if out.insert((l.thread, l.seq), l).is_some() {
            return Err(format!(
                "{name}:{}: a second call with this thread and seq",
                i + 1
            ));
        }
    }
    Ok(out)
}

/// The (thread, seq) a tag names: `0xa5 << 56 | script << 40 | thread << 24 | seq`.
pub(crate) fn untag(tag: u64) -> Option<CallId> {
    (tag >> 56 == 0xa5).then(|| {
        let thread = u32::try_from((tag >> 24) & 0xffff).expect("16 bits");
        let seq = u32::try_from(tag & 0xff_ffff).expect("24 bits");
        (thread, seq)
    })
}

/// What the two logs say must differ: the call, and whether its result
/// class differs (`None`: a call of one log only).
fn expected(
    a: &BTreeMap<CallId, Logged>,
    b: &BTreeMap<CallId, Logged>,
) -> Result<BTreeMap<CallId, Option<bool>>, String> {
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
    log_a: BTreeMap<CallId, Logged>,
    log_b: BTreeMap<CallId, Logged>,
    want: BTreeMap<CallId, Option<bool>>,
    seen: BTreeSet<CallId>,
    fails: Vec<String>,
}

impl Check {
    /// "thread T seq S" and both logs' outcomes.
    fn who(&self, id: CallId) -> String {
        let side = |m: &BTreeMap<CallId, Logged>| {
            m.get(&id)
                .map_or_else(|| "no such call".to_owned(), Logged::describe)
        };
        format!(
            "thread {} seq {}: A {} | B {}",
            id.0,
            id.1,
            side(&self.log_a),
            side(&self.log_b)
        )
    }

    /// One difference line of `reader diff`.
    fn difference(&mut self, n: usize, diff: &Value) {
        let side = |s: &str| diff[s]["args.5"].as_u64().and_then(untag);
        let kinds: Vec<&str> = diff["kinds"]
            .as_array()
            .map(|k| k.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let id = match (side("a"), side("b")) {
            (Some(x), Some(y)) if x != y => {
                self.fails.push(format!(
                    "line {n}: pairs thread {} seq {} with thread {} seq {}",
                    x.0, x.1, y.0, y.1
                ));
                return;
            }
            (Some(x), _) | (None, Some(x)) => x,
            (None, None) => {
                self.fails
                    .push(format!("line {n}: a call without a workload tag: {diff}"));
                return;
            }
        };
        if !self.seen.insert(id) {
            self.fails.push(format!("{}: reported twice", self.who(id)));
        }
        let ok = match self.want.get(&id) {
            // The workloads agree.
            None => false,
            Some(None) => kinds.iter().any(|k| k.starts_with("only_in")),
            Some(Some(ret)) => {
                !kinds.iter().any(|k| k.starts_with("only_in")) && *ret == kinds.contains(&"ret")
            }
        };
        if !ok {
            self.fails.push(format!(
                "{}: reported as [{}]",
                self.who(id),
                kinds.join(", ")
            ));
        }
    }

    /// The summary line: every call of both logs counted, `equal` right.
    fn summary(&mut self, s: &Value) {
        let (na, nb) = (self.log_a.len() as u64, self.log_b.len() as u64);
        if s["calls"]["a"].as_u64() != Some(na) || s["calls"]["b"].as_u64() != Some(nb) {
            self.fails.push(format!(
                "the traces hold {} and {} calls, the workloads made {na} and {nb}",
                s["calls"]["a"], s["calls"]["b"],
            ));
        }
        if s["equal"].as_bool() != Some(self.want.is_empty()) {
            self.fails
                .push(format!("the summary says equal = {}", s["equal"]));
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
    let text = std::fs::read_to_string(&args.diff)
        .map_err(|e| format!("reading {}: {e}", args.diff.display()))?;
    let mut summaries = 0;
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let line: Value = serde_json::from_str(line)
            .map_err(|e| format!("{}:{}: not JSON: {e}", args.diff.display(), i + 1))?;
        if line["event"] == "summary" {
            summaries += 1;
            check.summary(&line);
        } else {
            check.difference(i + 1, &line);
        }
    }
    if summaries != 1 {
        check
            .fails
            .push(format!("{summaries} summary lines instead of one"));
    }
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
