// SPDX-License-Identifier: GPL-2.0-only
//! The operating-system plumbing of the workload and the campaign: mappings
//! that end in a guard page, the clock, CPU pinning, and the userfaultfd
//! uapi with its ioctls.

use crate::call::PAGE;

/// A mapping of whole pages whose last page is `PROT_NONE`.
#[derive(Debug)]
pub(super) struct Guarded {
    pub(super) base: *mut u8,
    len: usize,
}

impl Guarded {
    /// Room for `readable` bytes right before a guard page.
    pub(super) fn new(readable: usize) -> Self {
        let pages = readable.div_ceil(PAGE) + 1;
        let len = pages * PAGE;
        let base = map_anonymous(len).unwrap_or_else(|e| panic!("mmap of {len} bytes failed: {e}"));
        // The last page lies inside the mapping just made.
        protect_none(base.wrapping_add(len - PAGE))
            .unwrap_or_else(|e| panic!("mprotect of the guard page failed: {e}"));
        Guarded { base, len }
    }

    /// The first byte of the guard page.
    pub(super) fn guard(&self) -> *mut u8 {
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
pub(super) fn map_anonymous(len: usize) -> std::io::Result<*mut u8> {
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
pub(super) fn protect_none(page: *mut u8) -> std::io::Result<()> {
    // SAFETY: mprotect() only changes the page's protection; the caller
    // owns the mapping.
    if unsafe { libc::mprotect(page.cast(), PAGE, libc::PROT_NONE) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// `CLOCK_MONOTONIC` in ns.
pub(super) fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec to write to.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &raw mut ts) };
    #[allow(clippy::cast_sign_loss)]
    let ns = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
    ns
}

/// Pins the calling thread to `cpu`; `None` if that is not possible.
pub(super) fn pin(cpu: u32) -> Option<u32> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: CPU_SET on a valid set with an index below CPU_SETSIZE.
    unsafe { libc::CPU_SET(cpu as usize, &mut set) };
    // SAFETY: 0 is the calling thread; set is a valid cpu_set_t.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &raw const set) };
    (rc == 0).then_some(cpu)
}

/// The CPUs this process may run on.
pub fn online_cpus() -> Vec<u32> {
    // SAFETY: as in pin().
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: 0 is this thread; set is a valid cpu_set_t to fill.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &raw mut set) };
    if rc != 0 {
        return vec![0];
    }
    (0..1024u32)
        // SAFETY: CPU_ISSET on a valid set with an index below CPU_SETSIZE.
        .filter(|&c| unsafe { libc::CPU_ISSET(c as usize, &set) })
        .collect()
}

/// `<linux/userfaultfd.h>` of the pinned uapi, for `cases::change_during_the_call`: libc
/// has the syscall number, not the ioctls or their structs.
// The structs keep the uapi's field names.
#[allow(clippy::struct_field_names)]
pub(super) mod uffd {
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
pub(super) unsafe fn ioctl_with<T>(
    fd: i32,
    request: libc::c_ulong,
    arg: &mut T,
) -> Result<(), String> {
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
