// SPDX-License-Identifier: GPL-2.0-only
//! `--follow` over a lossy ring, for a long run: a simulated kernel
//! producer writes into small rings while the reader drains them now and
//! then, so records are dropped and reported by LOST records the way the
//! header's RECORDS section says. Checks that the pairing state stays
//! bounded, that every call with a record in a ring is printed exactly
//! once (a call whose EXIT was dropped as soon as that is known, not at
//! the end), and that per CPU produced = consumed and lost = reported.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use antinomie_abi as abi;
use antinomie_reader::call::{Call, CallState};
use antinomie_reader::pipeline::{Assembler, CpuSummary, DrainMsg, Sink};
use antinomie_reader::record::LostRecord;
use antinomie_reader::ring::{RingConsumer, RingCounters, RingMemory};

use antinomie_reader::ring::builder::{
    args, entry_record, exit_record, lost_record, EntrySpec, ExitSpec,
};

/// One CPU's ring as the kernel keeps it: the producer side of the ABI.
struct SimRing {
    cpu: u32,
    data: Vec<u8>,
    producer_pos: u64,
    consumer_pos: u64,
    produced: u64,
    lost: [u64; abi::LOST_NR_SLOTS],
    /// Drops not yet reported by a LOST record.
    unreported: Option<abi::Lost>,
}

impl SimRing {
    fn free(&self) -> u64 {
        self.data.len() as u64 - (self.producer_pos - self.consumer_pos)
    }

    fn put(&mut self, bytes: &[u8]) {
        let n = self.data.len();
        for (i, b) in bytes.iter().enumerate() {
            self.data[(usize::try_from(self.producer_pos).unwrap() + i) % n] = *b;
        }
        self.producer_pos += bytes.len() as u64;
    }

    /// Writes an ENTRY or EXIT as the kernel does: the LOST record owed
    /// first, and if either does not fit, the record is dropped and
    /// counted. Returns whether it was written.
    fn write(&mut self, record: &[u8], call_id: u64, time_ns: u64) -> bool {
        if let Some(body) = self.unreported {
            let lost = lost_record(self.cpu, time_ns, &body);
            if self.free() >= lost.len() as u64 {
                self.put(&lost);
                self.unreported = None;
            }
        }
        if self.unreported.is_none() && self.free() >= record.len() as u64 {
            self.put(record);
            self.produced += 1;
            return true;
        }
        self.lost[abi::LOST_RING_FULL] += 1;
        let u = self.unreported.get_or_insert(abi::Lost {
            size: u32::try_from(size_of::<abi::Lost>()).unwrap(),
            first_time_ns: time_ns,
            min_call_id: call_id,
            max_call_id: call_id,
            ..Default::default()
        });
        u.last_time_ns = time_ns;
        u.min_call_id = u.min_call_id.min(call_id);
        u.max_call_id = u.max_call_id.max(call_id);
        u.lost[abi::LOST_RING_FULL] += 1;
        false
    }
}

/// The reader's view of a [`SimRing`].
#[derive(Clone)]
struct Shared(Rc<RefCell<SimRing>>);

impl RingMemory for Shared {
    fn cpu(&self) -> u32 {
        self.0.borrow().cpu
    }
    fn data_size(&self) -> u64 {
        self.0.borrow().data.len() as u64
    }
    fn read_data(&self, offset: usize, out: &mut [u8]) {
        let r = self.0.borrow();
        for (i, b) in out.iter_mut().enumerate() {
            *b = r.data[(offset + i) % r.data.len()];
        }
    }
    fn load_producer_pos(&self) -> u64 {
        self.0.borrow().producer_pos
    }
    fn load_consumer_pos(&self) -> u64 {
        self.0.borrow().consumer_pos
    }
    fn store_consumer_pos(&self, pos: u64) {
        self.0.borrow_mut().consumer_pos = pos;
    }
    fn counters(&self) -> RingCounters {
        let r = self.0.borrow();
        RingCounters {
            producer_pos: r.producer_pos,
            consumer_pos: r.consumer_pos,
            produced: r.produced,
            lost: r.lost,
            lossless: None,
        }
    }
}

/// The state and `exit_maybe_lost` each call was printed with.
#[derive(Default)]
struct Tally {
    calls: HashMap<u64, (CallState, bool)>,
    lost_lines: u64,
}

impl Sink for Tally {
    fn call(&mut self, call: &Call) -> std::io::Result<()> {
        let old = self
            .calls
            .insert(call.call_id, (call.state, call.exit_maybe_lost));
        assert!(old.is_none(), "call {:#x} printed twice", call.call_id);
        Ok(())
    }
    fn lost(&mut self, _: &LostRecord) -> std::io::Result<()> {
        self.lost_lines += 1;
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A call the simulated workload made: which of its records reached a
/// ring.
#[derive(Clone, Copy)]
struct Made {
    entry_written: bool,
    exit_written: Option<bool>,
}

impl Made {
    /// Writes the call's EXIT `x` to `ring` (on `cpu`), flagged
    /// `ENTRY_LOST` when its ENTRY was dropped.
    fn write_exit(&mut self, ring: &Shared, cpu: u32, mut x: ExitSpec) {
        x.flags = if self.entry_written {
            0
        } else {
            abi::EXIT_F_ENTRY_LOST
        };
        let written = ring
            .0
            .borrow_mut()
            .write(&exit_record(cpu, &x), x.call_id, x.time_ns);
        self.exit_written = Some(written);
    }
}

/// A tiny deterministic generator (the test must not depend on a seed
/// crate's stream).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

const CPUS: u32 = 4;
const THREADS: u32 = 8;

#[test]
#[allow(clippy::too_many_lines)]
fn a_long_lossy_follow_run_stays_bounded_and_exact() {
    let rings: Vec<Shared> = (0..CPUS)
        .map(|cpu| {
            Shared(Rc::new(RefCell::new(SimRing {
                cpu,
                data: vec![0; 8192],
                producer_pos: 0,
                consumer_pos: 0,
                produced: 0,
                lost: [0; abi::LOST_NR_SLOTS],
                unreported: None,
            })))
        })
        .collect();
    let mut consumers: Vec<RingConsumer<Shared>> =
        rings.iter().map(|r| RingConsumer::new(r.clone())).collect();
    let cpus: Vec<u32> = (0..CPUS).collect();
    let mut tally = Tally::default();
    let mut asm = Assembler::new(&cpus, 1_000, &mut tally);
    let mut random = Lcg(42);
    let mut made: HashMap<u64, Made> = HashMap::new();
    let mut seq = [0u64; CPUS as usize];
    // Per thread: the call in flight (id, steps left), its CPU.
    let mut in_call: Vec<Option<(u64, u32)>> = vec![None; THREADS as usize];
    let mut home: Vec<u32> = (0..THREADS).map(|t| t % CPUS).collect();
    let mut now = 1_000_000u64;
    let mut next_drain = 0u64;
    let (mut max_pending, mut max_ranges) = (0usize, 0usize);
    let steps = 400_000u64;
    let mut drain =
        |consumers: &mut Vec<RingConsumer<Shared>>, asm: &mut Assembler<'_>, now: u64| {
            for c in consumers.iter_mut() {
                let mut bytes = Vec::new();
                let mut errors = Vec::new();
                c.drain_into(&mut bytes, &mut errors);
                assert!(errors.is_empty(), "{errors:?}");
                let cpu = c.cpu();
                if !bytes.is_empty() {
                    asm.push(DrainMsg::Records { cpu, bytes }).unwrap();
                }
                asm.push(DrainMsg::Idle { cpu, time_ns: now }).unwrap();
            }
            let (pending, ranges) = asm.held();
            max_pending = max_pending.max(pending);
            max_ranges = max_ranges.max(ranges);
        };
    for step in 0..steps {
        now += 100 + random.below(400);
        let t = usize::try_from(random.below(u64::from(THREADS))).unwrap();
        let tid = 100 + u32::try_from(t).unwrap();
        match in_call[t] {
            None => {
                // Thread 7 sometimes makes a long call (it stays in the
                // kernel across many drains and losses).
                if step % 50_000 == 1 || t != 7 || random.below(2) == 0 {
                    let cpu = home[t];
                    seq[cpu as usize] += 1;
                    let id = u64::from(cpu) << abi::CALL_ID_SEQ_BITS | seq[cpu as usize];
                    let e = EntrySpec {
                        call_id: id,
                        time_ns: now,
                        pid: 100,
                        tid,
                        args: args(0x1000, 0, -1, -1, 8),
                        ..Default::default()
                    };
                    let written =
                        rings[cpu as usize]
                            .0
                            .borrow_mut()
                            .write(&entry_record(cpu, &e), id, now);
                    made.insert(
                        id,
                        Made {
                            entry_written: written,
                            exit_written: None,
                        },
                    );
                    in_call[t] = Some((id, cpu));
                }
            }
            Some((id, _)) => {
                let long = t == 7 && (id & abi::CALL_ID_SEQ_MASK).is_multiple_of(7);
                if long && random.below(20_000) != 0 {
                    continue;
                }
                // One call in ten returns on another CPU (migration).
                if random.below(10) == 0 {
                    home[t] = u32::try_from(random.below(u64::from(CPUS))).unwrap();
                }
                let cpu = home[t];
                let m = made.get_mut(&id).unwrap();
                m.write_exit(
                    &rings[cpu as usize],
                    cpu,
                    ExitSpec {
                        call_id: id,
                        time_ns: now,
                        pid: 100,
                        tid,
                        ret: -22,
                        duration_ns: 1,
                        ..Default::default()
                    },
                );
                in_call[t] = None;
            }
        }
        if now >= next_drain {
            drain(&mut consumers, &mut asm, now);
            // 10 to 310 µs between drains: up to ~250 records per ring
            // where 78 fit, so the reader falls behind now and then.
            next_drain = now + 10_000 + random.below(300_000);
        }
    }
    // The calls still in flight return (a workload's last calls), then a
    // flush call per CPU makes each ring report its last losses.
    for t in 0..THREADS as usize {
        if let Some((id, _)) = in_call[t].take() {
            now += 1_000;
            let cpu = home[t];
            drain(&mut consumers, &mut asm, now);
            let m = made.get_mut(&id).unwrap();
            m.write_exit(
                &rings[cpu as usize],
                cpu,
                ExitSpec {
                    call_id: id,
                    time_ns: now,
                    pid: 100,
                    tid: 100 + u32::try_from(t).unwrap(),
                    ..Default::default()
                },
            );
        }
    }
    drain(&mut consumers, &mut asm, now);
    for cpu in 0..CPUS {
        now += 1_000;
        seq[cpu as usize] += 1;
        let id = u64::from(cpu) << abi::CALL_ID_SEQ_BITS | seq[cpu as usize];
        let mut ring = rings[cpu as usize].0.borrow_mut();
        let e = EntrySpec {
            call_id: id,
            time_ns: now,
            pid: 200,
            tid: 200 + cpu,
            ..Default::default()
        };
        let x = ExitSpec {
            call_id: id,
            time_ns: now + 1,
            pid: 200,
            tid: 200 + cpu,
            ..Default::default()
        };
        assert!(ring.write(&entry_record(cpu, &e), id, now));
        assert!(ring.write(&exit_record(cpu, &x), id, now + 1));
        made.insert(
            id,
            Made {
                entry_written: true,
                exit_written: Some(true),
            },
        );
    }
    drain(&mut consumers, &mut asm, now + 10_000);
    for c in consumers {
        asm.push(DrainMsg::Done {
            cpu: c.cpu(),
            start_pos: 0,
            counters: c.counters(),
            stats: c.stats(),
        })
        .unwrap();
    }
    let (summary, result) = asm.finish();
    result.unwrap();

    // Bounded: pending ENTRYs are calls in flight plus calls waiting for
    // their thread's next call or their LOST record, a few per thread; no
    // LOST range outlives the record time it concerns.
    assert!(max_pending <= 2 * THREADS as usize, "{max_pending} pending");
    assert!(max_ranges <= 1, "{max_ranges} lost ranges held");

    // Exact: per CPU, produced = consumed and lost = reported.
    let mut lost_total = 0;
    for (cpu, c) in &summary.cpus {
        assert_eq!(c.balanced(), Some(true), "cpu {cpu}: {c:?}");
        lost_total += c.lost_reported[abi::LOST_RING_FULL];
    }
    let written: u64 = made
        .values()
        .map(|m| u64::from(m.entry_written) + u64::from(m.exit_written == Some(true)))
        .sum();
    let consumed: u64 = summary.cpus.values().map(CpuSummary::consumed).sum();
    assert_eq!(written, consumed);
    assert_eq!(2 * made.len() as u64, consumed + lost_total);
    assert!(
        lost_total > made.len() as u64 / 10,
        "too few losses to test: {lost_total} of {} records",
        2 * made.len()
    );

    // Every call with a record in a ring printed exactly once (the sink
    // checked "at most once"), in the state its records give; a call whose
    // EXIT was dropped is marked as such.
    let mut shown = 0;
    for (id, m) in &made {
        let want = match (m.entry_written, m.exit_written) {
            (true, Some(true)) => Some((CallState::Complete, false)),
            (true, Some(false)) => Some((CallState::Unfinished, true)),
            (false, Some(true)) => Some((CallState::EntryLost, false)),
            (false, Some(false)) => None,
            (_, None) => unreachable!("every call returned"),
        };
        assert_eq!(tally.calls.get(id).copied(), want, "call {id:#x}");
        shown += usize::from(want.is_some());
    }
    assert_eq!(tally.calls.len(), shown);
    assert!(tally.lost_lines > 0);
    // Printed as soon as known: only a thread's last calls wait for the
    // end (their thread made no later call to show they returned).
    assert!(summary.unfinished > 1_000, "{summary:?}");
    assert!(
        summary.unfinished - summary.settled_early <= u64::from(THREADS),
        "{summary:?}"
    );
    assert_eq!(summary.evicted, 0);
}
