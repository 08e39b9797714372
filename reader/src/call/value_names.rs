//! The names of a call line's values: states, capture statuses and
//! flags, and loss reasons.

use std::borrow::Cow;

use antinomie_abi as abi;

use crate::decode::names::Names;

/// The values of `state`, as [`CallState::as_str`](super::CallState::as_str) spells them (the
/// numbers are only the table's order: `state` is a string).
pub static CALL_STATES: Names = &[
    (0, "complete"),
    (1, "unfinished"),
    (2, "entry_lost"),
    (3, "entry_missing"),
];

/// Capture status names, `ANTINOMIE_STATUS_*` in lower case.
pub static CAPTURE_STATUS: Names = &[
    (abi::STATUS_COMPLETE as u64, "complete"),
    (abi::STATUS_NULL_PTR as u64, "null_ptr"),
    (abi::STATUS_FAULT as u64, "fault"),
    (abi::STATUS_TRUNCATED as u64, "truncated"),
    (abi::STATUS_INVALID_SIZE as u64, "invalid_size"),
    (abi::STATUS_NOT_APPLICABLE as u64, "not_applicable"),
];

/// What each capture status means, by name (the `abi/antinomie.h`
/// STATUS comment; a test checks it covers [`CAPTURE_STATUS`]).
/// [`FAULT_OFFSET_KEY`] stands for the key of the syscall's captured
/// pointer that holds the fault offset.
pub static CAPTURE_STATUS_DOC: &[(&str, &str)] = &[
    (
        "complete",
        "64 <= effective size <= 136: the whole attr was read (copied_len = effective size)",
    ),
    (
        "null_ptr",
        "attr_uptr was NULL and its size word could not be read (like the kernel, the capture reads through NULL: with a page mapped at 0, the status is that of any other pointer)",
    ),
    (
        "fault",
        "a read faulted at {fault_offset}; the bytes before it were kept (none when the size word itself faulted, capture flag size_fault, or the tail beyond 136 did, as the kernel then reads no head)",
    ),
    (
        "truncated",
        "136 < effective size <= PAGE_SIZE, and tail_zero or tail_nonzero says whether the rest was zero: 136 bytes were kept if it was; if not (E2BIG), none, as the kernel reads no head",
    ),
    (
        "invalid_size",
        "effective size < 64 or > PAGE_SIZE: perf_copy_attr() reads nothing more and fails with E2BIG, so only the size was read",
    ),
    (
        "not_applicable",
        "the kernel does not read the attr in this call (flags outside PERF_FLAG_ALL fail with EINVAL first): nothing was read",
    ),
];

/// What [`CAPTURE_STATUS_DOC`] writes for the key of the fault offset
/// ([`crate::syscall::CaptureKeys::fault_offset`]).
pub const FAULT_OFFSET_KEY: &str = "{fault_offset}";

/// Capture flag names, `ANTINOMIE_CAPTURE_F_*` in lower case.
pub static CAPTURE_FLAGS: Names = &[
    (abi::CAPTURE_F_TAIL_ZERO as u64, "tail_zero"),
    (abi::CAPTURE_F_TAIL_NONZERO as u64, "tail_nonzero"),
    (abi::CAPTURE_F_SIZE_FAULT as u64, "size_fault"),
    (abi::CAPTURE_F_KERNEL_COPY as u64, "kernel_copy"),
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
        ] {
            assert!(names::value_of(CALL_STATES, state.as_str()).is_some());
        }
        assert_eq!(CALL_STATES.len(), 4);
        let documented: Vec<&str> = CAPTURE_STATUS_DOC.iter().map(|(n, _)| *n).collect();
        let named: Vec<&str> = CAPTURE_STATUS.iter().map(|(_, n)| *n).collect();
        assert_eq!(documented, named);
    }
}
