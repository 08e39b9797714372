// SPDX-License-Identifier: GPL-2.0-only
//! From rings to calls: the drain thread, the time merge, pairing, the
//! summary, and the calls counted by outcome ([`Counts`], `reader -c`).
//!
//! One drain thread turns each ring in turn into [`DrainMsg`]s (the raw
//! bytes of the records of one drain pass, errors, idle marks, and the
//! final counters) and sends them over one queue, bounded in bytes. The
//! drain only moves bytes: it reads the records' headers to frame them,
//! nothing more, since it must keep up with the producers. The
//! [`Assembler`], on the calling thread, decodes and validates each record
//! and merges them in timestamp order ([`Merger`]), pairs ENTRY and EXIT by `call_id` ([`Pairer`]) and hands
//! calls and LOST records to a [`Sink`]. A raw trace file is the same
//! message stream written down ([`crate::trace`]), so `reader show`
//! replays it through the same [`Assembler`] and prints the same bytes.
//! A run that records one ([`run_to_trace`]) writes the stream down on a
//! spool thread as it comes, and its assembler reads the file behind it:
//! the printing may lag as far as the file grows, and the drain never
//! waits for it.
//!
//! # The reordering window
//!
//! Within a ring `time_ns` never decreases (the kernel reads the clock with
//! preemption disabled just before it reserves the record), so each ring's
//! records arrive sorted and a k-way merge of the rings' heads is sorted,
//! provided a record is emitted only when no ring can still deliver an
//! earlier one. A ring with queued records cannot (its future records come
//! after its head); a finished ring cannot; an *idle* ring (drained empty)
//! can still deliver a record whose clock was read before the drain pass
//! but that was published after it: the producer reads the clock, reserves,
//! writes and publishes with preemption disabled, which takes microseconds,
//! but a vCPU can be descheduled by its host in between. So a drain pass
//! that starts at `CLOCK_MONOTONIC` time `t` (read before loading `producer_pos`)
//! and finds the ring empty promises only that later records have
//! `time_ns >= t - window`. The merge holds a record back until every live
//! ring has either a queued record or such a promise past its time. The
//! window (default 50 ms, `--reorder-window-ms`) bounds how long a record
//! waits in `--follow` mode; the poll timeout keeps idle rings' promises
//! advancing. A record that arrives later than the window allowed (its time
//! is before one already printed) is still printed, right away, and counted
//! as `late` in the summary: it is never dropped. A one-shot drain or a
//! replay has no such race: each ring finishes, and the merge is exact.

mod assemble;
mod counts;
mod drain;
mod merge;
mod pair;
mod queue;
mod spool;
mod summary;

use std::io;

use crate::call::Call;
use crate::record::LostRecord;
use crate::ring::{ConsumerStats, CorruptRecord, RingCounters};

pub use assemble::Assembler;
pub use counts::{CountingSink, Counts, Outcome, Row};
pub use drain::{drain_once, replay, run, Mode, Recorder, Tick, Waker};
pub use merge::Merger;
pub use pair::{Event, Limits, PairStats, Pairer};
pub use queue::DEFAULT_QUEUE_BYTES;
pub use spool::run_to_trace;
pub use summary::{Check, CpuSummary, FinalCounters, Loss, Summary};

/// Default reordering window: 50 ms.
pub const DEFAULT_WINDOW_NS: u64 = 50_000_000;

/// What the drain tells the assembler about a ring. Also the unit of the raw trace
/// file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DrainMsg {
    /// The reader begins reading the ring: sent before its first pass.
    /// An EXIT whose ENTRY lies before `start_pos` in that ring (its
    /// `entry_pos`) had its ENTRY read by an earlier reader.
    Start {
        /// The ring's CPU.
        cpu: u32,
        /// The ring's consumer position when this reader began reading it.
        start_pos: u64,
    },
    /// The bytes of the records one drain pass framed, back to back, in
    /// ring order: the ring's bytes from one position to the next (their
    /// bodies are validated where they are decoded, [`Merger::push_batch`]).
    Records {
        /// The ring's CPU.
        cpu: u32,
        /// Raw record bytes.
        bytes: Vec<u8>,
    },
    /// The ring was empty at `CLOCK_MONOTONIC` time `time_ns` (read before the
    /// pass loaded `producer_pos`).
    Idle {
        /// The ring's CPU.
        cpu: u32,
        /// When the pass started.
        time_ns: u64,
    },
    /// A record that could not be decoded.
    Corrupt(CorruptRecord),
    /// The ring is finished: no more messages for it.
    Done {
        /// The ring's CPU.
        cpu: u32,
        /// The consumer position when this reader started.
        start_pos: u64,
        /// The kernel's counters after the last pass.
        counters: RingCounters,
        /// What the consumer saw.
        stats: ConsumerStats,
    },
}

impl DrainMsg {
    /// The ring the message is about.
    #[must_use]
    pub fn cpu(&self) -> u32 {
        match self {
            DrainMsg::Start { cpu, .. }
            | DrainMsg::Records { cpu, .. }
            | DrainMsg::Idle { cpu, .. }
            | DrainMsg::Done { cpu, .. } => *cpu,
            DrainMsg::Corrupt(c) => c.cpu,
        }
    }
}

/// Where calls and LOST records go.
pub trait Sink {
    /// One call, paired or not.
    ///
    /// # Errors
    /// An I/O error; `BrokenPipe` stops the reader quietly.
    fn call(&mut self, call: &Call) -> io::Result<()>;
    /// One LOST record, where it occurred in time.
    ///
    /// # Errors
    /// As for [`Sink::call`].
    fn lost(&mut self, lost: &LostRecord) -> io::Result<()>;
    /// The end of what one message (a drain pass) made safe to output: a
    /// live sink flushes here, once per batch rather than per line.
    ///
    /// # Errors
    /// As for [`Sink::call`].
    fn end_batch(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Flushes buffered output.
    ///
    /// # Errors
    /// As for [`Sink::call`].
    fn flush(&mut self) -> io::Result<()>;
}

/// The seam for a call filter: calls it rejects are counted in
/// the summary but not output.
pub trait CallFilter {
    /// Whether to output this call.
    fn matches(&self, call: &Call) -> bool;
}
