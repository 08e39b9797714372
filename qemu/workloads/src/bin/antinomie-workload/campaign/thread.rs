// SPDX-License-Identifier: GPL-2.0-only
//! A calling thread's side of a pass: its group leader, then its calls
//! epoch by epoch, each issued and reduced to what it did ([`Outcome`]).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Barrier, RwLock};

use crate::call::{Attr, PERF_COUNT_SW_CPU_CLOCK, PERF_FLAG_FD_CLOEXEC};
use crate::random::{Rng, BAD_FD};

use super::arena::{place, Arena, N7};
use super::draw::{draw, Allocating, Call, Group, Place};
use super::inject::Allocators;
use super::{STREAM_BASE, STREAM_FAULT};

/// How many of a call's first injection points `fail-nth` picks from.
pub(super) const FAIL_NTH_MAX: u64 = 6;

/// What a call did that a capture must not change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Outcome {
    /// `-errno`; `FD` or `FD_CLOEXEC` for a new fd.
    pub(super) ret: i64,
    /// Userfaultfd page faults during the call.
    pub(super) uffd_faults: u64,
    /// Digest of the placed bytes after the call (0 for NULL).
    pub(super) memory: u64,
    /// False for the racing writer's calls.
    pub(super) compared: bool,
    /// The fault-injection slot the call was given (`fail-nth`, 0: none).
    pub(super) fail_nth: u32,
    /// What `fail-nth` read after the call: 0 once the fault was injected,
    /// else the slots the call did not reach. A capture that takes a slot
    /// of its own moves the injected fault, and this changes.
    pub(super) fail_nth_left: u32,
    /// Whether the attr's placement allocates on its first read (the
    /// same in every pass).
    pub(super) allocating: Allocating,
    /// The allocators' injection setting of the call's epoch (the same in
    /// every pass; `None` where they are no injection points).
    pub(super) allocators: Option<Allocators>,
}

const RET_FD: i64 = 1;
const RET_FD_CLOEXEC: i64 = 2;

fn digest(bytes: &[u8]) -> u64 {
    // FNV-1a over 8-byte words, then the length.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        h = (h ^ u64::from_le_bytes(c.try_into().expect("8 bytes"))).wrapping_mul(0x100_0000_01b3);
    }
    for &b in chunks.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    }
    (h ^ bytes.len() as u64).wrapping_mul(0x100_0000_01b3)
}

/// What a calling thread shares with the others.
#[derive(Debug)]
pub(super) struct Shared {
    pub(super) seed: u64,
    /// Draw fault injection (`/proc/thread-self/fail-nth`) into the calls.
    pub(super) fault_injection: bool,
    /// Per epoch, the allocators' setting the main thread applied (`None`
    /// where the allocators are no injection points).
    pub(super) allocators: Vec<Option<Allocators>>,
    pub(super) cpus: Vec<u32>,
    /// Per thread, its leader's fd for the current pass.
    pub(super) leaders: Vec<AtomicI32>,
    pub(super) barrier: Barrier,
    /// Taken for writing by a call armed with `fail-nth`, for reading by
    /// every other call, from its placement to the close of its fd: an
    /// armed call runs alone among the campaign's calls. The injection
    /// points it takes must not depend on what the other threads' calls
    /// hold at that moment: a software event's per-CPU lists, the
    /// callchain buffers, the context of pid 1 exist while any event
    /// holds them, and the call that finds them missing allocates them.
    pub(super) alone: RwLock<()>,
    /// Per epoch, how many calls each thread makes.
    pub(super) burst: usize,
    pub(super) epochs: usize,
}

/// The calling thread's `/proc/thread-self/fail-nth`: a number written
/// there makes the thread's Nth fault-injection point from then on fail
/// (`Documentation/fault-injection/fault-injection.rst`); it reads 0 once
/// that happened. The file's own user copies are injection points too:
/// reading it or writing it counts down what is left, and fails with
/// EFAULT when it takes the last slot.
pub(super) struct FailNth(File);

impl FailNth {
    pub(super) const PATH: &'static str = "/proc/thread-self/fail-nth";

    /// Opens the calling thread's file.
    fn open() -> Result<Self, String> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .open(Self::PATH)
            .map(Self)
            .map_err(|e| format!("{}: {e}", Self::PATH))
    }

    /// Arms `n` (0 disarms). Disarming fails with EFAULT when its own
    /// copy takes the last slot, which disarms too.
    fn set(&self, n: u32) {
        // The file takes a whole number per write, at offset 0.
        match self.0.write_at(n.to_string().as_bytes(), 0) {
            Ok(_) => {}
            Err(e) if n == 0 && e.raw_os_error() == Some(libc::EFAULT) => {}
            Err(e) => {
                eprintln!("campaign: FAIL writing {n} to {}: {e}", Self::PATH);
                std::process::exit(1);
            }
        }
    }

    /// What is left (0: the fault was injected), then disarmed.
    fn take(&self) -> u32 {
        let mut buf = [0u8; 16];
        let left = match self.0.read_at(&mut buf, 0) {
            // The value is read before the read's own copy counts down.
            Ok(n) => std::str::from_utf8(&buf[..n])
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or_else(|| {
                    eprintln!("campaign: FAIL {} is not a number", Self::PATH);
                    std::process::exit(1);
                }),
            // The read's own copy took the last slot: 1 was left.
            Err(e) if e.raw_os_error() == Some(libc::EFAULT) => return 1,
            Err(e) => {
                eprintln!("campaign: FAIL reading {}: {e}", Self::PATH);
                std::process::exit(1);
            }
        };
        if left != 0 {
            // Not reached: the next syscall must not take it.
            self.set(0);
        }
        left
    }
}

/// A worker cannot fail alone (the others wait at the barrier): the
/// process ends.
fn fail(why: &str) -> ! {
    eprintln!("campaign: FAIL {why}");
    std::process::exit(1);
}

/// Makes one call and returns what it did; with `fail_nth` a fault is
/// injected at that fault-injection point of the call.
fn issue(arena: &Arena, call: &Call, group_fd: i32, fail_nth: Option<(&FailNth, u32)>) -> Outcome {
    // A memfd or a shared page is made here, before fail-nth is armed.
    let (ptr, placed) = place(arena, call).unwrap_or_else(|why| fail(&why));
    // ATOMICS: Acquire pairs with the handler's Release increment.
    let faults0 = arena.faults.load(Ordering::Acquire);
    // Last before the call: the thread's next fault-injection points
    // count from here.
    if let Some((f, n)) = fail_nth {
        f.set(n);
    }
    // SAFETY: ptr is NULL or points into this thread's arena, laid out so
    // that every byte the kernel may read is mapped, served by the
    // userfaultfd handler, or followed by an unmapped page; the kernel may
    // write back the u32 at offset 4 there. A new fd is this process's.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            ptr,
            libc::c_long::from(call.pid),
            libc::c_long::from(call.cpu),
            libc::c_long::from(group_fd),
            call.flags,
        )
    };
    let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
    let faults = arena.faults.load(Ordering::Acquire) - faults0;
    let fail_nth_left = fail_nth.map_or(0, |(f, _)| f.take());
    let ret = if ret < 0 {
        -i64::from(errno)
    } else {
        let fd = i32::try_from(ret).expect("an fd");
        // SAFETY: fd is the new perf event fd this process owns; closed here.
        let cloexec = unsafe {
            let fl = libc::fcntl(fd, libc::F_GETFD);
            libc::close(fd);
            fl >= 0 && fl & libc::FD_CLOEXEC != 0
        };
        if cloexec {
            RET_FD_CLOEXEC
        } else {
            RET_FD
        }
    };
    let memory = if placed == 0 {
        0
    } else {
        // SAFETY: the placed range is mapped (userfaultfd pages fault in
        // from the staging copy, after the count above was taken).
        digest(unsafe { std::slice::from_raw_parts(ptr as *const u8, placed) })
    };
    let reset = match call.place {
        Place::UffdBefore { .. } | Place::UffdAfter { .. } => arena.unpopulate(),
        // Gone only now, after fail-nth was read back and disarmed.
        Place::MemfdHole { .. } | Place::SharedPage => arena.close_windows(),
        _ => Ok(()),
    };
    reset.unwrap_or_else(|why| fail(&why));
    Outcome {
        ret,
        uffd_faults: faults,
        memory,
        compared: !matches!(call.place, Place::Racy { .. }),
        fail_nth: fail_nth.map_or(0, |(_, n)| n),
        fail_nth_left,
        allocating: call.place.allocating(),
        allocators: None,
    }
}

/// The calls of thread `t` in epoch `e`.
pub(super) fn epoch_calls(calls_of_thread: usize, burst: usize, e: usize) -> usize {
    calls_of_thread.saturating_sub(e * burst).min(burst)
}

pub(super) fn calls_of_thread(calls: usize, threads: usize, t: usize) -> usize {
    calls / threads + usize::from(t < calls % threads)
}

/// One thread's pass: its leader, then its calls, epoch by epoch, in step
/// with the main thread. Returns its tid (what the tracers record) and its
/// outcomes.
pub(super) fn thread_pass(
    shared: &Shared,
    arena: &Arena,
    t: usize,
    calls: usize,
) -> (u32, Vec<Outcome>) {
    // SAFETY: gettid(2) has no preconditions.
    let tid = u32::try_from(unsafe { libc::gettid() }).expect("a tid");
    let threads = shared.leaders.len();
    let leader_attr = {
        let mut a = Attr::sw(PERF_COUNT_SW_CPU_CLOCK);
        a.size(136);
        a.build()
    };
    let p = arena.page(N7) - leader_attr.len();
    // SAFETY: R6 is read-write; 136 bytes before N7.
    unsafe { std::ptr::copy_nonoverlapping(leader_attr.as_ptr(), p as *mut u8, 136) };
    // SAFETY: a valid 136-byte attr; the new fd is kept until the end.
    let leader = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            p,
            libc::c_long::from(0),
            libc::c_long::from(-1),
            libc::c_long::from(-1),
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    let leader = i32::try_from(leader)
        .ok()
        .filter(|&fd| fd >= 0)
        .unwrap_or(BAD_FD);
    // ATOMICS: Relaxed: the barrier orders it before the others' reads.
    shared.leaders[t].store(leader, Ordering::Relaxed);
    shared.barrier.wait();
    let mut rng = Rng::new(
        shared.seed,
        STREAM_BASE + 1 + u32::try_from(t).expect("few threads"),
    );
    // Fault injection from a stream of its own, so that the calls drawn
    // are the same with it and without.
    let mut fault_rng = Rng::new(
        shared.seed,
        STREAM_FAULT + u32::try_from(t).expect("few threads"),
    );
    let fail_file = shared.fault_injection.then(|| {
        FailNth::open().unwrap_or_else(|why| {
            eprintln!("campaign: FAIL {why}");
            std::process::exit(1);
        })
    });
    let mut out = Vec::with_capacity(calls);
    for e in 0..shared.epochs {
        shared.barrier.wait();
        for _ in 0..epoch_calls(calls, shared.burst, e) {
            let call = draw(&mut rng, &shared.cpus);
            // ATOMICS: Relaxed: stored before the setup barrier.
            let leader_of = |u: usize| shared.leaders[u % threads].load(Ordering::Relaxed);
            let group_fd = match call.group {
                Group::None => -1,
                Group::Own => leader,
                Group::Other(n) => leader_of(t + n),
                Group::Bad => BAD_FD,
                Group::NotPerf => arena.uffd,
            };
            // One call in ten, one of its first six injection points.
            let fail_nth = fail_file.as_ref().and_then(|f| {
                fault_rng.percent(10).then(|| {
                    let n = 1 + fault_rng.below(FAIL_NTH_MAX);
                    (f, u32::try_from(n).expect("a few"))
                })
            });
            let outcome = if fail_nth.is_some() {
                let _alone = shared.alone.write().expect("no call panicked");
                issue(arena, &call, group_fd, fail_nth)
            } else {
                let _others = shared.alone.read().expect("no call panicked");
                issue(arena, &call, group_fd, fail_nth)
            };
            out.push(Outcome {
                allocators: shared.allocators[e],
                ..outcome
            });
        }
        shared.barrier.wait();
    }
    if leader != BAD_FD {
        // SAFETY: this thread's leader fd, not used after this.
        unsafe { libc::close(leader) };
    }
    (tid, out)
}
