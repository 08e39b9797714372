// SPDX-License-Identifier: GPL-2.0-only
//! The queue from the drain thread to the assembler, bounded in bytes.
//!
//! A bound on the number of messages bounds no memory: one drain pass's
//! message holds whatever its ring held, from one record to the whole ring
//! (4 MiB rings made 256 messages anything from a few KiB to 1 GiB). So
//! the queue counts the bytes its messages hold, and the drain, when its
//! message would take it past its limit, waits, so every ring then stays
//! unread (one thread drains them all), and a ring that fills drops
//! records in the kernel, which counts them: the reader's memory is
//! bounded and nothing is lost silently. A message always fits in an
//! empty queue, however large, so a limit below a ring's size slows the
//! drain but never stops it.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use crossbeam_channel::{Receiver, Sender};

use super::DrainMsg;

/// The default limit of [`crate::pipeline::Mode::Follow`]'s queue: 128 MiB.
pub const DEFAULT_QUEUE_BYTES: usize = 128 << 20;

/// Record buffers kept for reuse ([`Recycled`]), at most this many...
const RECYCLED_BUFFERS: usize = 8;
/// ...of at most this capacity each (a 4 MiB ring's whole data area): at
/// most 32 MiB held besides the queue's limit.
const RECYCLED_MAX_CAPACITY: usize = 4 << 20;

/// Record buffers given back once their bytes are written down
/// ([`QueueReceiver::recycle`]) and taken by the drain's next
/// passes ([`QueueSender::buffer`]). A pass then copies into memory that
/// is mapped already, where a fresh buffer of more than glibc's mmap
/// threshold is an `mmap()`, a page fault per page, and, freed on
/// another thread, an `munmap()` that interrupts every CPU the reader
/// runs on to flush its TLB: for a drain that must keep up with the
/// producers, work on every pass that copying alone does not need.
#[derive(Debug, Clone)]
struct Recycled {
    tx: Sender<Vec<u8>>,
    rx: Receiver<Vec<u8>>,
}

impl Recycled {
    fn new() -> Self {
        let (tx, rx) = crossbeam_channel::bounded(RECYCLED_BUFFERS);
        Recycled { tx, rx }
    }

    fn take(&self) -> Vec<u8> {
        self.rx.try_recv().unwrap_or_default()
    }

    fn give(&self, mut bytes: Vec<u8>) {
        if bytes.capacity() > 0 && bytes.capacity() <= RECYCLED_MAX_CAPACITY {
            bytes.clear();
            // A full pool drops the buffer: memory stays bounded.
            let _ = self.tx.try_send(bytes);
        }
    }
}

/// What a message costs the queue: its own size and the record bytes it
/// owns.
fn cost(msg: &DrainMsg) -> usize {
    let owned = match msg {
        DrainMsg::Records { bytes, .. } => bytes.capacity(),
        DrainMsg::Start { .. }
        | DrainMsg::Idle { .. }
        | DrainMsg::Corrupt(_)
        | DrainMsg::Done { .. } => 0,
    };
    std::mem::size_of::<DrainMsg>().saturating_add(owned)
}

#[derive(Debug, Default)]
struct Usage {
    queued: usize,
    peak: usize,
    /// Senders waiting for room: only then does a receive wake anyone.
    waiting: usize,
    /// The receiver is gone: senders stop waiting.
    closed: bool,
}

#[derive(Debug)]
struct Budget {
    limit: usize,
    usage: Mutex<Usage>,
    freed: Condvar,
}

impl Budget {
    fn lock(&self) -> MutexGuard<'_, Usage> {
        // A panicking holder leaves plain counters behind: still usable.
        self.usage.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The sending end: the drain's.
#[derive(Debug)]
pub(super) struct QueueSender {
    tx: Sender<(DrainMsg, usize)>,
    budget: Arc<Budget>,
    recycled: Recycled,
}

/// The receiving end, on the assembler's thread.
#[derive(Debug)]
pub(super) struct QueueReceiver {
    rx: Receiver<(DrainMsg, usize)>,
    budget: Arc<Budget>,
    recycled: Recycled,
}

/// A queue that holds at most `limit` bytes (and always one message).
pub(super) fn queue(limit: usize) -> (QueueSender, QueueReceiver) {
    let (tx, rx) = crossbeam_channel::unbounded();
    let budget = Arc::new(Budget {
        limit,
        usage: Mutex::new(Usage::default()),
        freed: Condvar::new(),
    });
    let recycled = Recycled::new();
    (
        QueueSender {
            tx,
            budget: Arc::clone(&budget),
            recycled: recycled.clone(),
        },
        QueueReceiver {
            rx,
            budget,
            recycled,
        },
    )
}

impl QueueSender {
    /// An empty buffer for a drain pass's records: one given back if
    /// there is one.
    pub(super) fn buffer(&self) -> Vec<u8> {
        self.recycled.take()
    }

    /// Gives back a buffer a drain pass did not send.
    pub(super) fn recycle(&self, bytes: Vec<u8>) {
        self.recycled.give(bytes);
    }

    /// Queues `msg`, first waiting while it does not fit. False if the
    /// receiver is gone.
    pub(super) fn send(&self, msg: DrainMsg) -> bool {
        let n = cost(&msg);
        {
            let mut usage = self.budget.lock();
            while !usage.closed
                && usage.queued > 0
                && usage.queued.saturating_add(n) > self.budget.limit
            {
                usage.waiting += 1;
                usage = self
                    .budget
                    .freed
                    .wait(usage)
                    .unwrap_or_else(PoisonError::into_inner);
                usage.waiting -= 1;
            }
            if usage.closed {
                return false;
            }
            usage.queued = usage.queued.saturating_add(n);
            usage.peak = usage.peak.max(usage.queued);
        }
        self.tx.send((msg, n)).is_ok()
    }
}

impl QueueReceiver {
    /// The next message; None once every sender is gone and the queue is
    /// empty.
    pub(super) fn recv(&self) -> Option<DrainMsg> {
        let (msg, n) = self.rx.recv().ok()?;
        let mut usage = self.budget.lock();
        usage.queued = usage.queued.saturating_sub(n);
        // A wake-up is a system call: none when nobody waits.
        let waiting = usage.waiting > 0;
        drop(usage);
        if waiting {
            self.budget.freed.notify_all();
        }
        Some(msg)
    }

    /// Gives back the buffer of a [`DrainMsg::Records`] whose bytes are
    /// written down, for a later drain pass.
    pub(super) fn recycle(&self, bytes: Vec<u8>) {
        self.recycled.give(bytes);
    }

    /// Whether no message is waiting.
    pub(super) fn is_empty(&self) -> bool {
        self.rx.is_empty()
    }

    /// The most bytes the queue held at once.
    pub(super) fn peak(&self) -> usize {
        self.budget.lock().peak
    }
}

impl Drop for QueueReceiver {
    fn drop(&mut self) {
        self.budget.lock().closed = true;
        self.budget.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;
    use std::time::Duration;

    fn records(n: usize) -> DrainMsg {
        DrainMsg::Records {
            cpu: 0,
            bytes: vec![0; n],
        }
    }

    #[test]
    fn a_sender_waits_for_room_and_order_is_kept() {
        let (tx, rx) = queue(3 * cost(&records(1000)));
        thread::scope(|s| {
            s.spawn(|| {
                for i in 0..100u32 {
                    assert!(tx.send(DrainMsg::Records {
                        cpu: i,
                        bytes: vec![0; 1000],
                    }));
                }
            });
            // Give the sender time to fill the queue before anything is
            // taken (the bound below holds however the threads run).
            thread::sleep(Duration::from_millis(20));
            for i in 0..100u32 {
                assert_eq!(rx.recv().map(|m| m.cpu()), Some(i));
            }
        });
        assert!(rx.peak() <= 3 * cost(&records(1000)));
        drop(tx);
        assert!(rx.recv().is_none());
    }

    #[test]
    fn a_message_larger_than_the_limit_goes_through_an_empty_queue() {
        let (tx, rx) = queue(16);
        assert!(tx.send(records(1 << 20)));
        assert_eq!(rx.peak(), cost(&records(1 << 20)));
        assert!(matches!(rx.recv(), Some(DrainMsg::Records { .. })));
        assert!(tx.send(records(1 << 20)));
    }

    #[test]
    fn a_waiting_sender_is_released_when_the_receiver_goes() {
        let (tx, rx) = queue(16);
        assert!(tx.send(records(100)));
        thread::scope(|s| {
            let waiting = s.spawn(|| tx.send(records(100)));
            thread::sleep(Duration::from_millis(50));
            drop(rx);
            assert!(!waiting.join().unwrap());
        });
    }
}
