// SPDX-License-Identifier: GPL-2.0-only
//! Pairing ENTRY and EXIT records by `call_id` into calls, with bounded
//! state.
//!
//! # When a call without EXIT is printed
//!
//! An ENTRY waits ("pending") for the EXIT with its `call_id`. Records
//! reach the pairer in time order (the merge), and an EXIT is never
//! earlier than its ENTRY, so the pairer can tell when an EXIT will not
//! come:
//!
//! * **Its thread moved on.** A thread makes one syscall at a time: once
//!   an ENTRY of the same thread (pid, tid) with a later call arrives, the
//!   earlier call has returned, and its EXIT, earlier than the new ENTRY,
//!   would already have been merged. It was dropped (or it is a record
//!   later than the reordering window, which the summary counts as
//!   `late`).
//! * **A LOST record covers it.** A LOST record reports the `call_id`
//!   range and the time range of the records its ring dropped. An ENTRY
//!   whose id is in that range and whose time is not after the last
//!   dropped record's may have lost its EXIT there: it is marked
//!   `exit_maybe_lost`. (Only a range is known, not each id: a call still
//!   running can be in it.)
//!
//! A call is printed as unfinished **as soon as both are known**: at the
//! LOST record for a call whose thread already moved on, at the thread's
//! next ENTRY for a call a LOST record already covered. (For a thread
//! that stays on one CPU the LOST record always comes first: the kernel
//! writes it before the ring's next record.) Everything else waits until
//! its EXIT, its LOST record or the end: a call still running, the last
//! call of a thread that made no other, and a call whose EXIT was dropped
//! on a ring that has written nothing since (its LOST record is owed; it
//! is not printed unmarked early, since the LOST record would then
//! contradict the line).
//!
//! # Bounds
//!
//! * Pending ENTRYs: at most [`Limits::max_pending`]. Past it, a quarter
//!   of them are printed as unfinished at once (those a LOST record covers
//!   first, then the oldest) and counted as evicted in the summary; if the
//!   EXIT of an evicted call still comes, it is printed as an EXIT without
//!   ENTRY (`entry_missing`).
//! * LOST ranges: not kept. When a LOST record arrives, every ENTRY its
//!   dropped records can concern (time not after its `last_time_ns`) has
//!   already arrived, merged in time order; so its range is applied to the
//!   pending ENTRYs then and forgotten. Only ranges whose `last_time_ns` is
//!   not yet before the merge's time are kept, for an ENTRY with that very
//!   time: at most a few.
//! * The thread index holds one id per pending ENTRY at most.
//!
//! # An EXIT without its ENTRY
//!
//! Flagged `ENTRY_GONE` or `ENTRY_LOST`, it says why itself. Otherwise
//! its `entry_pos` tells where its ENTRY was written in the ring of the
//! CPU that named the call (`call_id >> ANTINOMIE_CALL_ID_SEQ_BITS`): if
//! that is before the position this reader began reading that ring at
//! ([`Pairer::ring_start`]), a reader before this one read the ENTRY (the
//! rings outlive a reader): `entry_read_earlier`, not a loss. Else, and
//! for a ring this reader has not begun reading, `entry_missing`.
//!
//! Costs: an ENTRY or EXIT is a few hash-map operations keyed by
//! `call_id` (foldhash); a LOST record scans the pending ENTRYs, which are
//! few (calls in flight), at most [`Limits::max_pending`].

use antinomie_abi as abi;

use crate::call::{Call, CallState};
use crate::record::{EntryRecord, ExitRecord, LostRecord, Record};

/// What pairing produces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A call.
    Call(Call),
    /// A LOST record.
    Lost(LostRecord),
}

/// The bounds of the pairer's state (module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Pending ENTRYs kept at most.
    pub max_pending: usize,
}

impl Default for Limits {
    /// 16 384 pending ENTRYs (a few MB: each holds its captured attr).
    fn default() -> Self {
        Limits {
            max_pending: 16_384,
        }
    }
}

/// What the pairer did besides pairing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PairStats {
    /// Unfinished calls printed before the end of the run.
    pub settled_early: u64,
    /// ... of which were evicted by [`Limits::max_pending`].
    pub evicted: u64,
    /// The most ENTRYs pending at once.
    pub max_pending_seen: usize,
}

#[derive(Debug)]
struct Pending {
    entry: EntryRecord,
    /// A LOST record's ranges cover it.
    exit_maybe_lost: bool,
    /// Its thread made a later call.
    ended: bool,
}

/// A LOST record's ranges, kept while an ENTRY it concerns can still come.
#[derive(Debug, Clone, Copy)]
struct LostRange {
    min_call_id: u64,
    max_call_id: u64,
    last_time_ns: u64,
}

impl LostRange {
    fn covers(&self, call_id: u64, time_ns: u64) -> bool {
        (self.min_call_id..=self.max_call_id).contains(&call_id) && time_ns <= self.last_time_ns
    }
}

/// Pairs ENTRY and EXIT by `call_id`, across CPUs.
#[derive(Debug, Default)]
pub struct Pairer {
    /// Keyed by `call_id` with foldhash: ids are not attacker-chosen
    /// keys worth `SipHash`'s cost.
    pending: foldhash::HashMap<u64, Pending>,
    /// (pid, tid) → the call id of the thread's latest pending ENTRY.
    threads: foldhash::HashMap<(u32, u32), u64>,
    /// LOST ranges an ENTRY not yet seen may still be in.
    recent_lost: Vec<LostRange>,
    /// The latest record time seen: the merge's position.
    now: u64,
    /// CPU → the position this reader began reading its ring at.
    starts: foldhash::HashMap<u32, u64>,
    limits: Limits,
    stats: PairStats,
}

impl Pairer {
    /// A pairer with nothing pending and the default [`Limits`].
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// A pairer with these limits.
    #[must_use]
    pub fn with_limits(limits: Limits) -> Self {
        let mut p = Self::default();
        p.set_limits(limits);
        p
    }

    /// Bounds the state with these limits from now on.
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = Limits {
            max_pending: limits.max_pending.max(1),
        };
    }

    /// Notes that this reader began reading `cpu`'s ring at `start_pos`:
    /// an EXIT whose ENTRY lies before it in that ring had its ENTRY read
    /// by an earlier reader (module documentation).
    pub fn ring_start(&mut self, cpu: u32, start_pos: u64) {
        self.starts.insert(cpu, start_pos);
    }

    /// Whether `x`'s ENTRY lies before where this reader began reading the
    /// ring it was written to.
    fn read_earlier(&self, x: &ExitRecord) -> bool {
        let named_by = x.header.call_id >> abi::CALL_ID_SEQ_BITS;
        u32::try_from(named_by)
            .ok()
            .and_then(|cpu| self.starts.get(&cpu))
            .is_some_and(|&start| x.body.entry_pos < start)
    }

    /// ENTRYs waiting for their EXIT now.
    #[must_use]
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// LOST ranges held now (see the module documentation: a few at most).
    #[must_use]
    pub fn lost_ranges(&self) -> usize {
        self.recent_lost.len()
    }

    /// What the pairer did besides pairing.
    #[must_use]
    pub fn stats(&self) -> PairStats {
        self.stats
    }

    /// Takes one record in time order; appends the events it completes.
    pub fn push(&mut self, rec: Record, out: &mut Vec<Event>) {
        self.advance(rec.header().time_ns);
        match rec {
            Record::Entry(e) => self.entry(e, out),
            Record::Exit(x) => {
                let id = x.header.call_id;
                let (entry, state) = match self.take(id) {
                    Some(p) => (Some(p.entry), CallState::Complete),
                    None if x.body.flags & abi::EXIT_F_ENTRY_GONE != 0 => {
                        (None, CallState::EntryGone)
                    }
                    None if x.body.flags & abi::EXIT_F_ENTRY_LOST != 0 => {
                        (None, CallState::EntryLost)
                    }
                    None if self.read_earlier(&x) => (None, CallState::EntryReadEarlier),
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
                    self.lost(&l, out);
                } else {
                    out.push(Event::Lost(*l));
                }
            }
        }
    }

    /// Moves the merge's position to `time_ns`, and forgets the LOST
    /// ranges no ENTRY can be in any more.
    fn advance(&mut self, time_ns: u64) {
        self.now = self.now.max(time_ns);
        let now = self.now;
        self.recent_lost.retain(|r| r.last_time_ns >= now);
    }

    fn entry(&mut self, e: EntryRecord, out: &mut Vec<Event>) {
        let (id, time) = (e.header.call_id, e.header.time_ns);
        let thread = (e.header.pid, e.header.tid);
        let exit_maybe_lost = self.recent_lost.iter().any(|r| r.covers(id, time));
        let fresh = Pending {
            entry: e,
            exit_maybe_lost,
            ended: false,
        };
        if let Some(old) = self.pending.insert(id, fresh) {
            // The same id twice: the first one's EXIT never came.
            self.stats.settled_early += 1;
            out.push(Event::Call(unfinished(old)));
        }
        if let Some(prev) = self.threads.insert(thread, id) {
            if prev != id {
                self.thread_moved_on(prev, out);
            }
        }
        self.stats.max_pending_seen = self.stats.max_pending_seen.max(self.pending.len());
        if self.pending.len() > self.limits.max_pending {
            self.evict(out);
        }
    }

    /// `id`'s thread made a later call: its EXIT will not come.
    fn thread_moved_on(&mut self, id: u64, out: &mut Vec<Event>) {
        let Some(p) = self.pending.get_mut(&id) else {
            return;
        };
        if p.exit_maybe_lost {
            self.settle(vec![id], out);
        } else {
            p.ended = true;
        }
    }

    fn lost(&mut self, l: &LostRecord, out: &mut Vec<Event>) {
        let range = LostRange {
            min_call_id: l.body.min_call_id.min(l.body.max_call_id),
            max_call_id: l.body.min_call_id.max(l.body.max_call_id),
            last_time_ns: l.body.last_time_ns,
        };
        let mut done = Vec::new();
        for (&id, p) in &mut self.pending {
            if range.covers(id, p.entry.header.time_ns) {
                p.exit_maybe_lost = true;
                if p.ended {
                    done.push(id);
                }
            }
        }
        if range.last_time_ns >= self.now {
            self.recent_lost.push(range);
        }
        out.push(Event::Lost(l.clone()));
        self.settle(done, out);
    }

    /// Removes a pending ENTRY and its thread's index entry.
    fn take(&mut self, id: u64) -> Option<Pending> {
        let p = self.pending.remove(&id)?;
        let thread = (p.entry.header.pid, p.entry.header.tid);
        if self.threads.get(&thread) == Some(&id) {
            self.threads.remove(&thread);
        }
        Some(p)
    }

    /// Prints these pending calls as unfinished, in time order.
    fn settle(&mut self, ids: Vec<u64>, out: &mut Vec<Event>) {
        let mut calls: Vec<Pending> = ids.into_iter().filter_map(|id| self.take(id)).collect();
        calls.sort_by_key(order);
        self.stats.settled_early += calls.len() as u64;
        out.extend(calls.into_iter().map(|p| Event::Call(unfinished(p))));
    }

    /// Over the cap: prints a quarter of the pending calls, those a LOST
    /// record covers first, then the oldest.
    fn evict(&mut self, out: &mut Vec<Event>) {
        let mut victims: Vec<(bool, u64, u64)> = self
            .pending
            .iter()
            .map(|(&id, p)| (!p.exit_maybe_lost, p.entry.header.time_ns, id))
            .collect();
        let n = (self.limits.max_pending / 4).max(1) + self.pending.len() - self.limits.max_pending;
        let n = n.min(victims.len());
        if n < victims.len() {
            victims.select_nth_unstable(n);
        }
        let ids: Vec<u64> = victims[..n].iter().map(|&(_, _, id)| id).collect();
        self.stats.evicted += ids.len() as u64;
        self.settle(ids, out);
    }

    /// The ENTRYs still waiting for an EXIT, as unfinished calls in time
    /// order.
    pub fn finish(&mut self) -> Vec<Event> {
        self.threads.clear();
        self.recent_lost.clear();
        let mut left: Vec<Pending> = self.pending.drain().map(|(_, p)| p).collect();
        left.sort_by_key(order);
        left.into_iter()
            .map(|p| Event::Call(unfinished(p)))
            .collect()
    }
}

/// Output order of calls printed together: time, CPU, id.
fn order(p: &Pending) -> (u64, u32, u64) {
    let h = &p.entry.header;
    (h.time_ns, h.cpu, h.call_id)
}

fn unfinished(p: Pending) -> Call {
    Call {
        call_id: p.entry.header.call_id,
        exit_maybe_lost: p.exit_maybe_lost,
        entry: Some(p.entry),
        exit: None,
        state: CallState::Unfinished,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ENTRY of call `id` at time `t` by thread `tid`.
    fn entry(id: u64, t: u64, tid: u32) -> Record {
        Record::Entry(EntryRecord::new(
            abi::RecordHeader {
                call_id: id,
                time_ns: t,
                pid: tid,
                tid,
                ..Default::default()
            },
            [0; 6],
            t,
            &[],
        ))
    }

    fn exit(id: u64, t: u64, flags: u32) -> Record {
        exit_at(id, t, flags, 0)
    }

    /// An EXIT whose ENTRY was written at `entry_pos` in its ring.
    fn exit_at(id: u64, t: u64, flags: u32, entry_pos: u64) -> Record {
        Record::Exit(ExitRecord::new(
            abi::RecordHeader {
                call_id: id,
                time_ns: t,
                cpu: 1,
                ..Default::default()
            },
            abi::Exit {
                flags,
                entry_pos,
                ..Default::default()
            },
        ))
    }

    /// A LOST record at `t` for ids `lo..=hi` dropped up to `last`.
    fn lost(lo: u64, hi: u64, last: u64, t: u64) -> Record {
        Record::Lost(Box::new(LostRecord {
            header: abi::RecordHeader {
                time_ns: t,
                ..Default::default()
            },
            body: abi::Lost {
                first_time_ns: last,
                last_time_ns: last,
                min_call_id: lo,
                max_call_id: hi,
                lost: {
                    let mut n = [0; abi::LOST_NR_SLOTS];
                    n[0] = 1;
                    n
                },
                ..Default::default()
            },
        }))
    }

    /// (id, state, maybe lost) of the calls among `events`.
    fn calls(events: &[Event]) -> Vec<(u64, CallState, bool)> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Call(c) => Some((c.call_id, c.state, c.exit_maybe_lost)),
                Event::Lost(_) => None,
            })
            .collect()
    }

    use CallState::{Complete, EntryGone, EntryLost, EntryMissing, EntryReadEarlier, Unfinished};

    #[test]
    fn an_exit_whose_entry_lies_before_this_reader_began_was_read_earlier() {
        const CPU1: u64 = 1 << abi::CALL_ID_SEQ_BITS;
        let mut p = Pairer::new();
        let mut out = Vec::new();
        p.ring_start(1, 4096);
        // Named by CPU 1, its ENTRY written before 4096 there.
        p.push(exit_at(CPU1 | 1, 10, 0, 4000), &mut out);
        // At or after 4096: this reader should have read it.
        p.push(exit_at(CPU1 | 2, 11, 0, 4096), &mut out);
        // Named by CPU 0, whose start this reader does not know yet.
        p.push(exit_at(3, 12, 0, 0), &mut out);
        // Flagged: the flags say more than the position.
        p.push(
            exit_at(CPU1 | 4, 13, abi::EXIT_F_ENTRY_LOST, 4000),
            &mut out,
        );
        p.push(
            exit_at(CPU1 | 5, 14, abi::EXIT_F_ENTRY_GONE, 4000),
            &mut out,
        );
        // Held: paired whatever its position.
        p.push(entry(CPU1 | 6, 15, 6), &mut out);
        p.push(exit_at(CPU1 | 6, 16, 0, 8), &mut out);
        assert_eq!(
            calls(&out),
            vec![
                (CPU1 | 1, EntryReadEarlier, false),
                (CPU1 | 2, EntryMissing, false),
                (3, EntryMissing, false),
                (CPU1 | 4, EntryLost, false),
                (CPU1 | 5, EntryGone, false),
                (CPU1 | 6, Complete, false),
            ]
        );
    }

    #[test]
    fn pairs_by_call_id() {
        let mut p = Pairer::new();
        let mut out = Vec::new();
        p.push(entry(1, 1, 1), &mut out);
        p.push(entry(2, 2, 2), &mut out);
        p.push(exit(2, 12, 0), &mut out);
        p.push(exit(3, 13, abi::EXIT_F_ENTRY_LOST), &mut out);
        p.push(exit(4, 14, 0), &mut out);
        // The ENTRY went to rings replaced during the call, dropped there
        // or not: gone says more than lost.
        p.push(exit(6, 15, abi::EXIT_F_ENTRY_GONE), &mut out);
        p.push(
            exit(7, 15, abi::EXIT_F_ENTRY_GONE | abi::EXIT_F_ENTRY_LOST),
            &mut out,
        );
        // The same id again: the first ENTRY is unfinished.
        p.push(entry(5, 15, 5), &mut out);
        p.push(entry(5, 16, 6), &mut out);
        assert_eq!(
            calls(&out),
            vec![
                (2, Complete, false),
                (3, EntryLost, false),
                (4, EntryMissing, false),
                (6, EntryGone, false),
                (7, EntryGone, false),
                (5, Unfinished, false),
            ]
        );
        assert_eq!(
            calls(&p.finish()),
            vec![(1, Unfinished, false), (5, Unfinished, false)]
        );
    }

    #[test]
    fn a_call_whose_thread_moved_on_is_printed_at_its_lost_record() {
        let mut p = Pairer::new();
        let mut out = Vec::new();
        p.push(entry(10, 100, 7), &mut out);
        // Thread 7's next call: call 10 returned, its EXIT was not seen.
        p.push(entry(11, 300, 7), &mut out);
        assert!(calls(&out).is_empty(), "no LOST record yet: {out:?}");
        assert_eq!(p.pending(), 2);
        // The LOST record of the ring its EXIT was dropped on.
        p.push(lost(10, 10, 200, 310), &mut out);
        assert_eq!(calls(&out), vec![(10, Unfinished, true)]);
        assert!(matches!(out[0], Event::Lost(_)), "the LOST line first");
        assert_eq!(p.pending(), 1);
        assert_eq!(p.stats().settled_early, 1);
    }

    #[test]
    fn a_covered_call_is_printed_when_its_thread_moves_on() {
        let mut p = Pairer::new();
        let mut out = Vec::new();
        p.push(entry(10, 100, 7), &mut out);
        p.push(lost(5, 20, 200, 210), &mut out);
        // Covered, but it may still be running: held.
        assert!(calls(&out).is_empty());
        p.push(entry(21, 300, 7), &mut out);
        assert_eq!(calls(&out), vec![(10, Unfinished, true)]);
    }

    #[test]
    fn a_covered_call_that_was_running_pairs_normally() {
        let mut p = Pairer::new();
        let mut out = Vec::new();
        p.push(entry(10, 100, 7), &mut out);
        p.push(lost(5, 20, 200, 210), &mut out);
        p.push(exit(10, 400, 0), &mut out);
        assert_eq!(calls(&out), vec![(10, Complete, false)]);
        assert!(calls(&p.finish()).is_empty());
    }

    #[test]
    fn records_dropped_before_an_entry_cannot_be_its_exit() {
        let mut p = Pairer::new();
        let mut out = Vec::new();
        p.push(entry(10, 500, 7), &mut out);
        // Ids 5..=20, but all dropped by time 400, before the ENTRY.
        p.push(lost(5, 20, 400, 600), &mut out);
        assert_eq!(calls(&p.finish()), vec![(10, Unfinished, false)]);
    }

    #[test]
    fn a_lost_range_applies_to_an_entry_of_its_last_time_and_is_then_forgotten() {
        let mut p = Pairer::new();
        let mut out = Vec::new();
        // A LOST record merged before an ENTRY of the same time.
        p.push(lost(5, 20, 500, 500), &mut out);
        assert_eq!(p.lost_ranges(), 1);
        p.push(entry(10, 500, 7), &mut out);
        p.push(entry(30, 501, 8), &mut out);
        assert_eq!(p.lost_ranges(), 0);
        assert_eq!(
            calls(&p.finish()),
            vec![(10, Unfinished, true), (30, Unfinished, false)]
        );
    }

    #[test]
    fn an_uncovered_call_whose_thread_moved_on_waits_for_its_lost_record() {
        let mut p = Pairer::new();
        let mut out = Vec::new();
        p.push(entry(10, 100, 7), &mut out);
        p.push(entry(11, 200, 7), &mut out);
        p.push(exit(11, 300, 0), &mut out);
        // However long the ring that dropped its EXIT stays silent.
        p.push(entry(12, 1_000_000_000_000, 8), &mut out);
        assert_eq!(calls(&out), vec![(11, Complete, false)]);
        out.clear();
        p.push(lost(10, 10, 150, 1_000_000_000_001), &mut out);
        assert_eq!(calls(&out), vec![(10, Unfinished, true)]);
    }

    #[test]
    fn the_cap_evicts_covered_calls_first_then_the_oldest() {
        let mut p = Pairer::with_limits(Limits { max_pending: 8 });
        let mut out = Vec::new();
        for id in 1..=6 {
            p.push(entry(id, id, u32::try_from(id).unwrap()), &mut out);
        }
        // Covers 5 and 6 (still running as far as anyone knows).
        p.push(lost(5, 6, 6, 7), &mut out);
        for id in 7..=9 {
            p.push(entry(id, id + 1, u32::try_from(id).unwrap()), &mut out);
        }
        // 9 pending > 8: evict 8 / 4 + 1 = 3: the covered 5 and 6, then 1.
        assert_eq!(
            calls(&out),
            vec![
                (1, Unfinished, false),
                (5, Unfinished, true),
                (6, Unfinished, true)
            ]
        );
        assert_eq!(p.pending(), 6);
        assert_eq!(p.stats().evicted, 3);
        assert_eq!(p.stats().max_pending_seen, 9);
    }

    /// A long run of one thread on a stalled ring: 300 000 rounds of
    /// three calls; the first one's ENTRY is written, then its EXIT and
    /// the next two calls are dropped and reported by a LOST record before
    /// the next ENTRY. Each call with a written ENTRY is printed at its
    /// thread's next call, as exit lost; the state never grows.
    #[test]
    fn a_long_lossy_run_keeps_the_state_small() {
        let mut p = Pairer::new();
        let mut out = Vec::new();
        let mut printed = 0u64;
        for i in 0..300_000u64 {
            let id = 1 + 3 * i;
            p.push(entry(id, 10 * id, 1), &mut out);
            p.push(lost(id, id + 2, 10 * id + 20, 10 * id + 25), &mut out);
            assert!(p.pending() <= 2 && p.lost_ranges() <= 1);
            for c in calls(&out) {
                assert_eq!(c.1, Unfinished);
                assert!(c.2, "{c:?}");
                printed += 1;
            }
            out.clear();
        }
        // The last call waits for its thread's next call, or the end.
        assert_eq!(printed, 299_999);
        assert_eq!(calls(&p.finish()), vec![(899_998, Unfinished, true)]);
    }
}
