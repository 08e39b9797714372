// SPDX-License-Identifier: GPL-2.0-only
//! What a run saw, per CPU and overall, and its rendering as text or as
//! one JSON object (`--summary json`, for scripts: a structure to read
//! rather than text to parse); [`Loss`], the records a run lost as its
//! headline states them.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use antinomie_abi as abi;

use serde::Serialize;

use crate::call::{lost_reason, LOST_REASONS};
use crate::ring::{LosslessCounters, RingCounters};

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
    /// The ring appeared during the run (its CPU came online) and this run
    /// did not read it: its records are left for the next reader. Only in
    /// a trace of an earlier reader, whose kernel gave a CPU its ring when
    /// it came online; a reader now starts with every ring.
    pub not_read: bool,
    /// The ring appeared during the run (its CPU came online) and this run
    /// read it from then on. Only in a trace of an earlier reader, as for
    /// `not_read`.
    pub joined: bool,
}

impl CpuSummary {
    /// ENTRY and EXIT records consumed: what `meta.produced` counts.
    #[must_use]
    pub fn consumed(&self) -> u64 {
        self.entries + self.exits
    }

    /// Records lost on this ring by LOST records' counts, all reasons.
    #[must_use]
    pub fn lost_reported_total(&self) -> u64 {
        self.lost_reported
            .iter()
            .fold(0, |a, &n| a.saturating_add(n))
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
    /// ... printed before the end: their thread moved on and a LOST
    /// record covered them, or the pending cap evicted them.
    pub settled_early: u64,
    /// ... evicted by the pending cap (their EXIT may still come, as an
    /// EXIT without ENTRY).
    pub evicted: u64,
    /// EXIT flagged `ENTRY_LOST`.
    pub entry_lost: u64,
    /// EXIT without ENTRY, not flagged.
    pub entry_missing: u64,
    /// EXIT flagged `ENTRY_GONE`: its ENTRY went to rings replaced or
    /// freed during the call.
    pub entry_gone: u64,
    /// EXIT whose ENTRY an earlier reader read (it lies before where this
    /// reader began reading its ring): no loss.
    pub entry_read_earlier: u64,
    /// Calls the filter rejected.
    pub filtered_out: u64,
    /// Records emitted after the reordering window.
    pub late: u64,
    /// Output stopped on a broken pipe.
    pub broken_pipe: bool,
}

impl Summary {
    /// Notes a ring that appeared during the run, read from now on (in an
    /// earlier reader's trace: see [`CpuSummary::joined`]). Returns whether
    /// it is new (not a ring the run already reads).
    pub fn ring_joined(&mut self, cpu: u32) -> bool {
        match self.cpus.entry(cpu) {
            std::collections::btree_map::Entry::Occupied(_) => false,
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(CpuSummary {
                    joined: true,
                    ..CpuSummary::default()
                });
                true
            }
        }
    }

    /// Notes the final counters of `cpu`'s ring. A ring the run neither
    /// started with nor joined appeared during it and was not read (in an
    /// earlier reader's trace: see [`CpuSummary::not_read`]). Returns
    /// whether the run read it.
    pub fn ring_done(&mut self, cpu: u32, start_pos: u64, counters: RingCounters) -> bool {
        let read = self.cpus.contains_key(&cpu);
        let c = self.cpus.entry(cpu).or_default();
        c.counters = Some(counters);
        c.start_pos = Some(start_pos);
        c.not_read = !read;
        read
    }

    /// The headline's clause naming the rings that appeared during the
    /// run and were not read; empty if there are none.
    fn not_read_clause(&self) -> String {
        let cpus: Vec<String> = self
            .cpus
            .iter()
            .filter(|(_, c)| c.not_read)
            .map(|(cpu, _)| cpu.to_string())
            .collect();
        if cpus.is_empty() {
            return String::new();
        }
        format!(
            "; not read: the ring of cpu {}, which came online during the run",
            cpus.join(", ")
        )
    }

    /// All calls seen.
    #[must_use]
    pub fn calls(&self) -> u64 {
        self.complete
            + self.unfinished
            + self.entry_lost
            + self.entry_missing
            + self.entry_gone
            + self.entry_read_earlier
    }

    /// Records lost by LOST records, all CPUs and reasons.
    #[must_use]
    pub fn lost_reported(&self) -> u64 {
        self.cpus
            .values()
            .flat_map(|c| c.lost_reported)
            .fold(0, u64::saturating_add)
    }

    /// The records of the run: consumed, and lost by the kernel's final
    /// counters (in-band reported or not), what the headline states.
    #[must_use]
    pub fn loss(&self) -> Loss {
        let mut loss = Loss {
            consumed: Some(0),
            final_counters: FinalCounters::All,
            ..Loss::default()
        };
        let mut missing = Vec::new();
        for (&cpu, c) in &self.cpus {
            loss.add_ring(
                Some(c.consumed()),
                c.counters.map(|k| (k.produced, k.lost)),
                c.lost_reported_total(),
            );
            if c.counters.is_none() {
                missing.push(cpu);
            }
        }
        if !missing.is_empty() {
            loss.final_counters = FinalCounters::Missing(missing);
        }
        loss
    }

    /// The first line: the calls by state, then the loss.
    fn headline(&self) -> String {
        /// `text` when `n` is not 0.
        fn some(n: u64, text: String) -> String {
            if n > 0 {
                text
            } else {
                String::new()
            }
        }
        format!(
            "summary: {} calls ({} complete, {} unfinished{}{}, {} entry lost, {} entry missing{}{}){}; {}{}{}",
            self.calls(),
            self.complete,
            self.unfinished,
            some(
                self.unfinished_maybe_lost,
                format!(" ({} may have lost their exit)", self.unfinished_maybe_lost)
            ),
            some(
                self.evicted,
                format!(
                    " ({} printed early by the pending cap: an exit may follow as entry missing)",
                    self.evicted
                )
            ),
            self.entry_lost,
            self.entry_missing,
            some(
                self.entry_gone,
                format!(", {} entry gone (in rings replaced during the call)", self.entry_gone)
            ),
            some(
                self.entry_read_earlier,
                format!(
                    ", {} entry read by an earlier reader",
                    self.entry_read_earlier
                )
            ),
            some(self.filtered_out, format!(", {} filtered out", self.filtered_out)),
            self.loss(),
            self.not_read_clause(),
            some(
                self.late,
                format!("; {} records arrived after the reordering window", self.late)
            ),
        )
    }

    /// The summary as text, one table row per CPU.
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        s.push_str(&self.headline());
        s.push('\n');
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
            let mut check = match c.check() {
                Check::Stopped => "RING STOPPED (corrupt record)".to_owned(),
                Check::NotRead => {
                    "NOT READ: the ring appeared during the run (its CPU came online)".to_owned()
                }
                Check::Ok => "ok: produced = consumed, lost = reported".to_owned(),
                Check::Mismatch => {
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
                Check::Unknown => match c.start_pos {
                    Some(p) => format!("n/a (reader started at ring position {p:#x})"),
                    None => "n/a (no counters)".to_owned(),
                },
            };
            if c.joined {
                check.push_str(" (its CPU came online during the run)");
            }
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
        if let Some(line) = self.lossless_text() {
            let _ = writeln!(s, "{line}");
        }
        s
    }

    /// Lossless mode and its waits, summed over the CPUs, when some ring
    /// shows the mode on or a wait: `None` otherwise, and without counters.
    fn lossless(&self) -> Option<LosslessCounters> {
        let known: Vec<_> = self
            .cpus
            .values()
            .filter_map(|c| c.counters.and_then(|k| k.lossless))
            .collect();
        let sum = LosslessCounters {
            on: known.iter().any(|l| l.on),
            waits: known.iter().map(|l| l.waits).fold(0, u64::saturating_add),
            wait_ns: known.iter().map(|l| l.wait_ns).fold(0, u64::saturating_add),
        };
        (sum.on || sum.waits > 0).then_some(sum)
    }

    /// [`Summary::lossless`] as the text's last line.
    fn lossless_text(&self) -> Option<String> {
        let l = self.lossless()?;
        // Display only: f64 is exact far beyond any wait time.
        #[allow(clippy::cast_precision_loss)]
        let seconds = l.wait_ns as f64 / 1e9;
        Some(format!(
            "lossless mode: {}; {} records waited for room, {seconds:.3} s in all",
            if l.on { "on" } else { "off" },
            l.waits,
        ))
    }

    /// The summary as one JSON object on one line (`--summary json`):
    /// [`Summary::json_object`], serialised, and a newline.
    #[must_use]
    pub fn to_json(&self) -> String {
        // Numbers, strings and bools only: serialising cannot fail.
        let mut s = serde_json::to_string(&self.json_object()).unwrap_or_default();
        s.push('\n');
        s
    }

    /// The summary as a JSON object: the headline's numbers, the rows and
    /// the lossless line, with the keys `reader/README.md` documents,
    /// always all of them and in the same order (`null` where a number is
    /// not known). A caller that has more to say (how a command it ran
    /// ended) flattens it into an object of its own (`#[serde(flatten)]`)
    /// and adds its keys after these.
    #[must_use]
    pub fn json_object(&self) -> impl Serialize {
        let loss = self.loss();
        let missing = match &loss.final_counters {
            FinalCounters::Missing(cpus) => cpus.clone(),
            FinalCounters::All | FinalCounters::Absent => Vec::new(),
        };
        let exact = !loss.is_partial();
        let consumed = loss.consumed.unwrap_or(0);
        JsonSummary {
            calls: self.calls(),
            complete: self.complete,
            unfinished: self.unfinished,
            unfinished_maybe_lost: self.unfinished_maybe_lost,
            evicted: self.evicted,
            entry_lost: self.entry_lost,
            entry_missing: self.entry_missing,
            entry_gone: self.entry_gone,
            entry_read_earlier: self.entry_read_earlier,
            filtered_out: self.filtered_out,
            late: self.late,
            records: JsonRecords {
                produced: exact.then(|| loss.written.saturating_add(loss.lost)),
                consumed,
                lost: loss.lost,
                lost_reported: loss.reported,
                not_consumed: exact.then(|| loss.written.checked_sub(consumed)).flatten(),
                lost_exact: exact,
                final_counters_missing: missing,
            },
            cpus: self
                .cpus
                .iter()
                .map(|(&cpu, c)| JsonCpu {
                    cpu,
                    produced: c.counters.map(|k| k.produced),
                    consumed: c.consumed(),
                    entries: c.entries,
                    exits: c.exits,
                    lost: c.counters.map(|k| Reasons(k.lost)),
                    lost_reported: Reasons(c.lost_reported),
                    lost_records: c.lost_records,
                    skipped: c.skipped,
                    start_pos: c.start_pos,
                    joined: c.joined,
                    check: c.check().as_str(),
                })
                .collect(),
            lossless: self.lossless().map(|l| JsonLossless {
                on: l.on,
                waits: l.waits,
                wait_ns: l.wait_ns,
            }),
            broken_pipe: self.broken_pipe,
        }
    }
}

/// A ring's check: whether its counters balance what the run consumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// produced = consumed and lost = reported, exactly.
    Ok,
    /// They do not: records in flight at the end, or lost and not yet
    /// reported by a LOST record.
    Mismatch,
    /// A framing error stopped the ring (corrupt record).
    Stopped,
    /// The ring appeared during the run and was not read.
    NotRead,
    /// Not known: the reader did not start at the ring's position 0, or
    /// the final counters are missing.
    Unknown,
}

impl Check {
    /// Its JSON value: `ok`, `mismatch`, `stopped`, `not_read`, `unknown`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Check::Ok => "ok",
            Check::Mismatch => "mismatch",
            Check::Stopped => "stopped",
            Check::NotRead => "not_read",
            Check::Unknown => "unknown",
        }
    }
}

impl CpuSummary {
    /// The ring's check, as its row states it.
    #[must_use]
    pub fn check(&self) -> Check {
        match (self.stopped, self.balanced()) {
            (true, _) => Check::Stopped,
            _ if self.not_read => Check::NotRead,
            (false, Some(true)) => Check::Ok,
            (false, Some(false)) => Check::Mismatch,
            (false, None) => Check::Unknown,
        }
    }
}

/// `--summary json`'s object. Structs, not a map: their keys keep this
/// order whatever features `serde_json` is built with.
#[derive(Serialize)]
struct JsonSummary {
    calls: u64,
    complete: u64,
    unfinished: u64,
    unfinished_maybe_lost: u64,
    evicted: u64,
    entry_lost: u64,
    entry_missing: u64,
    entry_gone: u64,
    entry_read_earlier: u64,
    filtered_out: u64,
    late: u64,
    records: JsonRecords,
    cpus: Vec<JsonCpu>,
    lossless: Option<JsonLossless>,
    broken_pipe: bool,
}

/// The headline's records clause.
#[derive(Serialize)]
struct JsonRecords {
    produced: Option<u64>,
    consumed: u64,
    lost: u64,
    lost_reported: u64,
    not_consumed: Option<u64>,
    lost_exact: bool,
    final_counters_missing: Vec<u32>,
}

/// One CPU's row.
#[derive(Serialize)]
struct JsonCpu {
    cpu: u32,
    produced: Option<u64>,
    consumed: u64,
    entries: u64,
    exits: u64,
    lost: Option<Reasons>,
    lost_reported: Reasons,
    lost_records: u64,
    skipped: u64,
    start_pos: Option<u64>,
    joined: bool,
    check: &'static str,
}

/// The lossless line.
#[derive(Serialize)]
struct JsonLossless {
    on: bool,
    waits: u64,
    wait_ns: u64,
}

/// Records lost, by reason: an object with a key per named reason
/// ([`LOST_REASONS`], always there) and `slot<i>` for a slot the ABI has
/// not named, only when it is not 0.
struct Reasons([u64; abi::LOST_NR_SLOTS]);

impl Serialize for Reasons {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        for (i, &n) in self.0.iter().enumerate() {
            if i < LOST_REASONS.len() || n != 0 {
                map.serialize_entry(&lost_reason(i), &n)?;
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(lossless: &[Option<LosslessCounters>]) -> Summary {
        let mut s = Summary::default();
        for (cpu, l) in (0u32..).zip(lossless) {
            s.cpus.insert(
                cpu,
                CpuSummary {
                    counters: Some(RingCounters {
                        lossless: *l,
                        ..RingCounters::default()
                    }),
                    ..CpuSummary::default()
                },
            );
        }
        s
    }

    #[test]
    fn lossless_line_sums_the_cpus() {
        let on = |waits, wait_ns| {
            Some(LosslessCounters {
                on: true,
                waits,
                wait_ns,
            })
        };
        let text = with(&[on(2, 1_000_000_000), on(1, 500_000_000)]).to_text();
        assert!(
            text.ends_with("lossless mode: on; 3 records waited for room, 1.500 s in all\n"),
            "{text}"
        );
        // Off and never waited, or not known: no line.
        let off = Some(LosslessCounters::default());
        assert!(!with(&[off, None]).to_text().contains("lossless"));
        // Off now, but calls waited while it was on.
        let waited = Some(LosslessCounters {
            on: false,
            waits: 1,
            wait_ns: 2_000_000,
        });
        assert!(with(&[waited])
            .to_text()
            .contains("lossless mode: off; 1 records waited for room, 0.002 s in all"));
    }

    #[test]
    fn a_ring_that_appeared_during_the_run_is_named_not_read() {
        let mut s = with(&[None]);
        let counters = RingCounters {
            producer_pos: 96,
            produced: 2,
            ..RingCounters::default()
        };
        s.ring_done(0, 0, RingCounters::default());
        s.ring_done(3, 0, counters);
        assert!(!s.cpus[&0].not_read && s.cpus[&3].not_read);
        let text = s.to_text();
        assert!(
            text.starts_with(
                "summary: 0 calls (0 complete, 0 unfinished, 0 entry lost, 0 entry missing); \
                 2 records produced = 0 consumed + 0 lost + 2 not consumed in this run; \
                 not read: the ring of cpu 3, which came online during the run\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("NOT READ: the ring appeared during the run"),
            "{text}"
        );
    }

    #[test]
    fn a_ring_that_joined_the_run_is_read_and_its_row_says_so() {
        let mut s = with(&[None]);
        assert!(s.ring_joined(3) && !s.ring_joined(3) && !s.ring_joined(0));
        // Its records in flight at the end: the row does not balance, and
        // still says where the ring came from.
        let counters = RingCounters {
            producer_pos: 96,
            produced: 2,
            ..RingCounters::default()
        };
        assert!(s.ring_done(3, 0, counters));
        assert!(s.cpus[&3].joined && !s.cpus[&3].not_read);
        let text = s.to_text();
        assert!(!text.lines().next().unwrap().contains("not read"), "{text}");
        let row = text
            .lines()
            .find(|l| l.trim_start().starts_with("3 "))
            .unwrap();
        assert!(row.contains("MISMATCH"), "{row}");
        assert!(
            row.ends_with("(its CPU came online during the run)"),
            "{row}"
        );
    }

    #[test]
    fn exits_whose_entry_is_gone_or_read_earlier_count_as_calls_and_are_named() {
        let mut s = with(&[None]);
        s.complete = 1;
        s.entry_gone = 2;
        let headline = s.headline();
        assert!(
            headline.starts_with(
                "summary: 3 calls (1 complete, 0 unfinished, 0 entry lost, 0 entry missing, \
                 2 entry gone (in rings replaced during the call))"
            ),
            "{headline}"
        );
        s.entry_gone = 0;
        assert!(!s.headline().contains("gone"));
        // Those an earlier reader read: no loss, named too.
        s.entry_read_earlier = 2;
        assert!(
            s.headline().starts_with(
                "summary: 3 calls (1 complete, 0 unfinished, 0 entry lost, 0 entry missing, \
                 2 entry read by an earlier reader)"
            ),
            "{}",
            s.headline()
        );
        s.entry_read_earlier = 0;
        assert!(!s.headline().contains("earlier"));
    }
}

/// Whether a run's final counters (the kernel's `produced` and `lost[]`
/// at the end, a trace's DONE frames) are known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum FinalCounters {
    /// Known for every ring.
    #[default]
    All,
    /// Unknown for these CPUs' rings (a trace cut before their DONE
    /// frame): their loss is what their LOST records reported, a lower
    /// bound.
    Missing(Vec<u32>),
    /// Unknown for the whole run (JSON Lines carry only the LOST
    /// records): the loss is a lower bound and nothing is known of the
    /// records produced.
    Absent,
}

/// The records of a run: produced = consumed + lost, where lost counts
/// every record the kernel dropped by its final counters, whether a LOST
/// record reported it or not (the kernel writes a LOST record only when
/// a later record finds room in that ring, which may never come).
///
/// Its `Display` is the headline's clause, e.g. `128 records produced =
/// 96 consumed + 32 lost (1 reported by LOST records, 31 not)`, or, when
/// the final counters are unknown, `at least 5 records lost (… final
/// counters unknown …)`: never a bare 0.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loss {
    /// ENTRY and EXIT records consumed; `None` when the run does not say
    /// (JSON Lines).
    pub consumed: Option<u64>,
    /// ENTRY and EXIT records the kernel wrote (`meta.produced`), over the
    /// rings whose final counters are known.
    pub written: u64,
    /// Records lost: the final counters' `lost[]`, all reasons, and for a
    /// ring without final counters its LOST records' counts.
    pub lost: u64,
    /// Of `lost`, what LOST records reported.
    pub reported: u64,
    /// Whether `lost` is exact.
    pub final_counters: FinalCounters,
}

impl Loss {
    /// Adds one ring: what was consumed of it (if known), its final
    /// counters (`meta.produced`, `meta.lost[]`) if known, and the records
    /// its LOST records reported.
    pub fn add_ring(
        &mut self,
        consumed: Option<u64>,
        counters: Option<(u64, [u64; abi::LOST_NR_SLOTS])>,
        reported: u64,
    ) {
        self.consumed = self
            .consumed
            .zip(consumed)
            .map(|(a, b)| a.saturating_add(b));
        self.reported = self.reported.saturating_add(reported);
        let lost = match counters {
            Some((written, lost)) => {
                self.written = self.written.saturating_add(written);
                // A LOST record never reports more than the counters
                // hold; with forged counters the larger number is the
                // loss that is certain.
                lost.iter()
                    .fold(0, |a: u64, &n| a.saturating_add(n))
                    .max(reported)
            }
            None => reported,
        };
        self.lost = self.lost.saturating_add(lost);
    }

    /// Whether the run lost records, as far as is known.
    #[must_use]
    pub fn is_lossy(&self) -> bool {
        self.lost > 0
    }

    /// Whether `lost` is a lower bound only.
    #[must_use]
    pub fn is_partial(&self) -> bool {
        self.final_counters != FinalCounters::All
    }
}

impl fmt::Display for Loss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let reported = || {
            if self.lost == 0 {
                String::new()
            } else if self.reported == self.lost {
                " (all reported by LOST records)".to_owned()
            } else {
                format!(
                    " ({} reported by LOST records, {} not)",
                    self.reported,
                    self.lost - self.reported.min(self.lost)
                )
            }
        };
        match &self.final_counters {
            FinalCounters::All => {
                let consumed = self.consumed.unwrap_or(0);
                let produced = self.written.saturating_add(self.lost);
                match self.written.checked_sub(consumed) {
                    Some(0) => write!(
                        f,
                        "{produced} records produced = {consumed} consumed + {} lost{}",
                        self.lost,
                        reported()
                    ),
                    // Written before this reader started, or still in the
                    // ring when it stopped.
                    Some(unconsumed) => write!(
                        f,
                        "{produced} records produced = {consumed} consumed + {} lost + {unconsumed} not consumed in this run{}",
                        self.lost,
                        reported()
                    ),
                    None => write!(
                        f,
                        "{produced} records produced, {consumed} consumed, {} lost: the counters do not add up (more consumed than the kernel counts written){}",
                        self.lost,
                        reported()
                    ),
                }
            }
            FinalCounters::Missing(cpus) => {
                let cpus: Vec<String> = cpus.iter().map(u32::to_string).collect();
                if let Some(consumed) = self.consumed {
                    write!(f, "{consumed} records consumed, ")?;
                }
                write!(
                    f,
                    "at least {} records lost (final counters unknown for cpu {}: there only LOST records count)",
                    self.lost,
                    cpus.join(", ")
                )
            }
            FinalCounters::Absent => write!(
                f,
                "at least {} records lost (final counters unknown: only LOST records count)",
                self.lost
            ),
        }
    }
}
