//! `antinomie-workload campaign --seed S --calls N [--threads T] [--burst B]
//! [--passes off,on]`: the randomized campaign of the debug kernel
//! (`qemu/scenarios/campaign`, `scripts/campaign.sh`).
//!
//! T threads (default 4), each pinned to one CPU, make N `perf_event_open(2)`
//! calls per pass between them, drawn from the seed; every pass makes the
//! same calls, in the same order per thread. Per call it draws:
//!
//! * the declared size: a boundary (`BOUNDARY_SIZES`: 0, 1, 63–65, the `VER*`
//!   sizes, 135–137, 200, 4095–4097) or any size in 0..=4097, and above 136
//!   a zero or non-zero tail; the attr itself as `antinomie-workload random`
//!   does (software events, other types, random bytes; never a flag that
//!   counts, signals or acts on exec);
//! * where it lies: NULL; the readable bytes ending exactly where the kernel
//!   stops reading, before, inside the size word or a little after, followed
//!   by an unmapped page; starting a few bytes before the end of a
//!   userfaultfd-registered page (the kernel reads that page only when it
//!   reads the attr's head, not when it refuses the size or the tail first);
//!   ending in a userfaultfd-registered page (exactly where the kernel stops
//!   reading, or anywhere before), followed by an unmapped page; or in a
//!   buffer the racing writer thread rewrites during the call;
//! * pid (0, -1, 1, none), cpu (-1, an online one, an invalid one), group fd
//!   (none, the thread's leader, another thread's leader, a bad fd, a file
//!   that is no perf event) and flags (valid ones, every combination of the
//!   four, or random bits).
//!
//! Each thread opens a group leader before the first burst (with capture
//! off) and keeps it for the whole pass; every other fd is closed at once.
//!
//! The calls run in bursts of B calls per thread. Between two bursts, with
//! every thread waiting, the main thread changes the device as the epoch's
//! plan (drawn from the seed too) says: in a pass `on`, most epochs resize
//! the rings (4 KiB to 1 MiB; the small ones lose records under load) and
//! run `reader --follow --enable` through the burst; the others switch
//! capture off and check that the rings then record nothing. In a pass
//! `off` capture stays off throughout.
//!
//! Checks, each failing the run with a line that says what differed:
//!
//! * accounting, per capture epoch and CPU: the reader consumed exactly what
//!   the kernel says it produced (`GET_COUNTERS` after the reader exited,
//!   and the reader's own summary), and produced + lost = 2 records per call
//!   the threads pinned to that CPU made, so every call is accounted for,
//!   captured or counted lost; no bad-consumer loss, no skipped record;
//! * the differential: per call, the pass `on` must give what the first
//!   pass gave: the same result (`-errno`, or a new fd with or without
//!   `FD_CLOEXEC`: fd numbers depend on the other threads), the same user
//!   memory afterwards (a digest of every byte placed for the call: the
//!   kernel writes `attr.size` back on `E2BIG`, the capture must write
//!   nothing) and the same number of userfaultfd page faults (a capture that
//!   reads a byte the kernel does not read adds a fault);
//! * no fd leaks: a pass ends with the fds it started with.
//!
//! The racing writer's calls are drawn from the seed like the others, so
//! every pass makes them at the same positions; their result depends on
//! the writer's timing, so they are counted in the accounting but left out
//! of the differential (nothing else about them is compared).
//!
//! `--test-break outcome|accounting` breaks the check on purpose (test
//! only): `outcome` changes the recorded result of one call of the last
//! pass, `accounting` forgets one call in the first capture epoch's count.

use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use antinomie_abi as abi;
use clap::{Parser, ValueEnum};

use super::random::{
    attr_bytes, kernel_reads, AttrKind, Rng, BAD_CPU, BAD_FD, BOUNDARY_SIZES, FORBIDDEN,
    NO_SUCH_PID,
};
use super::system::{ioctl_with, map_anonymous, online_cpus, pin, protect_none, uffd};
use super::{Attr, DISABLED, PAGE, PERF_COUNT_SW_CPU_CLOCK, PERF_FLAG_FD_CLOEXEC};

/// Streams of the seed: the plan uses `STREAM_BASE`, thread t `STREAM_BASE + t`
/// (the `random` workload uses 1..=T, so the same seed draws other calls).
const STREAM_BASE: u32 = 0x100;
/// The ring sizes an epoch picks from, with their weights.
const RING_SIZES: [(u64, u64); 4] = [(30, 4096), (20, 16384), (30, 65536), (20, 1 << 20)];

/// The arena's pages (one mapping per thread): the userfaultfd window
/// `U0 R1 R2 U3 N4`, the guarded window `R5 R6 N7` and the racing writer's
/// page `R8 N9`. U: registered for missing-page faults; R: read-write;
/// N: `PROT_NONE`.
const U0: usize = 0;
const R1: usize = 1;
const U3: usize = 3;
const N4: usize = 4;
const N7: usize = 7;
const R8: usize = 8;
const N9: usize = 9;
const ARENA_PAGES: usize = 10;

/// The campaign's options.
#[derive(Debug, Parser)]
#[command(name = "antinomie-workload campaign")]
struct Args {
    /// The seed: the same seed makes the same calls and the same plan.
    #[arg(long)]
    seed: u64,
    /// Calls per pass, shared between the threads (the leaders come on top).
    #[arg(long)]
    calls: usize,
    /// Calling threads, pinned one per online CPU (round robin).
    #[arg(long, default_value_t = 4)]
    threads: usize,
    /// Calls per thread between two device changes.
    #[arg(long, default_value_t = 1000)]
    burst: usize,
    /// The passes, in order; every later pass is compared with the first.
    #[arg(long, value_delimiter = ',', default_value = "off,on")]
    passes: Vec<PassKind>,
    /// The reader binary run with `--follow --enable` in capture epochs.
    #[arg(long, default_value = "reader")]
    reader: PathBuf,
    /// The capture device.
    #[arg(long, default_value = "/dev/antinomie")]
    device: PathBuf,
    /// Test only: break one check on purpose, to see it fail.
    #[arg(long)]
    test_break: Option<Break>,
}

/// What a pass does with the capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PassKind {
    /// Capture off throughout (the reference).
    Off,
    /// Capture on (with `reader --follow`) in most epochs, per the plan.
    On,
}

/// A check to break on purpose (`--test-break`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Break {
    /// Record a wrong result for one call of the last pass.
    Outcome,
    /// Forget one call in the first capture epoch's accounting.
    Accounting,
}

/// What the device does during one burst of a pass `on`.
#[derive(Debug, Clone, Copy)]
struct Epoch {
    capture: bool,
    ring_size: u64,
}

fn plan(seed: u64, epochs: usize) -> Vec<Epoch> {
    let mut rng = Rng::new(seed, STREAM_BASE);
    (0..epochs)
        .map(|e| {
            let off = rng.percent(20);
            Epoch {
                capture: e == 0 || !off,
                ring_size: rng.weighted(&RING_SIZES),
            }
        })
        .collect()
}

/// Where the attr lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Null,
    /// `readable` bytes, then the unmapped page N7.
    Guarded {
        readable: usize,
    },
    /// The first `k` bytes at the end of the userfaultfd page U0, the rest
    /// in R1 and R2.
    UffdBefore {
        k: usize,
    },
    /// `j` bytes at the end of R2, the rest in the userfaultfd page U3,
    /// then the unmapped page N4.
    UffdAfter {
        j: usize,
    },
    /// `readable` bytes before N9, in the page the racing writer rewrites.
    Racy {
        readable: usize,
    },
}

/// Which fd the call passes as `group_fd`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    None,
    Own,
    /// The leader of thread (this + n) mod T.
    Other(usize),
    Bad,
    /// This thread's userfaultfd: an fd that is no perf event.
    NotPerf,
}

/// One drawn call; drawing has no side effect, so a call can be drawn
/// again to describe it.
#[derive(Debug, Clone)]
struct Call {
    size: u32,
    kind: AttrKind,
    /// The bytes placed at the pointer (`Null`: none).
    bytes: Vec<u8>,
    place: Place,
    pid: i32,
    cpu: i32,
    group: Group,
    flags: u64,
}

impl Call {
    /// The kind of call and of difference, to sum differences up by.
    fn class(&self, a: &Outcome, b: &Outcome) -> String {
        let reads = kernel_reads(self.size);
        let place = match self.place {
            Place::Null => "NULL".to_owned(),
            Place::Guarded { readable } if readable < reads => "guarded, cut short".to_owned(),
            Place::Guarded { .. } => "guarded".to_owned(),
            Place::UffdBefore { k } if k <= 4 => "uffd page before, k <= 4".to_owned(),
            Place::UffdBefore { k } if k <= 8 => "uffd page before, k 5..=8".to_owned(),
            Place::UffdBefore { .. } => "uffd page before, k > 8".to_owned(),
            Place::UffdAfter { j } if j == reads => "uffd page after, at the end".to_owned(),
            Place::UffdAfter { .. } => "uffd page after".to_owned(),
            Place::Racy { .. } => "racy".to_owned(),
        };
        let size = match self.size {
            0 => "0",
            1..=63 => "1..=63",
            64..=136 => "64..=136",
            137..=4096 => "137..=4096",
            _ => "> 4096",
        };
        let tail = if reads > 136
            && self.bytes.len() >= reads
            && self.bytes[136..reads].iter().any(|&b| b != 0)
        {
            ", non-zero tail"
        } else {
            ""
        };
        let what = |x: u64, y: u64, name: &str| {
            if x == y {
                String::new()
            } else {
                format!(", {name} {x} -> {y}")
            }
        };
        format!(
            "[{place}, size {size}{tail}: ret {} -> {}{}{}]",
            a.ret,
            b.ret,
            what(a.uffd_faults, b.uffd_faults, "uffd faults"),
            if a.memory == b.memory {
                ""
            } else {
                ", memory differs"
            }
        )
    }

    fn describe(&self) -> String {
        format!(
            "size {} {:?} attr at {:?}, pid {}, cpu {}, group {:?}, flags {:#x}",
            self.size, self.kind, self.place, self.pid, self.cpu, self.group, self.flags
        )
    }
}

fn draw(rng: &mut Rng, cpus: &[u32]) -> Call {
    let size = if rng.percent(70) {
        BOUNDARY_SIZES[rng.index(BOUNDARY_SIZES.len())]
    } else {
        u32::try_from(rng.below(4098)).expect("<= 4097")
    };
    let nonzero_tail = size > 136 && rng.percent(40);
    let kind = rng.weighted(&[
        (70, AttrKind::Software),
        (10, AttrKind::OtherType),
        (20, AttrKind::RandomBytes),
    ]);
    let mut attr: Attr = attr_bytes(rng, kind);
    let reads = kernel_reads(size);
    attr.size(size).len(reads);
    if nonzero_tail && reads > 136 {
        let at = 136 + rng.index(reads - 136);
        attr.0[at] = u8::try_from(1 + rng.below(255)).expect("1..=255");
    }
    let mut bytes = attr.build();
    let place = match rng.below(100) {
        0..=2 => Place::Null,
        3..=49 => {
            let readable = match rng.below(4) {
                0 if reads > 8 => 8 + rng.index(reads - 8),
                1 => rng.index(8),
                2 => {
                    // Junk after the last byte the kernel reads.
                    let extra = 1 + rng.index(64);
                    for _ in 0..extra {
                        bytes.push(u8::try_from(1 + rng.below(255)).expect("1..=255"));
                    }
                    reads + extra
                }
                _ => reads,
            };
            Place::Guarded { readable }
        }
        50..=67 => {
            let k = match rng.below(3) {
                // Only the type field in U0: the size word is not.
                0 => 1 + rng.index(4),
                1 => 5 + rng.index(4),
                _ => 1 + rng.index(reads.min(PAGE)),
            };
            Place::UffdBefore { k }
        }
        68..=94 => {
            let j = match rng.below(3) {
                // U3 starts exactly where the kernel stops reading.
                0 => reads,
                1 => rng.index(9),
                _ => rng.index(reads + 1),
            };
            Place::UffdAfter { j }
        }
        _ => Place::Racy {
            readable: [136, 256, 4096][rng.index(3)],
        },
    };
    let pid = rng.weighted(&[(76, 0), (8, -1), (8, 1), (8, NO_SUCH_PID)]);
    let cpu = match rng.weighted(&[(75, 0), (20, 1), (5, 2)]) {
        0 => -1,
        1 => i32::try_from(cpus[rng.index(cpus.len())]).unwrap_or(BAD_CPU),
        _ => BAD_CPU,
    };
    let group = match rng.below(100) {
        0..=69 => Group::None,
        70..=84 => Group::Own,
        85..=89 => Group::Other(1 + rng.index(3)),
        90..=94 => Group::Bad,
        _ => Group::NotPerf,
    };
    let flags = match rng.weighted(&[(45, 0), (40, 1), (10, 2), (5, 3)]) {
        0 => 0,
        1 => PERF_FLAG_FD_CLOEXEC,
        // Any combination of FD_NO_GROUP, FD_OUTPUT, PID_CGROUP, FD_CLOEXEC.
        2 => rng.below(16),
        _ => rng.u64(),
    };
    Call {
        size,
        kind,
        bytes,
        place,
        pid,
        cpu,
        group,
        flags,
    }
}

/// What a call did that a capture must not change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Outcome {
    /// `-errno`; `FD` or `FD_CLOEXEC` for a new fd.
    ret: i64,
    /// Userfaultfd page faults during the call.
    uffd_faults: u64,
    /// Digest of the placed bytes after the call (0 for NULL).
    memory: u64,
    /// False for the racing writer's calls.
    compared: bool,
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

/// A raw address that threads may share: every access through it is
/// justified where it happens.
#[derive(Debug, Clone, Copy)]
struct Addr(usize);

/// A thread's pages and its userfaultfd.
#[derive(Debug)]
struct Arena {
    base: usize,
    uffd: i32,
    /// What the handler copies into U0 and U3 (two pages), set before
    /// each call.
    staging: Arc<Mutex<Vec<u8>>>,
    faults: Arc<AtomicU64>,
}

impl Arena {
    fn new() -> Result<Self, String> {
        let base = map_anonymous(ARENA_PAGES * PAGE).map_err(|e| format!("mmap: {e}"))?;
        for page in [N4, N7, N9] {
            // The page lies inside the mapping just made.
            protect_none(base.wrapping_add(page * PAGE)).map_err(|e| format!("mprotect: {e}"))?;
        }
        let base = base as usize;
        // SAFETY: userfaultfd(2) takes flags only.
        let raw =
            unsafe { libc::syscall(libc::SYS_userfaultfd, libc::O_CLOEXEC | libc::O_NONBLOCK) };
        let fd = i32::try_from(raw)
            .ok()
            .filter(|fd| *fd >= 0)
            .ok_or_else(|| format!("userfaultfd: {}", std::io::Error::last_os_error()))?;
        let mut api = uffd::Api {
            api: uffd::API,
            features: 0,
            ioctls: 0,
        };
        // SAFETY: UFFDIO_API takes a struct uffdio_api.
        unsafe { ioctl_with(fd, uffd::IOC_API, &mut api) }?;
        let arena = Arena {
            base,
            uffd: fd,
            staging: Arc::new(Mutex::new(vec![0; 2 * PAGE])),
            faults: Arc::new(AtomicU64::new(0)),
        };
        arena.unpopulate()?;
        Ok(arena)
    }

    /// Makes U0 and U3 missing again, for the next call's faults: a fresh
    /// mapping over each, registered again (the guest kernel has no
    /// `madvise()`: `CONFIG_ADVISE_SYSCALLS` is off in tinyconfig).
    fn unpopulate(&self) -> Result<(), String> {
        for page in [U0, U3] {
            let addr = self.page(page);
            // SAFETY: replaces one page of this thread's own arena, which
            // nothing refers to across this call.
            let got = unsafe {
                libc::mmap(
                    addr as *mut _,
                    PAGE,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if got as usize != addr {
                return Err(format!(
                    "mmap MAP_FIXED: {}",
                    std::io::Error::last_os_error()
                ));
            }
            let mut register = uffd::Register {
                start: addr as u64,
                len: PAGE as u64,
                mode: uffd::MODE_MISSING,
                ioctls: 0,
            };
            // SAFETY: UFFDIO_REGISTER takes a struct uffdio_register; the
            // page is part of this thread's arena.
            unsafe { ioctl_with(self.uffd, uffd::IOC_REGISTER, &mut register) }?;
        }
        Ok(())
    }

    fn page(&self, page: usize) -> usize {
        self.base + page * PAGE
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: the arena's own fd and mapping, used by nothing after this.
        unsafe {
            libc::close(self.uffd);
            libc::munmap(self.base as *mut _, ARENA_PAGES * PAGE);
        }
    }
}

/// Serves the arena's userfaultfd until `stop`: counts each fault, then
/// fills the page from the staging copy.
fn serve_faults(
    fd: i32,
    u0: usize,
    u3: usize,
    staging: &Mutex<Vec<u8>>,
    faults: &AtomicU64,
    stop: &AtomicBool,
) -> Result<(), String> {
    // ATOMICS: Relaxed: the flag only ends the loop; nothing is published.
    while !stop.load(Ordering::Relaxed) {
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, 50) };
        if n <= 0 {
            continue;
        }
        // SAFETY: PageFault is plain data; zeroed is a valid value.
        let mut msg: uffd::PageFault = unsafe { std::mem::zeroed() };
        // SAFETY: msg is 32 writable bytes; fd is open until the arena drops,
        // after this thread is joined.
        let got = unsafe { libc::read(fd, std::ptr::from_mut(&mut msg).cast(), 32) };
        if got < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::WouldBlock {
            continue;
        }
        if got != 32 || msg.event != uffd::EVENT_PAGEFAULT {
            return Err(format!(
                "userfaultfd read {got} bytes, event {:#x}",
                msg.event
            ));
        }
        let page = usize::try_from(msg.address).expect("an address") & !(PAGE - 1);
        let which = if page == u0 {
            0
        } else if page == u3 {
            1
        } else {
            return Err(format!("userfaultfd fault at {page:#x}, outside U0/U3"));
        };
        // ATOMICS: Release, before the copy wakes the faulting call: the
        // caller's Acquire load after the call sees the count.
        faults.fetch_add(1, Ordering::Release);
        let src = staging.lock().expect("the staging lock");
        let mut copy = uffd::Copy {
            dst: page as u64,
            src: src[which * PAGE..].as_ptr() as u64,
            len: PAGE as u64,
            mode: 0,
            copy: 0,
        };
        // SAFETY: UFFDIO_COPY takes a struct uffdio_copy; src is a page of
        // the staging buffer, locked; dst the registered page.
        if let Err(e) = unsafe { ioctl_with(fd, uffd::IOC_COPY, &mut copy) } {
            return Err(format!("UFFDIO_COPY: {e}"));
        }
    }
    Ok(())
}

/// The racing writer: rewrites words of every thread's racy page until
/// `stop`, with values that keep every attr harmless (no forbidden flag,
/// `disabled` set, never a breakpoint type).
fn race(pages: &[Addr], stop: &AtomicBool) {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let sizes: [u64; 8] = [0, 1, 64, 128, 136, 137, 200, 4096];
    let types: [u64; 3] = [1, 3, 0xdead];
    // ATOMICS: Relaxed: the flag only ends the loop.
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..16 {
            // xorshift64: the writer's timing is not repeatable anyway.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let value = match x % 4 {
                0 => (sizes[(x >> 8) as usize % 8] << 32) | types[(x >> 16) as usize % 3],
                1 => 0,
                _ => x >> 3,
            };
            let value = (value & !FORBIDDEN) | DISABLED;
            // The last 256 bytes (the 136- and 256-byte attrs) or anywhere.
            let word = if x & (1 << 40) == 0 {
                (PAGE - 256) / 8 + (x >> 41) as usize % 32
            } else {
                (x >> 41) as usize % (PAGE / 8)
            };
            for p in pages {
                // SAFETY: the word lies in that thread's racy page R8,
                // mapped read-write for the whole campaign; the owning
                // thread never reads it, only the kernel does, and an
                // aligned 8-byte store is atomic on x86-64.
                let a = unsafe { AtomicU64::from_ptr((p.0 + word * 8) as *mut u64) };
                // ATOMICS: Relaxed: racing the kernel's read is the point.
                a.store(value, Ordering::Relaxed);
            }
        }
        std::thread::sleep(Duration::from_micros(50));
    }
}

/// What a calling thread shares with the others.
#[derive(Debug)]
struct Shared {
    seed: u64,
    cpus: Vec<u32>,
    /// Per thread, its leader's fd for the current pass.
    leaders: Vec<AtomicI32>,
    barrier: Barrier,
    /// Per epoch, how many calls each thread makes.
    burst: usize,
    epochs: usize,
}

/// Places the call's bytes and returns the pointer and the placed range
/// (start, length) to digest afterwards.
fn place(arena: &Arena, call: &Call) -> (usize, usize) {
    let bytes = &call.bytes;
    match call.place {
        Place::Null => (0, 0),
        Place::Guarded { readable } => {
            let p = arena.page(N7) - readable;
            let n = readable.min(bytes.len());
            // SAFETY: p..p+readable lies in R5..R6 (readable <= 4161 < 2
            // pages), mapped read-write; bytes has n <= readable bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), p as *mut u8, n);
                std::ptr::write_bytes((p + n) as *mut u8, 0, readable - n);
            }
            (p, readable)
        }
        Place::Racy { readable } => {
            let p = arena.page(N9) - readable;
            let mut padded = bytes.clone();
            padded.resize(readable, 0);
            for (i, w) in padded.chunks_exact(8).enumerate() {
                // SAFETY: p + 8 i lies in R8, mapped read-write, 8-aligned
                // (readable is a multiple of 8); the racing writer stores
                // to the same words atomically, so these stores are too.
                let a = unsafe { AtomicU64::from_ptr((p + 8 * i) as *mut u64) };
                // ATOMICS: Relaxed: the kernel reads it during the call;
                // nothing in this process reads it.
                a.store(
                    u64::from_le_bytes(w.try_into().expect("8 bytes")),
                    Ordering::Relaxed,
                );
            }
            (p, 0)
        }
        Place::UffdBefore { k } => {
            let p = arena.page(R1) - k;
            let len = bytes.len();
            let in_u0 = k.min(len);
            let mut st = arena.staging.lock().expect("the staging lock");
            st.fill(0);
            st[PAGE - k..PAGE - k + in_u0].copy_from_slice(&bytes[..in_u0]);
            drop(st);
            // SAFETY: R1 onwards is read-write; len - in_u0 <= 4097 bytes
            // fit in R1..R2.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    bytes[in_u0..].as_ptr(),
                    arena.page(R1) as *mut u8,
                    len - in_u0,
                );
            }
            (p, len)
        }
        Place::UffdAfter { j } => {
            let p = arena.page(U3) - j;
            let len = bytes.len().min(j + PAGE);
            let before = j.min(len);
            // SAFETY: the j <= 4097 bytes before U3 lie in R1..R2, read-write.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p as *mut u8, before) };
            let mut st = arena.staging.lock().expect("the staging lock");
            st.fill(0);
            st[PAGE..PAGE + len - before].copy_from_slice(&bytes[before..len]);
            (p, len)
        }
    }
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
fn epoch_calls(calls_of_thread: usize, burst: usize, e: usize) -> usize {
    calls_of_thread.saturating_sub(e * burst).min(burst)
}

fn calls_of_thread(calls: usize, threads: usize, t: usize) -> usize {
    calls / threads + usize::from(t < calls % threads)
}

/// One thread's pass: its leader, then its calls, epoch by epoch, in step
/// with the main thread.
fn thread_pass(shared: &Shared, arena: &Arena, t: usize, calls: usize) -> Vec<Outcome> {
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
    out
}

/// The device, opened for a moment (it allows one open at a time).
struct Device(std::fs::File);

impl Device {
    fn open(path: &Path) -> Result<Self, String> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map(Device)
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    fn ioctl(&self, cmd: u32, arg: *mut libc::c_void, what: &str) -> Result<(), String> {
        // SAFETY: cmd is one of the device's ioctls and arg points to the
        // argument type its _IOC_SIZE names (or is unused for _IO).
        let rc = unsafe { libc::ioctl(self.0.as_raw_fd(), libc::Ioctl::from(cmd), arg) };
        if rc < 0 {
            Err(format!("{what}: {}", std::io::Error::last_os_error()))
        } else {
            Ok(())
        }
    }

    fn disable(&self) -> Result<(), String> {
        self.ioctl(
            abi::IOC_DISABLE,
            std::ptr::null_mut(),
            "ANTINOMIE_IOC_DISABLE",
        )
    }

    fn set_ring_size(&self, mut size: u64) -> Result<(), String> {
        self.ioctl(
            abi::IOC_SET_RING_SIZE,
            std::ptr::from_mut(&mut size).cast(),
            "ANTINOMIE_IOC_SET_RING_SIZE",
        )
    }

    /// Per possible CPU: (cpu, produced, lost by reason).
    fn counters(&self) -> Result<Vec<(u32, u64, [u64; abi::LOST_NR_SLOTS])>, String> {
        let mut info = abi::Info::default();
        self.ioctl(
            abi::IOC_GET_INFO,
            std::ptr::from_mut(&mut info).cast(),
            "ANTINOMIE_IOC_GET_INFO",
        )?;
        let mut out = Vec::new();
        for cpu in 0..info.cpu_id_limit {
            let mut c = abi::Counters {
                cpu,
                ..abi::Counters::default()
            };
            // A CPU that is not possible has no ring: ENODEV.
            if self
                .ioctl(
                    abi::IOC_GET_COUNTERS,
                    std::ptr::from_mut(&mut c).cast(),
                    "ANTINOMIE_IOC_GET_COUNTERS",
                )
                .is_ok()
            {
                out.push((cpu, c.produced, c.lost));
            }
        }
        Ok(out)
    }
}

/// `reader --follow --enable`, its summary on stderr in a file.
struct Reader {
    child: Child,
    err_path: PathBuf,
}

impl Reader {
    fn start(bin: &Path, err_path: &Path) -> Result<Self, String> {
        let err =
            std::fs::File::create(err_path).map_err(|e| format!("{}: {e}", err_path.display()))?;
        let mut child = Command::new(bin)
            .args(["--follow", "--enable"])
            .stdout(Stdio::null())
            .stderr(err)
            .spawn()
            .map_err(|e| format!("{}: {e}", bin.display()))?;
        let maps = format!("/proc/{}/maps", child.id());
        let t0 = Instant::now();
        // Capture is on once the reader maps the rings (it enables first).
        while !std::fs::read_to_string(&maps).is_ok_and(|m| m.contains("/dev/antinomie")) {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!(
                    "reader --follow exited with {status} before mapping the rings: {}",
                    std::fs::read_to_string(err_path).unwrap_or_default().trim()
                ));
            }
            if t0.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                let _ = child.wait();
                return Err("reader --follow did not map the rings within 60 s".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Reader {
            child,
            err_path: err_path.to_owned(),
        })
    }

    /// SIGINT, wait, and the rows of the summary it printed.
    fn stop(mut self) -> Result<Vec<SummaryRow>, String> {
        let pid = i32::try_from(self.child.id()).expect("a pid");
        // SAFETY: the reader is this process's child, not yet waited for.
        unsafe { libc::kill(pid, libc::SIGINT) };
        let status = self
            .child
            .wait()
            .map_err(|e| format!("waiting for the reader: {e}"))?;
        let text = std::fs::read_to_string(&self.err_path).unwrap_or_default();
        if !status.success() {
            return Err(format!(
                "reader --follow exited with {status}: {}",
                text.trim()
            ));
        }
        let rows: Vec<SummaryRow> = text.lines().filter_map(SummaryRow::parse).collect();
        if rows.is_empty() {
            return Err(format!(
                "no per-CPU rows in the reader's summary: {}",
                text.trim()
            ));
        }
        Ok(rows)
    }
}

/// One CPU row of the reader's summary table.
#[derive(Debug)]
struct SummaryRow {
    cpu: u32,
    produced: u64,
    consumed: u64,
    skipped: u64,
    check: String,
}

impl SummaryRow {
    /// `cpu produced consumed ring_full (reported) bad_cons (reported) skipped check...`
    fn parse(line: &str) -> Option<Self> {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.len() < 9 {
            return None;
        }
        Some(SummaryRow {
            cpu: w[0].parse().ok()?,
            produced: w[1].parse().ok()?,
            consumed: w[2].parse().ok()?,
            skipped: w[7].parse().ok()?,
            check: w[8..].join(" "),
        })
    }
}

/// The running totals of a pass `on`.
#[derive(Debug, Default)]
struct Tally {
    capture_epochs: usize,
    off_epochs: usize,
    calls_captured: u64,
    records_produced: u64,
    records_lost: u64,
    mismatches: Vec<String>,
}

/// Checks one capture epoch: per CPU, the reader consumed what the kernel
/// produced, and produced + lost = 2 records per call made on that CPU.
fn check_epoch(
    e: usize,
    calls_on_cpu: &[(u32, u64)],
    rows: &[SummaryRow],
    counters: &[(u32, u64, [u64; abi::LOST_NR_SLOTS])],
    tally: &mut Tally,
) {
    for &(cpu, produced, lost) in counters {
        let calls = calls_on_cpu
            .iter()
            .filter(|(c, _)| *c == cpu)
            .map(|(_, n)| n)
            .sum::<u64>();
        let lost_all: u64 = lost.iter().sum();
        tally.records_produced += produced;
        tally.records_lost += lost_all;
        let mut why = Vec::new();
        match rows.iter().find(|r| r.cpu == cpu) {
            None => why.push("no row in the reader's summary".to_owned()),
            Some(r) => {
                if r.produced != produced {
                    why.push(format!(
                        "the reader saw produced {} but GET_COUNTERS says {produced}",
                        r.produced
                    ));
                }
                if r.consumed != produced {
                    why.push(format!(
                        "the reader consumed {} of {produced} records produced",
                        r.consumed
                    ));
                }
                if r.skipped != 0 || r.check.contains("STOPPED") {
                    why.push(format!(
                        "the reader skipped {} records ({})",
                        r.skipped, r.check
                    ));
                }
            }
        }
        if produced + lost_all != 2 * calls {
            why.push(format!(
                "produced {produced} + lost {lost_all} != 2 records x {calls} calls made on it"
            ));
        }
        if lost[abi::LOST_BAD_CONSUMER] != 0 {
            why.push(format!(
                "{} records lost to a bad consumer position",
                lost[abi::LOST_BAD_CONSUMER]
            ));
        }
        if !why.is_empty() {
            tally
                .mismatches
                .push(format!("epoch {e}, cpu {cpu}: {}", why.join("; ")));
        }
    }
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count)
}

/// Runs one pass; returns every thread's outcomes.
#[allow(clippy::too_many_lines)]
fn run_pass(
    args: &Args,
    kind: PassKind,
    arenas: &[Arena],
    epochs: &[Epoch],
    cpus: &[u32],
    break_accounting: bool,
    tally: &mut Tally,
) -> Result<Vec<Vec<Outcome>>, String> {
    let threads = args.threads;
    let shared = Shared {
        seed: args.seed,
        cpus: cpus.to_vec(),
        leaders: (0..threads).map(|_| AtomicI32::new(BAD_FD)).collect(),
        barrier: Barrier::new(threads + 1),
        burst: args.burst,
        epochs: epochs.len(),
    };
    let device_present = args.device.exists();
    // Capture off before the leaders are opened; in a pass `off`, the
    // counters must not move (if there is a device).
    let off_counters = if device_present {
        let dev = Device::open(&args.device)?;
        dev.disable()?;
        Some(dev.counters()?)
    } else if kind == PassKind::On {
        return Err(format!(
            "{} is missing: a pass `on` needs it",
            args.device.display()
        ));
    } else {
        None
    };
    let err_path = PathBuf::from(format!("/tmp/campaign-reader.{}.err", std::process::id()));
    let thread_cpu = |t: usize| cpus[t % cpus.len()];
    let mut result = Ok(());
    let outcomes = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let shared = &shared;
                let arena = &arenas[t];
                let calls = calls_of_thread(args.calls, threads, t);
                let cpu = thread_cpu(t);
                s.spawn(move || {
                    let pinned = pin(cpu).is_some();
                    let out = thread_pass(shared, arena, t, calls);
                    (pinned, out)
                })
            })
            .collect();
        shared.barrier.wait(); // the leaders are open
        let mut accounting_broken = !break_accounting;
        for (e, epoch) in epochs.iter().enumerate() {
            let mut reader = None;
            let mut before = None;
            if result.is_ok() && kind == PassKind::On {
                let step = || -> Result<_, String> {
                    let dev = Device::open(&args.device)?;
                    dev.disable()?;
                    if epoch.capture {
                        dev.set_ring_size(epoch.ring_size)?;
                        drop(dev);
                        Ok((Some(Reader::start(&args.reader, &err_path)?), None))
                    } else {
                        Ok((None, Some(dev.counters()?)))
                    }
                };
                match step() {
                    Ok((r, b)) => (reader, before) = (r, b),
                    Err(why) => result = Err(format!("epoch {e}: {why}")),
                }
            }
            shared.barrier.wait(); // the burst starts
            shared.barrier.wait(); // the burst is over
            if result.is_err() {
                continue;
            }
            if let Some(r) = reader {
                tally.capture_epochs += 1;
                let mut calls_on_cpu: Vec<(u32, u64)> = (0..threads)
                    .map(|t| {
                        let n = epoch_calls(calls_of_thread(args.calls, threads, t), args.burst, e);
                        (thread_cpu(t), n as u64)
                    })
                    .collect();
                tally.calls_captured += calls_on_cpu.iter().map(|(_, n)| n).sum::<u64>();
                if !accounting_broken && calls_on_cpu[0].1 > 0 {
                    calls_on_cpu[0].1 -= 1;
                    accounting_broken = true;
                }
                let step = || -> Result<_, String> {
                    let rows = r.stop()?;
                    let dev = Device::open(&args.device)?;
                    dev.disable()?;
                    Ok((rows, dev.counters()?))
                };
                match step() {
                    Ok((rows, counters)) => check_epoch(e, &calls_on_cpu, &rows, &counters, tally),
                    Err(why) => result = Err(format!("epoch {e}: {why}")),
                }
            } else if let Some(b) = before {
                tally.off_epochs += 1;
                match Device::open(&args.device).and_then(|d| d.counters()) {
                    Ok(after) if after == b => {}
                    Ok(after) => tally.mismatches.push(format!(
                        "epoch {e}: capture was off, yet the counters moved from {b:?} to {after:?}"
                    )),
                    Err(why) => result = Err(format!("epoch {e}: {why}")),
                }
            }
        }
        handles
            .into_iter()
            .enumerate()
            .map(|(t, h)| {
                let (pinned, out) = h.join().expect("a campaign thread panicked");
                if !pinned {
                    result = Err(format!(
                        "thread {t} could not pin itself to cpu {}",
                        thread_cpu(t)
                    ));
                }
                out
            })
            .collect::<Vec<_>>()
    });
    result?;
    if let Some(before) = off_counters.filter(|_| kind == PassKind::Off) {
        let after = Device::open(&args.device)?.counters()?;
        if after != before {
            tally.mismatches.push(format!(
                "pass off: capture was off, yet the counters moved from {before:?} to {after:?}"
            ));
        }
    }
    let _ = std::fs::remove_file(&err_path);
    Ok(outcomes)
}

/// Runs the campaign with `args` (`args[0]` is `campaign`).
pub fn main(args: &[String]) -> ExitCode {
    let args = Args::parse_from(args);
    if args.threads == 0 || args.burst == 0 || args.passes.is_empty() {
        eprintln!("antinomie-workload campaign: --threads, --burst and --passes must not be empty");
        return ExitCode::from(2);
    }
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(why) => {
            eprintln!("campaign: FAIL {why}");
            ExitCode::FAILURE
        }
    }
}

#[allow(clippy::too_many_lines)]
fn run(args: &Args) -> Result<bool, String> {
    let cpus = online_cpus();
    let threads = args.threads;
    let most = calls_of_thread(args.calls, threads, 0);
    let epochs = plan(args.seed, most.div_ceil(args.burst).max(1));
    let fds_before = open_fds();
    let arenas = (0..threads)
        .map(|_| Arena::new())
        .collect::<Result<Vec<_>, _>>()?;
    let stop = AtomicBool::new(false);
    let racy: Vec<Addr> = arenas.iter().map(|a| Addr(a.page(R8))).collect();
    println!(
        "campaign: seed {}, {} calls per pass from {threads} threads on {} CPUs, {} epochs of <= {} calls per thread, passes {:?}",
        args.seed,
        args.calls,
        cpus.len(),
        epochs.len(),
        args.burst,
        args.passes
    );
    let mut results: Vec<(PassKind, Vec<Vec<Outcome>>, Duration, Tally)> = Vec::new();
    std::thread::scope(|s| -> Result<(), String> {
        let handlers: Vec<_> = arenas
            .iter()
            .map(|a| {
                let (fd, u0, u3) = (a.uffd, a.page(U0), a.page(U3));
                let (staging, faults, stop) = (&a.staging, &a.faults, &stop);
                s.spawn(move || serve_faults(fd, u0, u3, staging, faults, stop))
            })
            .collect();
        let writer = s.spawn(|| race(&racy, &stop));
        let mut run_all = || -> Result<(), String> {
            for (i, &kind) in args.passes.iter().enumerate() {
                let last = i + 1 == args.passes.len();
                let mut tally = Tally::default();
                let t0 = Instant::now();
                let fds0 = open_fds();
                let break_accounting = args.test_break == Some(Break::Accounting);
                let mut out = run_pass(
                    args,
                    kind,
                    &arenas,
                    &epochs,
                    &cpus,
                    break_accounting,
                    &mut tally,
                )?;
                let took = t0.elapsed();
                // Progress, for long runs (the results follow at the end).
                println!(
                    "campaign: pass {i} ({kind:?}) done in {:.1} s",
                    took.as_secs_f64()
                );
                let fds1 = open_fds();
                if fds1 != fds0 {
                    tally.mismatches.push(format!(
                        "pass {i} ({kind:?}): {fds0} fds open before, {fds1} after"
                    ));
                }
                if last && i > 0 && args.test_break == Some(Break::Outcome) {
                    if let Some(o) = out[0].iter_mut().find(|o| o.compared) {
                        o.ret = if o.ret == -i64::from(libc::EINVAL) {
                            -i64::from(libc::E2BIG)
                        } else {
                            -i64::from(libc::EINVAL)
                        };
                    }
                }
                results.push((kind, out, took, tally));
            }
            Ok(())
        };
        let r = run_all();
        // ATOMICS: Relaxed: the flag only ends the helpers' loops.
        stop.store(true, Ordering::Relaxed);
        writer.join().expect("the racing writer panicked");
        for h in handlers {
            h.join().expect("a userfaultfd handler panicked")?;
        }
        r
    })?;
    drop(arenas);
    let fds_after = open_fds();

    let mut ok = true;
    let (first_kind, reference) = (results[0].0, &results[0].1);
    for (i, (kind, out, took, tally)) in results.iter().enumerate() {
        let calls: usize = out.iter().map(Vec::len).sum();
        let compared: usize = out.iter().flatten().filter(|o| o.compared).count();
        let faults: u64 = out.iter().flatten().map(|o| o.uffd_faults).sum();
        let fds = out.iter().flatten().filter(|o| o.ret > 0).count();
        let mut line = format!(
            "campaign: pass {i} ({kind:?}): {calls} calls (+{threads} leaders) in {:.1} s, {fds} fds opened and closed, {faults} userfaultfd faults, {} racing-writer calls",
            took.as_secs_f64(),
            calls - compared
        );
        if *kind == PassKind::On {
            let _ = write!(
                line,
                "; {} capture epochs ({} calls: {} records produced and consumed, {} lost), {} epochs with capture off",
                tally.capture_epochs,
                tally.calls_captured,
                tally.records_produced,
                tally.records_lost,
                tally.off_epochs
            );
        }
        println!("{line}");
        println!(
            "campaign: pass {i} ({kind:?}): {} counter mismatches",
            tally.mismatches.len()
        );
        for m in tally.mismatches.iter().take(20) {
            println!("campaign: MISMATCH pass {i} ({kind:?}): {m}");
        }
        ok &= tally.mismatches.is_empty();
        if i == 0 {
            continue;
        }
        let mut differences = 0usize;
        let mut classes = std::collections::BTreeMap::<String, usize>::new();
        for (t, (a, b)) in reference.iter().zip(out).enumerate() {
            if a.len() != b.len() {
                println!(
                    "campaign: DIFFERENCE thread {t}: {} calls vs {}",
                    a.len(),
                    b.len()
                );
                differences += 1;
            }
            let mut rng = None;
            let mut drawn = 0usize;
            let mut call = None;
            for (k, (x, y)) in a.iter().zip(b).enumerate() {
                if !(x.compared && y.compared) || x == y {
                    continue;
                }
                differences += 1;
                // Draw again up to call k to say what it was.
                let rng = rng.get_or_insert_with(|| {
                    Rng::new(
                        args.seed,
                        STREAM_BASE + 1 + u32::try_from(t).expect("few threads"),
                    )
                });
                while drawn <= k {
                    call = Some(draw(rng, &cpus));
                    drawn += 1;
                }
                let call = call.as_ref().expect("drawn");
                *classes.entry(call.class(x, y)).or_insert(0) += 1;
                if differences > 20 {
                    continue;
                }
                println!(
                    "campaign: DIFFERENCE thread {t} call {k} ({}): pass 0 ({first_kind:?}) ret {} uffd faults {} memory {:#018x}, pass {i} ({kind:?}) ret {} uffd faults {} memory {:#018x}",
                    call.describe(),
                    x.ret,
                    x.uffd_faults,
                    x.memory,
                    y.ret,
                    y.uffd_faults,
                    y.memory
                );
            }
        }
        for (class, n) in &classes {
            println!("campaign: DIFFERENCES {n} x {class}");
        }
        println!(
            "campaign: pass {i} ({kind:?}) vs pass 0 ({first_kind:?}): {differences} differences"
        );
        ok &= differences == 0;
    }
    if fds_after != fds_before {
        println!("campaign: FAIL {fds_before} fds open at the start, {fds_after} at the end");
        ok = false;
    }
    println!("campaign: {}", if ok { "passed" } else { "FAILED" });
    Ok(ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_repeat_with_the_seed_and_cover_every_place() {
        let cpus = [0, 1, 2, 3];
        let mut a = Rng::new(7, STREAM_BASE + 1);
        let mut b = Rng::new(7, STREAM_BASE + 1);
        let mut places = std::collections::HashSet::new();
        for _ in 0..5000 {
            let (x, y) = (draw(&mut a, &cpus), draw(&mut b, &cpus));
            assert_eq!(x.describe(), y.describe());
            assert_eq!(x.bytes, y.bytes);
            places.insert(std::mem::discriminant(&x.place));
        }
        assert_eq!(places.len(), 5);
    }
}
