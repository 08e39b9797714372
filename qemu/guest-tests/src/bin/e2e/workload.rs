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

pub mod campaign;
pub mod random;

use std::sync::atomic::AtomicU64;
use std::sync::Mutex;

use serde::Serialize;

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
    /// The attr bytes as the kernel's own copy read them, when the
    /// workload changed them during the call (a double fetch): the first
    /// 136 bytes, in hex. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_attr_hex: Option<String>,
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

/// What `attr_uptr` is.
#[derive(Debug, Clone)]
enum Ptr {
    Null,
    /// These bytes, of which the first `readable` are mapped and the rest
    /// would lie in the unmapped guard page (so they are not placed).
    Guarded {
        bytes: Vec<u8>,
        readable: usize,
    },
}

impl Ptr {
    /// All of `bytes` readable, ending right before the guard page.
    fn at_page_end(bytes: Vec<u8>) -> Self {
        let readable = bytes.len();
        Ptr::Guarded { bytes, readable }
    }
}

/// A mapping of whole pages whose last page is `PROT_NONE`.
#[derive(Debug)]
struct Guarded {
    base: *mut u8,
    len: usize,
}

impl Guarded {
    /// Room for `readable` bytes right before a guard page.
    fn new(readable: usize) -> Self {
        let pages = readable.div_ceil(PAGE) + 1;
        let len = pages * PAGE;
        let base = map_anonymous(len).unwrap_or_else(|e| panic!("mmap of {len} bytes failed: {e}"));
        // The last page lies inside the mapping just made.
        protect_none(base.wrapping_add(len - PAGE))
            .unwrap_or_else(|e| panic!("mprotect of the guard page failed: {e}"));
        Guarded { base, len }
    }

    /// The first byte of the guard page.
    fn guard(&self) -> *mut u8 {
        // SAFETY: len >= PAGE, so the result is inside the mapping.
        unsafe { self.base.add(self.len - PAGE) }
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: base/len are exactly the mapping made in new().
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// A new anonymous private read-write mapping of `len` bytes, at an
/// address of the kernel's choosing.
fn map_anonymous(len: usize) -> std::io::Result<*mut u8> {
    // SAFETY: a new mapping; no existing memory is affected.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(base.cast())
}

/// Makes the page at `page` (page-aligned, inside a mapping of this
/// process that nothing else refers to) inaccessible.
fn protect_none(page: *mut u8) -> std::io::Result<()> {
    // SAFETY: mprotect() only changes the page's protection; the caller
    // owns the mapping.
    if unsafe { libc::mprotect(page.cast(), PAGE, libc::PROT_NONE) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// `CLOCK_MONOTONIC` in ns.
fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec to write to.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    #[allow(clippy::cast_sign_loss)]
    let ns = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
    ns
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Pins the calling thread to `cpu`; `None` if that is not possible.
fn pin(cpu: u32) -> Option<u32> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: CPU_SET on a valid set with an index below CPU_SETSIZE.
    unsafe { libc::CPU_SET(cpu as usize, &mut set) };
    // SAFETY: 0 is the calling thread; set is a valid cpu_set_t.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) };
    (rc == 0).then_some(cpu)
}

/// The CPUs this process may run on.
pub fn online_cpus() -> Vec<u32> {
    // SAFETY: as in pin().
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: 0 is this thread; set is a valid cpu_set_t to fill.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
    if rc != 0 {
        return vec![0];
    }
    (0..1024u32)
        // SAFETY: CPU_ISSET on a valid set with an index below CPU_SETSIZE.
        .filter(|&c| unsafe { libc::CPU_ISSET(c as usize, &set) })
        .collect()
}

/// One thread's calling context.
#[derive(Debug)]
struct Caller {
    script: &'static str,
    script_id: u64,
    thread: u32,
    seq: u32,
    pinned_cpu: Option<u32>,
    records: Vec<E2eRecord>,
}

impl Caller {
    fn new(script: &'static str, script_id: u64, thread: u32, cpu: Option<u32>) -> Self {
        Caller {
            script,
            script_id,
            thread,
            seq: 0,
            pinned_cpu: cpu.and_then(pin),
            records: Vec::new(),
        }
    }

    /// The unique tag of the next call, passed as argument word 5:
    /// 0xa5, the script, the thread and the sequence number.
    fn tag(&self) -> u64 {
        (0xa5 << 56) | (self.script_id << 40) | (u64::from(self.thread) << 24) | u64::from(self.seq)
    }

    /// Issues one call and logs it; returns the raw return value. The
    /// int arguments are passed as sign-extended 64-bit words, as a
    /// `long` would be.
    fn call(
        &mut self,
        case: &str,
        ptr: &Ptr,
        pid: i32,
        cpu: i32,
        group_fd: i32,
        flags: u64,
    ) -> i64 {
        #[allow(clippy::cast_sign_loss)]
        let word = |v: i32| i64::from(v) as u64;
        self.call_words(case, ptr, [word(pid), word(cpu), word(group_fd)], flags)
    }

    /// Issues one call with these raw words for `pid`, `cpu` and
    /// `group_fd` (the kernel takes each int from the low 32 bits).
    fn call_words(&mut self, case: &str, ptr: &Ptr, ints: [u64; 3], flags: u64) -> i64 {
        let mapping;
        let (attr_ptr, attr) = match ptr {
            Ptr::Null => (std::ptr::null_mut::<u8>(), None),
            Ptr::Guarded { bytes, readable } => {
                mapping = Guarded::new(*readable);
                let n = (*readable).min(bytes.len());
                // SAFETY: the `readable` bytes before the guard page are
                // mapped read-write; n <= readable.
                let p = unsafe { mapping.guard().sub(*readable) };
                // SAFETY: p..p+n lies in that writable range; bytes has n bytes.
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, n) };
                // SAFETY: p..p+readable is mapped and initialised (zero
                // from mmap, then the copy).
                let seen = unsafe { std::slice::from_raw_parts(p, *readable) };
                (
                    p,
                    Some(AttrMemory {
                        hex: hex(seen),
                        readable: *readable,
                        page_offset: p as usize % PAGE,
                    }),
                )
            }
        };
        // SAFETY: attr_ptr is NULL or points at `readable` bytes before
        // the guard page of `mapping`, which lives until the call returns.
        unsafe { self.issue(case, attr_ptr, attr, ints, flags) }
    }

    /// Issues the call with `attr_ptr` and logs it (`attr`: the pointee as
    /// it is at the call).
    ///
    /// # Safety
    /// `attr_ptr` is NULL, or `attr.readable` bytes from it are mapped
    /// (reading them may fault into a handler), bytes 4..8 of them readable
    /// and writable without a fault, up to an unmapped page.
    unsafe fn issue(
        &mut self,
        case: &str,
        attr_ptr: *mut u8,
        attr: Option<AttrMemory>,
        ints: [u64; 3],
        flags: u64,
    ) -> i64 {
        let tag = self.tag();
        let args = [attr_ptr as u64, ints[0], ints[1], ints[2], flags, tag];
        // SAFETY: sched_getcpu and gettid have no preconditions.
        let (cpu_before, tid) = unsafe { (libc::sched_getcpu(), libc::gettid()) };
        let t0 = now_ns();
        // SAFETY: perf_event_open reads at most the bytes before the guard
        // page (a read beyond faults and fails the call with EFAULT), may
        // write the u32 size at offset 4 of that same buffer, and ignores
        // the sixth word. A new fd is owned by this process from here on.
        // Every argument is a full 64-bit word, so the registers hold
        // exactly `args`.
        let ret = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                args[0],
                args[1],
                args[2],
                args[3],
                args[4],
                args[5],
            )
        };
        let errno = (ret < 0).then(|| std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
        let t1 = now_ns();
        // SAFETY: no preconditions.
        let cpu_after = unsafe { libc::sched_getcpu() };
        let size_after = match attr.as_ref() {
            Some(a) if a.readable >= 8 => {
                // SAFETY: offsets 4..8 from attr_ptr are readable (readable >= 8).
                let b = unsafe { std::slice::from_raw_parts(attr_ptr.add(4), 4) };
                Some(u32::from_le_bytes(b.try_into().expect("4 bytes")))
            }
            _ => None,
        };
        let required_size = size_after.filter(|_| errno == Some(libc::E2BIG));
        let cloexec = (ret >= 0).then(|| {
            // SAFETY: ret is a file descriptor this process owns.
            let fl =
                unsafe { libc::fcntl(i32::try_from(ret).expect("fd fits in i32"), libc::F_GETFD) };
            fl >= 0 && fl & libc::FD_CLOEXEC != 0
        });
        self.records.push(E2eRecord {
            script: self.script,
            case: case.to_owned(),
            thread: self.thread,
            seq: self.seq,
            // SAFETY: no preconditions.
            pid: unsafe { libc::getpid() },
            tid,
            pinned_cpu: self.pinned_cpu,
            cpu_before,
            cpu_after,
            args,
            attr,
            time_before_ns: t0,
            time_after_ns: t1,
            ret: if ret < 0 {
                -i64::from(errno.unwrap_or(0))
            } else {
                ret
            },
            errno,
            required_size,
            size_after,
            cloexec,
            kernel_attr_hex: None,
        });
        self.seq += 1;
        self.records.last().expect("just pushed").ret
    }

    /// A call on this task, any CPU, no group, with all bytes readable.
    fn simple(&mut self, case: &str, attr: &Attr, flags: u64) -> i64 {
        self.call(case, &Ptr::at_page_end(attr.build()), 0, -1, -1, flags)
    }
}

fn close(fd: i64) {
    if fd >= 0 {
        // SAFETY: fd is a perf event fd this process got and owns.
        unsafe { libc::close(i32::try_from(fd).expect("fd fits in i32")) };
    }
}

/// A watched variable for the breakpoint case.
static BREAKPOINT_TARGET: AtomicU64 = AtomicU64::new(0);

/// The main thread's single-threaded cases: a list, long by nature.
#[allow(clippy::too_many_lines)]
fn main_cases(c: &mut Caller) {
    let sw_clock = Attr::sw(PERF_COUNT_SW_CPU_CLOCK);
    close(c.simple("sw-cpu-clock", &sw_clock, 0));
    close(c.call("null-attr", &Ptr::Null, 0, -1, -1, 0));
    // Flags are checked before the attr is read: not applicable.
    close(c.call("invalid-flags-null", &Ptr::Null, 0, -1, -1, 1 << 20));
    close(c.simple("invalid-flags", &sw_clock, (1 << 20) | PERF_FLAG_FD_CLOEXEC));
    // The pointer is the first byte of an unmapped page.
    close(c.call(
        "attr-unmapped",
        &Ptr::Guarded {
            bytes: sw_clock.build(),
            readable: 0,
        },
        0,
        -1,
        -1,
        0,
    ));
    // Only bytes 0..6 are mapped: the size word straddles the guard page.
    close(c.call(
        "attr-size-word-unmapped",
        &Ptr::Guarded {
            bytes: sw_clock.build(),
            readable: 6,
        },
        0,
        -1,
        -1,
        0,
    ));
    // size = 136 but only 40 bytes are mapped before the guard page.
    close(c.call(
        "attr-crosses-into-unmapped",
        &Ptr::Guarded {
            bytes: sw_clock.build(),
            readable: 40,
        },
        0,
        -1,
        -1,
        0,
    ));

    // Sizes: the attr buffer is exactly what the size says the kernel may
    // read (64 for size 0), ending at the guard page, so a capture that
    // read one byte more would fault.
    for size in [0u32, 64, 72, 80, 96, 104, 109, 112, 120, 128, 136] {
        let mut a = sw_clock.clone();
        if size == 109 {
            // sample_max_stack's low byte is the last byte: 1 of 2 captured.
            a.u16_at(108, 0x10);
        }
        let len = if size == 0 { 64 } else { size as usize };
        a.size(size).len(len);
        close(c.simple(&format!("size-{size}"), &a, 0));
    }
    // Below VER0: E2BIG, the kernel writes 136 back.
    close(c.simple("size-1", sw_clock.clone().size(1), 0));
    let mut s63 = sw_clock.clone();
    s63.size(63).len(8);
    close(c.simple("size-63-only-size-word-mapped", &s63, 0));
    // Beyond 136: the tail must be zero.
    close(c.simple("size-137-zero-tail", sw_clock.clone().size(137).len(137), 0));
    let mut nz = sw_clock.clone();
    nz.size(200).len(200);
    nz.0[160] = 0x5a;
    close(c.simple("size-200-nonzero-tail", &nz, 0));
    close(c.call(
        "size-200-tail-unmapped",
        &Ptr::Guarded {
            bytes: sw_clock.clone().size(200).len(200).build(),
            readable: 150,
        },
        0,
        -1,
        -1,
        0,
    ));
    close(c.simple(
        "size-4096-zero-tail",
        sw_clock.clone().size(4096).len(4096),
        0,
    ));
    close(c.simple("size-4097", sw_clock.clone().size(4097), 0));
    // A reserved bit: perf_copy_attr() copies, then rejects it (EINVAL).
    close(c.simple(
        "reserved-bit-38",
        sw_clock.clone().or_flags(RESERVED_1_BIT),
        0,
    ));

    // Groups.
    let mut leader = Attr::sw(PERF_COUNT_SW_TASK_CLOCK);
    leader.read_format(PERF_FORMAT_GROUP | PERF_FORMAT_ID);
    let l = c.simple("group-leader", &leader, 0);
    let mut member = Attr::sw(PERF_COUNT_SW_CPU_CLOCK);
    member.read_format(PERF_FORMAT_ID).flags(EXCLUDE_KERNEL);
    let gfd = i32::try_from(l).unwrap_or(-1);
    let m1 = c.call(
        "group-member",
        &Ptr::at_page_end(member.build()),
        0,
        -1,
        gfd,
        0,
    );
    let m2 = c.call(
        "group-member-cloexec",
        &Ptr::at_page_end(member.build()),
        0,
        -1,
        gfd,
        PERF_FLAG_FD_CLOEXEC,
    );
    for fd in [m2, m1, l] {
        close(fd);
    }
    close(c.simple("cloexec", &sw_clock, PERF_FLAG_FD_CLOEXEC));
    close(c.call(
        "bad-group-fd",
        &Ptr::at_page_end(member.build()),
        0,
        -1,
        9999,
        0,
    ));
    close(c.call(
        "no-such-pid",
        &Ptr::at_page_end(sw_clock.build()),
        999_999,
        -1,
        -1,
        0,
    ));
    close(c.call(
        "cpu-out-of-range",
        &Ptr::at_page_end(sw_clock.build()),
        -1,
        4096,
        -1,
        0,
    ));
    close(c.simple("unknown-type", &Attr::new(999, 0), 0));
    // With a dynamic PMU's type, config1 and config2 read as kprobe_func,
    // uprobe_path, probe_offset, … The filter's end-to-end test names 999
    // `kprobe` and 998 `uprobe` (`reader show --pmu`); the guest has neither.
    let mut probe = Attr::new(998, 0);
    probe.u64_at(56, 0x1000).u64_at(64, 0x10);
    close(c.simple("probe-words", &probe, 0));
    // The ints are the low 32 bits of their registers: -1 zero-extended,
    // and -1 under garbage upper bits, are still -1.
    close(c.call_words(
        "int-args-zero-extended",
        &Ptr::at_page_end(sw_clock.build()),
        [0, 0xffff_ffff, 0xffff_ffff],
        0,
    ));
    close(c.call_words(
        "int-args-upper-garbage",
        &Ptr::at_page_end(sw_clock.build()),
        [
            0xdead_beef_0000_0000,
            0x1234_5678_ffff_ffff,
            0xffff_ffff_ffff_ffff,
        ],
        0,
    ));
    let mut cycles = Attr::new(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
    cycles.flags(DISABLED | EXCLUDE_KERNEL);
    close(c.simple("hw-cpu-cycles", &cycles, 0));

    // Union aliases: sample_freq (freq=1), wakeup_watermark (watermark=1),
    // bp_addr/bp_len (breakpoint), clockid.
    let mut freq = Attr::sw(PERF_COUNT_SW_CPU_CLOCK);
    freq.sample(1000, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME)
        .or_flags(FREQ | WATERMARK)
        .u32_at(48, 4096);
    close(c.simple("sample-freq-watermark", &freq, PERF_FLAG_FD_CLOEXEC));
    let mut period = Attr::sw(PERF_COUNT_SW_TASK_CLOCK);
    period.sample(100_000, PERF_SAMPLE_IP).u32_at(48, 3);
    close(c.simple("sample-period-wakeup-events", &period, 0));
    let mut bp = Attr::new(PERF_TYPE_BREAKPOINT, 0);
    bp.flags(DISABLED | EXCLUDE_KERNEL | EXCLUDE_HV)
        .sample(1, 0)
        .u32_at(52, HW_BREAKPOINT_W)
        .u64_at(56, BREAKPOINT_TARGET.as_ptr() as u64)
        .u64_at(64, HW_BREAKPOINT_LEN_8);
    close(c.simple("breakpoint-w8", &bp, 0));
    let mut clk = Attr::sw(PERF_COUNT_SW_DUMMY);
    clk.or_flags(USE_CLOCKID)
        .u32_at(92, u32::from_le_bytes(CLOCK_MONOTONIC_RAW.to_le_bytes()));
    close(c.simple("clockid-monotonic-raw", &clk, 0));
    clk.u32_at(92, u32::from_le_bytes((-5i32).to_le_bytes()));
    close(c.simple("clockid-negative", &clk, 0));
}

/// `<linux/userfaultfd.h>` of the pinned uapi, for [`double_fetch`]: libc
/// has the syscall number, not the ioctls or their structs.
// The structs keep the uapi's field names.
#[allow(clippy::struct_field_names)]
mod uffd {
    /// `UFFD_API`.
    pub const API: u64 = 0xaa;
    /// `UFFDIO_API`: `_IOWR(0xaa, 0x3f, struct uffdio_api)`, 24 bytes.
    pub const IOC_API: libc::c_ulong = 0xc018_aa3f;
    /// `UFFDIO_REGISTER`: `_IOWR(0xaa, 0x00, struct uffdio_register)`, 32 bytes.
    pub const IOC_REGISTER: libc::c_ulong = 0xc020_aa00;
    /// `UFFDIO_COPY`: `_IOWR(0xaa, 0x03, struct uffdio_copy)`, 40 bytes.
    pub const IOC_COPY: libc::c_ulong = 0xc028_aa03;
    /// `UFFDIO_REGISTER_MODE_MISSING`.
    pub const MODE_MISSING: u64 = 1;
    /// `UFFD_EVENT_PAGEFAULT`.
    pub const EVENT_PAGEFAULT: u8 = 0x12;

    /// `struct uffdio_api`.
    #[repr(C)]
    pub struct Api {
        pub api: u64,
        pub features: u64,
        pub ioctls: u64,
    }

    /// `struct uffdio_register` (its `range` inlined).
    #[repr(C)]
    pub struct Register {
        pub start: u64,
        pub len: u64,
        pub mode: u64,
        pub ioctls: u64,
    }

    /// `struct uffdio_copy`.
    #[repr(C)]
    pub struct Copy {
        pub dst: u64,
        pub src: u64,
        pub len: u64,
        pub mode: u64,
        pub copy: i64,
    }

    /// `struct uffd_msg` (packed, 32 bytes) as a page fault fills it.
    #[repr(C)]
    pub struct PageFault {
        pub event: u8,
        pub reserved: [u8; 7],
        pub flags: u64,
        pub address: u64,
        pub feat: u64,
    }

    const _: () = assert!(std::mem::size_of::<Api>() == 24);
    const _: () = assert!(std::mem::size_of::<Register>() == 32);
    const _: () = assert!(std::mem::size_of::<Copy>() == 40);
    const _: () = assert!(std::mem::size_of::<PageFault>() == 32);
}

/// `ioctl(fd, request, arg)`, with errno as the error.
///
/// # Safety
/// `arg` is the struct `request` reads and writes.
unsafe fn ioctl_with<T>(fd: i32, request: libc::c_ulong, arg: &mut T) -> Result<(), String> {
    // SAFETY: the caller passes the struct this request expects.
    let rc = unsafe { libc::ioctl(fd, request, std::ptr::from_mut(arg)) };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!(
            "ioctl {request:#x}: {}",
            std::io::Error::last_os_error()
        ))
    }
}

/// A double fetch on purpose, made deterministic with userfaultfd: the
/// attr's first 40 bytes end page A, the rest starts page B, which is
/// registered for missing-page faults. The capture copies page by page:
/// it reads A, then faults on B, and the handler thread changes `config`
/// in A (`CPU_CLOCK` to `TASK_CLOCK`) before it fills B. So the capture holds
/// the old `config` and `perf_copy_attr()` reads the new one: ENTRY
/// records what was passed, EXIT carries the kernel's copy, logged here as
/// `kernel_attr_hex`. `sample_max_stack` is non-zero so that the kernel's
/// copy is exactly the changed bytes (it replaces a zero one).
fn double_fetch(c: &mut Caller) -> Result<(), String> {
    const IN_A: usize = 40;
    let mut attr = Attr::sw(PERF_COUNT_SW_CPU_CLOCK);
    attr.u16_at(108, 0x10);
    let before = attr.build();
    let after = attr.u64_at(8, PERF_COUNT_SW_TASK_CLOCK).build();

    // SAFETY: userfaultfd(2) takes flags only.
    let raw = unsafe { libc::syscall(libc::SYS_userfaultfd, libc::O_CLOEXEC) };
    let fd = i32::try_from(raw)
        .ok()
        .filter(|fd| *fd >= 0)
        .ok_or_else(|| format!("userfaultfd: {}", std::io::Error::last_os_error()))?;
    // SAFETY: fd is a new descriptor nothing else owns.
    let owned = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    let mut api = uffd::Api {
        api: uffd::API,
        features: 0,
        ioctls: 0,
    };
    // SAFETY: UFFDIO_API takes a struct uffdio_api.
    unsafe { ioctl_with(fd, uffd::IOC_API, &mut api) }?;

    // Pages A and B, then the guard page; nothing touches B before the call.
    let mapping = Guarded::new(2 * PAGE);
    let page_b = mapping.base as usize + PAGE;
    let attr_addr = page_b - IN_A;
    // SAFETY: the IN_A bytes before page B are in page A, mapped read-write.
    unsafe { std::ptr::copy_nonoverlapping(before.as_ptr(), attr_addr as *mut u8, IN_A) };
    let mut register = uffd::Register {
        start: page_b as u64,
        len: PAGE as u64,
        mode: uffd::MODE_MISSING,
        ioctls: 0,
    };
    // SAFETY: UFFDIO_REGISTER takes a struct uffdio_register; page B is
    // part of `mapping`.
    unsafe { ioctl_with(fd, uffd::IOC_REGISTER, &mut register) }?;
    let mut b_contents = vec![0u8; PAGE];
    b_contents[..before.len() - IN_A].copy_from_slice(&before[IN_A..]);

    let mut seen = before[..IN_A].to_vec();
    seen.extend_from_slice(&b_contents);
    let handler = std::thread::spawn(move || -> Result<(), String> {
        // SAFETY: PageFault is plain data; zeroed is a valid value.
        let mut msg: uffd::PageFault = unsafe { std::mem::zeroed() };
        // SAFETY: msg is 32 writable bytes; fd stays open until the join.
        let n = unsafe { libc::read(fd, std::ptr::from_mut(&mut msg).cast(), 32) };
        if n != 32 || msg.event != uffd::EVENT_PAGEFAULT {
            return Err(format!(
                "userfaultfd read {n} bytes, event {:#x}: {}",
                msg.event,
                std::io::Error::last_os_error()
            ));
        }
        if msg.address & !(PAGE as u64 - 1) != page_b as u64 {
            return Err(format!("fault at {:#x}, not in page B", msg.address));
        }
        // SAFETY: config (bytes 8..16 of the attr) lies in page A, which
        // is mapped read-write; the capture has already copied it.
        unsafe {
            std::ptr::write_unaligned(
                (attr_addr + 8) as *mut u64,
                PERF_COUNT_SW_TASK_CLOCK.to_le(),
            );
        }
        let mut copy = uffd::Copy {
            dst: page_b as u64,
            src: b_contents.as_ptr() as u64,
            len: PAGE as u64,
            mode: 0,
            copy: 0,
        };
        // SAFETY: UFFDIO_COPY takes a struct uffdio_copy; src is a page of
        // b_contents, dst the registered page B.
        unsafe { ioctl_with(fd, uffd::IOC_COPY, &mut copy) }?;
        if usize::try_from(copy.copy).ok() != Some(PAGE) {
            return Err(format!("UFFDIO_COPY copied {}", copy.copy));
        }
        Ok(())
    });

    let memory = AttrMemory {
        hex: hex(&seen),
        readable: seen.len(),
        page_offset: attr_addr % PAGE,
    };
    let any = u64::MAX; // -1 as a register word
                        // SAFETY: the attr's readable bytes run to the guard page of
                        // `mapping`; reading page B faults into `handler`, which fills it.
    let ret = unsafe {
        c.issue(
            "double-fetch-uffd",
            attr_addr as *mut u8,
            Some(memory),
            [0, any, any],
            0,
        )
    };
    let fault_served = handler
        .join()
        .map_err(|_| "the userfaultfd handler panicked".to_owned())?;
    drop(owned);
    fault_served?;
    if let Some(r) = c.records.last_mut() {
        r.kernel_attr_hex = Some(hex(&after));
    }
    close(ret);
    if ret < 0 {
        return Err(format!("double-fetch-uffd failed with {ret}"));
    }
    Ok(())
}

/// A group leader whose `read_format` makes `read()` of the group grow by
/// 24 bytes per member: 8 (`GROUP`) + 16 (`TOTAL_TIME_*`) + 24 per event
/// (value, `ID`, `LOST`). `perf_event_validate_size()` refuses a group
/// whose read size exceeds 16 KiB: adding the sibling that would make
/// `nr_siblings + 2` members reach 682 (24 + 24 * 682 = 16392 > 16384)
/// fails with `E2BIG` after `perf_copy_attr()` succeeded, so the kernel
/// writes no size back. Siblings are VER0 attrs (64 bytes) to keep the
/// records small; the one expected to fail has size 128 (VER7), so that
/// the size read back (128) tells "not written" apart from 136.
fn big_group(c: &mut Caller) -> Result<(), String> {
    let mut leader = Attr::sw(PERF_COUNT_SW_CPU_CLOCK);
    leader.read_format(
        PERF_FORMAT_GROUP
            | PERF_FORMAT_ID
            | PERF_FORMAT_LOST
            | PERF_FORMAT_TOTAL_TIME_ENABLED
            | PERF_FORMAT_TOTAL_TIME_RUNNING,
    );
    let l = c.simple("big-group-leader", &leader, PERF_FLAG_FD_CLOEXEC);
    if l < 0 {
        return Err(format!("big-group-leader failed with {l}"));
    }
    let gfd = i32::try_from(l).expect("fd fits in i32");
    let mut sibling = Attr::sw(PERF_COUNT_SW_CPU_CLOCK);
    sibling.size(64).len(64);
    let mut last = sibling.clone();
    last.size(128).len(128);
    let mut fds = vec![l];
    let mut result = Err(format!(
        "no E2BIG after {GROUP_MAX_SIBLINGS} siblings of the big group"
    ));
    for n in 1..=GROUP_MAX_SIBLINGS {
        // 24 + 24 * (siblings + 1 + 1) > 16384 from 680 siblings on.
        let (case, attr) = if n == 681 {
            ("big-group-e2big-sibling", &last)
        } else {
            ("big-group-sibling", &sibling)
        };
        let fd = c.call(
            case,
            &Ptr::at_page_end(attr.build()),
            0,
            -1,
            gfd,
            PERF_FLAG_FD_CLOEXEC,
        );
        if fd >= 0 {
            fds.push(fd);
            continue;
        }
        result = if fd == -i64::from(libc::E2BIG) && n == 681 {
            Ok(())
        } else {
            Err(format!(
                "big group: sibling {n} failed with {fd}, expected E2BIG at 681"
            ))
        };
        break;
    }
    for fd in fds.into_iter().rev() {
        close(fd);
    }
    result
}

/// Per CPU, one thread pinned to it issuing a few calls.
fn per_cpu_cases(script: &'static str, script_id: u64, cpus: &[u32]) -> Vec<E2eRecord> {
    let handles: Vec<_> = cpus
        .iter()
        .enumerate()
        .map(|(i, &cpu)| {
            std::thread::spawn(move || {
                let thread = u32::try_from(i + 1).expect("few threads");
                let mut c = Caller::new(script, script_id, thread, Some(cpu));
                let clock = Attr::sw(PERF_COUNT_SW_TASK_CLOCK);
                close(c.simple("thread-task-clock", &clock, PERF_FLAG_FD_CLOEXEC));
                let mut wide = Attr::sw(PERF_COUNT_SW_CPU_CLOCK);
                wide.flags(DISABLED);
                close(c.call(
                    "thread-cpu-wide",
                    &Ptr::at_page_end(wide.build()),
                    -1,
                    i32::try_from(cpu).unwrap_or(-1),
                    -1,
                    0,
                ));
                close(c.simple("thread-size-1", clock.clone().size(1), 0));
                close(c.call("thread-null-attr", &Ptr::Null, 0, -1, -1, 0));
                c.records
            })
        })
        .collect();
    handles
        .into_iter()
        .flat_map(|h| h.join().expect("a workload thread panicked"))
        .collect()
}

/// The attr size of call `k` of burst thread `thread`. On fresh 4 KiB
/// rings that nobody drains, one pinned thread per CPU, the sizes decide
/// which records fit (ENTRY: 144 + the attr rounded up to 8 bytes; EXIT:
/// 80; a pending LOST record: 152 more, written with the next record that
/// fits with it):
/// * thread 1 cycles through the `PERF_ATTR_SIZE_VER*`: its 13th call's
///   ENTRY fits and leaves 40 bytes, so its EXIT is dropped (unfinished);
/// * thread 2 makes 11 calls of size 64, one of 80, then size 136: after
///   its 13th call 264 bytes are left, so the 14th call's ENTRY (280
///   bytes) is dropped, but the LOST record and its EXIT (232 bytes) fit
///   (entry lost);
/// * the others use 136: whole calls are dropped.
fn burst_attr_size(thread: u32, k: usize) -> u32 {
    const VERS: [u32; 9] = [64, 72, 80, 96, 104, 112, 120, 128, 136];
    match (thread, k) {
        (1, k) => VERS[k % VERS.len()],
        (2, 0..=10) => 64,
        (2, 11) => 80,
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
                status = double_fetch(&mut c).and(big_group(&mut c));
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
