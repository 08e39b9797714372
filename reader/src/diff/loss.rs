// SPDX-License-Identifier: GPL-2.0-only
//! What a run lost, per ring, from its final counters: [`RunLoss`].
//!
//! A comparison of a run that lost records reports the loss as behaviour
//! (the missing calls are "only in" the other run), so `reader diff`
//! compares lossy runs only when told to, and names the rings and the
//! call ids the loss concerns. The kernel writes a LOST record only once a
//! later record finds room in that ring, which may never come: the loss
//! is the kernel's final counters (a trace's DONE frames), not the LOST
//! records. This is a pass of its own over the input, frame by frame (a
//! trace) or line by line (JSON Lines, of which only the LOST lines are
//! parsed): it keeps a few numbers per ring and one entry per LOST record.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use antinomie_abi as abi;
use serde_json::Value;

use super::DiffError;
use crate::pipeline::{DrainMsg, FinalCounters, Loss};
use crate::record::{self, RecordView};
use crate::ring::RingCounters;
use crate::trace::{self, TraceReader};

/// What one LOST record reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LostStretch {
    /// Records dropped, all reasons.
    pub records: u64,
    /// The smallest call id among them.
    pub min_call_id: u64,
    /// The largest.
    pub max_call_id: u64,
}

/// The last ENTRY or EXIT record a ring gave: drops no LOST record
/// reported came after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LastRecord {
    /// Its call id.
    pub call_id: u64,
    /// Its `time_ns`.
    pub time_ns: u64,
}

/// What one ring lost.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RingLoss {
    /// ENTRY and EXIT records read from it; `None` from JSON Lines.
    pub consumed: Option<u64>,
    /// The kernel's counters at the end (the DONE frame), if known.
    pub counters: Option<RingCounters>,
    /// What its LOST records reported, by reason.
    pub reported: [u64; abi::LOST_NR_SLOTS],
    /// Each LOST record, in ring order.
    pub stretches: Vec<LostStretch>,
    /// Its last ENTRY or EXIT record, if any was read.
    pub last: Option<LastRecord>,
}

impl RingLoss {
    /// Records lost, by reason: the final counters, or what LOST records
    /// reported when those are unknown.
    #[must_use]
    pub fn lost_by_reason(&self) -> [u64; abi::LOST_NR_SLOTS] {
        self.counters.map_or(self.reported, |c| c.lost)
    }

    /// Records lost, all reasons (see [`RingLoss::lost_by_reason`]).
    #[must_use]
    pub fn lost(&self) -> u64 {
        sum(&self.lost_by_reason()).max(self.reported_total())
    }

    /// Records its LOST records reported, all reasons.
    #[must_use]
    pub fn reported_total(&self) -> u64 {
        sum(&self.reported)
    }

    /// Records lost that no LOST record reported; `None` when the final
    /// counters are unknown.
    #[must_use]
    pub fn unreported(&self) -> Option<u64> {
        self.counters
            .map(|c| sum(&c.lost).saturating_sub(self.reported_total()))
    }
}

fn sum(counts: &[u64]) -> u64 {
    counts.iter().fold(0, |a, &n| a.saturating_add(n))
}

/// What a run lost, per ring (by CPU).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunLoss {
    /// The rings: a trace's every drained ring; for JSON Lines, those
    /// with a LOST line.
    pub rings: BTreeMap<u32, RingLoss>,
    /// The input was JSON Lines: no final counters, no consumed counts.
    pub from_json: bool,
}

impl RunLoss {
    /// Reads a run's loss from a trace file or the reader's JSON Lines.
    ///
    /// # Errors
    /// An unreadable file or a trace that does not decode; a LOST line
    /// that is not JSON.
    pub fn read(path: &Path) -> Result<Self, DiffError> {
        let read_err = |source| DiffError::Read {
            path: path.to_owned(),
            source,
        };
        let mut input = BufReader::new(File::open(path).map_err(read_err)?);
        if trace::is_trace(input.fill_buf().map_err(read_err)?) {
            let reader = TraceReader::new(input).map_err(|source| DiffError::Trace {
                path: path.to_owned(),
                source,
            })?;
            return Self::from_trace(reader).map_err(|source| DiffError::Trace {
                path: path.to_owned(),
                source,
            });
        }
        let mut run = RunLoss {
            from_json: true,
            ..RunLoss::default()
        };
        let mut line = String::new();
        for n in 1.. {
            line.clear();
            if input.read_line(&mut line).map_err(read_err)? == 0 {
                break;
            }
            // Only LOST lines matter here; the full schema writes the
            // event first, so a call line is passed over unparsed.
            if !line.contains(r#""event":"lost""#) {
                continue;
            }
            let v: Value = serde_json::from_str(&line).map_err(|e| DiffError::Json {
                path: path.to_owned(),
                line: n,
                why: format!("a LOST line that is not JSON: {e}"),
            })?;
            run.push_lost_json(&v).map_err(|why| DiffError::Json {
                path: path.to_owned(),
                line: n,
                why,
            })?;
        }
        Ok(run)
    }

    /// Reads a trace's loss: its rings from the header, their LOST
    /// records and last records from the RECORDS frames, their final
    /// counters from the DONE frames. A trace cut short leaves the rings
    /// without DONE frame with unknown counters.
    ///
    /// # Errors
    /// A malformed frame.
    pub fn from_trace<R: Read>(mut reader: TraceReader<R>) -> Result<Self, crate::Error> {
        let mut run = RunLoss::default();
        for &cpu in &reader.header().cpus {
            run.rings.insert(
                cpu,
                RingLoss {
                    consumed: Some(0),
                    ..RingLoss::default()
                },
            );
        }
        for msg in reader.by_ref() {
            match msg? {
                DrainMsg::Records { cpu, bytes } => run.add_records(cpu, &bytes),
                DrainMsg::Done { cpu, counters, .. } => {
                    run.ring(cpu).counters = Some(counters);
                }
                DrainMsg::Start { .. } | DrainMsg::Idle { .. } | DrainMsg::Corrupt(_) => {}
            }
        }
        Ok(run)
    }

    fn ring(&mut self, cpu: u32) -> &mut RingLoss {
        let from_json = self.from_json;
        self.rings.entry(cpu).or_insert_with(|| RingLoss {
            consumed: (!from_json).then_some(0),
            ..RingLoss::default()
        })
    }

    /// Walks the records of one drain pass (framed records, back to back,
    /// as the recorder wrote them), counting those the merge decodes: a
    /// record whose body does not parse, or that claims another CPU, is
    /// skipped there and not counted as consumed here either.
    fn add_records(&mut self, cpu: u32, bytes: &[u8]) {
        let ring = self.ring(cpu);
        let mut rest = bytes;
        while let Ok(h) = record::parse_header(rest, rest.len() as u64) {
            let (one, next) = rest.split_at(h.size as usize);
            rest = next;
            let Ok(view) = record::parse(one) else {
                continue;
            };
            if h.cpu != cpu {
                continue;
            }
            match view {
                RecordView::Entry(_) | RecordView::Exit(_) => {
                    ring.consumed = ring.consumed.map(|n| n + 1);
                    ring.last = Some(LastRecord {
                        call_id: h.call_id,
                        time_ns: h.time_ns,
                    });
                }
                RecordView::Lost(l) => {
                    add_stretch(ring, &l.body.lost, l.body.min_call_id, l.body.max_call_id);
                }
            }
        }
    }

    /// Adds one LOST line of the reader's JSON.
    ///
    /// # Errors
    /// A LOST line without its keys.
    pub fn push_lost_json(&mut self, v: &Value) -> Result<(), String> {
        let key = |k: &str| {
            v.get(k)
                .and_then(Value::as_u64)
                .ok_or_else(|| format!("a LOST line without `{k}`"))
        };
        let cpu = u32::try_from(key("cpu")?).map_err(|_| "a LOST line with a bad `cpu`")?;
        let mut lost = [0u64; abi::LOST_NR_SLOTS];
        lost[abi::LOST_RING_FULL] = key("lost.ring_full")?;
        lost[abi::LOST_BAD_CONSUMER] = key("lost.bad_consumer")?;
        // The line sums the reasons this reader has no key for.
        lost[abi::LOST_RING_BROKEN] = key("lost.other")?;
        let (min, max) = (key("lost.min_call_id")?, key("lost.max_call_id")?);
        add_stretch(self.ring(cpu), &lost, min, max);
        Ok(())
    }

    /// The whole run's records and loss, as a headline states them.
    #[must_use]
    pub fn total(&self) -> Loss {
        let mut loss = Loss {
            consumed: (!self.from_json).then_some(0),
            ..Loss::default()
        };
        for r in self.rings.values() {
            loss.add_ring(
                r.consumed,
                r.counters.map(|c| (c.produced, c.lost)),
                r.reported_total(),
            );
        }
        let missing: Vec<u32> = self
            .rings
            .iter()
            .filter(|(_, r)| r.counters.is_none())
            .map(|(&cpu, _)| cpu)
            .collect();
        loss.final_counters = if self.from_json {
            FinalCounters::Absent
        } else if missing.is_empty() {
            FinalCounters::All
        } else {
            FinalCounters::Missing(missing)
        };
        loss
    }
}

fn add_stretch(ring: &mut RingLoss, lost: &[u64; abi::LOST_NR_SLOTS], min: u64, max: u64) {
    for (total, n) in ring.reported.iter_mut().zip(lost) {
        *total = total.saturating_add(*n);
    }
    ring.stretches.push(LostStretch {
        records: sum(lost),
        min_call_id: min,
        max_call_id: max,
    });
}
