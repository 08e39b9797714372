// SPDX-License-Identifier: GPL-2.0-only
//! The vocabulary of a record key, shared by the syscall table
//! ([`crate::syscall`], which says how each argument is decoded and
//! documents the capture) and the call ([`crate::call`], which holds the
//! values): a key's value, its type and its named constants, and the names
//! of a capture's statuses and flags. It sits below both, so that neither
//! needs the other's internals to speak of a field.

use std::borrow::Cow;

use antinomie_abi as abi;

use crate::decode::names::Names;
use crate::decode::AttrView;

/// A field's value, as the JSON output prints it.
#[derive(Debug, Clone)]
pub enum Value<'a> {
    /// Absent: JSON `null`.
    Null,
    /// An unsigned number.
    U64(u64),
    /// A signed number.
    I64(i64),
    /// A boolean.
    Bool(bool),
    /// A string.
    Str(Cow<'a, str>),
    /// A bit set shown as a list of names: the names of its known bits
    /// in table order, then the unknown bits in hex (if any).
    Bits(Names, u64),
    /// A bit set shown as one string, as
    /// [`crate::decode::names::format_flags`] renders it with this comment
    /// for unknown bits.
    Flags(Names, u64, &'static str),
    /// A decoded attr: an object of its present, applicable members'
    /// values.
    Attr(AttrView<'a>),
    /// A decoded attr: an object of its symbolic members' names.
    AttrNames(AttrView<'a>),
}

/// The type of a field, for docs and the filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// Unsigned integer.
    U64,
    /// Signed integer.
    I64,
    /// Boolean.
    Bool,
    /// String.
    Str,
    /// List of names.
    Names,
    /// The attr object (members are fields `args.attr_uptr.<member>`).
    Attr,
}

/// Which symbolic constants a field's values take (for the filter).
#[derive(Debug, Clone, Copy)]
pub enum Constants {
    /// None.
    None,
    /// Errno names (`E2BIG`, …) of [`crate::decode::ERRNO`], as the
    /// positive errno (or, for a string field, the name itself).
    Errno,
    /// Errno names negated (`-E2BIG`), as the raw return value holds them.
    NegErrno,
    /// Names of this table.
    Table(Names),
}

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
        "64 <= effective size <= 136 and the kernel copied the attr: its copy, as it read it (copied_len = effective size), before perf_copy_attr() rewrites size 0 and other members",
    ),
    (
        "null_ptr",
        "attr_uptr was NULL and the kernel's read of its size word faulted (the kernel reads through NULL like any pointer: with a page mapped at 0, the status is that of any other pointer)",
    ),
    (
        "fault",
        "a read of the kernel's faulted, and no bytes are kept: with capture flag size_fault, its read of the size word ({fault_offset} is 4, declared_size 0); otherwise copy_struct_from_user()'s, in its check that the bytes beyond 136 are zero or in its copy of the first min(effective size, 136), which the kernel neither tells apart nor locates ({fault_offset} is null)",
    ),
    (
        "truncated",
        "136 < effective size <= PAGE_SIZE, and tail_zero or tail_nonzero says whether the rest was zero: the kernel's copy of the first 136 bytes is kept if it was; if not (E2BIG), nothing, as the kernel copies nothing",
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
/// ([`crate::syscall::CaptureKeys::fault_offset`]), which depends on the
/// syscall.
pub const FAULT_OFFSET_KEY: &str = "{fault_offset}";

/// Capture flag names, `ANTINOMIE_CAPTURE_F_*` in lower case.
pub static CAPTURE_FLAGS: Names = &[
    (abi::CAPTURE_F_TAIL_ZERO as u64, "tail_zero"),
    (abi::CAPTURE_F_TAIL_NONZERO as u64, "tail_nonzero"),
    (abi::CAPTURE_F_SIZE_FAULT as u64, "size_fault"),
];

/// Where a FAULT capture's read faulted, when the kernel says: 4 with
/// `SIZE_FAULT`, or a non-zero `fault_offset`. `copy_struct_from_user()`
/// does not say where it faulted, and its FAULT has `fault_offset` 0,
/// which means not known: `None`, as for any other status.
#[must_use]
pub fn fault_offset(h: &abi::Capture) -> Option<u32> {
    (h.status == abi::STATUS_FAULT
        && (h.flags & abi::CAPTURE_F_SIZE_FAULT != 0 || h.fault_offset != 0))
        .then_some(h.fault_offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_capture_status_is_documented() {
        let documented: Vec<&str> = CAPTURE_STATUS_DOC.iter().map(|(n, _)| *n).collect();
        let named: Vec<&str> = CAPTURE_STATUS.iter().map(|(_, n)| *n).collect();
        assert_eq!(documented, named);
    }

    #[test]
    fn a_fault_offset_is_only_what_the_kernel_reports() {
        let fault = |flags, fault_offset| abi::Capture {
            status: abi::STATUS_FAULT,
            flags,
            fault_offset,
            ..abi::Capture::default()
        };
        assert_eq!(fault_offset(&fault(abi::CAPTURE_F_SIZE_FAULT, 4)), Some(4));
        // copy_struct_from_user() faulted: where, the kernel does not say.
        assert_eq!(fault_offset(&fault(0, 0)), None);
        assert_eq!(fault_offset(&fault(0, 72)), Some(72));
        let complete = abi::Capture {
            status: abi::STATUS_COMPLETE,
            ..abi::Capture::default()
        };
        assert_eq!(fault_offset(&complete), None);
    }
}
