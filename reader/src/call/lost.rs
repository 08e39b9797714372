// SPDX-License-Identifier: GPL-2.0-only
//! [`LOST_FIELDS`]: every key of a LOST line, in output order.

use std::borrow::Cow;

use super::Value;
use crate::record::LostRecord;

/// One key of a LOST line.
#[derive(Debug, Clone, Copy)]
pub struct LostField {
    /// The key.
    pub key: &'static str,
    /// What it means.
    pub doc: &'static str,
    /// Its value.
    pub get: fn(&LostRecord) -> Value<'static>,
}

macro_rules! lost_slot {
    ($i:literal, $key:literal) => {
        LostField {
            key: $key,
            doc: "records dropped for this reason since the previous LOST record",
            get: |l| Value::U64(l.body.lost[$i]),
        }
    };
}

/// Every key of a LOST line, in output order.
pub static LOST_FIELDS: &[LostField] = &[
    LostField {
        key: "event",
        doc: "\"lost\" for a LOST line",
        get: |_| Value::Str(Cow::Borrowed("lost")),
    },
    LostField {
        key: "time_ns",
        doc: "time of the LOST record",
        get: |l| Value::U64(l.header.time_ns),
    },
    LostField {
        key: "cpu",
        doc: "the ring that dropped records",
        get: |l| Value::U64(u64::from(l.header.cpu)),
    },
    lost_slot!(0, "lost.ring_full"),
    lost_slot!(1, "lost.bad_consumer"),
    LostField {
        key: "lost.other",
        doc: "records dropped for reasons this reader does not know",
        get: |l| Value::U64(l.body.lost[2..].iter().fold(0, |a, &n| a.saturating_add(n))),
    },
    LostField {
        key: "lost.first_time_ns",
        doc: "time the first dropped record would have had",
        get: |l| Value::U64(l.body.first_time_ns),
    },
    LostField {
        key: "lost.last_time_ns",
        doc: "time the last dropped record would have had",
        get: |l| Value::U64(l.body.last_time_ns),
    },
    LostField {
        key: "lost.min_call_id",
        doc: "smallest call id among the dropped records",
        get: |l| Value::U64(l.body.min_call_id),
    },
    LostField {
        key: "lost.max_call_id",
        doc: "largest call id among the dropped records",
        get: |l| Value::U64(l.body.max_call_id),
    },
];
