// SPDX-License-Identifier: GPL-2.0-only
//! The names of a call line's values: states and loss reasons (those of
//! a capture are [`crate::field`]'s).

use std::borrow::Cow;

use crate::decode::names::Names;

/// The values of `state`, as [`CallState::as_str`](super::CallState::as_str) spells them (the
/// numbers are only the table's order: `state` is a string).
pub static CALL_STATES: Names = &[
    (0, "complete"),
    (1, "unfinished"),
    (2, "entry_lost"),
    (3, "entry_missing"),
    (4, "entry_gone"),
    (5, "entry_read_earlier"),
];

/// Loss reason names, by `ANTINOMIE_LOST_*` index.
pub static LOST_REASONS: &[&str] = &["ring_full", "bad_consumer", "ring_broken"];

/// The name of loss reason `i` (`slot<i>` for slots the ABI has not named).
#[must_use]
pub fn lost_reason(i: usize) -> Cow<'static, str> {
    LOST_REASONS
        .get(i)
        .map_or_else(|| Cow::Owned(format!("slot{i}")), |s| Cow::Borrowed(*s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::CallState;
    use crate::decode::names;

    #[test]
    fn name_tables_match_what_they_name() {
        for state in [
            CallState::Complete,
            CallState::Unfinished,
            CallState::EntryLost,
            CallState::EntryMissing,
            CallState::EntryGone,
            CallState::EntryReadEarlier,
        ] {
            assert!(names::value_of(CALL_STATES, state.as_str()).is_some());
        }
        assert_eq!(CALL_STATES.len(), 6);
    }
}
