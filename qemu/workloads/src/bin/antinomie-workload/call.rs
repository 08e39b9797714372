// SPDX-License-Identifier: GPL-2.0-only
//! A call as every script of `antinomie-workload` makes and logs it: the
//! constants of the pinned 6.12.94 uapi the scripts use, the attr builder
//! ([`Attr`]), and the JSON line each call is logged as ([`LoggedCall`],
//! [`AttrMemory`]), which the comparator (`antinomie-e2e`) derives what
//! Antinomie must have recorded from.

use serde::Serialize;

pub(crate) const PAGE: usize = 4096;
/// `sizeof(struct perf_event_attr)` in the pinned 6.12.94 uapi.
pub(crate) const ATTR_SIZE: usize = 136;

pub(crate) const PERF_TYPE_HARDWARE: u32 = 0;
pub(crate) const PERF_TYPE_SOFTWARE: u32 = 1;
pub(crate) const PERF_TYPE_BREAKPOINT: u32 = 5;
pub(crate) const PERF_COUNT_HW_CPU_CYCLES: u64 = 0;
pub(crate) const PERF_COUNT_SW_CPU_CLOCK: u64 = 0;
pub(crate) const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;
pub(crate) const PERF_COUNT_SW_DUMMY: u64 = 9;
pub(crate) const PERF_FLAG_FD_CLOEXEC: u64 = 1 << 3;
pub(crate) const PERF_SAMPLE_IP: u64 = 1 << 0;
pub(crate) const PERF_SAMPLE_TID: u64 = 1 << 1;
pub(crate) const PERF_SAMPLE_TIME: u64 = 1 << 2;
pub(crate) const PERF_FORMAT_TOTAL_TIME_ENABLED: u64 = 1 << 0;
pub(crate) const PERF_FORMAT_TOTAL_TIME_RUNNING: u64 = 1 << 1;
pub(crate) const PERF_FORMAT_ID: u64 = 1 << 2;
pub(crate) const PERF_FORMAT_GROUP: u64 = 1 << 3;
pub(crate) const PERF_FORMAT_LOST: u64 = 1 << 4;
pub(crate) const HW_BREAKPOINT_W: u32 = 2;
pub(crate) const HW_BREAKPOINT_LEN_8: u64 = 8;
pub(crate) const CLOCK_MONOTONIC_RAW: i32 = 4;

// Bits of the flag word at offset 40.
pub(crate) const DISABLED: u64 = 1 << 0;
pub(crate) const EXCLUDE_KERNEL: u64 = 1 << 5;
pub(crate) const EXCLUDE_HV: u64 = 1 << 6;
pub(crate) const FREQ: u64 = 1 << 10;
pub(crate) const WATERMARK: u64 = 1 << 14;
pub(crate) const USE_CLOCKID: u64 = 1 << 25;
/// Bit 38: the first bit of `__reserved_1`.
pub(crate) const RESERVED_1_BIT: u64 = 1 << 38;

/// The most siblings the `E2BIG` group recipe adds before giving up.
pub(crate) const GROUP_MAX_SIBLINGS: usize = 1000;

/// One call as issued and its outcome: a line of the workload's output.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct LoggedCall {
    /// The script that made the call.
    pub(crate) script: &'static str,
    /// What the call tests.
    pub(crate) case: String,
    /// The workload's thread number (0: the main thread).
    pub(crate) thread: u32,
    /// The call's position among this thread's calls, from 0.
    pub(crate) seq: u32,
    /// `getpid()`.
    pub(crate) pid: i32,
    /// `gettid()`.
    pub(crate) tid: i32,
    /// The CPU the thread is pinned to, if it could pin itself.
    pub(crate) pinned_cpu: Option<u32>,
    /// `sched_getcpu()` just before the call.
    pub(crate) cpu_before: i32,
    /// `sched_getcpu()` just after it.
    pub(crate) cpu_after: i32,
    /// The six raw argument words as passed (ints sign-extended); word 5
    /// is the call's tag.
    pub(crate) args: [u64; 6],
    /// The attr pointee; `None` for a NULL pointer.
    pub(crate) attr: Option<AttrMemory>,
    /// `CLOCK_MONOTONIC` just before the call.
    pub(crate) time_before_ns: u64,
    /// `CLOCK_MONOTONIC` just after it.
    pub(crate) time_after_ns: u64,
    /// The raw return value: a new fd, or `-errno`.
    pub(crate) ret: i64,
    /// The errno of a failed call.
    pub(crate) errno: Option<i32>,
    /// After `E2BIG`: the `u32` at offset 4 (`attr.size`) read back, when
    /// those bytes are readable.
    pub(crate) required_size: Option<u32>,
    /// The `u32` at offset 4 after the call, whatever the result, when
    /// readable (the kernel writes it only on `E2BIG` from its size checks).
    pub(crate) size_after: Option<u32>,
    /// For a new fd: whether `FD_CLOEXEC` is set on it.
    pub(crate) cloexec: Option<bool>,
}

/// The memory `attr_uptr` points to, as it was when the call was made.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct AttrMemory {
    /// Every readable byte from the pointer up to the unmapped guard page,
    /// in hex, as they were at the call.
    pub(crate) hex: String,
    /// How many bytes are readable from the pointer: the guard page starts
    /// exactly there.
    pub(crate) readable: usize,
    /// `attr_uptr & 4095`.
    pub(crate) page_offset: usize,
}

/// An attr under construction: bytes, with helpers for the members used.
#[derive(Debug, Clone)]
pub(crate) struct Attr(pub(crate) Vec<u8>);

impl Attr {
    pub(crate) fn new(type_: u32, config: u64) -> Self {
        let mut a = Attr(vec![0u8; ATTR_SIZE]);
        a.u32_at(0, type_).u32_at(4, 136).u64_at(8, config);
        a
    }

    pub(crate) fn sw(config: u64) -> Self {
        let mut a = Self::new(PERF_TYPE_SOFTWARE, config);
        a.flags(DISABLED | EXCLUDE_KERNEL | EXCLUDE_HV);
        a
    }

    pub(crate) fn u16_at(&mut self, off: usize, v: u16) -> &mut Self {
        self.0[off..off + 2].copy_from_slice(&v.to_le_bytes());
        self
    }

    pub(crate) fn u32_at(&mut self, off: usize, v: u32) -> &mut Self {
        self.0[off..off + 4].copy_from_slice(&v.to_le_bytes());
        self
    }

    pub(crate) fn u64_at(&mut self, off: usize, v: u64) -> &mut Self {
        self.0[off..off + 8].copy_from_slice(&v.to_le_bytes());
        self
    }

    pub(crate) fn size(&mut self, size: u32) -> &mut Self {
        self.u32_at(4, size)
    }

    pub(crate) fn flags(&mut self, flags: u64) -> &mut Self {
        self.u64_at(40, flags)
    }

    pub(crate) fn or_flags(&mut self, flags: u64) -> &mut Self {
        let old = u64::from_le_bytes(self.0[40..48].try_into().expect("8 bytes"));
        self.u64_at(40, old | flags)
    }

    pub(crate) fn sample(&mut self, period_or_freq: u64, sample_type: u64) -> &mut Self {
        self.u64_at(16, period_or_freq).u64_at(24, sample_type)
    }

    pub(crate) fn read_format(&mut self, f: u64) -> &mut Self {
        self.u64_at(32, f)
    }

    /// Grows (zero-filled) or cuts the buffer to `len` bytes.
    pub(crate) fn len(&mut self, len: usize) -> &mut Self {
        self.0.resize(len, 0);
        self
    }

    pub(crate) fn build(&self) -> Vec<u8> {
        self.0.clone()
    }
}
