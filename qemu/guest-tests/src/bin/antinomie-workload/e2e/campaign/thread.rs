//! A calling thread's side of a pass: its group leader, then its calls
//! epoch by epoch, each issued and reduced to what it did ([`Outcome`]).

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Barrier;

use crate::e2e::random::{Rng, BAD_FD};
use crate::e2e::{Attr, PERF_COUNT_SW_CPU_CLOCK, PERF_FLAG_FD_CLOEXEC};

use super::arena::{place, Arena, N7};
use super::draw::{draw, Call, Group, Place};
use super::STREAM_BASE;

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
    pub(super) cpus: Vec<u32>,
    /// Per thread, its leader's fd for the current pass.
    pub(super) leaders: Vec<AtomicI32>,
    pub(super) barrier: Barrier,
    /// Per epoch, how many calls each thread makes.
    pub(super) burst: usize,
    pub(super) epochs: usize,
}

/// Makes one call and returns what it did.
fn issue(arena: &Arena, call: &Call, group_fd: i32) -> Outcome {
    let (ptr, placed) = place(arena, call);
    // ATOMICS: Acquire pairs with the handler's Release increment.
    let faults0 = arena.faults.load(Ordering::Acquire);
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
    if matches!(
        call.place,
        Place::UffdBefore { .. } | Place::UffdAfter { .. }
    ) {
        if let Err(why) = arena.unpopulate() {
            // A worker cannot fail alone (the others wait at the barrier).
            eprintln!("campaign: FAIL {why}");
            std::process::exit(1);
        }
    }
    Outcome {
        ret,
        uffd_faults: faults,
        memory,
        compared: !matches!(call.place, Place::Racy { .. }),
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
            out.push(issue(arena, &call, group_fd));
        }
        shared.barrier.wait();
    }
    if leader != BAD_FD {
        // SAFETY: this thread's leader fd, not used after this.
        unsafe { libc::close(leader) };
    }
    (tid, out)
}
