//! What a run saw, per CPU and overall, and its rendering.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use antinomie_abi as abi;

use crate::call::lost_reason;
use crate::ring::RingCounters;

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
}

impl CpuSummary {
    /// ENTRY and EXIT records consumed: what `meta.produced` counts.
    #[must_use]
    pub fn consumed(&self) -> u64 {
        self.entries + self.exits
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
    /// Calls the filter rejected.
    pub filtered_out: u64,
    /// Records emitted after the reordering window.
    pub late: u64,
    /// Output stopped on a broken pipe.
    pub broken_pipe: bool,
}

impl Summary {
    /// All calls seen.
    #[must_use]
    pub fn calls(&self) -> u64 {
        self.complete + self.unfinished + self.entry_lost + self.entry_missing
    }

    /// Records lost by LOST records, all CPUs and reasons.
    #[must_use]
    pub fn lost_reported(&self) -> u64 {
        self.cpus
            .values()
            .flat_map(|c| c.lost_reported)
            .fold(0, u64::saturating_add)
    }

    /// The summary as text, one table row per CPU.
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "summary: {} calls ({} complete, {} unfinished{}{}, {} entry lost, {} entry missing){}; {} records lost{}",
            self.calls(),
            self.complete,
            self.unfinished,
            if self.unfinished_maybe_lost > 0 {
                format!(" ({} may have lost their exit)", self.unfinished_maybe_lost)
            } else {
                String::new()
            },
            if self.evicted > 0 {
                format!(
                    " ({} printed early by the pending cap: an exit may follow as entry missing)",
                    self.evicted
                )
            } else {
                String::new()
            },
            self.entry_lost,
            self.entry_missing,
            if self.filtered_out > 0 {
                format!(", {} filtered out", self.filtered_out)
            } else {
                String::new()
            },
            self.lost_reported(),
            if self.late > 0 {
                format!("; {} records arrived after the reordering window", self.late)
            } else {
                String::new()
            },
        );
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
            let check = match (c.stopped, c.balanced()) {
                (true, _) => "RING STOPPED (corrupt record)".to_owned(),
                (false, Some(true)) => "ok: produced = consumed, lost = reported".to_owned(),
                (false, Some(false)) => {
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
                (false, None) => match c.start_pos {
                    Some(p) => format!("n/a (reader started at ring position {p:#x})"),
                    None => "n/a (no counters)".to_owned(),
                },
            };
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
    fn lossless_text(&self) -> Option<String> {
        let known: Vec<_> = self
            .cpus
            .values()
            .filter_map(|c| c.counters.and_then(|k| k.lossless))
            .collect();
        let on = known.iter().any(|l| l.on);
        let waits = known.iter().map(|l| l.waits).fold(0, u64::saturating_add);
        let wait_ns = known.iter().map(|l| l.wait_ns).fold(0, u64::saturating_add);
        if !on && waits == 0 {
            return None;
        }
        // Display only: f64 is exact far beyond any wait time.
        #[allow(clippy::cast_precision_loss)]
        let seconds = wait_ns as f64 / 1e9;
        Some(format!(
            "lossless mode: {}; {waits} records waited for room, {seconds:.3} s in all",
            if on { "on" } else { "off" },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::LosslessCounters;

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
}
