// SPDX-License-Identifier: GPL-2.0-only
//! `antinomie-workload random --seed S --calls N [--threads T]
//! [--tracepoint-id ID]`: a seeded random `perf_event_open(2)` workload
//! for regression comparisons (two kernels, one workload, `reader diff`),
//! in any privilege context (`antinomie-context`).
//!
//! T threads (default: one per online CPU), each pinned to one CPU, share
//! the N calls. Thread `t` (from 1) draws every decision from its own
//! `ChaCha8Rng` seeded with `seed_from_u64(S)` on stream `t`: `ChaCha`'s
//! stream is specified and platform-independent, and the draws use only
//! `next_u64` (no distribution code that could change between crate
//! versions). No draw depends on a result, so the same seed gives the same
//! calls per thread, in the same order, on any kernel — only the fd
//! numbers and the addresses differ. Per call it draws:
//!
//! * the declared size: a boundary (0, 1, 63, 64, 65, the `VER*` sizes,
//!   135–137, 200, 4095–4097) or any size in 0..=4097, and above 136 a
//!   zero or non-zero tail;
//! * the pointer: NULL, every byte the kernel may read mapped and the next
//!   one not, a fault at a random offset inside the attr, or the size field
//!   itself unreadable (each attr ends at an unmapped guard page, as in the
//!   e2e scripts);
//! * the attr: mostly software events of every `PERF_COUNT_SW_*` type
//!   (with some sampling and read formats), hardware breakpoints (a user
//!   or a kernel address, every `bp_type` and length), tracepoints (the
//!   id of `sched/sched_switch` from tracefs, or one no tracepoint has),
//!   some other types, and some random bytes;
//! * on all but the random bytes, what the permission checks look at:
//!   `exclude_kernel`, `exclude_hv`, `exclude_callchain_kernel`,
//!   `inherit`, `sigtrap` (with or without the `remove_on_exec` it
//!   needs), and sample types that need privilege (`PERF_SAMPLE_RAW`,
//!   callchains, `REGS_INTR`, `PHYS_ADDR`, a branch stack with or without
//!   its kernel and hypervisor privilege bits);
//! * flags (mostly 0 or `FD_CLOEXEC`, sometimes `FD_NO_GROUP`, `FD_OUTPUT`
//!   or invalid bits), pid (0, -1, the thread's own tid, its process's
//!   pid, another user's task, a pid above `PID_MAX_LIMIT`), cpu (-1, an
//!   online one, an invalid one), group fd (-1, the thread's leader, a bad
//!   fd).
//!
//! Own tids and pids differ between runs; `reader diff` compares a pid
//! argument equal to the caller's own pid or tid as "own", whatever its
//! number. "Another user's task" is `ANTINOMIE_OTHER_PID` when set (the
//! sleeping task `antinomie-context --other-user-task` starts, at the same
//! fixed pid in every run), else pid 1 (init: root's, so another user's
//! for any unprivileged caller).
//!
//! Call 0 of each thread opens its group leader (a software clock), kept
//! open until the end and used as a group fd; if it failed, the bad fd is
//! used in its place so that the next calls do not change. Every other fd
//! is closed at once. What keeps a run safe and repeatable: every attr has
//! `disabled` set and never `enable_on_exec` (nothing counts, so neither
//! `sigtrap` nor a breakpoint ever fires, and `inherit` and
//! `remove_on_exec` have nothing to act on: the workload neither forks nor
//! execs); `freq` is never set (its limit, `perf_event_max_sample_rate`,
//! is lowered by the kernel at run time); only threads 1 to
//! [`BREAKPOINT_SLOTS`] draw breakpoints, each holding at most one at a
//! time, so the slots never run out whatever the timing; no
//! `PERF_FLAG_PID_CGROUP` (it would take pid as an fd of this process); no
//! thread writes the attr during a call.
//!
//! Each call is logged as the e2e scripts log theirs (`antinomie_workloads::log::LoggedCall`,
//! script `random`), streamed to stdout as it is made, so memory stays
//! bounded whatever N.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::call::{
    Attr, DISABLED, EXCLUDE_HV, EXCLUDE_KERNEL, FREQ, PERF_COUNT_SW_CPU_CLOCK,
    PERF_FLAG_FD_CLOEXEC, PERF_TYPE_BREAKPOINT, PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE,
};
use crate::caller::{close, Caller, Ptr};
use crate::system::online_cpus;

/// The script id in the tag of argument word 5 (the e2e scripts use 1..=4).
const SCRIPT_ID: u64 = 5;
/// Sizes on every boundary the kernel or the capture checks.
pub(super) const BOUNDARY_SIZES: [u32; 20] = [
    0, 1, 63, 64, 65, 72, 80, 88, 96, 104, 112, 120, 128, 135, 136, 137, 200, 4095, 4096, 4097,
];
const PAGE_SIZE: u32 = 4096;
/// Above `PID_MAX_LIMIT` (2^22): no task has it.
pub(super) const NO_SUCH_PID: i32 = 0x7fff_fff0;
/// Never an open fd of this process (above any default `RLIMIT_NOFILE`).
pub(super) const BAD_FD: i32 = 999_999;
/// An invalid CPU: above any `nr_cpu_ids`.
pub(super) const BAD_CPU: i32 = 4096;
const PERF_TYPE_TRACEPOINT: u32 = 2;
const PERF_TYPE_HW_CACHE: u32 = 3;
const PERF_TYPE_RAW: u32 = 4;
/// No PMU has this type.
const UNKNOWN_TYPE: u32 = 0xdead;
/// `PERF_COUNT_SW_MAX` in the pinned uapi: 0..12 are software events.
const SW_MAX: u64 = 12;
pub(super) const PERF_FLAG_FD_NO_GROUP: u64 = 1 << 0;
pub(super) const PERF_FLAG_FD_OUTPUT: u64 = 1 << 1;
/// Bits of the flag word random bytes (here and in the campaign) never
/// set: `enable_on_exec` (12), `remove_on_exec` (36), `sigtrap` (37), and
/// `freq` (10).
pub(super) const FORBIDDEN: u64 = (1 << 12) | (1 << 36) | (1 << 37) | FREQ;

// Bits of the flag word the permission checks look at.
const INHERIT: u64 = 1 << 1;
const EXCLUDE_CALLCHAIN_KERNEL: u64 = 1 << 21;
pub(super) const REMOVE_ON_EXEC: u64 = 1 << 36;
pub(super) const SIGTRAP: u64 = 1 << 37;
// Sample types that need privilege, or that a permission check reads.
pub(super) const PERF_SAMPLE_CALLCHAIN: u64 = 1 << 5;
pub(super) const PERF_SAMPLE_RAW: u64 = 1 << 10;
pub(super) const PERF_SAMPLE_BRANCH_STACK: u64 = 1 << 11;
pub(super) const PERF_SAMPLE_REGS_INTR: u64 = 1 << 18;
pub(super) const PERF_SAMPLE_PHYS_ADDR: u64 = 1 << 19;
/// `PERF_SAMPLE_BRANCH_USER`, `_KERNEL`, `_HV`: the privilege levels.
const BRANCH_PRIVILEGE_LEVELS: u64 = 0x7;
/// `PERF_SAMPLE_BRANCH_MAX_SHIFT` of the pinned uapi: the branch types
/// are bits 3 to 19.
const BRANCH_TYPE_BITS: u64 = 17;
/// x86's registers of `sample_regs_intr`: `PERF_REG_X86_64_MAX` is 24.
const X86_REGS: u64 = (1 << 24) - 1;
/// `HW_BREAKPOINT_R`, `_W`, `_RW`, `_X`, and 0 (`HW_BREAKPOINT_EMPTY`).
const BP_TYPES: [u32; 5] = [1, 2, 3, 4, 0];
/// A user address (any may be watched), aligned for every length.
const BP_USER_ADDR: u64 = 0x10_0000;
/// A kernel address: only `CAP_SYS_ADMIN` may watch one (and never with
/// `exclude_kernel`).
const BP_KERNEL_ADDR: u64 = 0xffff_ffff_8100_0000;
/// x86's debug registers: `HBP_NUM`.
const BREAKPOINT_SLOTS: u32 = 4;
/// A tracepoint id no tracepoint has (event types are 16-bit).
const NO_SUCH_TRACEPOINT: u64 = 1 << 32;
/// Where the tracepoint id is read from, first readable wins.
const TRACEPOINT_ID_PATHS: [&str; 2] = [
    "/sys/kernel/tracing/events/sched/sched_switch/id",
    "/sys/kernel/debug/tracing/events/sched/sched_switch/id",
];

/// The `random` workload's options.
#[derive(Debug, Parser)]
#[command(name = "antinomie-workload random")]
struct Args {
    /// The seed: the same seed makes the same calls.
    #[arg(long)]
    seed: u64,
    /// How many calls in all, shared between the threads.
    #[arg(long)]
    calls: usize,
    /// How many threads (default: one per online CPU), pinned one per CPU.
    #[arg(long)]
    threads: Option<usize>,
    /// The tracepoint id of the tracepoint draws (default: read from
    /// tracefs, which an unprivileged caller may not read; else one no
    /// tracepoint has).
    #[arg(long)]
    tracepoint_id: Option<u64>,
}

/// A thread's generator: `next_u64` only, reduced without bias tables.
pub(super) struct Rng(ChaCha8Rng);

impl Rng {
    pub(super) fn new(seed: u64, thread: u32) -> Self {
        let mut r = ChaCha8Rng::seed_from_u64(seed);
        r.set_stream(u64::from(thread));
        Rng(r)
    }

    pub(super) fn u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A number in `0..n` (multiply-shift; `n` > 0).
    pub(super) fn below(&mut self, n: u64) -> u64 {
        let wide = u128::from(self.u64()) * u128::from(n);
        u64::try_from(wide >> 64).expect("below n")
    }

    pub(super) fn index(&mut self, n: usize) -> usize {
        usize::try_from(self.below(n as u64)).expect("below a usize")
    }

    /// True with probability `percent`/100.
    pub(super) fn percent(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// One of `choices`, each with its weight.
    pub(super) fn weighted<T: Copy>(&mut self, choices: &[(u64, T)]) -> T {
        let total: u64 = choices.iter().map(|(w, _)| w).sum();
        let mut x = self.below(total);
        for &(w, v) in choices {
            if x < w {
                return v;
            }
            x -= w;
        }
        unreachable!("x < total")
    }
}

#[derive(Debug, Clone, Copy)]
enum PtrKind {
    Null,
    /// Every byte the kernel may read is mapped, the next one is not.
    Readable,
    /// The size field is readable, the attr faults further on.
    Crossing,
    /// The size field itself is not (wholly) readable.
    SizeUnreadable,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum AttrKind {
    Software,
    OtherType,
    RandomBytes,
}

#[derive(Debug, Clone, Copy)]
enum GroupKind {
    None,
    Leader,
    Bad,
}

/// How many bytes from the pointer `perf_copy_attr()` may read for this
/// declared size: the size word only when the size is refused before the
/// copy, else the size (64 for 0).
pub(super) fn kernel_reads(size: u32) -> usize {
    match size {
        0 => 64,
        64..=PAGE_SIZE => size as usize,
        _ => 8,
    }
}

/// The attr's bytes (`len` of them) for `kind`, before the size is set.
pub(super) fn attr_bytes(rng: &mut Rng, kind: AttrKind) -> Attr {
    match kind {
        AttrKind::Software => {
            // Mostly valid configs; SW_MAX itself is an unknown one.
            let mut a = Attr::sw(rng.below(SW_MAX + 1));
            if rng.percent(20) {
                a.flags(DISABLED | EXCLUDE_HV);
            }
            if rng.percent(25) {
                // IP, TID, TIME, ADDR, READ, CALLCHAIN, ID, CPU, PERIOD.
                a.sample(1 + rng.below(1_000_000), rng.u64() & 0x1ff);
            }
            if rng.percent(25) {
                a.read_format(rng.u64() & 0x1f);
            }
            a
        }
        AttrKind::OtherType => {
            let t = [
                PERF_TYPE_HARDWARE,
                PERF_TYPE_TRACEPOINT,
                PERF_TYPE_HW_CACHE,
                PERF_TYPE_RAW,
                UNKNOWN_TYPE,
            ][rng.index(5)];
            let mut a = Attr::new(t, rng.below(4));
            a.flags(DISABLED | EXCLUDE_KERNEL | EXCLUDE_HV);
            a
        }
        AttrKind::RandomBytes => {
            let mut a = Attr::new(0, 0);
            for chunk in a.0.chunks_mut(8) {
                let w = rng.u64().to_le_bytes();
                chunk.copy_from_slice(&w[..chunk.len()]);
            }
            let t = [
                PERF_TYPE_HARDWARE,
                PERF_TYPE_SOFTWARE,
                PERF_TYPE_TRACEPOINT,
                PERF_TYPE_HW_CACHE,
                PERF_TYPE_RAW,
                UNKNOWN_TYPE,
            ][rng.index(6)];
            a.u32_at(0, t);
            let flags = u64::from_le_bytes(a.0[40..48].try_into().expect("8 bytes"));
            a.flags(flags & !FORBIDDEN | DISABLED);
            a
        }
    }
}

/// What the draws of one thread take from its surroundings, fixed for
/// the run.
#[derive(Debug)]
struct Surroundings {
    cpus: Vec<u32>,
    tracepoint_id: u64,
    /// "Another user's task".
    other_pid: i32,
}

/// The process's and the calling thread's own ids.
#[derive(Debug, Clone, Copy)]
struct Own {
    pid: i32,
    tid: i32,
    /// Whether this thread may draw breakpoints.
    breakpoints: bool,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Common(AttrKind),
    Breakpoint,
    Tracepoint,
}

/// A breakpoint at a user or kernel address (or none), of any type and
/// length, for the permission check of kernel addresses and x86's own
/// checks of type, length and alignment.
fn breakpoint_attr(rng: &mut Rng) -> Attr {
    let mut a = Attr::new(PERF_TYPE_BREAKPOINT, 0);
    let addr = rng.weighted(&[(60, BP_USER_ADDR), (30, BP_KERNEL_ADDR), (10, 0)]);
    a.u32_at(52, BP_TYPES[rng.index(BP_TYPES.len())])
        .u64_at(56, addr)
        .u64_at(64, 1 << rng.below(4));
    a.flags(DISABLED | EXCLUDE_KERNEL | EXCLUDE_HV);
    a
}

/// A tracepoint (or an id none has), counting or with `PERF_SAMPLE_RAW`,
/// which needs `perf_event_paranoid` -1 or `CAP_PERFMON`.
fn tracepoint_attr(rng: &mut Rng, id: u64) -> Attr {
    let config = if rng.percent(85) {
        id
    } else {
        NO_SUCH_TRACEPOINT
    };
    let mut a = Attr::new(PERF_TYPE_TRACEPOINT, config);
    a.flags(DISABLED | EXCLUDE_KERNEL | EXCLUDE_HV);
    if rng.percent(60) {
        // RAW, with some of IP, TID, TIME.
        a.sample(1, PERF_SAMPLE_RAW | (rng.u64() & 0x7));
    }
    a
}

/// Draws what the permission checks look at, over `attr`'s flags and
/// sample type: the exclude bits, `inherit`, `sigtrap`, and sample types
/// that need privilege.
fn privilege_draws(rng: &mut Rng, attr: &mut Attr) {
    let word =
        |a: &Attr, off: usize| u64::from_le_bytes(a.0[off..off + 8].try_into().expect("8 bytes"));
    let mut flags = word(attr, 40) & !(EXCLUDE_KERNEL | EXCLUDE_HV);
    for (percent, bit) in [
        (60, EXCLUDE_KERNEL),
        (60, EXCLUDE_HV),
        (25, EXCLUDE_CALLCHAIN_KERNEL),
        (15, INHERIT),
    ] {
        if rng.percent(percent) {
            flags |= bit;
        }
    }
    if rng.percent(8) {
        // sigtrap needs remove_on_exec; without it, EINVAL.
        flags |= SIGTRAP | if rng.percent(80) { REMOVE_ON_EXEC } else { 0 };
    }
    attr.flags(flags | DISABLED);
    if !rng.percent(30) {
        return;
    }
    let mut sample_type = word(attr, 24);
    for bit in [
        PERF_SAMPLE_CALLCHAIN,
        PERF_SAMPLE_RAW,
        PERF_SAMPLE_BRANCH_STACK,
        PERF_SAMPLE_REGS_INTR,
        PERF_SAMPLE_PHYS_ADDR,
    ] {
        if rng.percent(35) {
            sample_type |= bit;
        }
    }
    let period = word(attr, 16).max(1);
    attr.sample(period, sample_type);
    if sample_type & PERF_SAMPLE_BRANCH_STACK != 0 {
        // Privilege levels (none: the kernel derives them from the
        // exclude bits), and a branch type or none (EINVAL).
        let types = if rng.percent(90) {
            1 << (3 + rng.below(BRANCH_TYPE_BITS))
        } else {
            0
        };
        attr.u64_at(72, (rng.u64() & BRANCH_PRIVILEGE_LEVELS) | types);
    }
    if sample_type & PERF_SAMPLE_REGS_INTR != 0 {
        let regs = rng.u64();
        attr.u64_at(
            96,
            if rng.percent(80) {
                regs & X86_REGS
            } else {
                regs
            },
        );
    }
}

/// One call's draws, in a fixed order.
struct Draw {
    case: String,
    ptr: Ptr,
    pid: i32,
    cpu: i32,
    group: GroupKind,
    flags: u64,
}

fn draw(rng: &mut Rng, around: &Surroundings, own: Own) -> Draw {
    let size = if rng.percent(75) {
        BOUNDARY_SIZES[rng.index(BOUNDARY_SIZES.len())]
    } else {
        u32::try_from(rng.below(u64::from(PAGE_SIZE) + 2)).expect("<= 4097")
    };
    let nonzero_tail = size > 136 && rng.percent(50);
    let kind = rng.weighted(&[
        (55, Kind::Common(AttrKind::Software)),
        (10, Kind::Breakpoint),
        (10, Kind::Tracepoint),
        (10, Kind::Common(AttrKind::OtherType)),
        (15, Kind::Common(AttrKind::RandomBytes)),
    ]);
    let ptr_kind = rng.weighted(&[
        (4, PtrKind::Null),
        (80, PtrKind::Readable),
        (10, PtrKind::Crossing),
        (6, PtrKind::SizeUnreadable),
    ]);
    let mut attr = match kind {
        Kind::Common(k) => attr_bytes(rng, k),
        Kind::Breakpoint => breakpoint_attr(rng),
        Kind::Tracepoint => tracepoint_attr(rng, around.tracepoint_id),
    };
    // Where the slots could run out, a software event in its place.
    let kind = match kind {
        Kind::Breakpoint if !own.breakpoints => {
            attr = attr_bytes(rng, AttrKind::Software);
            Kind::Common(AttrKind::Software)
        }
        k => k,
    };
    if !matches!(kind, Kind::Common(AttrKind::RandomBytes)) {
        privilege_draws(rng, &mut attr);
    }
    let reads = kernel_reads(size);
    attr.size(size).len(reads);
    if nonzero_tail && reads > 136 {
        let at = 136 + rng.index(reads - 136);
        attr.0[at] = u8::try_from(1 + rng.below(255)).expect("1..=255");
    }
    let (ptr, ptr_name) = match ptr_kind {
        PtrKind::Null => (Ptr::Null, "null"),
        PtrKind::Crossing if reads > 8 => (
            Ptr::Guarded {
                bytes: attr.build(),
                readable: 8 + rng.index(reads - 8),
            },
            "crossing",
        ),
        // Crossing: nothing beyond the size word to cross into.
        PtrKind::Readable | PtrKind::Crossing => (Ptr::at_page_end(attr.build()), "readable"),
        PtrKind::SizeUnreadable => (
            Ptr::Guarded {
                bytes: attr.build(),
                readable: rng.index(8),
            },
            "size-unreadable",
        ),
    };
    let pid = rng.weighted(&[
        (60, 0),
        (10, -1),
        (7, own.tid),
        (7, own.pid),
        (10, around.other_pid),
        (6, NO_SUCH_PID),
    ]);
    let cpu = match rng.weighted(&[(75, 0), (20, 1), (5, 2)]) {
        0 => -1,
        1 => i32::try_from(around.cpus[rng.index(around.cpus.len())]).unwrap_or(BAD_CPU),
        _ => BAD_CPU,
    };
    let group = rng.weighted(&[
        (75, GroupKind::None),
        (15, GroupKind::Leader),
        (10, GroupKind::Bad),
    ]);
    let flags = match rng.weighted(&[(45, 0), (43, 1), (5, 2), (7, 3)]) {
        0 => 0,
        1 => PERF_FLAG_FD_CLOEXEC,
        2 => [PERF_FLAG_FD_NO_GROUP, PERF_FLAG_FD_OUTPUT][rng.index(2)] | PERF_FLAG_FD_CLOEXEC,
        // An invalid bit, bit 4 to 63.
        _ => (1 << (4 + rng.below(60))) | (rng.u64() & PERF_FLAG_FD_CLOEXEC),
    };
    let tail = if nonzero_tail { "-tail" } else { "" };
    let kind_name = match kind {
        Kind::Common(AttrKind::Software) => "sw",
        Kind::Common(AttrKind::OtherType) => "type",
        Kind::Common(AttrKind::RandomBytes) => "bytes",
        Kind::Breakpoint => "bp",
        Kind::Tracepoint => "tp",
    };
    Draw {
        case: format!("random-{kind_name}-size-{size}{tail}-{ptr_name}"),
        ptr,
        pid,
        cpu,
        group,
        flags,
    }
}

/// Thread `thread`'s `calls` calls; each logged line goes to `lines`.
/// Returns how many succeeded, or `None` when the output went away.
fn thread_calls(
    seed: u64,
    thread: u32,
    cpu: u32,
    around: &Surroundings,
    calls: usize,
    lines: &crossbeam_channel::Sender<String>,
) -> Option<usize> {
    let mut rng = Rng::new(seed, thread);
    let mut c = Caller::new("random", SCRIPT_ID, thread, Some(cpu));
    // SAFETY: getpid and gettid have no preconditions.
    let own = unsafe {
        Own {
            pid: libc::getpid(),
            tid: libc::gettid(),
            breakpoints: thread <= BREAKPOINT_SLOTS,
        }
    };
    let mut ok = 0;
    let mut log = |c: &mut Caller, ret: i64| {
        ok += usize::from(ret >= 0);
        let rec = c.records.pop().expect("a call was logged");
        let line = serde_json::to_string(&rec).expect("a LoggedCall always serializes");
        lines.send(line).is_ok()
    };
    if calls == 0 {
        return Some(0);
    }
    let leader = c.simple(
        "random-leader",
        &Attr::sw(PERF_COUNT_SW_CPU_CLOCK),
        PERF_FLAG_FD_CLOEXEC,
    );
    let mut alive = log(&mut c, leader);
    let leader_fd = if leader < 0 {
        BAD_FD
    } else {
        i32::try_from(leader).expect("fd fits in i32")
    };
    for _ in 1..calls {
        if !alive {
            break;
        }
        let d = draw(&mut rng, around, own);
        let group_fd = match d.group {
            GroupKind::None => -1,
            GroupKind::Leader => leader_fd,
            GroupKind::Bad => BAD_FD,
        };
        let ret = c.call(&d.case, &d.ptr, d.pid, d.cpu, group_fd, d.flags);
        close(ret);
        alive = log(&mut c, ret);
    }
    close(leader);
    alive.then_some(ok)
}

/// Runs the `threads` threads of a seeded workload (`random`, `dependent`)
/// and writes the log lines they send to stdout as they come, so memory
/// stays bounded whatever the run's length. Thread `t` (from 1, the stream
/// of its [`Rng`]) runs `work(t, cpu, lines)`, pinned by `work` to `cpu`
/// (the CPUs of `cpus` in turn), and sends its lines to `lines`. Returns
/// the threads' results in thread order once all have ended, or `None`
/// when stdout went away (the threads stop at their next send).
pub(super) fn stream_threads<R: Send>(
    threads: usize,
    cpus: &[u32],
    work: impl Fn(u32, u32, &crossbeam_channel::Sender<String>) -> R + Sync,
) -> Option<Vec<R>> {
    let (tx, rx) = crossbeam_channel::bounded::<String>(256);
    std::thread::scope(|s| {
        let work = &work;
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let tx = tx.clone();
                let cpu = cpus[i % cpus.len()];
                let thread = u32::try_from(i + 1).expect("fewer than 2^32 threads");
                s.spawn(move || work(thread, cpu, &tx))
            })
            .collect();
        // The threads hold the only senders: the loop ends when all have.
        drop(tx);
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        let mut written = true;
        for line in rx {
            if writeln!(out, "{line}").is_err() {
                // Broken pipe: the threads stop at their next send.
                written = false;
                break;
            }
        }
        let written = written && out.flush().is_ok();
        let results = handles
            .into_iter()
            .map(|h| h.join().expect("a workload thread panicked"))
            .collect();
        written.then_some(results)
    })
}

/// Runs the workload with `args` (`args[0]` is `random`).
pub fn main(args: &[String]) -> ExitCode {
    let args = Args::parse_from(args);
    let cpus = online_cpus();
    let threads = args.threads.unwrap_or(cpus.len()).max(1);
    let other_pid = match std::env::var("ANTINOMIE_OTHER_PID") {
        Ok(v) => match v.parse() {
            Ok(pid) => pid,
            Err(e) => {
                eprintln!("antinomie-workload: random: ANTINOMIE_OTHER_PID={v:?}: {e}");
                return ExitCode::FAILURE;
            }
        },
        Err(_) => 1,
    };
    let tracepoint_id = args.tracepoint_id.unwrap_or_else(|| {
        TRACEPOINT_ID_PATHS
            .iter()
            .find_map(|p| std::fs::read_to_string(p).ok()?.trim().parse().ok())
            .unwrap_or(NO_SUCH_TRACEPOINT)
    });
    eprintln!(
        "antinomie-workload: random: another user's task: pid {other_pid}; tracepoint id {tracepoint_id}"
    );
    let around = Surroundings {
        cpus,
        tracepoint_id,
        other_pid,
    };
    let results = stream_threads(threads, &around.cpus, |thread, cpu, lines| {
        // The first N % T threads make one call more.
        let index = usize::try_from(thread - 1).expect("a u32 fits in usize");
        let calls = args.calls / threads + usize::from(index < args.calls % threads);
        thread_calls(args.seed, thread, cpu, &around, calls, lines)
    });
    if let Some(results) = results {
        let ok: usize = results.iter().flatten().sum();
        eprintln!(
            "antinomie-workload: random: seed {}, {} calls over {threads} threads, {ok} succeeded",
            args.seed, args.calls
        );
    }
    ExitCode::SUCCESS
}
