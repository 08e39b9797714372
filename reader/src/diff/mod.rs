// SPDX-License-Identifier: GPL-2.0-only
//! `reader diff A B`: compares two runs of the same workload call by call,
//! for kernel regression testing (one kernel against another, or capture
//! on two kernel variants).
//!
//! Each run is a raw trace file (`reader -w`), decoded call by call with
//! the library's call assembly, or the JSON Lines that `reader --format
//! json` printed, parsed line by line. Either way each call is reduced on
//! arrival to a [`DiffCall`]: typed keys and outcomes, the same from both
//! inputs, so a trace and its JSON Lines compare alike.
//!
//! * **Streaming.** Both runs are read at once, calls in time order,
//!   interleaved across threads, each into its thread's queue; the next
//!   call is read from the run with fewer calls waiting. A call leaves its
//!   queue as soon as it is paired or reported, so memory is bounded by
//!   the alignment window ([`Options::window`] calls per thread and run),
//!   not by the length of the runs.
//! * **Threads.** With [`Matching::Tid`] a thread is paired with the same
//!   (pid, tid) of the other run. Otherwise processes are ranked by first
//!   appearance and threads paired within the process of the same rank.
//!   With [`Matching::Order`] a thread is paired with the first thread of
//!   the other run still without a counterpart whose first call is the
//!   same call (threads started together race to their first call, but
//!   each makes its own calls), else with one that has waited a window of
//!   calls for a counterpart; else it waits for one. With
//!   [`Matching::Auto`] a thread is paired with the other run's thread of
//!   the same (pid, tid) if there is one (a replay), else by rank in its
//!   process's tid order: the k-th thread by ascending tid of A with the
//!   k-th of B, as a process's threads get increasing tids in the order
//!   it starts them whatever other tasks take tids in between. A rank is
//!   only known once the threads with smaller tids have called, so a
//!   thread's calls wait unpaired until its process has made half a
//!   window of calls since its first call (or the runs end); a thread
//!   with a smaller tid that calls later still gets the next rank free.
//!   A thread of one run only has all its calls reported as only in that
//!   run.
//! * **Calls.** Within a matched thread, calls are aligned on an
//!   [`InputKey`] that leaves out what legitimately varies between runs
//!   (fd numbers, addresses, times): the syscall, each argument as its
//!   row of the syscall table says ([`crate::syscall::Compare`]: for
//!   `perf_event_open` the flags, pid and cpu arguments and whether
//!   `group_fd` is an fd), the capture status, the declared size and the
//!   captured attr members. Heads with the same key are paired and
//!   compared. When the heads differ, the nearest common call is the
//!   anchor: the pair (i, j) of equal keys with the least i + j among the
//!   queued calls, taken once no nearer one can still arrive. The calls
//!   before it are a replaced stretch: paired position by position,
//!   compared and flagged "input differs" unless the caller made the same
//!   call ([`InputKey::same_input`]: the record holds the attr as the
//!   kernel read it, so a kernel that stopped reading earlier changes the
//!   status, an outcome, not the input); what is left over is only in A
//!   or only in B. Heads that are the same call so pair at once, whatever
//!   each kernel read. No call is dropped.
//! * **Past the window.** When a thread's queue in either run reaches the
//!   window with no common call in sight (or with nothing queued in the
//!   other run), everything queued for that thread is reported as one
//!   replaced stretch (as above) and alignment starts afresh after it;
//!   the summary counts these overflows. So calls that match only more
//!   than a window apart (a long divergent stretch, a thread that far
//!   ahead in one run, a thread of one run only) are reported as
//!   differing, never silently skipped, and memory stays bounded.
//! * **Outcomes** ([`Kind`]): the result (a success compares as a success,
//!   whatever the fd number, a failure by errno), `required_size` and
//!   whether the size was written back, the capture status and fault
//!   offset, and the duration only with [`Options::duration_ratio`]. A half call (unfinished, or
//!   its ENTRY lost) is compared on what it has: EXIT fields when both
//!   have an EXIT, ENTRY fields when both have an ENTRY.
//! * **Divergence.** A program that reacts to results makes other calls
//!   after the first result that changed, so per thread the first
//!   differing call is reported as the [`Role::Cause`] and every later
//!   difference of that thread (input differences, calls of one run only,
//!   other changed outcomes) as a [`Role::Consequence`] of it. The cause
//!   is a changed outcome, or, when a thread's calls part with no changed
//!   outcome before (a cause the capture does not see), the first call
//!   that differs in input or is in one run only.
//!
//! `load.rs` reads a run, `align.rs` pairs threads and calls and compares
//! them, `loss.rs` reads what a run lost ([`RunLoss`]: the kernel's final
//! counters, the LOST records' call ids), which decides whether a
//! comparison means anything. Printing each [`Difference`] and the
//! [`Summary`] is the caller's: the `reader` binary writes them as text
//! or JSON Lines.

mod align;
mod load;
mod loss;

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;

pub use align::{diff, Differ, Side};
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
    /// The report could not be written.
    #[error("writing the report: {0}")]
    Output(#[source] io::Error),
}

/// How threads of the two runs are paired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Matching {
    /// By tid where the runs' tids agree, else by rank in tid order:
    /// within a process of the same rank, the thread at the same place in
    /// its process's ascending tids, as another run of the same program
    /// gives its threads other tids in the same order, even when other
    /// tasks take tids between them.
    Auto,
    /// By tid.
    Tid,
    /// By order of first appearance: of the processes, and of the
    /// threads within each.
    Order,
}

/// Options of a comparison.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// How threads are paired.
    pub matching: Matching,
    /// Report durations whose ratio (slower / faster) exceeds this.
    pub duration_ratio: Option<f64>,
    /// The alignment window: how many calls of one thread of one run may
    /// wait for their counterpart ([`DEFAULT_WINDOW`]).
    pub window: usize,
}

/// The default alignment window: a divergent stretch or a lead of one
/// run over the other of up to this many calls per thread is aligned
/// exactly; memory stays below about 1 KB a call times this, per thread
/// and run.
pub const DEFAULT_WINDOW: usize = 1024;

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
    /// `syscall.duration_ns`, beyond the ratio given.
    Duration,
    /// The paired calls were not the same call ([`InputKey::same_input`]).
    Input,
    /// A call of A with no counterpart in B.
    OnlyInA,
    /// A call of B with no counterpart in A.
    OnlyInB,
}

impl Kind {
    /// Every kind, in summary order.
    pub const ALL: [Kind; 9] = [
        Kind::Ret,
        Kind::RequiredSize,
        Kind::SizeWritten,
        Kind::Status,
        Kind::FaultOffset,
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

impl InputKey {
    /// Whether the two are the same call as its caller made it: the
    /// syscall and the arguments equal, and the declared size and the
    /// captured members equal wherever both kernels read them. The record
    /// holds the attr as the kernel read it, so a kernel that stopped
    /// earlier (an invalid size, a fault, invalid flags, which read no
    /// size: 0) has another status and fewer or no members: that is the
    /// call's outcome ([`Kind::Status`]), not another input. The members
    /// compare as one: two kernels that both copied them, by different
    /// sizes, differ in input.
    #[must_use]
    pub fn same_input(&self, other: &InputKey) -> bool {
        // Equal where both have a value.
        fn agree<T: PartialEq>(a: Option<T>, b: Option<T>) -> bool {
            a.zip(b).is_none_or(|(a, b)| a == b)
        }
        let read = |s: Option<u64>| s.filter(|&s| s != 0);
        self.nr == other.nr
            && self.args == other.args
            && agree(read(self.declared_size), read(other.declared_size))
            && agree(self.attr.as_ref(), other.attr.as_ref())
    }
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
    /// The call as text ([`DiffCall::text`]).
    text: CallText,
    /// What is compared.
    pub outcome: Outcome,
    /// The keys of its syscall's captured pointer, if it has one.
    pub capture_keys: Option<&'static crate::syscall::CaptureKeys>,
}

/// A call's text: made on reading a JSON line (which holds every key
/// the text shows), or when asked for from a decoded call.
#[derive(Debug, Clone)]
enum CallText {
    Ready(String),
    Decoded(Box<(crate::call::Call, std::sync::Arc<crate::decode::PmuTypes>)>),
}

/// A thread: (pid, tid).
pub type Thread = (i64, i64);

/// Where a difference stands in its thread's divergence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The first difference of its thread.
    Cause,
    /// A later difference of the same thread: the index of the cause's
    /// call in A and in B (a call of one run only has one).
    Consequence {
        /// The cause's index in A's thread.
        a: Option<usize>,
        /// The cause's index in B's thread.
        b: Option<usize>,
    },
}

/// One differing call (or a call of one run only).
#[derive(Debug)]
pub struct Difference {
    /// What differs, in [`Kind`] order.
    pub kinds: Vec<Kind>,
    /// The thread (pid, tid) of each run.
    pub thread: (Option<Thread>, Option<Thread>),
    /// The call of A with its index in its thread, if any.
    pub a: Option<(usize, DiffCall)>,
    /// The call of B with its index in its thread, if any.
    pub b: Option<(usize, DiffCall)>,
    /// Cause or consequence.
    pub role: Role,
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
    /// Differences reported as a cause (one per thread that diverges).
    pub causes: usize,
    /// Differences reported as a consequence of their thread's cause.
    pub consequences: usize,
    /// Calls per kind of difference.
    pub kinds: BTreeMap<Kind, usize>,
    /// LOST records of A, of B.
    pub lost_records: (u64, u64),
    /// The alignment window used ([`Options::window`]).
    pub window: usize,
    /// How often a thread's queue reached the window with no common call
    /// in sight (its queued calls then reported as a replaced stretch).
    pub window_overflows: usize,
    /// What A and B lost by their final counters, for the headline and
    /// the rings it names: set by the caller that read them
    /// ([`RunLoss::read`]), `None` otherwise.
    pub loss: Option<(RunLoss, RunLoss)>,
    /// Whether durations were compared ([`Options::duration_ratio`]), and
    /// so belong in the report.
    pub duration_shown: bool,
}

impl Summary {
    /// Whether the runs are equal.
    #[must_use]
    pub fn equal(&self) -> bool {
        self.differing == 0
    }
}
