//! From rings to calls: drain threads, the time merge, pairing, the
//! summary.
//!
//! One drain thread per CPU turns its ring into [`DrainMsg`]s (the raw bytes
//! of the valid records of one drain pass, errors, idle marks, and the final
//! counters) and sends them over one crossbeam channel. The
//! [`Assembler`], on the calling thread, merges them in timestamp order
//! ([`Merger`]), pairs ENTRY and EXIT by `call_id` ([`Pairer`]) and hands
//! calls and LOST records to a [`Sink`]. A raw trace file is the same
//! message stream written down ([`crate::trace`]), so `reader show`
//! replays it through the same [`Assembler`] and prints the same bytes.
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

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt::Write as _;
use std::io;
use std::thread;

use antinomie_abi as abi;
use crossbeam_channel::{Receiver, Sender};

use crate::call::{lost_reason, Call, CallState};
use crate::record::{self, LostRecord, Record};
use crate::ring::{ConsumerStats, CorruptRecord, RingConsumer, RingCounters, RingMemory};

/// Default reordering window: 50 ms.
pub const DEFAULT_WINDOW_NS: u64 = 50_000_000;

/// What a drain thread tells the assembler. Also the unit of the raw trace
/// file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DrainMsg {
    /// The bytes of the valid records of one drain pass, back to back, in
    /// ring order.
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
            DrainMsg::Records { cpu, .. }
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
    /// Flushes buffered output.
    ///
    /// # Errors
    /// As for [`Sink::call`].
    fn flush(&mut self) -> io::Result<()>;
}

/// The seam for a call filter (issue 5): calls it rejects are counted in
/// the summary but not output.
pub trait CallFilter {
    /// Whether to output this call.
    fn matches(&self, call: &Call) -> bool;
}

#[derive(Debug, Default)]
struct Lane {
    queue: VecDeque<Record>,
    frontier: u64,
    done: bool,
}

/// Merges the rings' records in `(time_ns, cpu)` order with a bounded
/// reordering window; see the module documentation.
#[derive(Debug)]
pub struct Merger {
    lanes: BTreeMap<u32, Lane>,
    window_ns: u64,
    last_time: u64,
    late: u64,
}

impl Merger {
    /// A merger over these CPUs' rings.
    #[must_use]
    pub fn new(cpus: &[u32], window_ns: u64) -> Self {
        Merger {
            lanes: cpus.iter().map(|&c| (c, Lane::default())).collect(),
            window_ns,
            last_time: 0,
            late: 0,
        }
    }

    /// Records emitted with a time before one already emitted.
    #[must_use]
    pub fn late(&self) -> u64 {
        self.late
    }

    /// Queues the records of a [`DrainMsg::Records`]. Records that do not
    /// parse (the drain thread validated them, so only a corrupt trace file
    /// has any) end the chunk and are returned as errors.
    pub fn push_records(&mut self, cpu: u32, bytes: &[u8]) -> Option<CorruptRecord> {
        let lane = self.lanes.entry(cpu).or_default();
        let mut off = 0usize;
        while off < bytes.len() {
            let rest = &bytes[off..];
            let parsed = record::parse_header(rest, rest.len() as u64)
                .and_then(|h| record::parse(&rest[..h.size as usize]).map(|v| (h.size, v)));
            match parsed {
                Ok((size, view)) => {
                    lane.queue.push_back(Record::from(view));
                    off += size as usize;
                }
                Err(error) => {
                    return Some(CorruptRecord {
                        cpu,
                        pos: off as u64,
                        offset: off as u64,
                        error,
                        fatal: true,
                    })
                }
            }
        }
        None
    }

    /// Notes that `cpu`'s ring was empty at `time_ns`.
    pub fn idle(&mut self, cpu: u32, time_ns: u64) {
        let lane = self.lanes.entry(cpu).or_default();
        lane.frontier = lane.frontier.max(time_ns.saturating_sub(self.window_ns));
    }

    /// Notes that `cpu`'s ring is finished.
    pub fn done(&mut self, cpu: u32) {
        self.lanes.entry(cpu).or_default().done = true;
    }

    /// The next record in time order, if it is safe to emit now (or, with
    /// `flush`, whatever is queued).
    pub fn pop(&mut self, flush: bool) -> Option<Record> {
        let (&cpu, head_time) = self
            .lanes
            .iter()
            .filter_map(|(cpu, l)| l.queue.front().map(|r| (cpu, r.header().time_ns)))
            .min_by_key(|&(cpu, t)| (t, *cpu))?;
        if !flush {
            let blocked = self
                .lanes
                .values()
                .any(|l| l.queue.is_empty() && !l.done && l.frontier <= head_time);
            if blocked {
                return None;
            }
        }
        let rec = self.lanes.get_mut(&cpu)?.queue.pop_front()?;
        if head_time < self.last_time {
            self.late += 1;
            tracing::warn!(
                cpu,
                time_ns = head_time,
                "record arrived after the reordering window; printed out of order"
            );
        } else {
            self.last_time = head_time;
        }
        Some(rec)
    }
}

/// What pairing produces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A call.
    Call(Call),
    /// A LOST record.
    Lost(LostRecord),
}

/// Pairs ENTRY and EXIT by `call_id`, across CPUs.
#[derive(Debug, Default)]
pub struct Pairer {
    pending: HashMap<u64, record::EntryRecord>,
    lost_ranges: Vec<(u64, u64)>,
}

impl Pairer {
    /// A pairer with nothing pending.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one record in time order; returns the events it completes.
    pub fn push(&mut self, rec: Record, out: &mut Vec<Event>) {
        match rec {
            Record::Entry(e) => {
                if let Some(old) = self.pending.insert(e.header.call_id, e) {
                    // The same id twice: the first one's EXIT never came.
                    out.push(Event::Call(self.unfinished(old)));
                }
            }
            Record::Exit(x) => {
                let id = x.header.call_id;
                let (entry, state) = match self.pending.remove(&id) {
                    Some(e) => (Some(e), CallState::Complete),
                    None if x.body.flags & abi::EXIT_F_ENTRY_LOST != 0 => {
                        (None, CallState::EntryLost)
                    }
                    None => (None, CallState::EntryMissing),
                };
                out.push(Event::Call(Call {
                    call_id: id,
                    entry,
                    exit: Some(x),
                    state,
                    exit_maybe_lost: false,
                }));
            }
            Record::Lost(l) => {
                if l.body.min_call_id != 0 || l.body.max_call_id != 0 {
                    self.lost_ranges
                        .push((l.body.min_call_id, l.body.max_call_id));
                }
                out.push(Event::Lost(l));
            }
        }
    }

    fn unfinished(&self, e: record::EntryRecord) -> Call {
        let id = e.header.call_id;
        Call {
            call_id: id,
            exit_maybe_lost: self
                .lost_ranges
                .iter()
                .any(|&(lo, hi)| (lo..=hi).contains(&id)),
            entry: Some(e),
            exit: None,
            state: CallState::Unfinished,
        }
    }

    /// The ENTRYs still waiting for an EXIT, as unfinished calls in time
    /// order.
    pub fn finish(&mut self) -> Vec<Event> {
        let mut left: Vec<_> = self.pending.drain().map(|(_, e)| e).collect();
        left.sort_by_key(|e| (e.header.time_ns, e.header.cpu, e.header.call_id));
        left.into_iter()
            .map(|e| Event::Call(self.unfinished(e)))
            .collect()
    }
}

/// What one CPU's ring gave.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuSummary {
    /// ENTRY records consumed.
    pub entries: u64,
    /// EXIT records consumed.
    pub exits: u64,
    /// LOST records consumed.
    pub lost_records: u64,
    /// Records reported lost by LOST records, by reason.
    pub lost_reported: [u64; abi::LOST_NR_SLOTS],
    /// Records skipped as invalid.
    pub skipped: u64,
    /// The ring was stopped by a framing error.
    pub stopped: bool,
    /// The consumer position when this reader started.
    pub start_pos: Option<u64>,
    /// The kernel's counters at the end.
    pub counters: Option<RingCounters>,
}

impl CpuSummary {
    /// ENTRY and EXIT records consumed: what `meta.produced` counts.
    #[must_use]
    pub fn consumed(&self) -> u64 {
        self.entries + self.exits
    }

    /// Whether produced = consumed and lost = reported hold exactly. Only
    /// meaningful when this reader consumed the ring from position 0 (a
    /// fresh ring); `None` otherwise or without counters.
    #[must_use]
    pub fn balanced(&self) -> Option<bool> {
        let c = self.counters?;
        if self.start_pos != Some(0) {
            return None;
        }
        Some(c.produced == self.consumed() && c.lost == self.lost_reported)
    }
}

/// Totals of a run, per CPU and overall.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Per CPU.
    pub cpus: BTreeMap<u32, CpuSummary>,
    /// Calls with ENTRY and EXIT.
    pub complete: u64,
    /// ENTRY without EXIT.
    pub unfinished: u64,
    /// ... of which the EXIT may have been lost.
    pub unfinished_maybe_lost: u64,
    /// EXIT flagged `ENTRY_LOST`.
    pub entry_lost: u64,
    /// EXIT without ENTRY, not flagged.
    pub entry_missing: u64,
    /// Calls the filter rejected.
    pub filtered_out: u64,
    /// Records emitted after the reordering window.
    pub late: u64,
    /// Output stopped on a broken pipe.
    pub broken_pipe: bool,
}

impl Summary {
    /// All calls seen.
    #[must_use]
    pub fn calls(&self) -> u64 {
        self.complete + self.unfinished + self.entry_lost + self.entry_missing
    }

    /// Records lost by LOST records, all CPUs and reasons.
    #[must_use]
    pub fn lost_reported(&self) -> u64 {
        self.cpus.values().flat_map(|c| c.lost_reported).sum()
    }

    /// The summary as text, one table row per CPU.
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "summary: {} calls ({} complete, {} unfinished{}, {} entry lost, {} entry missing){}; {} records lost{}",
            self.calls(),
            self.complete,
            self.unfinished,
            if self.unfinished_maybe_lost > 0 {
                format!(" ({} may have lost their exit)", self.unfinished_maybe_lost)
            } else {
                String::new()
            },
            self.entry_lost,
            self.entry_missing,
            if self.filtered_out > 0 {
                format!(", {} filtered out", self.filtered_out)
            } else {
                String::new()
            },
            self.lost_reported(),
            if self.late > 0 {
                format!("; {} records arrived after the reordering window", self.late)
            } else {
                String::new()
            },
        );
        let _ = writeln!(
            s,
            "{:>5} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}  check",
            "cpu",
            "produced",
            "consumed",
            "ring_full",
            "(reported)",
            "bad_cons",
            "(reported)",
            "skipped"
        );
        for (cpu, c) in &self.cpus {
            let (produced, lost) = c.counters.map_or((String::from("?"), [None; 2]), |k| {
                (k.produced.to_string(), [Some(k.lost[0]), Some(k.lost[1])])
            });
            let show = |v: Option<u64>| v.map_or_else(|| "?".to_owned(), |v| v.to_string());
            let check = match (c.stopped, c.balanced()) {
                (true, _) => "RING STOPPED (corrupt record)".to_owned(),
                (false, Some(true)) => "ok: produced = consumed, lost = reported".to_owned(),
                (false, Some(false)) => {
                    let unreported: Vec<String> = c
                        .counters
                        .map(|k| {
                            (0..abi::LOST_NR_SLOTS)
                                .filter(|&i| k.lost[i] != c.lost_reported[i])
                                .map(|i| {
                                    format!(
                                        "{} {} not yet reported",
                                        k.lost[i].wrapping_sub(c.lost_reported[i]),
                                        lost_reason(i)
                                    )
                                })
                                .collect()
                        })
                        .unwrap_or_default();
                    let in_flight = c
                        .counters
                        .map_or(0, |k| k.produced.wrapping_sub(c.consumed()));
                    let mut why = Vec::new();
                    if in_flight != 0 {
                        why.push(format!("{in_flight} produced but not consumed (in flight)"));
                    }
                    why.extend(unreported);
                    format!("MISMATCH: {}", why.join(", "))
                }
                (false, None) => match c.start_pos {
                    Some(p) => format!("n/a (reader started at ring position {p:#x})"),
                    None => "n/a (no counters)".to_owned(),
                },
            };
            let _ = writeln!(
                s,
                "{cpu:>5} {produced:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}  {check}",
                c.consumed(),
                show(lost[0]),
                c.lost_reported[0],
                show(lost[1]),
                c.lost_reported[1],
                c.skipped,
            );
        }
        s
    }
}

/// Merges, pairs and outputs a stream of [`DrainMsg`]s: the same code for a
/// live drain and for a replayed trace file.
pub struct Assembler<'s> {
    merger: Merger,
    pairer: Pairer,
    summary: Summary,
    sink: &'s mut dyn Sink,
    filter: Option<Box<dyn CallFilter + 's>>,
    events: Vec<Event>,
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
            live: cpus.len(),
        }
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
        match msg {
            DrainMsg::Records { cpu, bytes } => {
                if let Some(bad) = self.merger.push_records(cpu, &bytes) {
                    self.corrupt(&bad);
                }
            }
            DrainMsg::Idle { cpu, time_ns } => self.merger.idle(cpu, time_ns),
            DrainMsg::Corrupt(bad) => self.corrupt(&bad),
            DrainMsg::Done {
                cpu,
                start_pos,
                counters,
                ..
            } => {
                let c = self.summary.cpus.entry(cpu).or_default();
                c.counters = Some(counters);
                c.start_pos = Some(start_pos);
                self.merger.done(cpu);
                self.live = self.live.saturating_sub(1);
            }
        }
        self.drain(false)
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
                        *sum += n;
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

/// Receives every message the assembler takes, in order (the trace file
/// writer).
pub trait Recorder {
    /// Records one message.
    ///
    /// # Errors
    /// An I/O error.
    fn record(&mut self, msg: &DrainMsg) -> io::Result<()>;
}

/// What a drain thread is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tick {
    /// Drain what is there.
    Drain,
    /// Drain once more, then report the counters and end.
    Stop,
}

/// Wakes the drain threads in `--follow` mode: `poll()` on the device, or
/// a test's script.
pub trait Waker: Send {
    /// Blocks until there may be something to drain ([`Tick::Drain`], also
    /// after a timeout, so that idle rings advance the merge) or the reader
    /// must stop ([`Tick::Stop`]).
    fn wait(&mut self) -> Tick;
}

/// The `CLOCK_MONOTONIC` time, as the kernel stamps records.
#[must_use]
pub fn monotonic_ns() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    u64::try_from(ts.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(ts.tv_nsec).unwrap_or(0)
}

fn drain_pass<M: RingMemory>(
    ring: &mut RingConsumer<M>,
    tx: &Sender<DrainMsg>,
    idle: bool,
) -> bool {
    let cpu = ring.cpu();
    let now = monotonic_ns();
    let mut bytes = Vec::new();
    let mut errors = Vec::new();
    ring.drain_into(&mut bytes, &mut errors);
    let mut ok = true;
    if !bytes.is_empty() {
        ok &= tx.send(DrainMsg::Records { cpu, bytes }).is_ok();
    }
    for e in errors {
        ok &= tx.send(DrainMsg::Corrupt(e)).is_ok();
    }
    if idle {
        ok &= tx.send(DrainMsg::Idle { cpu, time_ns: now }).is_ok();
    }
    ok
}

fn drain_thread<M: RingMemory>(
    mut ring: RingConsumer<M>,
    ticks: Option<(Receiver<Tick>, Sender<()>)>,
    tx: &Sender<DrainMsg>,
) {
    let cpu = ring.cpu();
    let start_pos = ring.position();
    if let Some((ticks, acks)) = ticks {
        loop {
            let tick = ticks.recv().unwrap_or(Tick::Stop);
            let sent = drain_pass(&mut ring, tx, tick == Tick::Drain);
            if !sent || tick == Tick::Stop || acks.send(()).is_err() {
                break;
            }
        }
    } else {
        drain_pass(&mut ring, tx, false);
    }
    let _ = tx.send(DrainMsg::Done {
        cpu,
        start_pos,
        counters: ring.counters(),
        stats: ring.stats(),
    });
}

/// How [`run`] drains.
pub enum Mode {
    /// Drain what is buffered, once, and finish.
    Once,
    /// Drain whenever the waker says so, until it says stop.
    Follow(Box<dyn Waker>),
}

impl std::fmt::Debug for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mode::Once => "Once",
            Mode::Follow(_) => "Follow",
        })
    }
}

/// The waker thread: tick every drain thread, wait until each finished
/// its pass (so that `poll()` is not re-entered while records are still
/// unread, which would spin), repeat until the waker or the assembler
/// says stop.
fn waker_thread(
    mut waker: Box<dyn Waker>,
    ticks: &[Sender<Tick>],
    acks: &Receiver<()>,
    stop: &Receiver<()>,
) {
    loop {
        let tick = if stop.try_recv().is_ok() {
            Tick::Stop
        } else {
            waker.wait()
        };
        let mut sent = 0;
        for t in ticks {
            if t.send(tick).is_ok() {
                sent += 1;
            }
        }
        if tick == Tick::Stop || sent == 0 {
            return;
        }
        for _ in 0..sent {
            if acks.recv().is_err() {
                return;
            }
        }
    }
}

/// Drains `rings` (one thread each) into `assembler`, recording every
/// message on the way. Returns when every ring is done, or the output
/// broke.
///
/// # Errors
/// An output or recording error other than `BrokenPipe`, which ends the
/// run quietly with [`Summary::broken_pipe`] set.
pub fn run<M: RingMemory + Send>(
    rings: Vec<RingConsumer<M>>,
    mode: Mode,
    mut assembler: Assembler<'_>,
    mut recorder: Option<&mut dyn Recorder>,
) -> io::Result<Summary> {
    let (tx, rx) = crossbeam_channel::bounded::<DrainMsg>(256);
    let (ack_tx, ack_rx) = crossbeam_channel::unbounded::<()>();
    let (stop_tx, stop_rx) = crossbeam_channel::bounded::<()>(1);
    let outcome = thread::scope(|s| {
        let mut tick_txs = Vec::new();
        for ring in rings {
            let tx = tx.clone();
            let ticks = if matches!(mode, Mode::Follow(_)) {
                let (ttx, trx) = crossbeam_channel::bounded::<Tick>(1);
                tick_txs.push(ttx);
                Some((trx, ack_tx.clone()))
            } else {
                None
            };
            thread::Builder::new()
                .name(format!("drain-cpu{}", ring.cpu()))
                .spawn_scoped(s, move || drain_thread(ring, ticks, &tx))
                .map_err(|e| io::Error::other(format!("spawning a drain thread: {e}")))?;
        }
        drop(tx);
        drop(ack_tx);
        if let Mode::Follow(waker) = mode {
            let (ack_rx, stop_rx) = (&ack_rx, &stop_rx);
            thread::Builder::new()
                .name("waker".into())
                .spawn_scoped(s, move || waker_thread(waker, &tick_txs, ack_rx, stop_rx))
                .map_err(|e| io::Error::other(format!("spawning the waker thread: {e}")))?;
        }
        let mut result = Ok(());
        for msg in &rx {
            if let Some(r) = recorder.as_deref_mut() {
                if let Err(e) = r.record(&msg) {
                    result = Err(e);
                    break;
                }
            }
            if let Err(e) = assembler.push(msg) {
                result = Err(e);
                break;
            }
            if assembler.all_done() {
                break;
            }
        }
        if result.is_err() {
            // Stop the waker (and with it the drain threads), and keep
            // receiving so that no drain thread blocks on a full channel.
            let _ = stop_tx.try_send(());
            for _ in &rx {}
        }
        result
    });
    let (summary, finished) = if outcome.is_ok() {
        assembler.finish()
    } else {
        (assembler.summary().clone(), Ok(()))
    };
    match outcome.and(finished) {
        Ok(()) => Ok(summary),
        Err(e) => broken(&e, summary),
    }
}

fn broken(e: &io::Error, mut summary: Summary) -> io::Result<Summary> {
    if e.kind() == io::ErrorKind::BrokenPipe {
        summary.broken_pipe = true;
        Ok(summary)
    } else {
        Err(io::Error::new(e.kind(), e.to_string()))
    }
}

/// Replays recorded messages (a trace file) through `assembler`.
///
/// # Errors
/// As for [`run`].
pub fn replay<I: IntoIterator<Item = DrainMsg>>(
    msgs: I,
    mut assembler: Assembler<'_>,
) -> io::Result<Summary> {
    let mut outcome = Ok(());
    for msg in msgs {
        outcome = assembler.push(msg);
        if outcome.is_err() {
            break;
        }
    }
    let (summary, finished) = if outcome.is_ok() {
        assembler.finish()
    } else {
        (assembler.summary().clone(), Ok(()))
    };
    match outcome.and(finished) {
        Ok(()) => Ok(summary),
        Err(e) => broken(&e, summary),
    }
}

/// Drains each ring once, one after the other, into the messages a live
/// one-shot drain produces (for ring images: deterministic, no threads).
#[must_use]
pub fn drain_once<M: RingMemory>(rings: Vec<M>) -> Vec<DrainMsg> {
    let (tx, rx) = crossbeam_channel::unbounded();
    for mem in rings {
        drain_thread(RingConsumer::new(mem), None, &tx);
    }
    drop(tx);
    rx.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{EntryRecord, ExitRecord};

    fn entry(id: u64) -> Record {
        Record::Entry(EntryRecord {
            header: abi::RecordHeader {
                call_id: id,
                time_ns: id,
                ..Default::default()
            },
            args: [0; 6],
            items: Vec::new(),
        })
    }

    fn exit(id: u64, flags: u32) -> Record {
        Record::Exit(ExitRecord {
            header: abi::RecordHeader {
                call_id: id,
                time_ns: id + 10,
                cpu: 1,
                ..Default::default()
            },
            body: abi::Exit {
                flags,
                ..Default::default()
            },
            items: Vec::new(),
        })
    }

    fn states(events: &[Event]) -> Vec<(u64, CallState)> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Call(c) => Some((c.call_id, c.state)),
                Event::Lost(_) => None,
            })
            .collect()
    }

    #[test]
    fn pairs_by_call_id() {
        let mut p = Pairer::new();
        let mut out = Vec::new();
        p.push(entry(1), &mut out);
        p.push(entry(2), &mut out);
        p.push(exit(2, 0), &mut out);
        p.push(exit(3, abi::EXIT_F_ENTRY_LOST), &mut out);
        p.push(exit(4, 0), &mut out);
        // The same id again: the first ENTRY is unfinished.
        p.push(entry(5), &mut out);
        p.push(entry(5), &mut out);
        assert_eq!(
            states(&out),
            vec![
                (2, CallState::Complete),
                (3, CallState::EntryLost),
                (4, CallState::EntryMissing),
                (5, CallState::Unfinished),
            ]
        );
        let left = p.finish();
        assert_eq!(
            states(&left),
            vec![(1, CallState::Unfinished), (5, CallState::Unfinished)]
        );
    }

    #[test]
    fn flush_empties_the_merger() {
        let mut m = Merger::new(&[0, 1], 10);
        assert!(m.pop(false).is_none());
        m.done(0);
        m.done(1);
        assert!(m.pop(true).is_none());
    }
}
