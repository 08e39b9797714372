// SPDX-License-Identifier: GPL-2.0-only
//! The end-to-end scripts of `antinomie-workload` (`e2e`, `e2e-small`,
//! `burst`, `flush`): `perf_event_open(2)` calls covering the capture's
//! cases, each logged as one JSON line ([`E2eRecord`]) with everything the
//! comparator (`antinomie-e2e`) needs to derive what Antinomie must have
//! recorded: the six argument words, the attr bytes as they were in memory
//! at the call and how many of them were readable before an unmapped page,
//! the thread, its CPU, the clock around the call, and what the kernel gave
//! back (return value, errno, `attr.size` read back after `E2BIG`,
//! `FD_CLOEXEC` of a new fd).
//!
//! Every attr lives at the end of its own mapping, right before a
//! `PROT_NONE` guard page, so "readable" is exact: the kernel (and the
//! capture) can read those bytes and not one more. Every call carries a
//! unique tag in argument word 5, which `perf_event_open` ignores and the
//! capture records raw, so that each captured call names the logged call it
//! is. Threads pin themselves to a CPU before calling, so the ring a call
//! lands on is known too.

mod caller;
pub mod campaign;
mod cases;
pub mod decisions;
pub mod dependent;
pub mod random;
mod system;

use std::sync::Mutex;

use serde::Serialize;

use caller::{close, Caller};
use cases::{big_group, change_during_the_call, main_cases, per_cpu_cases};
use system::online_cpus;

const PAGE: usize = 4096;
/// `sizeof(struct perf_event_attr)` in the pinned 6.12.94 uapi.
pub const ATTR_SIZE: usize = 136;

const PERF_TYPE_HARDWARE: u32 = 0;
const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_TYPE_BREAKPOINT: u32 = 5;
const PERF_COUNT_HW_CPU_CYCLES: u64 = 0;
const PERF_COUNT_SW_CPU_CLOCK: u64 = 0;
const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;
const PERF_COUNT_SW_DUMMY: u64 = 9;
const PERF_FLAG_FD_CLOEXEC: u64 = 1 << 3;
const PERF_SAMPLE_IP: u64 = 1 << 0;
const PERF_SAMPLE_TID: u64 = 1 << 1;
const PERF_SAMPLE_TIME: u64 = 1 << 2;
const PERF_FORMAT_TOTAL_TIME_ENABLED: u64 = 1 << 0;
const PERF_FORMAT_TOTAL_TIME_RUNNING: u64 = 1 << 1;
const PERF_FORMAT_ID: u64 = 1 << 2;
const PERF_FORMAT_GROUP: u64 = 1 << 3;
const PERF_FORMAT_LOST: u64 = 1 << 4;
const HW_BREAKPOINT_W: u32 = 2;
const HW_BREAKPOINT_LEN_8: u64 = 8;
const CLOCK_MONOTONIC_RAW: i32 = 4;

// Bits of the flag word at offset 40.
const DISABLED: u64 = 1 << 0;
const EXCLUDE_KERNEL: u64 = 1 << 5;
const EXCLUDE_HV: u64 = 1 << 6;
const FREQ: u64 = 1 << 10;
const WATERMARK: u64 = 1 << 14;
const USE_CLOCKID: u64 = 1 << 25;
/// Bit 38: the first bit of `__reserved_1`.
const RESERVED_1_BIT: u64 = 1 << 38;

/// The most siblings the `E2BIG` group recipe adds before giving up.
const GROUP_MAX_SIBLINGS: usize = 1000;

/// One call as issued and its outcome: a line of the workload's output.
#[derive(Debug, Clone, Serialize)]
pub struct E2eRecord {
    /// The script that made the call.
    pub script: &'static str,
    /// What the call tests.
    pub case: String,
    /// The workload's thread number (0: the main thread).
    pub thread: u32,
    /// The call's position among this thread's calls, from 0.
    pub seq: u32,
    /// `getpid()`.
    pub pid: i32,
    /// `gettid()`.
    pub tid: i32,
    /// The CPU the thread is pinned to, if it could pin itself.
    pub pinned_cpu: Option<u32>,
    /// `sched_getcpu()` just before the call.
    pub cpu_before: i32,
    /// `sched_getcpu()` just after it.
    pub cpu_after: i32,
    /// The six raw argument words as passed (ints sign-extended); word 5
    /// is the call's tag.
    pub args: [u64; 6],
    /// The attr pointee; `None` for a NULL pointer.
    pub attr: Option<AttrMemory>,
    /// `CLOCK_MONOTONIC` just before the call.
    pub time_before_ns: u64,
    /// `CLOCK_MONOTONIC` just after it.
    pub time_after_ns: u64,
    /// The raw return value: a new fd, or `-errno`.
    pub ret: i64,
    /// The errno of a failed call.
    pub errno: Option<i32>,
    /// After `E2BIG`: the `u32` at offset 4 (`attr.size`) read back, when
    /// those bytes are readable.
    pub required_size: Option<u32>,
    /// The `u32` at offset 4 after the call, whatever the result, when
    /// readable (the kernel writes it only on `E2BIG` from its size checks).
    pub size_after: Option<u32>,
    /// For a new fd: whether `FD_CLOEXEC` is set on it.
    pub cloexec: Option<bool>,
}

/// The memory `attr_uptr` points to, as it was when the call was made.
#[derive(Debug, Clone, Serialize)]
pub struct AttrMemory {
    /// Every readable byte from the pointer up to the unmapped guard page,
    /// in hex, as they were at the call.
    pub hex: String,
    /// How many bytes are readable from the pointer: the guard page starts
    /// exactly there.
    pub readable: usize,
    /// `attr_uptr & 4095`.
    pub page_offset: usize,
}

/// An attr under construction: bytes, with helpers for the members used.
#[derive(Debug, Clone)]
struct Attr(Vec<u8>);

impl Attr {
    fn new(type_: u32, config: u64) -> Self {
        let mut a = Attr(vec![0u8; ATTR_SIZE]);
        a.u32_at(0, type_).u32_at(4, 136).u64_at(8, config);
        a
    }

    fn sw(config: u64) -> Self {
        let mut a = Self::new(PERF_TYPE_SOFTWARE, config);
        a.flags(DISABLED | EXCLUDE_KERNEL | EXCLUDE_HV);
        a
    }

    fn u16_at(&mut self, off: usize, v: u16) -> &mut Self {
        self.0[off..off + 2].copy_from_slice(&v.to_le_bytes());
        self
    }

    fn u32_at(&mut self, off: usize, v: u32) -> &mut Self {
        self.0[off..off + 4].copy_from_slice(&v.to_le_bytes());
        self
    }

    fn u64_at(&mut self, off: usize, v: u64) -> &mut Self {
        self.0[off..off + 8].copy_from_slice(&v.to_le_bytes());
        self
    }

    fn size(&mut self, size: u32) -> &mut Self {
        self.u32_at(4, size)
    }

    fn flags(&mut self, flags: u64) -> &mut Self {
        self.u64_at(40, flags)
    }

    fn or_flags(&mut self, flags: u64) -> &mut Self {
        let old = u64::from_le_bytes(self.0[40..48].try_into().expect("8 bytes"));
        self.u64_at(40, old | flags)
    }

    fn sample(&mut self, period_or_freq: u64, sample_type: u64) -> &mut Self {
        self.u64_at(16, period_or_freq).u64_at(24, sample_type)
    }

    fn read_format(&mut self, f: u64) -> &mut Self {
        self.u64_at(32, f)
    }

    /// Grows (zero-filled) or cuts the buffer to `len` bytes.
    fn len(&mut self, len: usize) -> &mut Self {
        self.0.resize(len, 0);
        self
    }

    fn build(&self) -> Vec<u8> {
        self.0.clone()
    }
}

/// The attr size of call `k` of burst thread `thread`. On fresh 4 KiB
/// rings that nobody drains, one pinned thread per CPU, the sizes decide
/// which records fit (ENTRY: 152 + the attr rounded up to 8 bytes; EXIT:
/// 88; a pending LOST record: 152 more, written with the next record that
/// fits with it):
/// * thread 1 cycles once through the `PERF_ATTR_SIZE_VER*`, then makes
///   calls of 64 and 136 (3752 bytes so far): its 12th call's ENTRY (size
///   112, 264 bytes) fits and leaves 80 bytes, so its EXIT is dropped
///   (unfinished);
/// * thread 2 makes 9 calls of size 64 and 3 of 120 (3816 bytes), then
///   size 136: the 13th call's ENTRY (288 bytes) is dropped, but the LOST
///   record and its EXIT (240 bytes) fit in the 280 left (entry lost);
/// * the others use 136: the 11th call's ENTRY fits, its EXIT does not,
///   and the calls after it are dropped whole.
fn burst_attr_size(thread: u32, k: usize) -> u32 {
    const VERS: [u32; 9] = [64, 72, 80, 96, 104, 112, 120, 128, 136];
    /// Thread 1's calls after its cycle: then 112 on.
    const THREAD1_AFTER: [u32; 2] = [64, 136];
    match thread {
        1 if k < VERS.len() => VERS[k],
        1 => THREAD1_AFTER.get(k - VERS.len()).copied().unwrap_or(112),
        2 if k < 9 => 64,
        2 if k < 12 => 120,
        _ => 136,
    }
}

/// `burst N`: N calls spread over one pinned thread per CPU, as fast as
/// they go, keeping every fd open (so every return value is distinct).
fn burst(script_id: u64, cpus: &[u32], n: usize) -> Vec<E2eRecord> {
    let per = n.div_ceil(cpus.len().max(1));
    let handles: Vec<_> = cpus
        .iter()
        .enumerate()
        .map(|(i, &cpu)| {
            std::thread::spawn(move || {
                let thread = u32::try_from(i + 1).expect("few threads");
                let mut c = Caller::new("burst", script_id, thread, Some(cpu));
                let mut fds = Vec::new();
                for k in 0..per {
                    let size = burst_attr_size(thread, k);
                    let mut attr = Attr::sw(PERF_COUNT_SW_TASK_CLOCK);
                    attr.size(size).len(size as usize);
                    fds.push(c.simple("burst", &attr, PERF_FLAG_FD_CLOEXEC));
                }
                (c.records, fds)
            })
        })
        .collect();
    let mut records = Vec::new();
    let mut fds = Vec::new();
    for h in handles {
        let (r, f) = h.join().expect("a workload thread panicked");
        records.extend(r);
        fds.extend(f);
    }
    for fd in fds {
        close(fd);
    }
    records
}

/// Runs script `name`: its records, and whether its own preconditions
/// held (the big group ended in `E2BIG` where expected).
///
/// # Errors
/// An unknown script.
pub fn run(
    name: &str,
    count: Option<usize>,
) -> Result<(Vec<E2eRecord>, Result<(), String>), String> {
    let cpus = online_cpus();
    let main_cpu = cpus.first().copied();
    let out = Mutex::new(Vec::new());
    let mut status = Ok(());
    match name {
        "e2e" | "e2e-small" => {
            let script: &'static str = if name == "e2e" { "e2e" } else { "e2e-small" };
            let id = if name == "e2e" { 1 } else { 2 };
            let mut c = Caller::new(script, id, 0, main_cpu);
            main_cases(&mut c);
            out.lock()
                .expect("not poisoned")
                .extend(per_cpu_cases(script, id, &cpus));
            if name == "e2e" {
                status = change_during_the_call(&mut c).and(big_group(&mut c));
            }
            out.lock().expect("not poisoned").extend(c.records);
        }
        "burst" => {
            let n = count.unwrap_or(200);
            out.lock().expect("not poisoned").extend(burst(3, &cpus, n));
        }
        "flush" => {
            // One call per CPU, to make each ring emit its pending LOST record.
            let recs = cpus
                .iter()
                .enumerate()
                .map(|(i, &cpu)| {
                    std::thread::spawn(move || {
                        let thread = u32::try_from(i + 1).expect("few threads");
                        let mut c = Caller::new("flush", 4, thread, Some(cpu));
                        close(c.simple("flush", &Attr::sw(PERF_COUNT_SW_DUMMY), 0));
                        c.records
                    })
                })
                .collect::<Vec<_>>()
                .into_iter()
                .flat_map(|h| h.join().expect("a workload thread panicked"))
                .collect::<Vec<_>>();
            out.lock().expect("not poisoned").extend(recs);
        }
        other => return Err(format!("unknown script {other}")),
    }
    let mut records = out.into_inner().expect("not poisoned");
    records.sort_by_key(|r| (r.thread, r.seq));
    Ok((records, status))
}
