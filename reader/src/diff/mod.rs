//! `reader diff A B`: compares two runs of the same workload call by call,
//! for kernel regression testing (one kernel against another, or capture
//! on two kernel variants).
//!
//! Each run is a raw trace file (`reader -w`), decoded here into the
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
//!   syscall, each argument as its row of the syscall table says
//!   ([`crate::syscall::Compare`]: for `perf_event_open` the flags, pid and
//!   cpu arguments and whether `group_fd` is an fd), the capture status,
//!   the declared size and the captured attr members.
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
//!
//! `load.rs` reads a run, `align.rs` pairs threads and calls and compares
//! them, `loss.rs` reads what a run lost ([`RunLoss`]: the kernel's final
//! counters, the LOST records' call ids), which decides whether a
//! comparison means anything. Printing the [`Report`] is the caller's: the `reader` binary
//! writes it as text or JSON Lines.

mod align;
mod load;
mod loss;

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;

use serde_json::Value;

pub use align::diff;
pub use load::load;
pub use loss::{LastRecord, LostStretch, RingLoss, RunLoss};

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
    /// The captured struct's `required_size` (`arg<N>.required_size`).
    RequiredSize,
    /// Its `size_written`.
    SizeWritten,
    /// Its capture `status`.
    Status,
    /// Its `fault_offset`.
    FaultOffset,
    /// Its `double_fetch`, or the kernel's copy of it.
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

/// An argument as `reader diff` matches it ([`crate::syscall::Compare`]).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ArgKey {
    /// Its value, as JSON.
    Value(Option<String>),
    /// A pid, the caller's own as one value.
    Pid(Option<PidArg>),
    /// Whether it is a file descriptor.
    IsFd(Option<bool>),
    /// Left out.
    Ignored,
}

/// What identifies a call across runs: the alignment key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InputKey {
    nr: Option<u64>,
    /// Each argument, in order.
    args: Vec<ArgKey>,
    status: Option<String>,
    declared_size: Option<u64>,
    /// The captured members (the captured pointer's decoded struct) as
    /// JSON.
    attr: Option<String>,
}

/// What a kernel change can alter in one call: the JSON line's values
/// (`None` where the line has `null` or no such key).
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Whether the ENTRY was seen.
    pub has_entry: bool,
    /// Whether the EXIT was seen.
    pub has_exit: bool,
    /// `state`: `complete`, `unfinished`, `entry_lost`, ….
    pub state: String,
    /// `syscall.ret`.
    pub ret: Option<i64>,
    /// `syscall.errno`.
    pub errno: Option<i64>,
    /// `syscall.errno_name`.
    pub errno_name: Option<String>,
    /// `arg0.required_size`.
    pub required_size: Option<u64>,
    /// `arg0.size_written`.
    pub size_written: Option<bool>,
    /// `arg0.status`.
    pub status: Option<String>,
    /// `arg0.fault_offset`.
    pub fault_offset: Option<u64>,
    /// `arg0.double_fetch`.
    pub double_fetch: Option<bool>,
    /// The kernel's copy of the attr members, as JSON (a double fetch).
    pub kernel_attr: Option<String>,
    /// `syscall.duration_ns`.
    pub duration_ns: Option<u64>,
}

/// One call of a run, reduced to what the comparison uses.
#[derive(Debug, Clone)]
pub struct DiffCall {
    pid: i64,
    tid: i64,
    /// `call_id`.
    pub call_id: Option<u64>,
    /// `time_ns`.
    pub time_ns: Option<u64>,
    /// Argument word 5 (the e2e workloads' tag).
    pub word5: Option<u64>,
    key: InputKey,
    /// The call as text: `perf_event_open({…}, pid=…, cpu=…, group_fd=…,
    /// flags=…)`.
    pub text: String,
    /// What is compared.
    pub outcome: Outcome,
    /// The keys of its syscall's captured pointer, if it has one.
    pub capture_keys: Option<&'static crate::syscall::CaptureKeys>,
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
    /// What A and B lost by their final counters, for the headline and
    /// the rings it names: set by the caller that read them
    /// ([`RunLoss::read`]), `None` otherwise.
    pub loss: Option<(RunLoss, RunLoss)>,
}

/// The result of [`diff`].
#[derive(Debug)]
pub struct Report<'r> {
    /// Every differing call, thread by thread, in call order.
    pub differences: Vec<Difference<'r>>,
    /// The counts.
    pub summary: Summary,
    /// Whether durations were compared ([`Options::duration_ratio`]), and
    /// so belong in the report.
    pub duration_shown: bool,
}

impl Report<'_> {
    /// Whether the runs are equal.
    #[must_use]
    pub fn equal(&self) -> bool {
        self.differences.is_empty()
    }
}
