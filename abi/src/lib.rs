// SPDX-License-Identifier: GPL-2.0-only
//! Rust mirror of Antinomie's uapi header, `abi/antinomie.h`.
//!
//! The header is the specification; this crate restates its layouts and
//! constants so that the reader can view ring memory through
//! [`bytemuck`] without copying or `unsafe`. Each item names the C item it
//! mirrors; constants drop the `ANTINOMIE_` prefix. What a field means,
//! when it is valid and how structures grow is documented once, in the
//! header, and not repeated here.
//!
//! Layouts are pinned three ways: the `const` asserts in this file, the
//! kernel's `BUILD_BUG_ON()`s, and `tests/layout.rs`, which compiles the
//! header with the system C compiler and compares every size, offset and
//! constant with this crate.
//!
//! A mapped ring is shared with the kernel, which keeps writing to it: read
//! [`Meta::producer_pos`] and write [`Consumer::consumer_pos`] only through
//! atomics, as the MEMORY ORDERING section of `antinomie.h` prescribes
//! (points (B) and (C) are the consumer's), and read the counters of
//! [`Meta`] with relaxed atomic loads. The structs here are plain values,
//! for records and for copies.

#![no_std]
#![deny(missing_docs)]

use bytemuck::{Pod, Zeroable};
use core::mem::offset_of;

// The ioctl numbers below use the asm-generic encoding of `<linux/ioctl.h>`,
// which x86, arm64 and riscv share; these architectures encode differently.
#[cfg(any(
    target_arch = "mips",
    target_arch = "mips32r6",
    target_arch = "mips64",
    target_arch = "mips64r6",
    target_arch = "powerpc",
    target_arch = "powerpc64",
    target_arch = "sparc",
    target_arch = "sparc64",
))]
compile_error!("antinomie-abi encodes ioctl numbers the asm-generic way only");

/// `ANTINOMIE_ABI_VERSION`: the version this crate mirrors; compare with
/// [`Meta::abi_version`] and [`Info::abi_version`].
pub const ABI_VERSION: u32 = 4;
/// `ANTINOMIE_MAGIC`: [`Meta::magic`] of every ring.
pub const MAGIC: u32 = 0x4954_4e41;

/// `ANTINOMIE_LOST_RING_FULL`: index in the `lost` arrays of records
/// dropped because the ring had no room.
pub const LOST_RING_FULL: usize = 0;
/// `ANTINOMIE_LOST_BAD_CONSUMER`: index in the `lost` arrays of records
/// dropped because the consumer position was invalid.
pub const LOST_BAD_CONSUMER: usize = 1;
/// `ANTINOMIE_LOST_RING_BROKEN`: index in the `lost` arrays of records
/// dropped because the kernel found the ring's own state corrupted (counted
/// in the meta page only, never in a LOST record).
pub const LOST_RING_BROKEN: usize = 2;
/// `ANTINOMIE_LOST_NR_SLOTS`: length of the `lost` arrays.
pub const LOST_NR_SLOTS: usize = 8;

/// `ANTINOMIE_RECORD_ALIGN`: alignment of every record and capture item.
pub const RECORD_ALIGN: u32 = 8;

/// `ANTINOMIE_CALL_ID_SEQ_BITS`: a [`RecordHeader::call_id`] is the id of
/// the CPU that named the call, shifted left by this many bits, or'ed with
/// that CPU's sequence number of the call (from 1).
pub const CALL_ID_SEQ_BITS: u32 = 48;
/// `ANTINOMIE_CALL_ID_SEQ_MASK`: the sequence-number bits of a call id.
pub const CALL_ID_SEQ_MASK: u64 = (1 << CALL_ID_SEQ_BITS) - 1;

/// `ANTINOMIE_RECORD_ENTRY`: [`RecordHeader::type`] of an [`Entry`] record.
pub const RECORD_ENTRY: u32 = 1;
/// `ANTINOMIE_RECORD_EXIT`: [`RecordHeader::type`] of an [`Exit`] record.
pub const RECORD_EXIT: u32 = 2;
/// `ANTINOMIE_RECORD_LOST`: [`RecordHeader::type`] of a [`Lost`] record.
pub const RECORD_LOST: u32 = 3;

/// `ANTINOMIE_RECORD_F_COMPAT`: [`RecordHeader::flags`] bit, the call came
/// through a compat entry.
pub const RECORD_F_COMPAT: u32 = 1 << 0;

/// `ANTINOMIE_KIND_PERF_EVENT_ATTR`: [`Capture::kind`] of a
/// `struct perf_event_attr`.
pub const KIND_PERF_EVENT_ATTR: u32 = 1;

/// `ANTINOMIE_STATUS_COMPLETE`: [`Capture::status`], read in full.
pub const STATUS_COMPLETE: u32 = 1;
/// `ANTINOMIE_STATUS_NULL_PTR`: [`Capture::status`], the pointer was 0.
pub const STATUS_NULL_PTR: u32 = 2;
/// `ANTINOMIE_STATUS_FAULT`: [`Capture::status`], a read faulted at
/// [`Capture::fault_offset`].
pub const STATUS_FAULT: u32 = 3;
/// `ANTINOMIE_STATUS_TRUNCATED`: [`Capture::status`], the declared size
/// exceeds what the kernel copies.
pub const STATUS_TRUNCATED: u32 = 4;
/// `ANTINOMIE_STATUS_INVALID_SIZE`: [`Capture::status`], the declared size
/// is out of the kernel's range.
pub const STATUS_INVALID_SIZE: u32 = 5;
/// `ANTINOMIE_STATUS_NOT_APPLICABLE`: [`Capture::status`], the kernel does
/// not read this pointee in this call.
pub const STATUS_NOT_APPLICABLE: u32 = 6;

/// `ANTINOMIE_CAPTURE_F_TAIL_ZERO`: [`Capture::flags`] bit, the bytes past
/// the kernel's struct size are all zero.
pub const CAPTURE_F_TAIL_ZERO: u32 = 1 << 0;
/// `ANTINOMIE_CAPTURE_F_TAIL_NONZERO`: [`Capture::flags`] bit, some byte
/// past the kernel's struct size is not zero.
pub const CAPTURE_F_TAIL_NONZERO: u32 = 1 << 1;
/// `ANTINOMIE_CAPTURE_F_SIZE_FAULT`: [`Capture::flags`] bit, reading the
/// size word faulted.
pub const CAPTURE_F_SIZE_FAULT: u32 = 1 << 2;

/// `ANTINOMIE_EXIT_F_SIZE_STORE_FAULT`: [`Exit::flags`] bit, with
/// [`EXIT_F_SIZE_WRITTEN`]: the kernel's store of the size faulted.
pub const EXIT_F_SIZE_STORE_FAULT: u32 = 1 << 0;
/// `ANTINOMIE_EXIT_F_SIZE_WRITTEN`: [`Exit::flags`] bit, E2BIG from
/// `perf_copy_attr()`'s size checks, which store the size the kernel
/// wants; [`Exit::required_size`] holds it.
pub const EXIT_F_SIZE_WRITTEN: u32 = 1 << 1;
/// `ANTINOMIE_EXIT_F_ATTR_COPIED`: [`Exit::flags`] bit, `perf_copy_attr()`
/// succeeded.
pub const EXIT_F_ATTR_COPIED: u32 = 1 << 2;
/// `ANTINOMIE_EXIT_F_ENTRY_LOST`: [`Exit::flags`] bit, this call's entry
/// record was dropped.
pub const EXIT_F_ENTRY_LOST: u32 = 1 << 4;
/// `ANTINOMIE_EXIT_F_ENTRY_GONE`: [`Exit::flags`] bit, the entry (or the
/// count of its loss) went to rings replaced or freed during the call.
pub const EXIT_F_ENTRY_GONE: u32 = 1 << 5;
/// `ANTINOMIE_EXIT_F_WAITED`: [`Exit::flags`] bit, in lossless mode the
/// call waited for room before its entry; its duration includes the wait.
pub const EXIT_F_WAITED: u32 = 1 << 6;

/// `ANTINOMIE_META_F_LOSSLESS`: [`Meta::flags`] bit, lossless mode is on:
/// callers wait for room rather than lose records.
pub const META_F_LOSSLESS: u32 = 1 << 0;
/// `ANTINOMIE_LOSSLESS_TIMEOUT_MAX_MS`: the longest the kernel's
/// `antinomie.lossless_timeout_ms` may be set to.
pub const LOSSLESS_TIMEOUT_MAX_MS: u32 = 10000;

/// `ANTINOMIE_INFO_F_ENABLED`: [`Info::flags`] bit, capture is on.
pub const INFO_F_ENABLED: u32 = 1 << 0;
/// `ANTINOMIE_INFO_F_LOSSLESS`: [`Info::flags`] bit, lossless mode is on.
pub const INFO_F_LOSSLESS: u32 = 1 << 1;
/// `ANTINOMIE_INFO_F_SCOPED`: [`Info::flags`] bit, a scope is set
/// ([`IOC_SET_SCOPE`]).
pub const INFO_F_SCOPED: u32 = 1 << 2;
/// `ANTINOMIE_INFO_F_SCOPE_CAPTURE`: [`Info::flags`] bit, capture is
/// limited to the scope.
pub const INFO_F_SCOPE_CAPTURE: u32 = 1 << 3;

/// `ANTINOMIE_SCOPE_F_CAPTURE`: [`Scope::flags`] bit, capture only the
/// scope's calls (else the scope limits lossless mode's waits alone).
pub const SCOPE_F_CAPTURE: u32 = 1 << 0;

/// `ANTINOMIE_IOC_MAGIC`: the ioctl type of `/dev/antinomie`.
pub const IOC_MAGIC: u32 = 0xA6;

// <asm-generic/ioctl.h>: the command word is dir:2 | size:14 | type:8 | nr:8.
const IOC_NRSHIFT: u32 = 0;
const IOC_TYPESHIFT: u32 = 8;
const IOC_SIZESHIFT: u32 = 16;
const IOC_DIRSHIFT: u32 = 30;
const IOC_SIZEBITS: u32 = 14;
const IOC_NONE: u32 = 0;
const IOC_WRITE: u32 = 1;
const IOC_READ: u32 = 2;

/// `_IOC(dir, IOC_MAGIC, nr, size)`.
// The assert makes the narrowing cast lossless; `u32::try_from` is not
// usable in a const fn.
#[allow(clippy::cast_possible_truncation)]
const fn ioc(dir: u32, nr: u32, size: usize) -> u32 {
    assert!(size < 1 << IOC_SIZEBITS, "ioctl argument too large");
    (dir << IOC_DIRSHIFT)
        | ((size as u32) << IOC_SIZESHIFT)
        | (IOC_MAGIC << IOC_TYPESHIFT)
        | (nr << IOC_NRSHIFT)
}

/// `_IO(IOC_MAGIC, nr)`.
const fn io(nr: u32) -> u32 {
    ioc(IOC_NONE, nr, 0)
}

/// `_IOR(IOC_MAGIC, nr, T)`.
const fn ior<T>(nr: u32) -> u32 {
    ioc(IOC_READ, nr, size_of::<T>())
}

/// `_IOW(IOC_MAGIC, nr, T)`.
const fn iow<T>(nr: u32) -> u32 {
    ioc(IOC_WRITE, nr, size_of::<T>())
}

/// `_IOWR(IOC_MAGIC, nr, T)`.
const fn iowr<T>(nr: u32) -> u32 {
    ioc(IOC_READ | IOC_WRITE, nr, size_of::<T>())
}

/// `ANTINOMIE_IOC_GET_INFO`: fills an [`Info`].
pub const IOC_GET_INFO: u32 = ior::<Info>(0x00);
/// `ANTINOMIE_IOC_ENABLE`: starts capturing new calls.
pub const IOC_ENABLE: u32 = io(0x01);
/// `ANTINOMIE_IOC_DISABLE`: stops capturing new calls.
pub const IOC_DISABLE: u32 = io(0x02);
/// `ANTINOMIE_IOC_GET_COUNTERS`: fills a [`Counters`] for its `cpu`.
pub const IOC_GET_COUNTERS: u32 = iowr::<Counters>(0x03);
/// `ANTINOMIE_IOC_SET_RING_SIZE`: takes a `u64` data size.
pub const IOC_SET_RING_SIZE: u32 = iow::<u64>(0x04);
/// `ANTINOMIE_IOC_SET_WATERMARK`: takes a `u64` watermark in bytes.
pub const IOC_SET_WATERMARK: u32 = iow::<u64>(0x05);
/// `ANTINOMIE_IOC_SET_LOSSLESS`: takes a `u32`, 1 for lossless mode on, 0
/// for off.
pub const IOC_SET_LOSSLESS: u32 = iow::<u32>(0x06);
/// `ANTINOMIE_IOC_SET_SCOPE`: takes a [`Scope`], the workload traced.
pub const IOC_SET_SCOPE: u32 = iow::<Scope>(0x07);

/// Asserts at compile time the size, the alignment and every field offset
/// of a mirror, as the header lays them out.
macro_rules! assert_layout {
    ($ty:ty, size $size:literal, align $align:literal, { $($field:ident: $offset:literal),+ $(,)? }) => {
        const _: () = {
            assert!(size_of::<$ty>() == $size);
            assert!(align_of::<$ty>() == $align);
            $(assert!(offset_of!($ty, $field) == $offset);)+
        };
    };
}

/// `struct antinomie_meta`: the read-only meta page of a ring.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Meta {
    /// `magic`: [`MAGIC`].
    pub magic: u32,
    /// `abi_version`: the kernel's ABI version.
    pub abi_version: u32,
    /// `meta_size`: bytes of the kernel's `struct antinomie_meta`.
    pub meta_size: u32,
    /// `cpu`: CPU of this ring.
    pub cpu: u32,
    /// `data_size`: bytes of the data area, a power of two.
    pub data_size: u64,
    /// `consumer_offset`: offset of the consumer page in the ring's mapping.
    pub consumer_offset: u64,
    /// `data_offset`: offset of the data pages in the ring's mapping.
    pub data_offset: u64,
    /// `producer_pos`: end of the last complete record; MEMORY ORDERING (A),
    /// (B).
    pub producer_pos: u64,
    /// `produced`: entry and exit records written to this ring.
    pub produced: u64,
    /// `lost`: entry and exit records dropped, indexed by `LOST_*`.
    pub lost: [u64; LOST_NR_SLOTS],
    /// `flags`: `META_F_*`, the capture mode.
    pub flags: u32,
    /// `reserved`: zero.
    pub reserved: u32,
    /// `waits`: records whose producer waited for room (lossless mode).
    pub waits: u64,
    /// `wait_ns`: nanoseconds those waits took, in total.
    pub wait_ns: u64,
}

assert_layout!(Meta, size 144, align 8, {
    magic: 0, abi_version: 4, meta_size: 8, cpu: 12, data_size: 16,
    consumer_offset: 24, data_offset: 32, producer_pos: 40, produced: 48, lost: 56,
    flags: 120, reserved: 124, waits: 128, wait_ns: 136,
});

/// `struct antinomie_consumer`: the writable consumer page of a ring.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Consumer {
    /// `consumer_pos`: end of the last record consumed; MEMORY ORDERING (C),
    /// (D).
    pub consumer_pos: u64,
}

assert_layout!(Consumer, size 8, align 8, { consumer_pos: 0 });

/// `struct antinomie_record_header`: the start of every record.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct RecordHeader {
    /// `size`: bytes of the whole record, a multiple of [`RECORD_ALIGN`].
    pub size: u32,
    /// `type`: `RECORD_*`.
    pub r#type: u32,
    /// `hdr_size`: bytes of the header; the body starts here.
    pub hdr_size: u32,
    /// `flags`: `RECORD_F_*`.
    pub flags: u32,
    /// `call_id`: shared by a call's entry and exit, built as
    /// [`CALL_ID_SEQ_BITS`] says; 0 in lost records.
    pub call_id: u64,
    /// `time_ns`: `CLOCK_MONOTONIC` at reservation.
    pub time_ns: u64,
    /// `pid`: thread-group id of the caller.
    pub pid: u32,
    /// `tid`: thread id of the caller.
    pub tid: u32,
    /// `cpu`: CPU whose ring holds the record.
    pub cpu: u32,
    /// `syscall_nr`: the syscall number as `syscall_get_nr()` reports it,
    /// unmasked: 298 on x86-64, 336 from ia32, `0x4000_012a` from x32.
    pub syscall_nr: u32,
}

assert_layout!(RecordHeader, size 48, align 8, {
    size: 0, r#type: 4, hdr_size: 8, flags: 12, call_id: 16, time_ns: 24,
    pid: 32, tid: 36, cpu: 40, syscall_nr: 44,
});

/// `struct antinomie_entry`: the body of an entry record.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Entry {
    /// `size`: bytes of the body; the capture items start here.
    pub size: u32,
    /// `nr_items`: capture items that follow.
    pub nr_items: u32,
    /// `args`: the six raw argument registers.
    pub args: [u64; 6],
    /// `start_ns`: `CLOCK_MONOTONIC` when the call entered
    /// `perf_event_open()`, before the kernel read any argument; at most the
    /// record's [`RecordHeader::time_ns`], when it was written.
    pub start_ns: u64,
}

assert_layout!(Entry, size 64, align 8, { size: 0, nr_items: 4, args: 8, start_ns: 56 });

/// `struct antinomie_capture`: the header of one captured pointee.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Capture {
    /// `size`: bytes of the item, header, data and padding.
    pub size: u32,
    /// `hdr_size`: bytes of the header; the data starts here.
    pub hdr_size: u32,
    /// `arg`: index of the argument that points to the pointee.
    pub arg: u32,
    /// `kind`: `KIND_*`.
    pub kind: u32,
    /// `status`: `STATUS_*`.
    pub status: u32,
    /// `flags`: `CAPTURE_F_*`.
    pub flags: u32,
    /// `declared_size`: the pointee's size as the kernel took it (for an
    /// attr, the size word with 0 taken as 64); 0 when it could not be read.
    pub declared_size: u32,
    /// `copied_len`: bytes of data that follow.
    pub copied_len: u32,
    /// `fault_offset`: with [`STATUS_FAULT`], the first unreadable byte
    /// where the kernel knows it (4 with [`CAPTURE_F_SIZE_FAULT`]), else 0.
    pub fault_offset: u32,
    /// `reserved`: zero.
    pub reserved: u32,
}

assert_layout!(Capture, size 40, align 4, {
    size: 0, hdr_size: 4, arg: 8, kind: 12, status: 16, flags: 20,
    declared_size: 24, copied_len: 28, fault_offset: 32, reserved: 36,
});

/// `struct antinomie_exit`: the body of an exit record.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Exit {
    /// `size`: bytes of the body; the capture items start here.
    pub size: u32,
    /// `flags`: `EXIT_F_*`.
    pub flags: u32,
    /// `ret`: the syscall's return value.
    pub ret: i64,
    /// `duration_ns`: this record's `time_ns` minus the entry's
    /// [`Entry::start_ns`], exactly (also when the entry was dropped).
    pub duration_ns: u64,
    /// `required_size`: with [`EXIT_F_SIZE_WRITTEN`], the size the kernel
    /// stored (or tried to) into `attr->size`.
    pub required_size: u32,
    /// `nr_items`: capture items that follow; none in ABI version 4.
    pub nr_items: u32,
    /// `entry_pos`: where the call's entry was written (or offered, if
    /// lost) in the ring of the CPU that named the call (`call_id >>`
    /// [`CALL_ID_SEQ_BITS`]).
    pub entry_pos: u64,
}

assert_layout!(Exit, size 40, align 8, {
    size: 0, flags: 4, ret: 8, duration_ns: 16, required_size: 24, nr_items: 28,
    entry_pos: 32,
});

/// `struct antinomie_lost`: the body of a lost record.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Lost {
    /// `size`: bytes of the body.
    pub size: u32,
    /// `reserved`: zero.
    pub reserved: u32,
    /// `first_time_ns`: time of the first dropped record.
    pub first_time_ns: u64,
    /// `last_time_ns`: time of the last dropped record.
    pub last_time_ns: u64,
    /// `min_call_id`: smallest call id among the dropped records.
    pub min_call_id: u64,
    /// `max_call_id`: largest call id among the dropped records.
    pub max_call_id: u64,
    /// `lost`: records dropped since the previous lost record, by `LOST_*`.
    pub lost: [u64; LOST_NR_SLOTS],
}

assert_layout!(Lost, size 104, align 8, {
    size: 0, reserved: 4, first_time_ns: 8, last_time_ns: 16, min_call_id: 24,
    max_call_id: 32, lost: 40,
});

/// `struct antinomie_info`: the device geometry from [`IOC_GET_INFO`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Info {
    /// `size`: bytes the kernel filled in.
    pub size: u32,
    /// `abi_version`: the kernel's ABI version.
    pub abi_version: u32,
    /// `cpu_id_limit`: CPU ids are below this (the kernel's `nr_cpu_ids`).
    pub cpu_id_limit: u32,
    /// `page_size`: the kernel's page size.
    pub page_size: u32,
    /// `flags`: `INFO_F_*`.
    pub flags: u32,
    /// `reserved`: zero.
    pub reserved: u32,
    /// `data_size`: bytes of each ring's data area.
    pub data_size: u64,
    /// `watermark`: `poll()` threshold in bytes.
    pub watermark: u64,
    /// `mmap_stride`: distance between the mmap offsets of consecutive CPUs.
    pub mmap_stride: u64,
    /// `mmap_size`: bytes of one ring's mapping.
    pub mmap_size: u64,
    /// `consumer_offset`: offset of the consumer page in a ring's mapping.
    pub consumer_offset: u64,
    /// `data_offset`: offset of the data pages in a ring's mapping.
    pub data_offset: u64,
}

assert_layout!(Info, size 72, align 8, {
    size: 0, abi_version: 4, cpu_id_limit: 8, page_size: 12, flags: 16, reserved: 20,
    data_size: 24, watermark: 32, mmap_stride: 40, mmap_size: 48, consumer_offset: 56,
    data_offset: 64,
});

/// `struct antinomie_scope`: the argument of [`IOC_SET_SCOPE`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Scope {
    /// `flags`: `SCOPE_F_*`.
    pub flags: u32,
    /// `cgroup_fd`: an fd of a cgroup v2 directory, or -1 for no scope.
    pub cgroup_fd: i32,
}

assert_layout!(Scope, size 8, align 4, { flags: 0, cgroup_fd: 4 });

/// `struct antinomie_counters`: one ring's positions and counters from
/// [`IOC_GET_COUNTERS`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Counters {
    /// `size`: bytes the kernel filled in.
    pub size: u32,
    /// `cpu`: set by the caller, the CPU whose ring to report.
    pub cpu: u32,
    /// `producer_pos`: as in [`Meta::producer_pos`].
    pub producer_pos: u64,
    /// `consumer_pos`: as in [`Consumer::consumer_pos`], not validated.
    pub consumer_pos: u64,
    /// `produced`: as in [`Meta::produced`].
    pub produced: u64,
    /// `lost`: as in [`Meta::lost`].
    pub lost: [u64; LOST_NR_SLOTS],
}

assert_layout!(Counters, size 96, align 8, {
    size: 0, cpu: 4, producer_pos: 8, consumer_pos: 16, produced: 24, lost: 32,
});
