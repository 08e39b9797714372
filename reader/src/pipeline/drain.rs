// SPDX-License-Identifier: GPL-2.0-only
//! The drain thread, what wakes it, and the entry points that run it
//! ([`run`], [`replay`], [`drain_once`]).

use std::io;
use std::thread;

use crossbeam_channel::Receiver;

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

/// What the waker tells the drain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tick {
    /// Drain what is there.
    Drain,
    /// Drain once more, then report the counters and end.
    Stop,
}

/// Wakes the drain thread in `--follow` mode: `poll()` on the device, or
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

/// One ring's consumer and where it started: what a drain pass drains.
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

/// Drains every ring, one after the other, in one thread: once each
/// (`wake` `None`: START, the pass, DONE, ring by ring), or on every tick
/// of the waker until it, or `stop`, says stop (every ring's START before
/// the first tick, a pass of each ring per tick, the last without IDLE,
/// then every DONE).
///
/// One thread for all the rings, which also polls, as `perf record` does
/// by default: a pass is one copy of at most a ring's data area, and a
/// tick that had to wake a thread per ring, and wait for each to finish,
/// is the latency that fills rings. Measured under QEMU (4 vCPUs on one
/// host thread), a tick's round through four drain threads took 9-37 ms
/// on average and up to 295 ms, while at the rates of `scripts/bench.sh
/// --steps loss` a 256 KiB ring fills in 50-70 ms. The cost: the rings
/// are drained at one core's copy speed, however many CPUs fill them
/// (what `perf record --threads` is for).
fn drain_rings<M: RingMemory>(
    rings: Vec<RingConsumer<M>>,
    wake: Option<(Box<dyn Waker>, &Receiver<()>)>,
    tx: &QueueSender,
) {
    let Some((mut waker, stop)) = wake else {
        for ring in rings {
            let mut drainer = Drainer::start(ring, tx);
            drainer.pass(tx, Tick::Stop);
            drainer.done(tx);
        }
        return;
    };
    let mut drainers: Vec<_> = rings.into_iter().map(|r| Drainer::start(r, tx)).collect();
    loop {
        let tick = if stop.try_recv().is_ok() {
            Tick::Stop
        } else {
            waker.wait()
        };
        // Every ring gets this tick's pass while the assembler is there.
        let taken = drainers.iter_mut().all(|d| d.pass(tx, tick));
        if !taken || tick == Tick::Stop {
            break;
        }
    }
    for drainer in drainers {
        drainer.done(tx);
    }
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
        /// once the drain thread (and with `-w` the spool) runs: the
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

/// Starts, in `s`, the thread that drains `rings` into `tx` (and in
/// follow mode polls, until `stop` stops it). Returns the mode's
/// `threads_started`, for the caller to call once it has started its own
/// threads (they must not inherit the priority it may set).
pub(super) fn start_drains<'scope, M: RingMemory + Send + 'scope>(
    s: &'scope thread::Scope<'scope, '_>,
    rings: Vec<RingConsumer<M>>,
    mode: Mode,
    tx: QueueSender,
    stop: &'scope Receiver<()>,
) -> io::Result<Option<Box<dyn FnOnce()>>> {
    let (wake, started) = match mode {
        Mode::Once => (None, None),
        Mode::Follow {
            waker,
            threads_started,
            ..
        } => (Some((waker, stop)), threads_started),
    };
    thread::Builder::new()
        .name("drain".into())
        .spawn_scoped(s, move || drain_rings(rings, wake, &tx))
        .map_err(|e| io::Error::other(format!("spawning the drain thread: {e}")))?;
    Ok(started)
}

/// The queue's limit in `mode`: a one-shot drain's messages are bounded by
/// the rings' size already.
pub(super) fn queue_limit(mode: &Mode) -> usize {
    match mode {
        Mode::Once => usize::MAX,
        Mode::Follow { queue_bytes, .. } => *queue_bytes,
    }
}

/// Drains `rings` (one thread for all) into `assembler`, recording every
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
            // Stop the drain, and keep receiving so that it does not
            // block on a full queue.
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
    drain_rings(
        rings.into_iter().map(RingConsumer::new).collect(),
        None,
        &tx,
    );
    drop(tx);
    std::iter::from_fn(|| rx.recv()).collect()
}
