//! Pairing ENTRY and EXIT records by `call_id` into calls.

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::Merger;
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
