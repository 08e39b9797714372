//! `reader diff A B`: compares two runs of the same workload call by call,
//! for kernel regression testing (one kernel against another, or capture
//! on two kernel variants).
//!
//! Each run is a raw trace file (`reader --output`), decoded here into the
//! JSON line form, or the JSON Lines that `reader --format json` printed.
//! Only what the JSON line holds is used, so both inputs compare alike.
//!
//! * **Threads.** Calls are grouped per thread. When both runs have the
//!   same threads (pid, tid), threads are matched by tid; otherwise by spawn
//!   order: processes ranked by pid, threads by tid within their process
//!   ([`Matching`]). A thread of one run only has all its calls reported
//!   as only in that run.
//! * **Calls.** Within a matched thread, calls are aligned with Myers'
//!   diff (the `similar` crate) on an [`InputKey`] that leaves out what
//!   legitimately varies between runs (fd numbers, addresses, times): the
//!   syscall, flags, pid and cpu arguments, whether `group_fd` is an fd,
//!   the capture status, the declared size and the captured attr members.
//!   Aligned calls are compared; a replaced stretch is paired position by
//!   position, compared, and flagged "input differs"; what is left over is
//!   only in A or only in B. No call is dropped.
//! * **Outcomes** ([`Kind`]): the result (a success compares as a success,
//!   whatever the fd number, a failure by errno), `required_size` and
//!   whether the size was written back, the capture status and fault
//!   offset, the double fetch (with the kernel's copy), and the duration
//!   only with [`Options::duration_ratio`]. A half call (unfinished, or
//!   its ENTRY lost) is compared on what it has: EXIT fields when both
//!   have an EXIT, ENTRY fields when both have an ENTRY.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::call::Call;
use crate::decode::ATTR_MEMBERS;
use crate::output::call_json;
use crate::pipeline::{self, Assembler, Sink};
use crate::record::LostRecord;
use crate::trace;

/// Why a run could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// The file could not be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// A trace file that does not decode.
    #[error("{}: {source}", path.display())]
    Trace {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: crate::Error,
    },
    /// A line that is not one of the reader's JSON lines.
    #[error("{}:{line}: {why}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// The line number, from 1.
        line: usize,
        /// What is wrong with it.
        why: String,
    },
}

/// How threads of the two runs are paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matching {
    /// By tid when both runs have the same threads (pid, tid), else by order.
    Auto,
    /// By tid.
    Tid,
    /// By spawn order: processes ranked by pid, threads by tid within
    /// their process.
    Order,
}

/// Options of a comparison.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// How threads are paired.
    pub matching: Matching,
    /// Report durations whose ratio (slower / faster) exceeds this.
    pub duration_ratio: Option<f64>,
}

/// A kind of difference, in summary order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// Success against failure, or another errno.
    Ret,
    /// `arg0.required_size`.
    RequiredSize,
    /// `arg0.size_written`.
    SizeWritten,
    /// `arg0.status`.
    Status,
    /// `arg0.fault_offset`.
    FaultOffset,
    /// `arg0.double_fetch` or the kernel's copy of the attr.
    DoubleFetch,
    /// `syscall.duration_ns`, beyond the ratio given.
    Duration,
    /// The paired calls were not the same call ([`InputKey`]).
    Input,
    /// A call of A with no counterpart in B.
    OnlyInA,
    /// A call of B with no counterpart in A.
    OnlyInB,
}

impl Kind {
    /// Every kind, in summary order.
    pub const ALL: [Kind; 10] = [
        Kind::Ret,
        Kind::RequiredSize,
        Kind::SizeWritten,
        Kind::Status,
        Kind::FaultOffset,
        Kind::DoubleFetch,
        Kind::Duration,
        Kind::Input,
        Kind::OnlyInA,
        Kind::OnlyInB,
    ];

    /// The kind's name in the output.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Kind::Ret => "ret",
            Kind::RequiredSize => "required_size",
            Kind::SizeWritten => "size_written",
            Kind::Status => "status",
            Kind::FaultOffset => "fault_offset",
            Kind::DoubleFetch => "double_fetch",
            Kind::Duration => "duration",
            Kind::Input => "input",
            Kind::OnlyInA => "only_in_a",
            Kind::OnlyInB => "only_in_b",
        }
    }
}

/// The `pid` argument, with the caller's own pid or tid (which differ
/// between runs) as one value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PidArg {
    /// The calling process or thread itself, by number.
    Own,
    /// Any other value.
    Value(i64),
}

/// What identifies a call across runs: the alignment key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InputKey {
    nr: Option<u64>,
    flags: Option<u64>,
    pid: Option<PidArg>,
    cpu: Option<i64>,
    group_is_fd: Option<bool>,
    status: Option<String>,
    declared_size: Option<u64>,
    /// The captured members (`arg0.perf_event_attr`) as JSON.
    attr: Option<String>,
}

/// What a kernel change can alter in one call.
#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    has_entry: bool,
    has_exit: bool,
    state: String,
    ret: Option<i64>,
    errno: Option<i64>,
    errno_name: Option<String>,
    required_size: Option<u64>,
    size_written: Option<bool>,
    status: Option<String>,
    fault_offset: Option<u64>,
    double_fetch: Option<bool>,
    kernel_attr: Option<String>,
    duration_ns: Option<u64>,
}

/// One call of a run, reduced to what the comparison uses.
#[derive(Debug, Clone)]
pub struct DiffCall {
    pid: i64,
    tid: i64,
    call_id: Option<u64>,
    time_ns: Option<u64>,
    /// Argument word 5 (the e2e workloads' tag).
    word5: Option<u64>,
    key: InputKey,
    /// `perf_event_open({…}, pid=…, cpu=…, group_fd=…, flags=…)`.
    text: String,
    outcome: Outcome,
}

/// A run: its calls per thread, in order.
#[derive(Debug, Default)]
pub struct Run {
    threads: BTreeMap<(i64, i64), Vec<DiffCall>>,
    lost_records: u64,
}

impl Run {
    /// How many calls the run holds.
    #[must_use]
    pub fn calls(&self) -> usize {
        self.threads.values().map(Vec::len).sum()
    }

    /// Adds one JSON line (a call or a LOST record).
    ///
    /// # Errors
    /// A line that is not a call or LOST record of the reader's JSON.
    pub fn push_json(&mut self, v: &Value) -> Result<(), String> {
        match v.get("event").and_then(Value::as_str) {
            Some("call") => {
                let c = DiffCall::from_json(v)?;
                self.threads.entry((c.pid, c.tid)).or_default().push(c);
                Ok(())
            }
            Some("lost") => {
                self.lost_records += 1;
                Ok(())
            }
            _ => Err("not a call or lost line of `reader --format json`".to_owned()),
        }
    }
}

fn u64_of(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

fn i64_of(v: &Value, key: &str) -> Option<i64> {
    v.get(key).and_then(Value::as_i64)
}

fn str_of(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn bool_of(v: &Value, key: &str) -> Option<bool> {
    v.get(key).and_then(Value::as_bool)
}

/// An object member as compact JSON, `None` when null or absent.
fn json_of(v: &Value, key: &str) -> Option<String> {
    v.get(key).filter(|x| !x.is_null()).map(Value::to_string)
}

/// The attr's members as `{type=…, size=…, config=…, …}` in the uapi's
/// order (not the map's, which depends on `serde_json`'s features): those
/// three always, every other one when non-zero, by name where the JSON
/// names it.
fn attr_compact(attr: &Map<String, Value>, names: Option<&Map<String, Value>>) -> String {
    let mut parts = Vec::new();
    for m in ATTR_MEMBERS {
        let k = m.name;
        let Some(v) = attr.get(k) else {
            continue;
        };
        let always = matches!(k, "type" | "size" | "config");
        let zero = matches!(v, Value::Bool(false)) || v.as_u64() == Some(0) || v.is_null();
        if zero && !always {
            continue;
        }
        let shown = match (names.and_then(|n| n.get(k)).and_then(Value::as_str), v) {
            (Some(name), _) => name.to_owned(),
            (None, Value::Bool(b)) => u8::from(*b).to_string(),
            (None, v) => v.to_string(),
        };
        parts.push(format!("{k}={shown}"));
    }
    format!("{{{}}}", parts.join(", "))
}

/// The first argument as text: the attr, or what became of it.
fn arg0_text(v: &Value) -> String {
    let status = v.get("arg0.status").and_then(Value::as_str).unwrap_or("?");
    let fault = u64_of(v, "arg0.fault_offset");
    let attr = v.get("arg0.perf_event_attr").and_then(Value::as_object);
    let names = v
        .get("arg0.perf_event_attr_names")
        .and_then(Value::as_object);
    match (status, attr) {
        ("null_ptr", _) => "NULL".to_owned(),
        ("not_applicable", _) => "/* attr not read: flags rejected first */".to_owned(),
        ("invalid_size", _) => format!(
            "{{size={} /* invalid size */}}",
            u64_of(v, "arg0.declared_size").unwrap_or(0)
        ),
        (_, Some(a)) => {
            let mut s = attr_compact(a, names);
            match status {
                "fault" => {
                    let _ = write!(s, " /* fault at offset {} */", fault.unwrap_or(0));
                }
                "truncated" => s.push_str(" /* truncated */"),
                _ => {}
            }
            s
        }
        ("fault", None) => format!("/* unreadable: fault at offset {} */", fault.unwrap_or(0)),
        (other, None) => format!("/* {other} */"),
    }
}

impl DiffCall {
    /// Reduces one call line of the reader's JSON.
    ///
    /// # Errors
    /// A line without the keys every call line has.
    pub fn from_json(v: &Value) -> Result<Self, String> {
        let state = str_of(v, "state").ok_or("a call line without `state`")?;
        let pid = i64_of(v, "pid").ok_or("a call line without `pid`")?;
        let tid = i64_of(v, "tid").ok_or("a call line without `tid`")?;
        let has_entry = matches!(state.as_str(), "complete" | "unfinished");
        let has_exit = v.get("ret").is_some_and(|r| !r.is_null());
        let pid_arg = i64_of(v, "args.pid").map(|p| {
            if p > 0 && (p == pid || p == tid) {
                PidArg::Own
            } else {
                PidArg::Value(p)
            }
        });
        let key = InputKey {
            nr: u64_of(v, "syscall.nr"),
            flags: u64_of(v, "args.flags"),
            pid: pid_arg,
            cpu: i64_of(v, "args.cpu"),
            group_is_fd: i64_of(v, "args.group_fd").map(|g| g >= 0),
            status: str_of(v, "arg0.status"),
            declared_size: u64_of(v, "arg0.declared_size"),
            attr: json_of(v, "arg0.perf_event_attr"),
        };
        let text = if has_entry {
            let int = |k| i64_of(v, k).map_or_else(|| "?".to_owned(), |x| x.to_string());
            format!(
                "perf_event_open({}, pid={}, cpu={}, group_fd={}, flags={})",
                arg0_text(v),
                int("args.pid"),
                int("args.cpu"),
                int("args.group_fd"),
                str_of(v, "args.flags_names").unwrap_or_else(|| "?".to_owned()),
            )
        } else {
            "perf_event_open(/* entry lost */)".to_owned()
        };
        let outcome = Outcome {
            has_entry,
            has_exit,
            state,
            ret: i64_of(v, "ret"),
            errno: i64_of(v, "syscall.errno"),
            errno_name: str_of(v, "syscall.errno_name"),
            required_size: u64_of(v, "arg0.required_size"),
            size_written: bool_of(v, "arg0.size_written"),
            status: key.status.clone(),
            fault_offset: u64_of(v, "arg0.fault_offset"),
            double_fetch: bool_of(v, "arg0.double_fetch"),
            kernel_attr: json_of(v, "arg0.kernel_attr"),
            duration_ns: u64_of(v, "syscall.duration_ns"),
        };
        Ok(DiffCall {
            pid,
            tid,
            call_id: u64_of(v, "call_id"),
            time_ns: u64_of(v, "time_ns"),
            word5: u64_of(v, "args.5"),
            key,
            text,
            outcome,
        })
    }
}

/// A sink that keeps each call as the JSON line would show it.
struct Collect<'r> {
    run: &'r mut Run,
    line: Vec<u8>,
    pmus: crate::decode::PmuTypes,
}

impl Sink for Collect<'_> {
    fn call(&mut self, call: &Call) -> io::Result<()> {
        self.line.clear();
        call_json(call, &self.pmus, &mut self.line)?;
        let v: Value = serde_json::from_slice(&self.line).map_err(io::Error::other)?;
        self.run.push_json(&v).map_err(io::Error::other)
    }

    fn lost(&mut self, _: &LostRecord) -> io::Result<()> {
        self.run.lost_records += 1;
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Reads a run: a raw trace file, or the reader's JSON Lines (read line
/// by line: only the reduced calls stay in memory).
///
/// # Errors
/// An unreadable file, a trace that does not decode, a line that is not
/// the reader's JSON.
pub fn load(path: &Path) -> Result<Run, DiffError> {
    let read_err = |source| DiffError::Read {
        path: path.to_owned(),
        source,
    };
    let mut input = BufReader::new(File::open(path).map_err(read_err)?);
    let mut run = Run::default();
    if trace::is_trace(input.fill_buf().map_err(read_err)?) {
        let mut bytes = Vec::new();
        input.read_to_end(&mut bytes).map_err(read_err)?;
        let t = trace::read_trace(&bytes).map_err(|source| DiffError::Trace {
            path: path.to_owned(),
            source,
        })?;
        drop(bytes);
        if !t.complete {
            tracing::warn!(
                "{}: the trace file has no END frame: the recording was cut short",
                path.display()
            );
        }
        let mut sink = Collect {
            run: &mut run,
            line: Vec::with_capacity(4096),
            pmus: t.header.pmus.clone(),
        };
        let assembler = Assembler::new(&t.header.cpus, t.header.window_ns, &mut sink);
        pipeline::replay(t.msgs, assembler).map_err(read_err)?;
        return Ok(run);
    }
    let mut line = String::new();
    for n in 1.. {
        line.clear();
        let err = |why: String| DiffError::Json {
            path: path.to_owned(),
            line: n,
            why,
        };
        match input.read_line(&mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                return Err(err(
                    "neither a trace file nor JSON Lines (not UTF-8)".to_owned()
                ))
            }
            Err(e) => return Err(read_err(e)),
        }
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(&line).map_err(|e| {
            err(format!(
                "neither a trace file nor the reader's JSON Lines: {e}"
            ))
        })?;
        run.push_json(&v).map_err(err)?;
    }
    Ok(run)
}

/// A thread: (pid, tid).
pub type Thread = (i64, i64);

/// A thread of A and its counterpart in B (either may be missing).
type ThreadPair = (Option<Thread>, Option<Thread>);

/// One differing call (or a call of one run only).
#[derive(Debug)]
pub struct Difference<'r> {
    /// What differs, in [`Kind`] order.
    pub kinds: Vec<Kind>,
    /// The thread (pid, tid) of each run.
    pub thread: (Option<Thread>, Option<Thread>),
    /// The call of A with its index in its thread, if any.
    pub a: Option<(usize, &'r DiffCall)>,
    /// The call of B with its index in its thread, if any.
    pub b: Option<(usize, &'r DiffCall)>,
}

/// The counts of a comparison.
#[derive(Debug, Default, Clone)]
pub struct Summary {
    /// How threads were matched (`tid` or `order`).
    pub matched_by: &'static str,
    /// Threads (with calls) of A, of B, matched.
    pub threads: (usize, usize, usize),
    /// Threads of A only, of B only.
    pub threads_only: (usize, usize),
    /// Calls of A, of B.
    pub calls: (usize, usize),
    /// Calls paired and compared.
    pub compared: usize,
    /// Calls reported (differing, or in one run only).
    pub differing: usize,
    /// Calls per kind of difference.
    pub kinds: BTreeMap<Kind, usize>,
    /// LOST records of A, of B.
    pub lost_records: (u64, u64),
}

/// The result of [`diff`].
#[derive(Debug)]
pub struct Report<'r> {
    /// Every differing call, thread by thread, in call order.
    pub differences: Vec<Difference<'r>>,
    /// The counts.
    pub summary: Summary,
    duration_shown: bool,
}

impl Report<'_> {
    /// Whether the runs are equal.
    #[must_use]
    pub fn equal(&self) -> bool {
        self.differences.is_empty()
    }
}

/// Threads paired by spawn order: rank of the process by pid, rank of the
/// thread by tid within it.
fn order_ranks(run: &Run) -> BTreeMap<(usize, usize), (i64, i64)> {
    let mut by_pid: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for &(pid, tid) in run.threads.keys() {
        by_pid.entry(pid).or_default().push(tid);
    }
    let mut out = BTreeMap::new();
    for (p, (pid, mut tids)) in by_pid.into_iter().enumerate() {
        tids.sort_unstable();
        for (t, tid) in tids.into_iter().enumerate() {
            out.insert((p, t), (pid, tid));
        }
    }
    out
}

/// Pairs the threads of the two runs. By tid, a thread is its (pid, tid)
/// (the same thing, unless a run reused a tid in another process: then
/// those are two threads, not one whose calls would be lost).
fn pair_threads(a: &Run, b: &Run, m: Matching) -> (&'static str, Vec<ThreadPair>) {
    let by_tid = match m {
        Matching::Tid => true,
        Matching::Order => false,
        Matching::Auto => a.threads.keys().eq(b.threads.keys()),
    };
    if by_tid {
        let all: BTreeSet<Thread> = a.threads.keys().chain(b.threads.keys()).copied().collect();
        let pairs = all
            .into_iter()
            .map(|t| {
                (
                    a.threads.contains_key(&t).then_some(t),
                    b.threads.contains_key(&t).then_some(t),
                )
            })
            .collect();
        return ("tid", pairs);
    }
    let (ra, rb) = (order_ranks(a), order_ranks(b));
    let all: BTreeSet<(usize, usize)> = ra.keys().chain(rb.keys()).copied().collect();
    let pairs = all
        .into_iter()
        .map(|k| (ra.get(&k).copied(), rb.get(&k).copied()))
        .collect();
    ("order", pairs)
}

/// What differs between two paired calls.
fn compare(a: &Outcome, b: &Outcome, opts: &Options) -> Vec<Kind> {
    let mut kinds = Vec::new();
    if a.has_exit && b.has_exit {
        // A success is a success whatever the fd; a failure is its errno.
        let class = |o: &Outcome| o.errno.or(o.ret.filter(|r| *r < 0));
        if class(a) != class(b) {
            kinds.push(Kind::Ret);
        }
        if a.required_size != b.required_size {
            kinds.push(Kind::RequiredSize);
        }
        if a.size_written != b.size_written {
            kinds.push(Kind::SizeWritten);
        }
    }
    if a.has_entry && b.has_entry {
        if a.status != b.status {
            kinds.push(Kind::Status);
        }
        if a.fault_offset != b.fault_offset {
            kinds.push(Kind::FaultOffset);
        }
    }
    if a.has_exit
        && b.has_exit
        && (a.double_fetch != b.double_fetch || a.kernel_attr != b.kernel_attr)
    {
        kinds.push(Kind::DoubleFetch);
    }
    if let (Some(r), Some(x), Some(y)) = (opts.duration_ratio, a.duration_ns, b.duration_ns) {
        #[allow(clippy::cast_precision_loss)]
        let (lo, hi) = (x.min(y).max(1) as f64, x.max(y) as f64);
        if hi > lo * r {
            kinds.push(Kind::Duration);
        }
    }
    kinds
}

/// Compares run A with run B.
#[must_use]
pub fn diff<'r>(a: &'r Run, b: &'r Run, opts: &Options) -> Report<'r> {
    let (matched_by, pairs) = pair_threads(a, b, opts.matching);
    let mut summary = Summary {
        matched_by,
        threads: (a.threads.len(), b.threads.len(), 0),
        calls: (a.calls(), b.calls()),
        lost_records: (a.lost_records, b.lost_records),
        ..Summary::default()
    };
    let mut differences = Vec::new();
    for (ta, tb) in pairs {
        let ca: &'r [DiffCall] = ta
            .and_then(|t| a.threads.get(&t))
            .map_or(&[], Vec::as_slice);
        let cb: &'r [DiffCall] = tb
            .and_then(|t| b.threads.get(&t))
            .map_or(&[], Vec::as_slice);
        match (ta, tb) {
            (Some(_), Some(_)) => summary.threads.2 += 1,
            (Some(_), None) => summary.threads_only.0 += 1,
            (None, _) => summary.threads_only.1 += 1,
        }
        let ka: Vec<&InputKey> = ca.iter().map(|c| &c.key).collect();
        let kb: Vec<&InputKey> = cb.iter().map(|c| &c.key).collect();
        let hunks = similar::capture_diff_slices(similar::Algorithm::Myers, &ka, &kb);
        let mut push = |kinds: Vec<Kind>, ia: Option<usize>, ib: Option<usize>| {
            if kinds.is_empty() {
                return;
            }
            differences.push(Difference {
                kinds,
                thread: (ta, tb),
                a: ia.map(|i| (i, &ca[i])),
                b: ib.map(|i| (i, &cb[i])),
            });
        };
        for hunk in hunks {
            let (ia, la, ib, lb) = match hunk {
                similar::DiffOp::Equal {
                    old_index,
                    new_index,
                    len,
                } => (old_index, len, new_index, len),
                similar::DiffOp::Delete {
                    old_index, old_len, ..
                } => (old_index, old_len, 0, 0),
                similar::DiffOp::Insert {
                    new_index, new_len, ..
                } => (0, 0, new_index, new_len),
                similar::DiffOp::Replace {
                    old_index,
                    old_len,
                    new_index,
                    new_len,
                } => (old_index, old_len, new_index, new_len),
            };
            let paired = la.min(lb);
            for k in 0..paired {
                let (i, j) = (ia + k, ib + k);
                let mut kinds = compare(&ca[i].outcome, &cb[j].outcome, opts);
                if ca[i].key != cb[j].key {
                    kinds.push(Kind::Input);
                }
                summary.compared += 1;
                push(kinds, Some(i), Some(j));
            }
            for i in ia + paired..ia + la {
                push(vec![Kind::OnlyInA], Some(i), None);
            }
            for j in ib + paired..ib + lb {
                push(vec![Kind::OnlyInB], None, Some(j));
            }
        }
    }
    summary.differing = differences.len();
    for d in &differences {
        for k in &d.kinds {
            *summary.kinds.entry(*k).or_default() += 1;
        }
    }
    Report {
        differences,
        summary,
        duration_shown: opts.duration_ratio.is_some(),
    }
}

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
    if o.double_fetch == Some(true) {
        extra.push("double fetch".to_owned());
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

fn side_json(side: Option<(usize, &DiffCall)>, thread: Option<(i64, i64)>) -> Value {
    let Some((index, c)) = side else {
        return Value::Null;
    };
    let o = &c.outcome;
    json!({
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
        "arg0.required_size": o.required_size,
        "arg0.size_written": o.size_written,
        "arg0.status": o.status,
        "arg0.fault_offset": o.fault_offset,
        "arg0.double_fetch": o.double_fetch,
        "syscall.duration_ns": o.duration_ns,
    })
}

fn thread_label(d: &Difference<'_>) -> String {
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

impl Report<'_> {
    /// One line per differing call, then the summary.
    ///
    /// # Errors
    /// Only if writing fails.
    pub fn write_text<W: Write>(&self, out: &mut W) -> io::Result<()> {
        for d in &self.differences {
            let index = match (d.a, d.b) {
                (Some((i, _)), Some((j, _))) if i == j => format!("#{i}"),
                (Some((i, _)), Some((j, _))) => format!("#{i}/#{j}"),
                (Some((i, _)), None) => format!("#{i}/-"),
                (None, Some((j, _))) => format!("-/#{j}"),
                (None, None) => "#?".to_owned(),
            };
            let call = d.a.or(d.b).map_or("", |(_, c)| c.text.as_str());
            let kinds: Vec<&str> = d.kinds.iter().map(|k| k.name()).collect();
            writeln!(
                out,
                "{} {index} {call}: A = {} | B = {} [{}]",
                thread_label(d),
                outcome_text(d.a.map(|x| x.1), self.duration_shown),
                outcome_text(d.b.map(|x| x.1), self.duration_shown),
                kinds.join(", "),
            )?;
            if let (Some(_), Some((_, b)), true) = (d.a, d.b, d.kinds.contains(&Kind::Input)) {
                writeln!(out, "    B's call: {}", b.text)?;
            }
        }
        let s = &self.summary;
        writeln!(
            out,
            "summary: {} calls differ; {} compared (A: {} calls in {} threads, B: {} calls in {} threads; {} threads matched by {})",
            s.differing,
            s.compared,
            s.calls.0,
            s.threads.0,
            s.calls.1,
            s.threads.1,
            s.threads.2,
            s.matched_by,
        )?;
        if s.lost_records != (0, 0) {
            writeln!(
                out,
                "LOST records: {} in A, {} in B (calls may be missing)",
                s.lost_records.0, s.lost_records.1
            )?;
        }
        for k in Kind::ALL {
            if k == Kind::Duration && !self.duration_shown {
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
        writeln!(
            out,
            "{}",
            if self.equal() {
                "equal"
            } else {
                "the runs differ"
            }
        )
    }

    /// One JSON object per differing call, then a summary object.
    ///
    /// # Errors
    /// Only if writing fails.
    pub fn write_json<W: Write>(&self, out: &mut W) -> io::Result<()> {
        for d in &self.differences {
            let kinds: Vec<&str> = d.kinds.iter().map(|k| k.name()).collect();
            let v = json!({
                "event": "difference",
                "kinds": kinds,
                "input_differs": d.kinds.contains(&Kind::Input),
                "call": d.a.or(d.b).map(|(_, c)| c.text.as_str()),
                "b_call": d.b.filter(|_| d.kinds.contains(&Kind::Input)).map(|(_, c)| c.text.as_str()),
                "a": side_json(d.a, d.thread.0),
                "b": side_json(d.b, d.thread.1),
            });
            serde_json::to_writer(&mut *out, &v)?;
            out.write_all(b"\n")?;
        }
        let s = &self.summary;
        let v = json!({
            "event": "summary",
            "equal": self.equal(),
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
            },
            "differences": kinds_json(&s.kinds),
            "lost_records": { "a": s.lost_records.0, "b": s.lost_records.1 },
        });
        serde_json::to_writer(&mut *out, &v)?;
        out.write_all(b"\n")
    }
}
