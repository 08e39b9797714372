// SPDX-License-Identifier: GPL-2.0-only
//! `/dev/antinomie`: opening, the ioctls, the ring mappings and `poll()`.

use std::fs::{File, OpenOptions};
use std::io;
use std::mem::offset_of;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use antinomie_abi as abi;
use memmap2::{MmapOptions, MmapRaw};
use rustix::event::{PollFd, PollFlags};
use rustix::ioctl::{ioctl, NoArg, Opcode, Setter, Updater};

use crate::pipeline::{Tick, Waker};
use crate::ring::{
    copy_shared, copy_shared_uninit, meta_has_lossless, LosslessCounters, RingCounters, RingMemory,
};
use crate::Error;

/// The default device path.
pub const DEFAULT_DEVICE: &str = "/dev/antinomie";

/// An open `/dev/antinomie`.
#[derive(Debug)]
pub struct Device {
    file: File,
    path: PathBuf,
    info: abi::Info,
    /// The watermark to put back on drop, if [`Device::set_watermark`]
    /// changed it (it is the device's, not this reader's).
    restore_watermark: Option<u64>,
}

fn open_error(path: &Path, e: io::Error) -> Error {
    let path = path.to_path_buf();
    match e.raw_os_error() {
        Some(libc::ENOENT | libc::ENXIO | libc::ENODEV) => Error::DeviceMissing { path },
        Some(libc::EACCES | libc::EPERM) => Error::AccessDenied { path },
        Some(libc::EBUSY) => Error::Busy { path },
        _ => Error::io(format!("opening {}", path.display()), e),
    }
}

// The ioctl numbers are u32 in the ABI crate; rustix's Opcode is the
// platform's `unsigned int` (or `unsigned long` with its libc backend).
#[allow(clippy::cast_lossless, clippy::unnecessary_cast)]
const fn opcode(cmd: u32) -> Opcode {
    cmd as Opcode
}

impl Device {
    /// Opens the device read-write and checks its ABI version.
    ///
    /// # Errors
    /// [`Error::DeviceMissing`], [`Error::AccessDenied`], [`Error::Busy`],
    /// [`Error::AbiVersion`], or another I/O error.
    pub fn open(path: &Path) -> Result<Self, Error> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| open_error(path, e))?;
        let mut info = abi::Info::default();
        // SAFETY: IOC_GET_INFO is _IOR(0xA6, 0, struct antinomie_info) and
        // `info` is that struct (abi::Info mirrors it, layout asserted);
        // the kernel writes at most _IOC_SIZE(cmd) = size_of::<Info>()
        // bytes into it. Zeroed first, so fields an older kernel does not
        // fill stay 0.
        unsafe {
            ioctl(
                &file,
                Updater::<{ opcode(abi::IOC_GET_INFO) }, abi::Info>::new(&mut info),
            )
        }
        .map_err(|e| match e.raw_os_error() {
            libc::ENOTTY => Error::Geometry(format!(
                "{} does not answer ANTINOMIE_IOC_GET_INFO: not an Antinomie device",
                path.display()
            )),
            _ => Error::io("ANTINOMIE_IOC_GET_INFO", e.into()),
        })?;
        if info.abi_version != abi::ABI_VERSION {
            return Err(Error::AbiVersion {
                of: crate::AbiOf::Kernel,
                found: info.abi_version,
                reader: abi::ABI_VERSION,
            });
        }
        if !info.data_size.is_power_of_two()
            || info.page_size == 0
            || info.mmap_size > info.mmap_stride
            || info
                .data_size
                .checked_mul(2)
                .and_then(|d| info.data_offset.checked_add(d))
                != Some(info.mmap_size)
        {
            return Err(Error::Geometry(format!("{info:?}")));
        }
        Ok(Device {
            file,
            path: path.to_path_buf(),
            info,
            restore_watermark: None,
        })
    }

    /// The geometry.
    #[must_use]
    pub fn info(&self) -> &abi::Info {
        &self.info
    }

    /// Whether capture of new calls is on (as of opening or [`Device::enable`]).
    #[must_use]
    pub fn enabled(&self) -> bool {
        self.info.flags & abi::INFO_F_ENABLED != 0
    }

    /// Whether lossless mode is on (as of opening or [`Device::set_lossless`]).
    #[must_use]
    pub fn lossless(&self) -> bool {
        self.info.flags & abi::INFO_F_LOSSLESS != 0
    }

    /// Switches lossless mode on or off: while it is on, a call whose
    /// record finds its ring full waits for this reader (up to the
    /// kernel's timeout) rather than lose the record. The kernel switches
    /// it off when this device is closed.
    ///
    /// # Errors
    /// The ioctl's error (`ENOTTY` from a kernel without lossless mode).
    pub fn set_lossless(&mut self, on: bool) -> Result<(), Error> {
        // SAFETY: IOC_SET_LOSSLESS is _IOW(0xA6, 6, __u32): the kernel
        // reads one u32 through the pointer rustix passes to a copy of
        // the value.
        unsafe {
            ioctl(
                &self.file,
                Setter::<{ opcode(abi::IOC_SET_LOSSLESS) }, u32>::new(u32::from(on)),
            )
        }
        .map_err(|e| Error::io("ANTINOMIE_IOC_SET_LOSSLESS", e.into()))?;
        if on {
            self.info.flags |= abi::INFO_F_LOSSLESS;
        } else {
            self.info.flags &= !abi::INFO_F_LOSSLESS;
        }
        Ok(())
    }

    /// Limits capture, and lossless mode's waits, to the workload in the
    /// cgroup v2 directory `cgroup` and the cgroups below it, while this
    /// device is open: the calls of other tasks are not captured, and
    /// never wait for this reader.
    ///
    /// # Errors
    /// The ioctl's error: `EBADF` if `cgroup` is not a cgroup v2
    /// directory, `ENOTTY` from a kernel without scopes, `EOPNOTSUPP` from
    /// one without cgroups.
    pub fn set_scope(&mut self, cgroup: BorrowedFd<'_>) -> Result<(), Error> {
        let scope = abi::Scope {
            flags: abi::SCOPE_F_CAPTURE,
            cgroup_fd: cgroup.as_raw_fd(),
        };
        // SAFETY: IOC_SET_SCOPE is _IOW(0xA6, 7, struct antinomie_scope)
        // and `scope` is that struct (abi::Scope mirrors it, layout
        // asserted): the kernel reads _IOC_SIZE(cmd) = size_of::<Scope>()
        // bytes through the pointer rustix passes to a copy of it.
        unsafe {
            ioctl(
                &self.file,
                Setter::<{ opcode(abi::IOC_SET_SCOPE) }, abi::Scope>::new(scope),
            )
        }
        .map_err(|e| Error::io("ANTINOMIE_IOC_SET_SCOPE", e.into()))?;
        self.info.flags |= abi::INFO_F_SCOPED | abi::INFO_F_SCOPE_CAPTURE;
        Ok(())
    }

    /// Switches capture on (idempotent).
    ///
    /// # Errors
    /// The ioctl's error.
    pub fn enable(&mut self) -> Result<(), Error> {
        // SAFETY: IOC_ENABLE is _IO(0xA6, 1): no argument.
        unsafe { ioctl(&self.file, NoArg::<{ opcode(abi::IOC_ENABLE) }>::new()) }
            .map_err(|e| Error::io("ANTINOMIE_IOC_ENABLE", e.into()))?;
        self.info.flags |= abi::INFO_F_ENABLED;
        Ok(())
    }

    /// Sets the `poll()` watermark: the device polls readable once some
    /// ring holds at least `bytes` unread bytes. The previous value is put
    /// back when the device is dropped.
    ///
    /// # Errors
    /// The ioctl's error (`EINVAL` for 0 or more than `data_size`).
    pub fn set_watermark(&mut self, bytes: u64) -> Result<(), Error> {
        self.write_watermark(bytes)?;
        self.restore_watermark.get_or_insert(self.info.watermark);
        self.info.watermark = bytes;
        Ok(())
    }

    /// The watermark for a followed run: `requested` bytes, at most the
    /// data area, or for 0 a sixteenth of the data area, at most 64 KiB
    /// (what `reader --follow` uses). One wake-up per batch rather than
    /// per record: under load a drain pass then takes many records for
    /// its fixed cost (`poll()`, the hand-off to the spool or the printing).
    #[must_use]
    pub fn follow_watermark(&self, requested: u64) -> u64 {
        let data_size = self.info.data_size;
        match requested {
            0 => (data_size / 16).clamp(1, 64 * 1024),
            n => n.min(data_size),
        }
    }

    fn write_watermark(&self, bytes: u64) -> Result<(), Error> {
        // SAFETY: IOC_SET_WATERMARK is _IOW(0xA6, 5, __u64): the kernel
        // reads one u64 through the pointer rustix passes to a copy of
        // `bytes`.
        unsafe {
            ioctl(
                &self.file,
                Setter::<{ opcode(abi::IOC_SET_WATERMARK) }, u64>::new(bytes),
            )
        }
        .map_err(|e| Error::io("ANTINOMIE_IOC_SET_WATERMARK", e.into()))
    }

    /// The CPUs `/sys/devices/system/cpu/possible` lists below
    /// `cpu_id_limit`; `None` when it cannot be read.
    fn listed_possible_cpus(&self, sysfs: &Path) -> Option<Vec<u32>> {
        let cpus = std::fs::read_to_string(sysfs.join("devices/system/cpu/possible"))
            .ok()
            .and_then(|s| parse_cpu_list(&s))?;
        Some(
            cpus.into_iter()
                .filter(|&c| c < self.info.cpu_id_limit)
                .collect(),
        )
    }

    /// Maps the ring of every possible CPU (those
    /// `/sys/devices/system/cpu/possible` under `sysfs` lists, or every id
    /// below `cpu_id_limit` when that cannot be read): the kernel gives
    /// each one a ring, online or not, when it allocates the rings, so
    /// these are all the rings there will be.
    ///
    /// # Errors
    /// As for [`Device::map_ring`]: [`Error::NoRing`] for a CPU that
    /// `/sys/devices/system/cpu/possible` lists but the device has no ring
    /// for.
    pub fn map_rings(&self, sysfs: &Path) -> Result<Vec<MappedRing>, Error> {
        let listed = self.listed_possible_cpus(sysfs);
        let guessed = listed.is_none();
        let mut rings = Vec::new();
        for cpu in listed.unwrap_or_else(|| (0..self.info.cpu_id_limit).collect()) {
            match self.map_ring(cpu) {
                Ok(ring) => rings.push(ring),
                // Without the list every id below cpu_id_limit is tried,
                // and one the device has no ring for is not a possible CPU.
                Err(Error::NoRing { .. }) if guessed => {}
                Err(e) => return Err(e),
            }
        }
        Ok(rings)
    }

    /// Maps the ring of `cpu`.
    ///
    /// # Errors
    /// [`Error::NoRing`] for a CPU without a ring (not a possible CPU),
    /// the mmap's error, or [`Error::Geometry`] if the meta page disagrees
    /// with the device's geometry.
    pub fn map_ring(&self, cpu: u32) -> Result<MappedRing, Error> {
        let i = &self.info;
        let what = |part: &str| format!("mapping the {part} of cpu {cpu}'s ring");
        let geometry =
            |what: &str| Error::Geometry(format!("{what} of cpu {cpu}'s ring overflows"));
        // Checked: both come from the kernel.
        let base = u64::from(cpu)
            .checked_mul(i.mmap_stride)
            .ok_or_else(|| geometry("the offset"))?;
        let page = usize::try_from(i.page_size).map_err(|_| Error::Geometry("page size".into()))?;
        let data_len = i
            .data_size
            .checked_mul(2)
            .and_then(|d| usize::try_from(d).ok())
            .ok_or_else(|| geometry("the data size"))?;
        let offset = |rel: u64| base.checked_add(rel).ok_or_else(|| geometry("an offset"));
        let map_err = |part: &str, e: io::Error| match e.raw_os_error() {
            Some(libc::EACCES | libc::EPERM) => Error::AccessDenied {
                path: self.path.clone(),
            },
            Some(libc::ENODEV) => Error::NoRing { cpu },
            _ => Error::io(what(part), e),
        };
        // Raw mappings (no `&[u8]` over them): the kernel writes the meta
        // page and the data pages concurrently, so this crate reads them
        // only through atomics (`copy_shared`, `meta_atomic`), and data
        // bytes only in [consumer_pos, producer_pos) after the acquire at
        // (B), which the producer does not write until the consumer
        // releases them at (C) (header, MEMORY ORDERING). The file stays
        // open as long as the mappings.
        let meta = MmapOptions::new()
            .offset(base)
            .len(page)
            .map_raw_read_only(&self.file)
            .map_err(|e| map_err("meta page", e))?;
        let consumer = MmapOptions::new()
            .offset(offset(i.consumer_offset)?)
            .len(page)
            .map_raw(&self.file)
            .map_err(|e| map_err("consumer page", e))?;
        let data = MmapOptions::new()
            .offset(offset(i.data_offset)?)
            .len(data_len)
            .map_raw_read_only(&self.file)
            .map_err(|e| map_err("data pages", e))?;
        if meta.len() < size_of::<abi::Meta>() || consumer.len() < size_of::<abi::Consumer>() {
            return Err(Error::Geometry(format!("page size {page} is too small")));
        }
        let mut raw = [0u8; size_of::<abi::Meta>()];
        // SAFETY: the meta page is mapped for `page >= size_of::<Meta>()`
        // bytes (checked above) as long as `meta`; this crate reads it only
        // atomically.
        unsafe { copy_shared(meta.as_ptr(), &mut raw) };
        let m: abi::Meta = bytemuck::pod_read_unaligned(&raw);
        if m.magic != abi::MAGIC
            || m.abi_version != abi::ABI_VERSION
            || m.cpu != cpu
            || m.data_size != i.data_size
            || m.consumer_offset != i.consumer_offset
            || m.data_offset != i.data_offset
        {
            if m.magic == abi::MAGIC && m.abi_version != abi::ABI_VERSION {
                return Err(Error::AbiVersion {
                    of: crate::AbiOf::Kernel,
                    found: m.abi_version,
                    reader: abi::ABI_VERSION,
                });
            }
            return Err(Error::Geometry(format!(
                "cpu {cpu}'s meta page disagrees with the device: {m:?}"
            )));
        }
        Ok(MappedRing {
            cpu,
            meta,
            consumer,
            data,
            data_size: i.data_size,
            meta_copy: m,
        })
    }

    /// A [`Waker`] that sleeps in `poll()` on the device, with `timeout` so
    /// that idle rings advance the merge, and says stop once `stop` polls
    /// readable: e.g. the read end of a pipe that a signal handler writes
    /// to, or an eventfd another thread signals. The library installs no
    /// handler itself: what ends a run is the caller's policy.
    ///
    /// # Errors
    /// Duplicating the device fd.
    pub fn waker(&self, timeout: Duration, stop: OwnedFd) -> Result<DeviceWaker, Error> {
        let dev = self
            .file
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| Error::io("duplicating the device fd", e))?;
        Ok(DeviceWaker { dev, stop, timeout })
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        if let Some(old) = self.restore_watermark.take() {
            if let Err(e) = self.write_watermark(old) {
                tracing::warn!("could not restore the poll() watermark to {old}: {e}");
            }
        }
    }
}

/// Parses a kernel CPU list such as `0-3,8`.
fn parse_cpu_list(s: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (a.parse::<u32>().ok()?, b.parse::<u32>().ok()?);
                if b < a || b - a > 65536 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}

/// One CPU's ring, mapped from the device.
#[derive(Debug)]
pub struct MappedRing {
    cpu: u32,
    meta: MmapRaw,
    consumer: MmapRaw,
    /// The data pages, mapped twice in a row.
    data: MmapRaw,
    data_size: u64,
    meta_copy: abi::Meta,
}

impl MappedRing {
    /// The atomic at `offset` in the meta page.
    // The pointer is page-aligned plus an 8-aligned offset (see SAFETY).
    #[allow(clippy::cast_ptr_alignment)]
    fn meta_atomic(&self, offset: usize) -> &AtomicU64 {
        debug_assert!(offset.is_multiple_of(8) && offset + 8 <= self.meta.len());
        // SAFETY: the meta page is mapped, page-aligned, for as long as
        // `self`; `offset` is the offset of a u64 field of struct
        // antinomie_meta (8-aligned, within the page). The kernel writes
        // these fields with single 64-bit stores (smp_store_release for
        // producer_pos), and this crate only ever loads them atomically,
        // so no non-atomic access races with them. An atomic load is a
        // plain `mov` on x86-64, so the read-only mapping is never
        // written.
        unsafe { AtomicU64::from_ptr(self.meta.as_ptr().add(offset).cast::<u64>().cast_mut()) }
    }

    /// The data area at `offset`, readable for `len` bytes while `self`
    /// lives: the data pages are mapped twice in a row, so any
    /// `data_size` bytes from an offset below `data_size` are contiguous.
    ///
    /// # Panics
    /// Outside those bounds (the consumer never asks).
    fn data_at(&self, offset: usize, len: usize) -> *const u8 {
        let data_size = self.data.len() / 2;
        assert!(
            offset < data_size && len <= data_size,
            "{len} bytes at {offset} are outside a {data_size}-byte ring"
        );
        // SAFETY: `offset < data_size <= data.len()`: within the mapping,
        // and `offset + len <= 2 * data_size = data.len()`.
        unsafe { self.data.as_ptr().add(offset) }
    }

    // The pointer is page-aligned (see SAFETY).
    #[allow(clippy::cast_ptr_alignment)]
    fn consumer_atomic(&self) -> &AtomicU64 {
        // SAFETY: the consumer page is mapped read-write, page-aligned, for
        // as long as `self`; consumer_pos is its first u64. The kernel only
        // reads it (smp_load_acquire at (D)) except when reinitialising a
        // ring, which it refuses while a ring is mapped; this crate only
        // accesses it atomically.
        unsafe { AtomicU64::from_ptr(self.consumer.as_mut_ptr().cast::<u64>()) }
    }

    /// The meta page as it was when mapped.
    #[must_use]
    pub fn meta(&self) -> &abi::Meta {
        &self.meta_copy
    }

    /// A golden ring image of this ring: meta page, consumer page, one copy
    /// of the data area (see [`crate::ring::ImageRing`]).
    #[must_use]
    pub fn snapshot(&self) -> Vec<u8> {
        let m = &self.meta_copy;
        let len = usize::try_from(m.data_offset + m.data_size).unwrap_or(0);
        let mut img = vec![0u8; len];
        let counters = self.counters();
        let mut meta = *m;
        meta.producer_pos = counters.producer_pos;
        meta.produced = counters.produced;
        meta.lost = counters.lost;
        if let Some(l) = counters.lossless {
            meta.flags = if l.on { abi::META_F_LOSSLESS } else { 0 };
            meta.waits = l.waits;
            meta.wait_ns = l.wait_ns;
        }
        img[..size_of::<abi::Meta>()].copy_from_slice(bytemuck::bytes_of(&meta));
        let co = usize::try_from(m.consumer_offset).unwrap_or(0);
        img[co..co + 8].copy_from_slice(&counters.consumer_pos.to_le_bytes());
        let d = usize::try_from(m.data_offset).unwrap_or(0);
        let n = usize::try_from(m.data_size).unwrap_or(0);
        self.read_data(0, &mut img[d..d + n]);
        img
    }
}

impl RingMemory for MappedRing {
    fn cpu(&self) -> u32 {
        self.cpu
    }

    fn data_size(&self) -> u64 {
        self.data_size
    }

    fn read_data(&self, offset: usize, out: &mut [u8]) {
        let src = self.data_at(offset, out.len());
        // SAFETY: `src` is readable for `out.len()` bytes as long as
        // `self` (data_at); this crate reads the data pages only through
        // copy_shared's atomic loads.
        unsafe { copy_shared(src, out) };
    }

    fn append_data(&self, offset: usize, len: usize, out: &mut Vec<u8>) {
        let src = self.data_at(offset, len);
        out.reserve(len);
        let start = out.len();
        // SAFETY: as read_data's, for `len` bytes; the spare capacity
        // holds at least `len` bytes (reserved).
        unsafe { copy_shared_uninit(src, &mut out.spare_capacity_mut()[..len]) };
        // SAFETY: copy_shared_uninit initialised those `len` bytes, within
        // the capacity.
        unsafe { out.set_len(start + len) };
    }

    fn load_producer_pos(&self) -> u64 {
        // ATOMICS: (B) load-acquire of meta->producer_pos, pairing with the
        // producer's (A) smp_store_release: the records before it are
        // complete when read.
        self.meta_atomic(offset_of!(abi::Meta, producer_pos))
            .load(Ordering::Acquire)
    }

    fn load_consumer_pos(&self) -> u64 {
        // ATOMICS: our own position; the kernel does not write it while
        // the ring is mapped. Relaxed.
        self.consumer_atomic().load(Ordering::Relaxed)
    }

    fn store_consumer_pos(&self, pos: u64) {
        // ATOMICS: (C) store-release of consumer->consumer_pos after the
        // last read of the records before it, pairing with the producer's
        // (D) smp_load_acquire before it reuses that space.
        self.consumer_atomic().store(pos, Ordering::Release);
    }

    fn counters(&self) -> RingCounters {
        // ATOMICS: the counters are single u64 stores by the producer;
        // relaxed loads, as the header says. producer_pos with Acquire so
        // that `produced` read after it counts at least its records.
        let producer_pos = self.load_producer_pos();
        let mut lost = [0u64; abi::LOST_NR_SLOTS];
        for (i, l) in lost.iter_mut().enumerate() {
            *l = self
                .meta_atomic(offset_of!(abi::Meta, lost) + 8 * i)
                .load(Ordering::Relaxed);
        }
        let lossless = meta_has_lossless(self.meta_copy.meta_size).then(|| {
            let flags = self
                .meta_atomic(offset_of!(abi::Meta, flags))
                .load(Ordering::Relaxed);
            LosslessCounters {
                // `flags` is the low half of the u64 it shares with
                // `reserved` (little-endian, as the kernel is x86-64).
                on: flags & u64::from(abi::META_F_LOSSLESS) != 0,
                waits: self
                    .meta_atomic(offset_of!(abi::Meta, waits))
                    .load(Ordering::Relaxed),
                wait_ns: self
                    .meta_atomic(offset_of!(abi::Meta, wait_ns))
                    .load(Ordering::Relaxed),
            }
        });
        RingCounters {
            producer_pos,
            consumer_pos: self.load_consumer_pos(),
            produced: self
                .meta_atomic(offset_of!(abi::Meta, produced))
                .load(Ordering::Relaxed),
            lost,
            lossless,
        }
    }
}

/// Sleeps in `poll()` on the device and on the stop fd
/// ([`Device::waker`]).
#[derive(Debug)]
pub struct DeviceWaker {
    dev: OwnedFd,
    stop: OwnedFd,
    timeout: Duration,
}

impl Waker for DeviceWaker {
    fn wait(&mut self) -> Tick {
        let timeout = rustix::time::Timespec {
            tv_sec: i64::try_from(self.timeout.as_secs()).unwrap_or(i64::MAX),
            tv_nsec: i64::from(self.timeout.subsec_nanos()),
        };
        let mut fds = [
            PollFd::new(&self.dev, PollFlags::IN),
            PollFd::new(&self.stop, PollFlags::IN),
        ];
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => {
                tracing::error!("poll on the device failed: {e}; stopping");
                return Tick::Stop;
            }
        }
        if fds[1].revents().contains(PollFlags::IN) {
            tracing::info!("told to stop: draining once more and stopping");
            return Tick::Stop;
        }
        if fds[0]
            .revents()
            .intersects(PollFlags::ERR | PollFlags::HUP | PollFlags::NVAL)
        {
            tracing::error!("the device reported an error to poll(); stopping");
            return Tick::Stop;
        }
        Tick::Drain
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3\n"), Some(vec![0, 1, 2, 3]));
        assert_eq!(parse_cpu_list("0,2-3"), Some(vec![0, 2, 3]));
        assert_eq!(parse_cpu_list("x"), None);
        assert_eq!(parse_cpu_list("3-1"), None);
    }

    #[test]
    fn missing_device_is_explained() {
        let e = Device::open(Path::new("/nonexistent/antinomie")).unwrap_err();
        assert!(matches!(e, Error::DeviceMissing { .. }), "{e}");
        assert!(e.to_string().contains("CONFIG_ANTINOMIE"));
    }

    #[test]
    fn a_non_antinomie_device_is_refused() {
        let e = Device::open(Path::new("/dev/null")).unwrap_err();
        assert!(matches!(e, Error::Geometry(_)), "{e}");
    }
}
