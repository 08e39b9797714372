//! Pairing ENTRY and EXIT records by `call_id` into calls.

use std::collections::BTreeMap;

use antinomie_abi as abi;

use crate::call::{Call, CallState};
use crate::record::{self, LostRecord, Record};

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
    /// Keyed by `call_id` with foldhash: ids are not attacker-chosen
    /// keys worth `SipHash`'s cost.
    pending: foldhash::HashMap<u64, record::EntryRecord>,
    lost: LostIds,
}

/// The call ids LOST records covered, as disjoint ranges `lo -> hi`
/// (inclusive), overlapping and adjacent ones merged: a lossy ring's
/// consecutive LOST records cover consecutive ids, so this stays a few
/// entries over a long run; lookups are O(log ranges).
#[derive(Debug, Default)]
struct LostIds(BTreeMap<u64, u64>);

impl LostIds {
    fn insert(&mut self, mut lo: u64, mut hi: u64) {
        if hi < lo {
            std::mem::swap(&mut lo, &mut hi);
        }
        // Absorb every range that overlaps or touches [lo, hi].
        while let Some((&l, &h)) = self.0.range(..=hi.saturating_add(1)).next_back() {
            if h.saturating_add(1) < lo {
                break;
            }
            self.0.remove(&l);
            lo = lo.min(l);
            hi = hi.max(h);
        }
        self.0.insert(lo, hi);
    }

    fn contains(&self, id: u64) -> bool {
        self.0
            .range(..=id)
            .next_back()
            .is_some_and(|(_, &hi)| id <= hi)
    }
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
                    self.lost.insert(l.body.min_call_id, l.body.max_call_id);
                }
                out.push(Event::Lost(l));
            }
        }
    }

    fn unfinished(&self, e: record::EntryRecord) -> Call {
        let id = e.header.call_id;
        Call {
            call_id: id,
            exit_maybe_lost: self.lost.contains(id),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::Merger;
    use crate::record::{EntryRecord, ExitRecord};

    fn entry(id: u64) -> Record {
        Record::Entry(EntryRecord::new(
            abi::RecordHeader {
                call_id: id,
                time_ns: id,
                ..Default::default()
            },
            [0; 6],
            &[],
        ))
    }

    fn exit(id: u64, flags: u32) -> Record {
        Record::Exit(ExitRecord::new(
            abi::RecordHeader {
                call_id: id,
                time_ns: id + 10,
                cpu: 1,
                ..Default::default()
            },
            abi::Exit {
                flags,
                ..Default::default()
            },
            &[],
        ))
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
    fn lost_ids_merge_and_answer_like_a_list() {
        let mut ids = LostIds::default();
        let mut list: Vec<(u64, u64)> = Vec::new();
        let mut x = 7u64;
        for _ in 0..2000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let lo = (x >> 33) % 500;
            let hi = lo + (x >> 20) % 6;
            ids.insert(lo, hi);
            list.push((lo, hi));
            let probe = (x >> 40) % 520;
            assert_eq!(
                ids.contains(probe),
                list.iter().any(|&(l, h)| (l..=h).contains(&probe)),
                "{probe}"
            );
        }
        // Disjoint and not touching.
        let r: Vec<(u64, u64)> = ids.0.iter().map(|(&l, &h)| (l, h)).collect();
        assert!(r.windows(2).all(|w| w[0].1 + 1 < w[1].0), "{r:?}");
    }

    /// A long run over a stalled ring: a million LOST records, each
    /// covering the ids since the previous one, the way a full ring drops
    /// everything between two drains; one unfinished call whose EXIT is
    /// in them. The lost ranges stay one entry, and the call is reported
    /// once, as maybe lost.
    #[test]
    fn a_long_lossy_run_keeps_the_lost_ranges_small() {
        let mut p = Pairer::new();
        let mut out = Vec::new();
        p.push(entry(1), &mut out);
        for i in 0..1_000_000u64 {
            let lost = LostRecord {
                header: abi::RecordHeader {
                    time_ns: i,
                    ..Default::default()
                },
                body: abi::Lost {
                    min_call_id: 1 + 3 * i,
                    max_call_id: 3 + 3 * i,
                    ..Default::default()
                },
            };
            p.push(Record::Lost(lost), &mut out);
            assert_eq!(p.lost.0.len(), 1);
        }
        assert_eq!(out.len(), 1_000_000);
        let left = p.finish();
        assert!(matches!(&left[..], [Event::Call(c)] if c.exit_maybe_lost && c.call_id == 1));
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
