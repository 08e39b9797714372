// SPDX-License-Identifier: GPL-2.0-only
//! Calls counted by outcome: the table of `reader -c` and `-C`, strace
//! `-c`'s habit for one syscall.
//!
//! strace `-c` counts calls per syscall; the reader captures one syscall,
//! so its table counts them per *outcome* instead: one row for the calls
//! that succeeded (they returned a file descriptor) and one per errno
//! they failed with, with each row's share of the calls and the time the
//! calls took (the EXIT's `duration_ns`, from entry into the syscall to
//! its exit), in all and per call.
//!
//! Only the calls seen whole (ENTRY and EXIT) go on those rows. Calls
//! seen in part get a row of their state, named as the summary's headline
//! names them, so that the table's total is the headline's call count
//! (less what a filter rejected): `unfinished` (no EXIT: no result, no
//! time), and `entry lost`, `entry missing`, `entry gone`, `entry read
//! earlier` (an EXIT without its ENTRY: their time is counted, their
//! results are not split by errno, as their arguments are unknown and
//! the table is of whole calls).
//!
//! [`Counts`] is also a [`Sink`] that outputs nothing (`-c`), and
//! [`CountingSink`] counts what it passes on to another sink (`-C`); a
//! filter on the [`crate::pipeline::Assembler`] applies before either, so
//! the table counts the calls the filter keeps.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;

use super::Sink;
use crate::call::{Call, CallState};
use crate::decode::errno;
use crate::record::LostRecord;

/// A row of the table: what the calls on it have in common.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// A whole call that returned 0 or more (a file descriptor).
    Success,
    /// A whole call that returned this negative value: `-errno`.
    Failed(i64),
    /// A call seen in part: an ENTRY without EXIT, or an EXIT without
    /// ENTRY (never [`CallState::Complete`]).
    Partial(CallState),
}

impl Outcome {
    /// The row of `call`.
    #[must_use]
    pub fn of(call: &Call) -> Self {
        match (call.state, call.ret()) {
            (CallState::Complete, Some(ret)) if ret >= 0 => Outcome::Success,
            (CallState::Complete, Some(ret)) => Outcome::Failed(ret),
            (state, _) => Outcome::Partial(state),
        }
    }

    /// The row's name: `success`, the errno's name (`ret N` for a
    /// negative return that is not an errno), or the state as the
    /// summary's headline names it.
    #[must_use]
    pub fn label(self) -> String {
        match self {
            Outcome::Success => "success".to_owned(),
            Outcome::Failed(ret) => match u32::try_from(ret.unsigned_abs()).ok().and_then(errno) {
                Some(e) if ret >= -4095 => e.name.to_owned(),
                _ => format!("ret {ret}"),
            },
            Outcome::Partial(state) => state.as_str().replace('_', " "),
        }
    }
}

/// The calls of one row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Row {
    /// Calls.
    pub calls: u64,
    /// Of them, calls with an EXIT: those whose time is known.
    pub timed: u64,
    /// Their `duration_ns`, summed.
    pub total_ns: u64,
}

impl Row {
    fn add(&mut self, duration_ns: Option<u64>) {
        self.calls += 1;
        if let Some(ns) = duration_ns {
            self.timed += 1;
            self.total_ns = self.total_ns.saturating_add(ns);
        }
    }

    fn merge(&mut self, other: &Row) {
        self.calls += other.calls;
        self.timed += other.timed;
        self.total_ns = self.total_ns.saturating_add(other.total_ns);
    }
}

/// Calls counted by [`Outcome`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    rows: BTreeMap<Outcome, Row>,
}

impl Counts {
    /// Counts one call.
    pub fn add(&mut self, call: &Call) {
        self.rows
            .entry(Outcome::of(call))
            .or_default()
            .add(call.duration_ns());
    }

    /// The rows in the table's order: success, the failures by calls
    /// (most first; equal counts by return value), then the calls seen
    /// in part, in the order of [`CallState`] (`unfinished` first).
    #[must_use]
    pub fn rows(&self) -> Vec<(Outcome, Row)> {
        let mut rows: Vec<(Outcome, Row)> = self.rows.iter().map(|(o, r)| (*o, *r)).collect();
        rows.sort_by_key(|&(o, r)| match o {
            Outcome::Success => (0, 0, o),
            Outcome::Failed(_) => (1, u64::MAX - r.calls, o),
            Outcome::Partial(_) => (2, 0, o),
        });
        rows
    }

    /// Every row summed.
    #[must_use]
    pub fn total(&self) -> Row {
        let mut total = Row::default();
        for r in self.rows.values() {
            total.merge(r);
        }
        total
    }

    /// The table, in strace `-c`'s layout: a header, a rule, one line per
    /// row, a rule and the total. Columns: the row's share of the calls
    /// (%), its calls, their time in seconds and in microseconds per call
    /// (over the calls with an EXIT; `-` when none has one), and the
    /// row's name.
    #[must_use]
    pub fn to_text(&self) -> String {
        const RULE: &str = "------- --------- ----------- ----------- ----------------\n";
        let total = self.total();
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{:>7} {:>9} {:>11} {:>11} result",
            "% calls", "calls", "seconds", "usecs/call"
        );
        s.push_str(RULE);
        let line = |s: &mut String, r: &Row, label: &str| {
            let (seconds, per_call) = match r.total_ns.checked_div(r.timed) {
                None => ("-".to_owned(), "-".to_owned()),
                Some(per_call_ns) => {
                    let us = r.total_ns / 1000;
                    (
                        format!("{}.{:06}", us / 1_000_000, us % 1_000_000),
                        (per_call_ns / 1000).to_string(),
                    )
                }
            };
            let _ = writeln!(
                s,
                "{:>7} {:>9} {seconds:>11} {per_call:>11} {label}",
                percent(r.calls, total.calls),
                r.calls,
            );
        };
        for (outcome, row) in self.rows() {
            line(&mut s, &row, &outcome.label());
        }
        s.push_str(RULE);
        line(&mut s, &total, "total");
        s
    }
}

/// `part` of `whole` in percent with two decimals, rounded half up; 0.00
/// of nothing.
fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "0.00".to_owned();
    }
    let (part, whole) = (u128::from(part), u128::from(whole));
    let hundredths = (part * 20_000 + whole) / (2 * whole);
    format!("{}.{:02}", hundredths / 100, hundredths % 100)
}

/// `reader -c`: counts the calls and outputs nothing.
impl Sink for Counts {
    fn call(&mut self, call: &Call) -> io::Result<()> {
        self.add(call);
        Ok(())
    }

    fn lost(&mut self, _: &LostRecord) -> io::Result<()> {
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// `reader -C`: counts the calls into a [`Counts`] and passes them, and
/// everything else, on to a sink.
#[derive(Debug)]
pub struct CountingSink<'a, S: Sink> {
    counts: &'a mut Counts,
    sink: &'a mut S,
}

impl<'a, S: Sink> CountingSink<'a, S> {
    /// Counts into `counts` what goes to `sink`.
    pub fn new(counts: &'a mut Counts, sink: &'a mut S) -> Self {
        CountingSink { counts, sink }
    }
}

impl<S: Sink> Sink for CountingSink<'_, S> {
    fn call(&mut self, call: &Call) -> io::Result<()> {
        self.counts.add(call);
        self.sink.call(call)
    }

    fn lost(&mut self, lost: &LostRecord) -> io::Result<()> {
        self.sink.lost(lost)
    }

    fn end_batch(&mut self) -> io::Result<()> {
        self.sink.end_batch()
    }

    fn flush(&mut self) -> io::Result<()> {
        self.sink.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_rounds_half_up_and_of_nothing_is_zero() {
        assert_eq!(percent(1, 3), "33.33");
        assert_eq!(percent(2, 3), "66.67");
        assert_eq!(percent(1, 8), "12.50");
        assert_eq!(percent(1, 80_000), "0.00");
        assert_eq!(percent(1, 20_000), "0.01");
        assert_eq!(percent(5, 5), "100.00");
        assert_eq!(percent(0, 0), "0.00");
    }

    #[test]
    fn labels_name_errnos_and_states() {
        assert_eq!(Outcome::Success.label(), "success");
        assert_eq!(Outcome::Failed(-7).label(), "E2BIG");
        assert_eq!(Outcome::Failed(-22).label(), "EINVAL");
        assert_eq!(Outcome::Failed(-5000).label(), "ret -5000");
        assert_eq!(Outcome::Failed(-4094).label(), "ret -4094");
        assert_eq!(
            Outcome::Partial(CallState::EntryReadEarlier).label(),
            "entry read earlier"
        );
        assert_eq!(
            Outcome::Partial(CallState::Unfinished).label(),
            "unfinished"
        );
    }

    #[test]
    fn an_empty_table_has_a_zero_total() {
        assert_eq!(
            Counts::default().to_text(),
            "% calls     calls     seconds  usecs/call result\n\
             ------- --------- ----------- ----------- ----------------\n\
             ------- --------- ----------- ----------- ----------------\n\
             \x20  0.00         0           -           - total\n"
        );
    }
}
