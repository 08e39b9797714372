// SPDX-License-Identifier: GPL-2.0-only
//! The workloads' log: one JSON line per `perf_event_open(2)` call, as
//! `antinomie-workload` writes it and `antinomie-e2e` reads it back to
//! derive what Antinomie must have recorded. One type for both sides, so
//! that a field added or renamed cannot leave them apart.

use serde::{Deserialize, Serialize};

/// One call as issued and its outcome: a line of the workload's output.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoggedCall {
    /// The script that made the call.
    pub script: String,
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
#[derive(Debug, Clone, Serialize, Deserialize)]
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
