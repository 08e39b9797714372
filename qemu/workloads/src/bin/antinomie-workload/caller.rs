// SPDX-License-Identifier: GPL-2.0-only
//! One thread's calling context: places the attr, issues
//! `perf_event_open(2)` and logs each call as an [`LoggedCall`].

use crate::call::{Attr, AttrMemory, LoggedCall, PAGE};
use crate::system::{now_ns, pin, Guarded};

/// What `attr_uptr` is.
#[derive(Debug, Clone)]
pub(super) enum Ptr {
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
    pub(super) fn at_page_end(bytes: Vec<u8>) -> Self {
        let readable = bytes.len();
        Ptr::Guarded { bytes, readable }
    }
}

pub(super) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// One thread's calling context.
#[derive(Debug)]
pub(super) struct Caller {
    script: &'static str,
    script_id: u64,
    thread: u32,
    seq: u32,
    pinned_cpu: Option<u32>,
    pub(super) records: Vec<LoggedCall>,
}

impl Caller {
    pub(super) fn new(script: &'static str, script_id: u64, thread: u32, cpu: Option<u32>) -> Self {
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
    pub(super) fn call(
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
    pub(super) fn call_words(&mut self, case: &str, ptr: &Ptr, ints: [u64; 3], flags: u64) -> i64 {
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
    pub(super) unsafe fn issue(
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
        self.records.push(LoggedCall {
            script: self.script.to_owned(),
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
        });
        self.seq += 1;
        self.records.last().expect("just pushed").ret
    }

    /// A call on this task, any CPU, no group, with all bytes readable.
    pub(super) fn simple(&mut self, case: &str, attr: &Attr, flags: u64) -> i64 {
        self.call(case, &Ptr::at_page_end(attr.build()), 0, -1, -1, flags)
    }
}

pub(super) fn close(fd: i64) {
    if fd >= 0 {
        // SAFETY: fd is a perf event fd this process got and owns.
        unsafe { libc::close(i32::try_from(fd).expect("fd fits in i32")) };
    }
}
