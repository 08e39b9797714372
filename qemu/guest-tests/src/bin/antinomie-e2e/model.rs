// SPDX-License-Identifier: GPL-2.0-only
//! The comparator's own model of what Antinomie must record for a call,
//! written from the pinned 6.12.94 uapi (`include/uapi/linux/perf_event.h`,
//! `hw_breakpoint.h`, `errno.h`), the capture rules of `abi/antinomie.h`
//! and `perf_copy_attr()` in `kernel/events/core.c` — deliberately not from
//! the reader's code, so that the end-to-end test checks the reader's
//! decoding against an independent implementation instead of against
//! itself.

mod attr;
mod names;

pub(crate) use attr::{member_names, AttrBytes, Pmus};
pub(crate) use names::{errno_name, perf_flags_names};

/// `sizeof(struct perf_event_attr)` on 6.12.94.
pub const ATTR_MAX: usize = 136;
/// `PERF_ATTR_SIZE_VER0`.
pub const VER0: u32 = 64;
/// `PAGE_SIZE` of the x86-64 guest, the largest attr size accepted.
pub const PAGE_SIZE: u32 = 4096;
/// `PERF_FLAG_ALL`.
pub const PERF_FLAG_ALL: u64 = 0xf;

pub const EFAULT: i32 = 14;
pub const EINVAL: i32 = 22;
pub const E2BIG: i32 = 7;
pub const EACCES: i32 = 13;

/// `ANTINOMIE_STATUS_*`, by the capture rules of the uapi header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Complete,
    NullPtr,
    Fault,
    Truncated,
    InvalidSize,
    NotApplicable,
}

impl Status {
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Status::Complete => "complete",
            Status::NullPtr => "null_ptr",
            Status::Fault => "fault",
            Status::Truncated => "truncated",
            Status::InvalidSize => "invalid_size",
            Status::NotApplicable => "not_applicable",
        }
    }
}

/// What the capture of argument 0 must hold: what `perf_copy_attr()`
/// read, as the header's status rules say (ABI version 4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    pub status: Status,
    /// `tail_zero`, `tail_nonzero`, `size_fault`, in the header's bit order.
    pub flags: Vec<&'static str>,
    /// The size the kernel used (the size word, 0 taken as 64), 0 when it
    /// could not be read.
    pub declared_size: u32,
    /// The kernel's copy (their count is `copied_len`).
    pub data: Vec<u8>,
    /// Where a read faulted, where the kernel knows it: 4 for the size
    /// word; `None` (JSON `null`) for a fault of `copy_struct_from_user()`,
    /// which does not say where.
    pub fault_offset: Option<u32>,
}

/// What the kernel must answer for the capture, as far as it decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Fails with this errno before or in `perf_copy_attr()`; the bool:
    /// `perf_copy_attr()` wrote `size` back (its size checks).
    Fails(i32, bool),
    /// `perf_copy_attr()` succeeds; what follows is up to the rest of
    /// `perf_event_open()`.
    Copied,
    /// The model cannot tell (sample bits whose checks depend on the
    /// architecture or the configuration).
    Unknown,
}

/// The capture, from what the workload passed: the flags word, the
/// pointer, the readable bytes from it (`readable`, exact: the next byte is
/// unmapped) and their contents when the kernel read them. The kernel
/// reads the size word, then (for a valid size) copies the attr with
/// `copy_struct_from_user()`; the capture is that one read.
#[must_use]
pub fn capture(flags: u64, ptr: u64, mem: &[u8], readable: usize) -> Capture {
    let none = |status| Capture {
        status,
        flags: Vec::new(),
        declared_size: 0,
        data: Vec::new(),
        fault_offset: None,
    };
    if flags & !PERF_FLAG_ALL != 0 {
        return none(Status::NotApplicable);
    }
    // The kernel reads through NULL like any pointer: NULL_PTR is a NULL
    // whose size word faults (the guest maps nothing at 0).
    if ptr == 0 && readable < 8 {
        return none(Status::NullPtr);
    }
    if readable < 8 {
        return Capture {
            status: Status::Fault,
            flags: vec!["size_fault"],
            declared_size: 0,
            data: Vec::new(),
            fault_offset: Some(4),
        };
    }
    let size = u32::from_le_bytes(mem[4..8].try_into().expect("4 bytes"));
    let eff = if size == 0 { VER0 } else { size };
    let mut cap = Capture {
        declared_size: eff,
        ..none(Status::InvalidSize)
    };
    if !(VER0..=PAGE_SIZE).contains(&eff) {
        return cap;
    }
    let eff = eff as usize;
    // copy_struct_from_user() checks the tail [136, eff) first: the first
    // non-zero byte wins over a later fault, and either fails the call
    // before the head is copied, so nothing is kept. A fault, there or in
    // the copy of the head, is reported without its offset.
    if eff > ATTR_MAX {
        let scan_end = eff.min(readable);
        if mem
            .get(ATTR_MAX..scan_end)
            .is_some_and(|t| t.iter().any(|&b| b != 0))
        {
            cap.status = Status::Truncated;
            cap.flags = vec!["tail_nonzero"];
            return cap;
        }
        if readable < eff {
            cap.status = Status::Fault;
            return cap;
        }
    }
    let len = eff.min(ATTR_MAX);
    if readable < len {
        cap.status = Status::Fault;
        return cap;
    }
    cap.data = mem[..len].to_vec();
    if eff <= ATTR_MAX {
        cap.status = Status::Complete;
    } else {
        cap.status = Status::Truncated;
        cap.flags = vec!["tail_zero"];
    }
    cap
}

/// What `perf_event_open()` must answer up to the end of
/// `perf_copy_attr()`, for this capture (which mirrors the kernel's reads);
/// `kernel_access`: the caller passes `perf_allow_kernel()`.
#[must_use]
pub fn outcome(cap: &Capture, kernel_access: bool) -> Outcome {
    match cap.status {
        Status::NotApplicable => Outcome::Fails(EINVAL, false),
        Status::NullPtr | Status::Fault => Outcome::Fails(EFAULT, false),
        Status::InvalidSize => Outcome::Fails(E2BIG, true),
        Status::Truncated if cap.flags.contains(&"tail_nonzero") => Outcome::Fails(E2BIG, true),
        Status::Complete | Status::Truncated => {
            copy_attr_checks(AttrBytes(&cap.data), kernel_access)
        }
    }
}

/// `perf_copy_attr()`'s checks after the copy, for the bits this model
/// knows (the register masks as x86-64's `perf_reg_validate()` checks
/// them); the copy is zero beyond the captured bytes.
fn copy_attr_checks(a: AttrBytes<'_>, kernel_access: bool) -> Outcome {
    // PERF_SAMPLE_BRANCH_USER, _KERNEL, _HV; 1 << PERF_SAMPLE_BRANCH_MAX_SHIFT.
    const BRANCH_USER: u64 = 1 << 0;
    const BRANCH_KERNEL: u64 = 1 << 1;
    const BRANCH_HV: u64 = 1 << 2;
    const BRANCH_MAX: u64 = 1 << 20;
    // x86-64: DS, ES, FS, GS, and the reserved bits 24..32, are refused.
    const REGS_REFUSED: u64 = (0xf << 12) | (0xff << 24);
    const BRANCH_STACK: u64 = 1 << 11;
    const REGS_USER: u64 = 1 << 12;
    const STACK_USER: u64 = 1 << 13;
    const WEIGHT: u64 = 1 << 14;
    const REGS_INTR: u64 = 1 << 18;
    const CGROUP: u64 = 1 << 21;
    const WEIGHT_STRUCT: u64 = 1 << 24;
    let st = a.get("sample_type");
    let einval = Outcome::Fails(EINVAL, false);
    if a.get("__reserved_1") != 0 || a.get("__reserved_2") != 0 || a.get("__reserved_3") != 0 {
        return einval;
    }
    if st & !((1 << 25) - 1) != 0 || a.get("read_format") & !((1 << 5) - 1) != 0 {
        return einval;
    }
    if st & BRANCH_STACK != 0 {
        let mut mask = a.get("branch_sample_type");
        let levels = BRANCH_USER | BRANCH_KERNEL | BRANCH_HV;
        // Defined bits only, and at least one branch type.
        if mask & !(BRANCH_MAX - 1) != 0 || mask & !levels == 0 {
            return einval;
        }
        // No level given: the levels the event does not exclude.
        if mask & levels == 0 {
            for (exclude, level) in [
                ("exclude_kernel", BRANCH_KERNEL),
                ("exclude_user", BRANCH_USER),
                ("exclude_hv", BRANCH_HV),
            ] {
                if a.get(exclude) == 0 {
                    mask |= level;
                }
            }
        }
        if mask & (BRANCH_KERNEL | BRANCH_HV) != 0 && !kernel_access {
            return Outcome::Fails(EACCES, false);
        }
    }
    if st & (REGS_USER | STACK_USER | CGROUP) != 0 {
        return Outcome::Unknown;
    }
    // Its EINVAL is kept while the checks below run, and any of theirs
    // is EINVAL too.
    let regs = a.get("sample_regs_intr");
    if st & REGS_INTR != 0 && (regs == 0 || regs & REGS_REFUSED != 0) {
        return einval;
    }
    if st & WEIGHT != 0 && st & WEIGHT_STRUCT != 0 {
        return einval;
    }
    if a.get("inherit") == 0 && a.get("inherit_thread") != 0 {
        return einval;
    }
    if a.get("remove_on_exec") != 0 && a.get("enable_on_exec") != 0 {
        return einval;
    }
    if a.get("sigtrap") != 0 && a.get("remove_on_exec") == 0 {
        return einval;
    }
    Outcome::Copied
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_rules() {
        let mut a = vec![0u8; 200];
        a[4..8].copy_from_slice(&200u32.to_le_bytes());
        // The tail faults: the kernel does not say where.
        let c = capture(0, 1, &a, 150);
        assert_eq!(
            (c.status, c.fault_offset, c.declared_size, c.data.len()),
            (Status::Fault, None, 200, 0)
        );
        a[140] = 1;
        let c = capture(0, 1, &a, 150);
        assert_eq!(
            (c.status, c.flags.clone(), c.data.len()),
            (Status::Truncated, vec!["tail_nonzero"], 0)
        );
        assert_eq!(outcome(&c, true), Outcome::Fails(E2BIG, true));
        // The tail is read first; a fault before it, in the head, keeps
        // nothing either, and has no offset.
        let c = capture(0, 1, &a, 40);
        assert_eq!(
            (c.status, c.fault_offset, c.data.len()),
            (Status::Fault, None, 0)
        );
        let c = capture(0, 1, &a, 6);
        assert_eq!(
            (c.status, c.flags.clone(), c.fault_offset, c.declared_size),
            (Status::Fault, vec!["size_fault"], Some(4), 0)
        );
        assert_eq!(capture(1 << 20, 0, &a, 0).status, Status::NotApplicable);
        // Size 0: the kernel takes 64, and copies 64 bytes whose size
        // word still reads 0.
        let mut v0 = vec![0u8; 64];
        v0[0] = 1;
        let c = capture(0, 1, &v0, 64);
        assert_eq!(
            (c.status, c.declared_size, c.data.len()),
            (Status::Complete, 64, 64)
        );
        assert_eq!(c.data[4..8], [0, 0, 0, 0]);
        // An invalid size is the size word itself.
        a[4..8].copy_from_slice(&5000u32.to_le_bytes());
        assert_eq!(
            (
                capture(0, 1, &a, 200).status,
                capture(0, 1, &a, 200).declared_size
            ),
            (Status::InvalidSize, 5000)
        );
    }

    /// A complete 136-byte attr with this sample type, flags word,
    /// `branch_sample_type` and `sample_regs_intr`.
    fn checks(sample_type: u64, flags: u64, branch: u64, regs: u64, access: bool) -> Outcome {
        let mut a = vec![0u8; 136];
        a[4..8].copy_from_slice(&136u32.to_le_bytes());
        for (off, v) in [(24, sample_type), (40, flags), (72, branch), (96, regs)] {
            a[off..off + 8].copy_from_slice(&v.to_le_bytes());
        }
        outcome(&capture(0, 1, &a, 136), access)
    }

    #[test]
    fn branch_stack_and_regs_intr() {
        const BRANCH_STACK: u64 = 1 << 11;
        const REGS_INTR: u64 = 1 << 18;
        const ANY: u64 = 1 << 3;
        const EXCLUDE_KERNEL_HV: u64 = (1 << 5) | (1 << 6);
        let einval = Outcome::Fails(EINVAL, false);
        let eacces = Outcome::Fails(EACCES, false);
        // No branch type; an undefined bit.
        assert_eq!(checks(BRANCH_STACK, 0, 0x7, 0, true), einval);
        assert_eq!(checks(BRANCH_STACK, 0, ANY | (1 << 20), 0, true), einval);
        // The kernel level, asked for or derived from the exclude bits.
        assert_eq!(checks(BRANCH_STACK, 0, ANY | 0x2, 0, false), eacces);
        assert_eq!(checks(BRANCH_STACK, 0, ANY, 0, false), eacces);
        assert_eq!(checks(BRANCH_STACK, 0, ANY, 0, true), Outcome::Copied);
        assert_eq!(
            checks(BRANCH_STACK, EXCLUDE_KERNEL_HV, ANY, 0, false),
            Outcome::Copied
        );
        assert_eq!(
            checks(BRANCH_STACK, EXCLUDE_KERNEL_HV, ANY | 0x4, 0, false),
            eacces
        );
        // Registers: none, a segment register, a reserved bit; XMM is valid.
        assert_eq!(checks(REGS_INTR, 0, 0, 0, true), einval);
        assert_eq!(checks(REGS_INTR, 0, 0, 1 << 12, true), einval);
        assert_eq!(checks(REGS_INTR, 0, 0, 1 << 24, true), einval);
        assert_eq!(
            checks(REGS_INTR, 0, 0, (1 << 8) | (1 << 32), true),
            Outcome::Copied
        );
    }
}
