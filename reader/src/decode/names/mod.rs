// SPDX-License-Identifier: GPL-2.0-only
//! Name tables of the pinned 6.12.94 uapi: enumerations (value → name) and
//! bit sets (bit value → name); the x86-64 errno table is in its own module.
//!
//! Every name here is checked against the real headers by the integration
//! test `decode::table_matches_c_header`, which compiles a C shim that
//! prints each name's value.

mod errno;

pub use errno::{errno, errno_by_name, Errno, ERRNO};

/// A table of `(value, name)`; for a bit set each value is one bit.
pub type Names = &'static [(u64, &'static str)];

/// `enum perf_type_id` (`PERF_TYPE_MAX` is not ABI and not listed).
pub static PERF_TYPE: Names = &[
    (0, "PERF_TYPE_HARDWARE"),
    (1, "PERF_TYPE_SOFTWARE"),
    (2, "PERF_TYPE_TRACEPOINT"),
    (3, "PERF_TYPE_HW_CACHE"),
    (4, "PERF_TYPE_RAW"),
    (5, "PERF_TYPE_BREAKPOINT"),
];

/// `PERF_TYPE_HARDWARE`.
pub const TYPE_HARDWARE: u64 = 0;
/// `PERF_TYPE_SOFTWARE`.
pub const TYPE_SOFTWARE: u64 = 1;
/// `PERF_TYPE_TRACEPOINT`.
pub const TYPE_TRACEPOINT: u64 = 2;
/// `PERF_TYPE_HW_CACHE`.
pub const TYPE_HW_CACHE: u64 = 3;
/// `PERF_TYPE_BREAKPOINT`.
pub const TYPE_BREAKPOINT: u64 = 5;

/// `enum perf_hw_id`: `config` of `PERF_TYPE_HARDWARE` (low 32 bits).
pub static PERF_HW_ID: Names = &[
    (0, "PERF_COUNT_HW_CPU_CYCLES"),
    (1, "PERF_COUNT_HW_INSTRUCTIONS"),
    (2, "PERF_COUNT_HW_CACHE_REFERENCES"),
    (3, "PERF_COUNT_HW_CACHE_MISSES"),
    (4, "PERF_COUNT_HW_BRANCH_INSTRUCTIONS"),
    (5, "PERF_COUNT_HW_BRANCH_MISSES"),
    (6, "PERF_COUNT_HW_BUS_CYCLES"),
    (7, "PERF_COUNT_HW_STALLED_CYCLES_FRONTEND"),
    (8, "PERF_COUNT_HW_STALLED_CYCLES_BACKEND"),
    (9, "PERF_COUNT_HW_REF_CPU_CYCLES"),
];

/// `enum perf_hw_cache_id`: bits 0-7 of a `PERF_TYPE_HW_CACHE` config.
pub static PERF_HW_CACHE_ID: Names = &[
    (0, "PERF_COUNT_HW_CACHE_L1D"),
    (1, "PERF_COUNT_HW_CACHE_L1I"),
    (2, "PERF_COUNT_HW_CACHE_LL"),
    (3, "PERF_COUNT_HW_CACHE_DTLB"),
    (4, "PERF_COUNT_HW_CACHE_ITLB"),
    (5, "PERF_COUNT_HW_CACHE_BPU"),
    (6, "PERF_COUNT_HW_CACHE_NODE"),
];

/// `enum perf_hw_cache_op_id`: bits 8-15 of a `PERF_TYPE_HW_CACHE` config.
pub static PERF_HW_CACHE_OP: Names = &[
    (0, "PERF_COUNT_HW_CACHE_OP_READ"),
    (1, "PERF_COUNT_HW_CACHE_OP_WRITE"),
    (2, "PERF_COUNT_HW_CACHE_OP_PREFETCH"),
];

/// `enum perf_hw_cache_op_result_id`: bits 16-23 of a `PERF_TYPE_HW_CACHE`
/// config.
pub static PERF_HW_CACHE_RESULT: Names = &[
    (0, "PERF_COUNT_HW_CACHE_RESULT_ACCESS"),
    (1, "PERF_COUNT_HW_CACHE_RESULT_MISS"),
];

/// `enum perf_sw_ids`: `config` of `PERF_TYPE_SOFTWARE`.
pub static PERF_SW_ID: Names = &[
    (0, "PERF_COUNT_SW_CPU_CLOCK"),
    (1, "PERF_COUNT_SW_TASK_CLOCK"),
    (2, "PERF_COUNT_SW_PAGE_FAULTS"),
    (3, "PERF_COUNT_SW_CONTEXT_SWITCHES"),
    (4, "PERF_COUNT_SW_CPU_MIGRATIONS"),
    (5, "PERF_COUNT_SW_PAGE_FAULTS_MIN"),
    (6, "PERF_COUNT_SW_PAGE_FAULTS_MAJ"),
    (7, "PERF_COUNT_SW_ALIGNMENT_FAULTS"),
    (8, "PERF_COUNT_SW_EMULATION_FAULTS"),
    (9, "PERF_COUNT_SW_DUMMY"),
    (10, "PERF_COUNT_SW_BPF_OUTPUT"),
    (11, "PERF_COUNT_SW_CGROUP_SWITCHES"),
];

/// `enum perf_event_sample_format` (bits; `PERF_SAMPLE_MAX` excluded).
pub static PERF_SAMPLE: Names = &[
    (1 << 0, "PERF_SAMPLE_IP"),
    (1 << 1, "PERF_SAMPLE_TID"),
    (1 << 2, "PERF_SAMPLE_TIME"),
    (1 << 3, "PERF_SAMPLE_ADDR"),
    (1 << 4, "PERF_SAMPLE_READ"),
    (1 << 5, "PERF_SAMPLE_CALLCHAIN"),
    (1 << 6, "PERF_SAMPLE_ID"),
    (1 << 7, "PERF_SAMPLE_CPU"),
    (1 << 8, "PERF_SAMPLE_PERIOD"),
    (1 << 9, "PERF_SAMPLE_STREAM_ID"),
    (1 << 10, "PERF_SAMPLE_RAW"),
    (1 << 11, "PERF_SAMPLE_BRANCH_STACK"),
    (1 << 12, "PERF_SAMPLE_REGS_USER"),
    (1 << 13, "PERF_SAMPLE_STACK_USER"),
    (1 << 14, "PERF_SAMPLE_WEIGHT"),
    (1 << 15, "PERF_SAMPLE_DATA_SRC"),
    (1 << 16, "PERF_SAMPLE_IDENTIFIER"),
    (1 << 17, "PERF_SAMPLE_TRANSACTION"),
    (1 << 18, "PERF_SAMPLE_REGS_INTR"),
    (1 << 19, "PERF_SAMPLE_PHYS_ADDR"),
    (1 << 20, "PERF_SAMPLE_AUX"),
    (1 << 21, "PERF_SAMPLE_CGROUP"),
    (1 << 22, "PERF_SAMPLE_DATA_PAGE_SIZE"),
    (1 << 23, "PERF_SAMPLE_CODE_PAGE_SIZE"),
    (1 << 24, "PERF_SAMPLE_WEIGHT_STRUCT"),
];

/// `enum perf_event_read_format` (bits; `PERF_FORMAT_MAX` excluded).
pub static PERF_FORMAT: Names = &[
    (1 << 0, "PERF_FORMAT_TOTAL_TIME_ENABLED"),
    (1 << 1, "PERF_FORMAT_TOTAL_TIME_RUNNING"),
    (1 << 2, "PERF_FORMAT_ID"),
    (1 << 3, "PERF_FORMAT_GROUP"),
    (1 << 4, "PERF_FORMAT_LOST"),
];

/// `enum perf_branch_sample_type` (bits; `PERF_SAMPLE_BRANCH_MAX`
/// excluded).
pub static PERF_SAMPLE_BRANCH: Names = &[
    (1 << 0, "PERF_SAMPLE_BRANCH_USER"),
    (1 << 1, "PERF_SAMPLE_BRANCH_KERNEL"),
    (1 << 2, "PERF_SAMPLE_BRANCH_HV"),
    (1 << 3, "PERF_SAMPLE_BRANCH_ANY"),
    (1 << 4, "PERF_SAMPLE_BRANCH_ANY_CALL"),
    (1 << 5, "PERF_SAMPLE_BRANCH_ANY_RETURN"),
    (1 << 6, "PERF_SAMPLE_BRANCH_IND_CALL"),
    (1 << 7, "PERF_SAMPLE_BRANCH_ABORT_TX"),
    (1 << 8, "PERF_SAMPLE_BRANCH_IN_TX"),
    (1 << 9, "PERF_SAMPLE_BRANCH_NO_TX"),
    (1 << 10, "PERF_SAMPLE_BRANCH_COND"),
    (1 << 11, "PERF_SAMPLE_BRANCH_CALL_STACK"),
    (1 << 12, "PERF_SAMPLE_BRANCH_IND_JUMP"),
    (1 << 13, "PERF_SAMPLE_BRANCH_CALL"),
    (1 << 14, "PERF_SAMPLE_BRANCH_NO_FLAGS"),
    (1 << 15, "PERF_SAMPLE_BRANCH_NO_CYCLES"),
    (1 << 16, "PERF_SAMPLE_BRANCH_TYPE_SAVE"),
    (1 << 17, "PERF_SAMPLE_BRANCH_HW_INDEX"),
    (1 << 18, "PERF_SAMPLE_BRANCH_PRIV_SAVE"),
    (1 << 19, "PERF_SAMPLE_BRANCH_COUNTERS"),
];

/// `PERF_FLAG_*`: the syscall's `flags` argument (bits).
pub static PERF_FLAG: Names = &[
    (1 << 0, "PERF_FLAG_FD_NO_GROUP"),
    (1 << 1, "PERF_FLAG_FD_OUTPUT"),
    (1 << 2, "PERF_FLAG_PID_CGROUP"),
    (1 << 3, "PERF_FLAG_FD_CLOEXEC"),
];

/// Clock ids (`<linux/time.h>`), for `clockid`; perf accepts only
/// `REALTIME`, `MONOTONIC`, `MONOTONIC_RAW`, `BOOTTIME` and `TAI`.
pub static CLOCK: Names = &[
    (0, "CLOCK_REALTIME"),
    (1, "CLOCK_MONOTONIC"),
    (2, "CLOCK_PROCESS_CPUTIME_ID"),
    (3, "CLOCK_THREAD_CPUTIME_ID"),
    (4, "CLOCK_MONOTONIC_RAW"),
    (5, "CLOCK_REALTIME_COARSE"),
    (6, "CLOCK_MONOTONIC_COARSE"),
    (7, "CLOCK_BOOTTIME"),
    (8, "CLOCK_REALTIME_ALARM"),
    (9, "CLOCK_BOOTTIME_ALARM"),
    (10, "CLOCK_SGI_CYCLE"),
    (11, "CLOCK_TAI"),
];

/// `bp_type` values (`<linux/hw_breakpoint.h>`); 7 is `RW|X`, named
/// `HW_BREAKPOINT_INVALID` there.
pub static HW_BREAKPOINT_TYPE: Names = &[
    (0, "HW_BREAKPOINT_EMPTY"),
    (1, "HW_BREAKPOINT_R"),
    (2, "HW_BREAKPOINT_W"),
    (3, "HW_BREAKPOINT_RW"),
    (4, "HW_BREAKPOINT_X"),
    (7, "HW_BREAKPOINT_INVALID"),
];

/// `bp_len` values (`<linux/hw_breakpoint.h>`).
pub static HW_BREAKPOINT_LEN: Names = &[
    (1, "HW_BREAKPOINT_LEN_1"),
    (2, "HW_BREAKPOINT_LEN_2"),
    (3, "HW_BREAKPOINT_LEN_3"),
    (4, "HW_BREAKPOINT_LEN_4"),
    (5, "HW_BREAKPOINT_LEN_5"),
    (6, "HW_BREAKPOINT_LEN_6"),
    (7, "HW_BREAKPOINT_LEN_7"),
    (8, "HW_BREAKPOINT_LEN_8"),
];

/// `PERF_ATTR_SIZE_VER0` … `VER8`: the sizes of `struct perf_event_attr`
/// the pinned uapi knows.
pub static PERF_ATTR_SIZE: Names = &[
    (64, "PERF_ATTR_SIZE_VER0"),
    (72, "PERF_ATTR_SIZE_VER1"),
    (80, "PERF_ATTR_SIZE_VER2"),
    (96, "PERF_ATTR_SIZE_VER3"),
    (104, "PERF_ATTR_SIZE_VER4"),
    (112, "PERF_ATTR_SIZE_VER5"),
    (120, "PERF_ATTR_SIZE_VER6"),
    (128, "PERF_ATTR_SIZE_VER7"),
    (136, "PERF_ATTR_SIZE_VER8"),
];

/// The name of `value` in an enumeration table.
#[must_use]
pub fn lookup(table: Names, value: u64) -> Option<&'static str> {
    table.iter().find(|(v, _)| *v == value).map(|(_, n)| *n)
}

/// The value of `name` in a table.
#[must_use]
pub fn value_of(table: Names, name: &str) -> Option<u64> {
    table.iter().find(|(_, n)| *n == name).map(|(v, _)| *v)
}

/// Splits a bit set into the names of its known bits and the bits no name
/// covers.
#[must_use]
pub fn split_flags(table: Names, value: u64) -> (Vec<&'static str>, u64) {
    let mut names = Vec::new();
    let rest = known_flags(table, value, |name| names.push(name));
    (names, rest)
}

/// Calls `each` with the name of every known bit of `value`, in table
/// order; returns the bits no name covers.
pub fn known_flags(table: Names, value: u64, mut each: impl FnMut(&'static str)) -> u64 {
    let mut rest = value;
    for &(bit, name) in table {
        if value & bit == bit && bit != 0 {
            each(name);
            rest &= !bit;
        }
    }
    rest
}

/// Renders a bit set as strace does: `A|B|0x…` with unknown bits in hex
/// last, `0` when empty, and `0x… /* PREFIX??? */` when no bit is known.
#[must_use]
pub fn format_flags(table: Names, value: u64, unknown_comment: &str) -> String {
    let mut s = String::new();
    flags_into(&mut s, table, value, unknown_comment);
    s
}

/// [`format_flags`], appended to `out`.
pub fn flags_into(out: &mut String, table: Names, value: u64, unknown_comment: &str) {
    if value == 0 {
        out.push('0');
        return;
    }
    let start = out.len();
    let rest = known_flags(table, value, |name| {
        if out.len() > start {
            out.push('|');
        }
        out.push_str(name);
    });
    if out.len() == start {
        push_hex(out, rest);
        out.push_str(" /* ");
        out.push_str(unknown_comment);
        out.push_str(" */");
    } else if rest != 0 {
        out.push('|');
        push_hex(out, rest);
    }
}

/// Appends `v` as `{v:#x}` formats it: `0x` and its lowercase hex digits,
/// without leading zeros. Without `core::fmt`, whose machinery cost more
/// than the digits in the full JSON line's flag renderings (random
/// `sample_type` and `read_format` words have unknown bits).
pub fn push_hex(out: &mut String, v: u64) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    // One digit per 4 bits of the bit length; one for 0.
    let digits = (64 - (v | 1).leading_zeros()).div_ceil(4);
    out.reserve(2 + digits as usize);
    out.push_str("0x");
    for i in (0..digits).rev() {
        // A nibble: below 16.
        #[allow(clippy::cast_possible_truncation)]
        out.push(char::from(HEX[((v >> (4 * i)) & 0xf) as usize]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_render_like_strace() {
        assert_eq!(format_flags(PERF_FLAG, 0, "PERF_FLAG_???"), "0");
        assert_eq!(
            format_flags(PERF_FLAG, 8, "PERF_FLAG_???"),
            "PERF_FLAG_FD_CLOEXEC"
        );
        assert_eq!(
            format_flags(PERF_FLAG, 0x19, "PERF_FLAG_???"),
            "PERF_FLAG_FD_NO_GROUP|PERF_FLAG_FD_CLOEXEC|0x10"
        );
        assert_eq!(
            format_flags(PERF_FLAG, 0x10, "PERF_FLAG_???"),
            "0x10 /* PERF_FLAG_??? */"
        );
    }

    #[test]
    fn hex_pushes_as_format_does() {
        let mut values = vec![0u64, 1, 0xf, 0x10, 0xdead_beef, u64::MAX];
        values.extend((0..64).flat_map(|b| [1u64 << b, (1u64 << b) - 1]));
        for v in values {
            let mut s = "x".to_owned();
            push_hex(&mut s, v);
            assert_eq!(s, format!("x{v:#x}"));
        }
    }

    #[test]
    fn bit_tables_hold_single_bits() {
        for table in [PERF_SAMPLE, PERF_FORMAT, PERF_SAMPLE_BRANCH, PERF_FLAG] {
            for (i, &(bit, name)) in table.iter().enumerate() {
                assert_eq!(bit, 1 << i, "{name}");
            }
        }
    }
}
