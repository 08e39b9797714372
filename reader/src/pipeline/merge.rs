// SPDX-License-Identifier: GPL-2.0-only
//! The time merge of the rings' records: a k-way merge by a heap of lane
//! heads, held back by the reordering window (module documentation of
//! [`crate::pipeline`]).

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, VecDeque};
use std::sync::Arc;

use crate::record::{self, Record, RecordError};
use crate::ring::CorruptRecord;

/// A lane's head in the heap: `(time, cpu, lane index)` packed into one
/// `u128` (time in the high 64 bits, then the CPU, then the index), so
/// that the heap orders by time, then CPU, with one integer comparison
/// instead of a tuple's three. The index is the lane's, below the number
/// of lanes, one per CPU: a `u32` holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct HeadKey(u128);

impl HeadKey {
    fn new(time: u64, cpu: u32, idx: usize) -> Self {
        // Lanes are one per CPU, numbered by `u32` (`Merger::lane`).
        let idx = u32::try_from(idx).unwrap_or(u32::MAX);
        HeadKey(u128::from(time) << 64 | u128::from(cpu) << 32 | u128::from(idx))
    }

    // Each cast takes one field of the packing above.
    #[allow(clippy::cast_possible_truncation)]
    fn time(self) -> u64 {
        (self.0 >> 64) as u64
    }

    #[allow(clippy::cast_possible_truncation)]
    fn cpu(self) -> u32 {
        (self.0 >> 32) as u32
    }

    #[allow(clippy::cast_possible_truncation)]
    fn idx(self) -> usize {
        self.0 as u32 as usize
    }
}

#[derive(Debug, Default)]
struct Lane {
    queue: VecDeque<Record>,
    frontier: u64,
    done: bool,
    /// The ring position of the next batch's first byte, once a START
    /// said where the reader began: a drain pass's batch holds every
    /// record it framed, so batches follow each other in the ring.
    pos: Option<u64>,
}

impl Lane {
    /// Whether the lane can still deliver a record before its frontier: it
    /// holds the merge back.
    fn waiting(&self) -> bool {
        self.queue.is_empty() && !self.done
    }
}

/// Merges the rings' records in `(time_ns, cpu)` order with a bounded
/// reordering window; see the module documentation.
///
/// Cost per record: O(log lanes). `heads` holds one `(time, cpu)` entry
/// per lane with queued records (its head, which changes only when popped);
/// `waiting` holds `(frontier, cpu)` of every empty, unfinished lane, so
/// the earliest promise is its first element.
#[derive(Debug)]
pub struct Merger {
    lanes: Vec<Lane>,
    /// CPU → index in `lanes`.
    index: foldhash::HashMap<u32, usize>,
    /// Each non-empty lane's head, as a [`HeadKey`].
    heads: BinaryHeap<Reverse<HeadKey>>,
    waiting: BTreeSet<(u64, u32)>,
    window_ns: u64,
    last_time: u64,
    late: u64,
}

impl Merger {
    /// A merger over these CPUs' rings.
    #[must_use]
    pub fn new(cpus: &[u32], window_ns: u64) -> Self {
        let mut m = Merger {
            lanes: Vec::with_capacity(cpus.len()),
            index: foldhash::HashMap::default(),
            heads: BinaryHeap::with_capacity(cpus.len()),
            waiting: BTreeSet::new(),
            window_ns,
            last_time: 0,
            late: 0,
        };
        for &c in cpus {
            m.lane(c);
        }
        m
    }

    /// Records emitted with a time before one already emitted.
    #[must_use]
    pub fn late(&self) -> u64 {
        self.late
    }

    /// The index of `cpu`'s lane, created (waiting, frontier 0) if unknown.
    fn lane(&mut self, cpu: u32) -> usize {
        if let Some(&i) = self.index.get(&cpu) {
            return i;
        }
        self.lanes.push(Lane::default());
        self.waiting.insert((0, cpu));
        self.index.insert(cpu, self.lanes.len() - 1);
        self.lanes.len() - 1
    }

    /// Notes where the reader began reading `cpu`'s ring (a
    /// [`crate::pipeline::DrainMsg::Start`]): the position errors in its
    /// batches are reported at.
    pub fn start(&mut self, cpu: u32, start_pos: u64) {
        let idx = self.lane(cpu);
        self.lanes[idx].pos = Some(start_pos);
    }

    /// Queues the records of a [`crate::pipeline::DrainMsg::Records`]; the
    /// records keep their capture items in `bytes` ([`record::Batch`]).
    ///
    /// Every record is parsed here, its body validated for the first time
    /// (a drain pass only frames records): one whose body does not parse
    /// is skipped by its size, as the ring's policy says
    /// ([`crate::ring`]), and one that cannot be framed (only in a corrupt
    /// trace file: the drain stops a ring at a framing error) ends the
    /// batch. Both are appended to `errors`, the first as skipped, the
    /// second as fatal.
    pub fn push_batch(&mut self, cpu: u32, bytes: Vec<u8>, errors: &mut Vec<CorruptRecord>) {
        let idx = self.lane(cpu);
        let lane = &mut self.lanes[idx];
        let was_empty = lane.queue.is_empty();
        let batch: record::Batch = Arc::new(bytes);
        let batch_pos = lane.pos;
        lane.pos = batch_pos.map(|p| p.wrapping_add(batch.len() as u64));
        let corrupt = |off: usize, error, fatal| CorruptRecord {
            cpu,
            // Where the reader began is known (a START came first):
            // this record's ring position; else its offset in the batch.
            pos: batch_pos.map_or(off as u64, |p| p.wrapping_add(off as u64)),
            offset: None,
            error,
            fatal,
        };
        let mut off = 0usize;
        while off < batch.len() {
            let rest = &batch[off..];
            let size = match record::parse_header(rest, rest.len() as u64) {
                Ok(h) => h.size as usize,
                Err(error) => {
                    errors.push(corrupt(off, error, true));
                    break;
                }
            };
            match record::parse(&rest[..size]) {
                Ok(view) if view.header().cpu == cpu => {
                    lane.queue.push_back(Record::in_batch(view, &batch));
                }
                Ok(view) => {
                    let claimed = view.header().cpu;
                    errors.push(corrupt(off, RecordError::WrongCpu { claimed }, false));
                }
                // Framed already: whatever is wrong is inside the record.
                Err(error) => errors.push(corrupt(off, error, false)),
            }
            off += size;
        }
        if was_empty {
            if let Some(head) = lane.queue.front() {
                let (time, frontier, done) = (head.header().time_ns, lane.frontier, lane.done);
                self.heads.push(Reverse(HeadKey::new(time, cpu, idx)));
                if !done {
                    self.waiting.remove(&(frontier, cpu));
                }
            }
        }
    }

    /// Notes that `cpu`'s ring was empty at `time_ns`.
    pub fn idle(&mut self, cpu: u32, time_ns: u64) {
        let window = self.window_ns;
        let idx = self.lane(cpu);
        let lane = &mut self.lanes[idx];
        let old = lane.frontier;
        lane.frontier = old.max(time_ns.saturating_sub(window));
        let (new, waiting) = (lane.frontier, lane.waiting());
        if waiting && new != old {
            self.waiting.remove(&(old, cpu));
            self.waiting.insert((new, cpu));
        }
    }

    /// Notes that `cpu`'s ring is finished.
    pub fn done(&mut self, cpu: u32) {
        let idx = self.lane(cpu);
        let lane = &mut self.lanes[idx];
        let (frontier, waiting) = (lane.frontier, lane.waiting());
        lane.done = true;
        if waiting {
            self.waiting.remove(&(frontier, cpu));
        }
    }

    /// The next record in time order, if it is safe to emit now (or, with
    /// `flush`, whatever is queued).
    pub fn pop(&mut self, flush: bool) -> Option<Record> {
        let &Reverse(head) = self.heads.peek()?;
        let (head_time, cpu, idx) = (head.time(), head.cpu(), head.idx());
        if !flush && self.waiting.first().is_some_and(|&(f, _)| f <= head_time) {
            return None;
        }
        self.heads.pop();
        let lane = &mut self.lanes[idx];
        let rec = lane.queue.pop_front()?;
        match lane.queue.front() {
            Some(next) => {
                // The record after the new head: the head's own lines are
                // read right below, too soon for a fetch to help.
                if let Some(after) = lane.queue.get(1) {
                    prefetch(after);
                }
                self.heads
                    .push(Reverse(HeadKey::new(next.header().time_ns, cpu, idx)));
            }
            None if !lane.done => {
                self.waiting.insert((lane.frontier, cpu));
            }
            None => {}
        }
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

/// Asks the CPU to fetch `record`'s cache lines, which the merge will
/// read when it pops it. Records are popped round the lanes: with many
/// CPUs, hundreds of other lanes are popped between two pops of one lane,
/// which is time enough for the fetch, and too many interleaved streams
/// for the hardware prefetcher to follow; a profile at 256 lanes put most
/// of `pop`'s time on the stalls of copying the record out. A hint only:
/// it changes no value.
#[inline]
fn prefetch(record: &Record) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let start = std::ptr::from_ref(record).cast::<i8>();
        // A record spans at most three 64-byte lines; the first, one
        // line on and the last byte's line cover them all.
        for at in [0, 64, size_of::<Record>() - 1] {
            // SAFETY: SSE, which `_mm_prefetch` needs, is part of the
            // x86-64 baseline, so every CPU this runs on has it; and a
            // prefetch is a hint that neither faults nor changes memory,
            // whatever the address (this one is inside the record).
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(at)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = record;
}

#[cfg(test)]
mod tests {
    use super::*;
    use antinomie_abi as abi;

    fn rec(cpu: u32, time_ns: u64) -> Vec<u8> {
        let h = abi::RecordHeader {
            size: u32::try_from(size_of::<abi::RecordHeader>() + size_of::<abi::Lost>()).unwrap(),
            r#type: abi::RECORD_LOST,
            hdr_size: u32::try_from(size_of::<abi::RecordHeader>()).unwrap(),
            time_ns,
            cpu,
            ..Default::default()
        };
        let body = abi::Lost {
            size: u32::try_from(size_of::<abi::Lost>()).unwrap(),
            ..Default::default()
        };
        let mut b = bytemuck::bytes_of(&h).to_vec();
        b.extend_from_slice(bytemuck::bytes_of(&body));
        b
    }

    /// Queues a batch that must decode whole.
    fn push(m: &mut Merger, cpu: u32, bytes: Vec<u8>) {
        let mut errors = Vec::new();
        m.push_batch(cpu, bytes, &mut errors);
        assert!(errors.is_empty(), "{errors:?}");
    }

    #[test]
    fn a_bad_body_is_skipped_and_a_bad_frame_ends_the_batch() {
        let mut m = Merger::new(&[0], 0);
        m.start(0, 0x1000);
        let good = rec(0, 100);
        let len = good.len() as u64;
        let mut bad_body = rec(0, 200);
        // The LOST body's size claims more than the record holds.
        bad_body[size_of::<abi::RecordHeader>()] = 0xff;
        let mut bad_frame = rec(0, 300);
        bad_frame[0] = 3;
        let batch = [good.clone(), bad_body, good.clone(), bad_frame, good].concat();
        let mut errors = Vec::new();
        m.push_batch(0, batch, &mut errors);
        let seen: Vec<_> = errors.iter().map(|e| (e.pos, e.offset, e.fatal)).collect();
        assert_eq!(
            seen,
            [(0x1000 + len, None, false), (0x1000 + 3 * len, None, true)]
        );
        m.done(0);
        let times: Vec<_> = std::iter::from_fn(|| m.pop(true))
            .map(|r| time(&r).0)
            .collect();
        assert_eq!(times, [100, 100]);
    }

    #[test]
    fn positions_run_on_from_batch_to_batch_and_wrap() {
        let good = rec(0, 100);
        let len = good.len() as u64;
        let body = size_of::<abi::RecordHeader>();
        let mut bad = rec(0, 200);
        bad[body] = 0xff;
        let mut other_bad = rec(1, 300);
        other_bad[body] = 0xff;
        let mut m = Merger::new(&[0, 1], 0);
        // The second batch's bad record lies past the wrap of u64.
        let start = 0u64.wrapping_sub(len);
        m.start(0, start);
        let mut errors = Vec::new();
        m.push_batch(0, good.clone(), &mut errors);
        m.push_batch(0, [good, bad].concat(), &mut errors);
        // No START for CPU 1 (a trace of an older reader): the offset in
        // the batch stands in for the position.
        let first = rec(1, 250);
        let first_len = first.len() as u64;
        m.push_batch(1, [first, other_bad].concat(), &mut errors);
        let seen: Vec<_> = errors.iter().map(|e| (e.cpu, e.pos, e.fatal)).collect();
        assert_eq!(
            seen,
            [
                (0, start.wrapping_add(2 * len), false),
                (1, first_len, false)
            ]
        );
    }

    fn time(r: &Record) -> (u64, u32) {
        let h = r.header();
        (h.time_ns, h.cpu)
    }

    #[test]
    fn waits_for_empty_lanes_until_their_promise_passes() {
        let mut m = Merger::new(&[0, 1, 2], 10);
        let mut bytes = rec(0, 100);
        bytes.extend(rec(0, 300));
        push(&mut m, 0, bytes);
        push(&mut m, 2, rec(2, 200));
        // Lane 1 is empty and promised nothing: hold everything.
        assert!(m.pop(false).is_none());
        // Lane 1 promises nothing before 150 - 10: 100 may go, not 200.
        m.idle(1, 150);
        assert_eq!(m.pop(false).as_ref().map(time), Some((100, 0)));
        assert!(m.pop(false).is_none());
        m.done(1);
        assert_eq!(m.pop(false).as_ref().map(time), Some((200, 2)));
        // Lane 2 is now empty and waiting (frontier 0).
        assert!(m.pop(false).is_none());
        m.done(2);
        assert_eq!(m.pop(false).as_ref().map(time), Some((300, 0)));
        assert!(m.pop(true).is_none());
    }

    #[test]
    fn many_lanes_merge_in_time_then_cpu_order() {
        let cpus: Vec<u32> = (0..256).collect();
        let mut m = Merger::new(&cpus, 0);
        for &c in &cpus {
            let mut bytes = Vec::new();
            for i in 0..4u64 {
                bytes.extend(rec(c, (u64::from(c) * 7919 + i * 1000) % 3000));
            }
            // Within a lane, time never decreases.
            let mut recs: Vec<Vec<u8>> =
                bytes.chunks(bytes.len() / 4).map(<[u8]>::to_vec).collect();
            recs.sort_by_key(|r| u64::from_le_bytes(r[24..32].try_into().unwrap()));
            push(&mut m, c, recs.concat());
            m.done(c);
        }
        let mut out = Vec::new();
        while let Some(r) = m.pop(false) {
            out.push(time(&r));
        }
        assert_eq!(out.len(), 1024);
        assert!(out.windows(2).all(|w| w[0] <= w[1]), "not sorted");
        assert_eq!(m.late(), 0);
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
