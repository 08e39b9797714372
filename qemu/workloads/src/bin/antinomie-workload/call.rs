// SPDX-License-Identifier: GPL-2.0-only
//! A call as every script of `antinomie-workload` makes it: the constants
//! of the pinned 6.12.94 uapi the scripts use and the attr builder
//! ([`Attr`]). The JSON line each call is logged as ([`LoggedCall`]) is
//! the library's, which the comparator (`antinomie-e2e`) reads.

/// The logged line, shared with the comparator that reads it.
pub(crate) use antinomie_workloads::log::{AttrMemory, LoggedCall};

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
