// SPDX-License-Identifier: GPL-2.0-only
//! The drain threads, the waker, and the entry points that run them
//! ([`run`], [`replay`], [`drain_once`]).

use std::io;
use std::thread;

use crossbeam_channel::{Receiver, Sender};

use super::queue::{queue, QueueSender};
use super::{Assembler, DrainMsg, Summary};
use crate::ring::{RingConsumer, RingMemory};

/// Receives every message the assembler takes, in order ([`run`]'s trace
/// file writer; [`crate::pipeline::run_to_trace`] writes a regular file
/// on a thread of its own instead).
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
pub(crate) fn monotonic_ns() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    u64::try_from(ts.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(ts.tv_nsec).unwrap_or(0)
}

fn drain_pass<M: RingMemory>(ring: &mut RingConsumer<M>, tx: &QueueSender, idle: bool) -> bool {
    let cpu = ring.cpu();
    let now = monotonic_ns();
    let mut bytes = tx.buffer();
    let mut errors = Vec::new();
    ring.drain_into(&mut bytes, &mut errors);
    let mut ok = true;
    if bytes.is_empty() {
        tx.recycle(bytes);
    } else {
        ok &= tx.send(DrainMsg::Records { cpu, bytes });
    }
    for e in errors {
        ok &= tx.send(DrainMsg::Corrupt(e));
    }
    if idle {
        ok &= tx.send(DrainMsg::Idle { cpu, time_ns: now });
    }
    ok
}

/// One ring's consumer and where it started: what a drain thread drains.
struct Drainer<M: RingMemory> {
    ring: RingConsumer<M>,
    start_pos: u64,
}

impl<M: RingMemory> Drainer<M> {
    /// Begins reading `ring` where its consumer position is: says so to
    /// the assembler ([`DrainMsg::Start`]) before any pass, so that it
    /// knows where this reader began before it pairs an EXIT whose ENTRY
    /// lies in this ring.
    fn start(ring: RingConsumer<M>, tx: &QueueSender) -> Self {
        let start_pos = ring.position();
        let _ = tx.send(DrainMsg::Start {
            cpu: ring.cpu(),
            start_pos,
        });
        Drainer { ring, start_pos }
    }

    /// One pass for `tick` (a stop's last pass promises nothing); false
    /// once the assembler is gone.
    fn pass(&mut self, tx: &QueueSender, tick: Tick) -> bool {
        drain_pass(&mut self.ring, tx, tick == Tick::Drain)
    }

    /// The ring is finished: its DONE, with the kernel's counters now.
    fn done(self, tx: &QueueSender) {
        let _ = tx.send(DrainMsg::Done {
            cpu: self.ring.cpu(),
            start_pos: self.start_pos,
            counters: self.ring.counters(),
            stats: self.ring.stats(),
        });
    }
}

fn drain_thread<M: RingMemory>(
    mut drainer: Drainer<M>,
    ticks: Option<(Receiver<Tick>, Sender<()>)>,
    tx: &QueueSender,
) {
    if let Some((ticks, ack)) = ticks {
        loop {
            let tick = ticks.recv().unwrap_or(Tick::Stop);
            if !drainer.pass(tx, tick) || tick == Tick::Stop || ack.send(()).is_err() {
                break;
            }
        }
    } else {
        drainer.pass(tx, Tick::Stop);
    }
    drainer.done(tx);
}

/// The waker thread's handle on one `--follow` drain thread: where its
/// ticks go and where it says it finished the pass.
struct Ticked {
    tick: Sender<Tick>,
    ack: Receiver<()>,
}

/// Starts the drain thread of `ring` in `s`: ticked (follow mode, the
/// handle returned) or draining once.
fn spawn_drain<'scope, M: RingMemory + Send + 'scope>(
    s: &'scope thread::Scope<'scope, '_>,
    ring: RingConsumer<M>,
    ticked: bool,
    tx: QueueSender,
) -> io::Result<Option<Ticked>> {
    let (ticks, handle) = if ticked {
        let (tick, tick_rx) = crossbeam_channel::bounded::<Tick>(1);
        let (ack_tx, ack) = crossbeam_channel::bounded::<()>(1);
        (Some((tick_rx, ack_tx)), Some(Ticked { tick, ack }))
    } else {
        (None, None)
    };
    thread::Builder::new()
        .name(format!("drain-cpu{}", ring.cpu()))
        .spawn_scoped(s, move || {
            drain_thread(Drainer::start(ring, &tx), ticks, &tx);
        })
        .map_err(|e| io::Error::other(format!("spawning a drain thread: {e}")))?;
    Ok(handle)
}

/// How [`run`] drains.
pub enum Mode {
    /// Drain what is buffered, once, and finish.
    Once,
    /// Drain whenever the waker says so, until it says stop.
    Follow {
        /// What says so.
        waker: Box<dyn Waker>,
        /// The most bytes of drained records waiting for the assembler
        /// (see the `queue` module; [`super::DEFAULT_QUEUE_BYTES`]).
        queue_bytes: usize,
        /// Called on the calling thread, which merges, pairs and outputs,
        /// once the drain threads and the waker thread are running: the
        /// place to change that thread's own scheduling (its nice value,
        /// say) without the new threads inheriting it.
        threads_started: Option<Box<dyn FnOnce()>>,
    },
}

impl std::fmt::Debug for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mode::Once => "Once",
            Mode::Follow { .. } => "Follow",
        })
    }
}

/// The waker thread: tick every drain thread, wait until each finished
/// its pass (so that `poll()` is not re-entered while records are still
/// unread, which would spin), repeat until the waker or the assembler
/// says stop.
fn waker_thread(mut waker: Box<dyn Waker>, threads: &[Ticked], stop: &Receiver<()>) {
    loop {
        let tick = if stop.try_recv().is_ok() {
            Tick::Stop
        } else {
            waker.wait()
        };
        let mut sent = Vec::with_capacity(threads.len());
        for t in threads {
            if t.tick.send(tick).is_ok() {
                sent.push(&t.ack);
            }
        }
        if tick == Tick::Stop || sent.is_empty() {
            break;
        }
        if sent.into_iter().any(|ack| ack.recv().is_err()) {
            break;
        }
    }
}

/// Starts, in `s`, one drain thread per ring sending to `tx` and, in
/// follow mode, the waker thread, which `stop` stops. Returns the mode's
/// `threads_started`, for the caller to call once it has started its own
/// threads (they must not inherit the priority it may set).
pub(super) fn start_drains<'scope, M: RingMemory + Send + 'scope>(
    s: &'scope thread::Scope<'scope, '_>,
    rings: Vec<RingConsumer<M>>,
    mode: Mode,
    tx: QueueSender,
    stop: &'scope Receiver<()>,
) -> io::Result<Option<Box<dyn FnOnce()>>> {
    let ticked = matches!(mode, Mode::Follow { .. });
    let mut threads = Vec::new();
    for ring in rings {
        threads.extend(spawn_drain(s, ring, ticked, tx.clone())?);
    }
    drop(tx);
    let Mode::Follow {
        waker,
        threads_started,
        ..
    } = mode
    else {
        return Ok(None);
    };
    thread::Builder::new()
        .name("waker".into())
        .spawn_scoped(s, move || waker_thread(waker, &threads, stop))
        .map_err(|e| io::Error::other(format!("spawning the waker thread: {e}")))?;
    Ok(threads_started)
}

/// The queue's limit in `mode`: a one-shot drain's messages are bounded by
/// the rings' size already.
pub(super) fn queue_limit(mode: &Mode) -> usize {
    match mode {
        Mode::Once => usize::MAX,
        Mode::Follow { queue_bytes, .. } => *queue_bytes,
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
    let (tx, rx) = queue(queue_limit(&mode));
    let (stop_tx, stop_rx) = crossbeam_channel::bounded::<()>(1);
    let outcome = thread::scope(|s| {
        if let Some(started) = start_drains(s, rings, mode, tx, &stop_rx)? {
            started();
        }
        let mut result = Ok(());
        while let Some(msg) = rx.recv() {
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
            while rx.recv().is_some() {}
        }
        tracing::info!("drain queue: at most {} bytes held", rx.peak());
        result
    });
    conclude(assembler, outcome)
}

/// The summary of a run whose assembler took messages until `outcome`.
pub(super) fn conclude(assembler: Assembler<'_>, outcome: io::Result<()>) -> io::Result<Summary> {
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
    conclude(assembler, outcome)
}

/// Drains each ring once, one after the other, into the messages a live
/// one-shot drain produces (for ring images: deterministic, no threads).
#[must_use]
pub fn drain_once<M: RingMemory>(rings: Vec<M>) -> Vec<DrainMsg> {
    let (tx, rx) = queue(usize::MAX);
    for mem in rings {
        drain_thread(Drainer::start(RingConsumer::new(mem), &tx), None, &tx);
    }
    drop(tx);
    std::iter::from_fn(|| rx.recv()).collect()
}
