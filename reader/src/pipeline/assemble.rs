// SPDX-License-Identifier: GPL-2.0-only
//! The assembler: merge, pair, filter and output a stream of messages.

use std::io;

use super::{CallFilter, CpuSummary, DrainMsg, Event, Limits, Merger, Pairer, Sink, Summary};
use crate::call::CallState;
use crate::record::Record;
use crate::ring::CorruptRecord;

/// Merges, pairs and outputs a stream of [`DrainMsg`]s: the same code for a
/// live drain and for a replayed trace file.
pub struct Assembler<'s> {
    merger: Merger,
    pairer: Pairer,
    summary: Summary,
    sink: &'s mut dyn Sink,
    filter: Option<Box<dyn CallFilter + 's>>,
    events: Vec<Event>,
    /// The errors of the batch being pushed (kept: no allocation per
    /// batch).
    batch_errors: Vec<CorruptRecord>,
    live: usize,
}

impl std::fmt::Debug for Assembler<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Assembler")
            .field("merger", &self.merger)
            .field("summary", &self.summary)
            .finish_non_exhaustive()
    }
}

impl<'s> Assembler<'s> {
    /// An assembler for these CPUs' rings, writing to `sink`.
    pub fn new(cpus: &[u32], window_ns: u64, sink: &'s mut dyn Sink) -> Self {
        let mut summary = Summary::default();
        for &c in cpus {
            summary.cpus.insert(c, CpuSummary::default());
        }
        Assembler {
            merger: Merger::new(cpus, window_ns),
            pairer: Pairer::new(),
            summary,
            sink,
            filter: None,
            events: Vec::new(),
            batch_errors: Vec::new(),
            live: cpus.len(),
        }
    }

    /// Bounds the pairing state with these limits instead of the default
    /// ones (see [`crate::pipeline::Pairer`]); before any message.
    pub fn set_limits(&mut self, limits: Limits) {
        self.pairer.set_limits(limits);
    }

    /// ENTRYs waiting for their EXIT now, and LOST ranges held: the
    /// pairing state, bounded by its [`Limits`].
    #[must_use]
    pub fn held(&self) -> (usize, usize) {
        (self.pairer.pending(), self.pairer.lost_ranges())
    }

    /// Outputs only the calls `filter` accepts.
    pub fn set_filter(&mut self, filter: Box<dyn CallFilter + 's>) {
        self.filter = Some(filter);
    }

    /// Whether every ring is done.
    #[must_use]
    pub fn all_done(&self) -> bool {
        self.live == 0
    }

    /// Takes one message, and outputs what became safe to output.
    ///
    /// # Errors
    /// An output error (including `BrokenPipe`).
    pub fn push(&mut self, msg: DrainMsg) -> io::Result<()> {
        // A ring's first message other than DONE, from a CPU the run did
        // not start with: only in a trace of an earlier reader, whose
        // kernel gave a CPU its ring when it came online and which read
        // that ring from then on. (A DONE alone is such a ring that the
        // reader did not read.) Every reader now starts with every ring.
        if !matches!(msg, DrainMsg::Done { .. }) && self.summary.ring_joined(msg.cpu()) {
            self.live += 1;
        }
        match msg {
            DrainMsg::Start { cpu, start_pos } => {
                self.merger.start(cpu, start_pos);
                self.pairer.ring_start(cpu, start_pos);
                self.summary.cpus.entry(cpu).or_default().start_pos = Some(start_pos);
            }
            DrainMsg::Records { cpu, bytes } => {
                let mut errors = std::mem::take(&mut self.batch_errors);
                self.merger.push_batch(cpu, bytes, &mut errors);
                for bad in errors.drain(..) {
                    self.corrupt(&bad);
                }
                self.batch_errors = errors;
            }
            DrainMsg::Idle { cpu, time_ns } => self.merger.idle(cpu, time_ns),
            DrainMsg::Corrupt(bad) => self.corrupt(&bad),
            DrainMsg::Done {
                cpu,
                start_pos,
                counters,
                ..
            } => {
                self.merger.done(cpu);
                // A ring the run neither started with nor joined (in an
                // earlier reader's trace) was never live.
                if self.summary.ring_done(cpu, start_pos, counters) {
                    self.live = self.live.saturating_sub(1);
                }
            }
        }
        self.drain(false)?;
        self.sink.end_batch()
    }

    fn corrupt(&mut self, bad: &CorruptRecord) {
        tracing::warn!("{bad}");
        let c = self.summary.cpus.entry(bad.cpu).or_default();
        if bad.fatal {
            c.stopped = true;
        } else {
            c.skipped += 1;
        }
    }

    fn drain(&mut self, flush: bool) -> io::Result<()> {
        while let Some(rec) = self.merger.pop(flush) {
            let h = rec.header();
            let c = self.summary.cpus.entry(h.cpu).or_default();
            match &rec {
                Record::Entry(_) => c.entries += 1,
                Record::Exit(_) => c.exits += 1,
                Record::Lost(l) => {
                    c.lost_records += 1;
                    for (sum, n) in c.lost_reported.iter_mut().zip(l.body.lost) {
                        // Counts from the kernel or a file: saturate, never wrap.
                        *sum = sum.saturating_add(n);
                    }
                }
            }
            let mut events = std::mem::take(&mut self.events);
            self.pairer.push(rec, &mut events);
            let result = self.emit(&mut events);
            self.events = events;
            result?;
        }
        Ok(())
    }

    fn emit(&mut self, events: &mut Vec<Event>) -> io::Result<()> {
        for ev in events.drain(..) {
            match ev {
                Event::Call(call) => {
                    match call.state {
                        CallState::Complete => self.summary.complete += 1,
                        CallState::Unfinished => {
                            self.summary.unfinished += 1;
                            if call.exit_maybe_lost {
                                self.summary.unfinished_maybe_lost += 1;
                            }
                        }
                        CallState::EntryLost => self.summary.entry_lost += 1,
                        CallState::EntryMissing => self.summary.entry_missing += 1,
                        CallState::EntryGone => self.summary.entry_gone += 1,
                        CallState::EntryReadEarlier => self.summary.entry_read_earlier += 1,
                    }
                    if self.filter.as_ref().is_some_and(|f| !f.matches(&call)) {
                        self.summary.filtered_out += 1;
                        continue;
                    }
                    self.sink.call(&call)?;
                }
                Event::Lost(l) => self.sink.lost(&l)?,
            }
        }
        Ok(())
    }

    /// Outputs everything still held (the unfinished calls last), flushes
    /// the sink and returns the summary, with the output's result.
    pub fn finish(mut self) -> (Summary, io::Result<()>) {
        let result = self.finish_output();
        self.summary.late = self.merger.late();
        let pairing = self.pairer.stats();
        self.summary.settled_early = pairing.settled_early;
        self.summary.evicted = pairing.evicted;
        (self.summary, result)
    }

    fn finish_output(&mut self) -> io::Result<()> {
        self.drain(true)?;
        let mut left = self.pairer.finish();
        self.emit(&mut left)?;
        self.sink.flush()
    }

    /// The summary so far.
    #[must_use]
    pub fn summary(&self) -> &Summary {
        &self.summary
    }
}
