// SPDX-License-Identifier: GPL-2.0-only
//! A calling thread's memory: the arena's pages, its userfaultfd and the
//! handler that serves it, the racing writer, and how a call's bytes are
//! placed in the arena.

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::call::{DISABLED, PAGE};
use crate::random::FORBIDDEN;
use crate::system::{ioctl_with, map_anonymous, protect_none, uffd};

use super::draw::{Call, Place};

/// The arena's pages (one mapping per thread): the userfaultfd window
/// `U0 R1 R2 U3 N4`, the guarded window `R5 R6 N7`, the racing writer's
/// page `R8 N9`, and the windows `W10 W11` and `S12`, then `N13`. U:
/// registered for missing-page faults; R: read-write; N: `PROT_NONE`; W
/// and S: `PROT_NONE` between calls, and during a call a memfd's two pages
/// (W) or a shared anonymous page (S).
///
/// The windows lie in the arena, at the same addresses call after call,
/// between mappings that stay: the page tables over them exist from the
/// start and are never freed, so a call's first read of its attr
/// allocates the attr's page and nothing else, every time.
pub(super) const U0: usize = 0;
const R1: usize = 1;
pub(super) const U3: usize = 3;
const N4: usize = 4;
pub(super) const N7: usize = 7;
pub(super) const R8: usize = 8;
const N9: usize = 9;
const W10: usize = 10;
const W11: usize = 11;
const S12: usize = 12;
const N13: usize = 13;
const ARENA_PAGES: usize = 14;

/// A raw address that threads may share: every access through it is
/// justified where it happens.
#[derive(Debug, Clone, Copy)]
pub(super) struct Addr(pub(super) usize);

/// A thread's pages and its userfaultfd.
#[derive(Debug)]
pub(super) struct Arena {
    base: usize,
    pub(super) uffd: i32,
    /// What the handler copies into U0 and U3 (two pages), set before
    /// each call.
    pub(super) staging: Arc<Mutex<Vec<u8>>>,
    pub(super) faults: Arc<AtomicU64>,
}

impl Arena {
    pub(super) fn new() -> Result<Self, String> {
        let base = map_anonymous(ARENA_PAGES * PAGE).map_err(|e| format!("mmap: {e}"))?;
        for page in [N4, N7, N9, N13] {
            // The page lies inside the mapping just made.
            protect_none(base.wrapping_add(page * PAGE)).map_err(|e| format!("mprotect: {e}"))?;
        }
        for page in [W10, W11, S12] {
            // SAFETY: a read-write page of the mapping just made: touched,
            // so that the page tables over the windows exist.
            unsafe { base.add(page * PAGE).write_volatile(1) };
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
        arena.close_windows()?;
        Ok(arena)
    }

    /// Maps `len` bytes at `page` of the arena, in place of what was there.
    fn map_fixed(
        &self,
        page: usize,
        len: usize,
        prot: i32,
        flags: i32,
        fd: i32,
    ) -> Result<(), String> {
        let addr = self.page(page);
        // SAFETY: replaces pages of this thread's own arena, which nothing
        // refers to across this call.
        let got = unsafe { libc::mmap(addr as *mut _, len, prot, flags | libc::MAP_FIXED, fd, 0) };
        if got as usize == addr {
            Ok(())
        } else {
            Err(format!(
                "mmap MAP_FIXED at page {page}: {}",
                std::io::Error::last_os_error()
            ))
        }
    }

    /// Makes the windows `PROT_NONE` again: the memfd and the shared page
    /// of the last call are gone with their mappings.
    pub(super) fn close_windows(&self) -> Result<(), String> {
        self.map_fixed(
            W10,
            (N13 - W10) * PAGE,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
        )
    }

    /// Maps a fresh memfd of two pages over `W10 W11`, `head` written at
    /// the end of its first page; its second page is a hole.
    fn open_memfd(&self, head: &[u8]) -> Result<(), String> {
        // SAFETY: a NUL-terminated name and flags.
        let fd = unsafe { libc::memfd_create(c"campaign".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(format!("memfd_create: {}", std::io::Error::last_os_error()));
        }
        // SAFETY: the new memfd, owned by nothing else; closed when the
        // File drops (the mapping keeps the file).
        let file = unsafe { File::from_raw_fd(fd) };
        file.set_len(2 * PAGE as u64)
            .and_then(|()| file.write_all_at(head, (PAGE - head.len()) as u64))
            .map_err(|e| format!("the memfd: {e}"))?;
        self.map_fixed(
            W10,
            2 * PAGE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            file.as_raw_fd(),
        )
    }

    /// Makes U0 and U3 missing again, for the next call's faults: a fresh
    /// mapping over each, registered again (the guest kernel has no
    /// `madvise()`: `CONFIG_ADVISE_SYSCALLS` is off in tinyconfig).
    pub(super) fn unpopulate(&self) -> Result<(), String> {
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

    pub(super) fn page(&self, page: usize) -> usize {
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
pub(super) fn serve_faults(
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
        let n = unsafe { libc::poll(&raw mut pfd, 1, 50) };
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
pub(super) fn race(pages: &[Addr], stop: &AtomicBool) {
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

/// Places the call's bytes and returns the pointer and the placed range
/// (start, length) to digest afterwards. A memfd or a shared page is mapped
/// here, and must be closed after the call ([`Arena::close_windows`]).
pub(super) fn place(arena: &Arena, call: &Call) -> Result<(usize, usize), String> {
    let bytes = &call.bytes;
    Ok(match call.place {
        Place::Null => (0, 0),
        Place::MemfdHole { k } => {
            // The bytes past k are zero: the hole.
            arena.open_memfd(&bytes[..k])?;
            (arena.page(W11) - k, bytes.len())
        }
        Place::SharedPage => {
            arena.map_fixed(
                S12,
                PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
            )?;
            (arena.page(S12), bytes.len())
        }
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
    })
}
