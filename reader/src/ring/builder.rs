// SPDX-License-Identifier: GPL-2.0-only
//! Ring images built record by record, laid out exactly as
//! `abi/antinomie.h` says: what a test or a benchmark of a consumer feeds
//! it instead of a live device. Only with the crate's `test-util`
//! feature: a dev-dependency turns it on,
//! `antinomie-reader = { version = "0.1", features = ["test-util"] }`.
//!
//! A [`RingBuilder`] holds one CPU's ring: records are appended at the
//! producer position (wrapping around the data area), `meta.produced` counts
//! the ENTRY and EXIT records written, and [`RingBuilder::drop_record`]
//! counts a loss in `meta.lost[]` the way the kernel does, writing a LOST
//! record (with the counts and the call-id/time range since the previous
//! one) before the next record, as the header's RECORDS section requires.
//! [`RingBuilder::image`] returns the ring image: meta page, consumer page,
//! data area once, which [`super::ImageRing::from_bytes`] reads back.
//!
//! The record encoders ([`entry_record`], [`exit_record`], [`lost_record`])
//! are public so that a test can corrupt their bytes before writing them
//! with [`RingBuilder::raw`]; [`attr`], [`set`] and [`args`] build a call's
//! `perf_event_attr` bytes and argument words.
//!
//! ```
//! use antinomie_reader::ring::builder::{args, attr, set, CaptureSpec, EntrySpec, RingBuilder};
//!
//! let mut ring = RingBuilder::new(0, 4096);
//! let mut a = attr(136);
//! set(&mut a, "type", 1); // PERF_TYPE_SOFTWARE
//! ring.entry(&EntrySpec {
//!     call_id: 1,
//!     time_ns: 1_000,
//!     pid: 100,
//!     tid: 100,
//!     args: args(0x7ffd_0000_1000, 0, -1, -1, 0),
//!     items: vec![CaptureSpec::complete(&a)],
//!     ..EntrySpec::default()
//! });
//! assert_eq!(ring.image().len(), 2 * 4096 + 4096);
//! ```

use antinomie_abi as abi;

/// The page size of the images: x86-64's.
pub const PAGE: usize = 4096;

/// A capture item to encode.
#[derive(Debug, Clone, Default)]
pub struct CaptureSpec {
    /// The argument it captures (its index).
    pub arg: u32,
    /// `ANTINOMIE_KIND_*`.
    pub kind: u32,
    /// `ANTINOMIE_STATUS_*`.
    pub status: u32,
    /// `ANTINOMIE_CAPTURE_F_*`.
    pub flags: u32,
    /// The size the kernel used (for an attr, its size word with 0 taken
    /// as 64), 0 when it could not be read.
    pub declared_size: u32,
    /// Where a read faulted, when the kernel knows it
    /// (`ANTINOMIE_STATUS_FAULT` with `SIZE_FAULT`: 4), else 0.
    pub fault_offset: u32,
    /// The bytes copied (`copied_len` is their length).
    pub data: Vec<u8>,
}

impl CaptureSpec {
    /// A COMPLETE capture of `attr`, the kernel's copy: the declared size
    /// is its size field, 0 taken as 64 (`PERF_ATTR_SIZE_VER0`) as the
    /// kernel takes it; the bytes are kept as they are (size 0 stays 0).
    #[must_use]
    pub fn complete(attr: &[u8]) -> Self {
        let size = u32::from_le_bytes([attr[4], attr[5], attr[6], attr[7]]);
        CaptureSpec {
            arg: 0,
            kind: abi::KIND_PERF_EVENT_ATTR,
            status: abi::STATUS_COMPLETE,
            flags: 0,
            declared_size: if size == 0 { 64 } else { size },
            fault_offset: 0,
            data: attr.to_vec(),
        }
    }

    /// A capture with `status` and no data.
    #[must_use]
    pub fn empty(status: u32, declared_size: u32) -> Self {
        CaptureSpec {
            arg: 0,
            kind: abi::KIND_PERF_EVENT_ATTR,
            status,
            declared_size,
            ..Default::default()
        }
    }
}

/// An ENTRY to encode.
#[derive(Debug, Clone, Default)]
pub struct EntrySpec {
    /// The call's id, shared with its EXIT.
    pub call_id: u64,
    /// `CLOCK_MONOTONIC` time the record was written.
    pub time_ns: u64,
    /// `CLOCK_MONOTONIC` time the call began (`start_ns`, at most
    /// `time_ns`); `None`: `time_ns`.
    pub start_ns: Option<u64>,
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// `ANTINOMIE_RECORD_F_*`.
    pub flags: u32,
    /// The six argument words.
    pub args: [u64; 6],
    /// The captured arguments.
    pub items: Vec<CaptureSpec>,
}

/// An EXIT to encode.
#[derive(Debug, Clone, Default)]
pub struct ExitSpec {
    /// The call's id, shared with its ENTRY.
    pub call_id: u64,
    /// `CLOCK_MONOTONIC` time.
    pub time_ns: u64,
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// The return value (`-errno` on failure).
    pub ret: i64,
    /// Time from the call's start (the ENTRY's `start_ns`) to this EXIT.
    pub duration_ns: u64,
    /// `ANTINOMIE_EXIT_F_*`.
    pub flags: u32,
    /// The attr size the kernel asked for (E2BIG).
    pub required_size: u32,
    /// Where the call's ENTRY was written (or offered, if it was dropped)
    /// in the ring of the CPU that named the call: what
    /// [`RingBuilder::entry`] and [`RingBuilder::drop_record`] return.
    pub entry_pos: u64,
}

fn align8(n: usize) -> usize {
    (n + 7) & !7
}

fn u32_of(n: usize) -> u32 {
    u32::try_from(n).expect("fits u32")
}

/// Who a record is about: call id, time, pid, tid.
#[derive(Clone, Copy)]
struct Who(u64, u64, u32, u32);

fn header(ty: u32, size: usize, cpu: u32, who: Who, flags: u32) -> abi::RecordHeader {
    abi::RecordHeader {
        size: u32_of(size),
        r#type: ty,
        hdr_size: u32_of(size_of::<abi::RecordHeader>()),
        flags,
        call_id: who.0,
        time_ns: who.1,
        pid: who.2,
        tid: who.3,
        cpu,
        syscall_nr: if ty == abi::RECORD_LOST { 0 } else { 298 },
    }
}

fn items(specs: &[CaptureSpec]) -> Vec<u8> {
    let mut out = Vec::new();
    for c in specs {
        let size = align8(size_of::<abi::Capture>() + c.data.len());
        let h = abi::Capture {
            size: u32_of(size),
            hdr_size: u32_of(size_of::<abi::Capture>()),
            arg: c.arg,
            kind: c.kind,
            status: c.status,
            flags: c.flags,
            declared_size: c.declared_size,
            copied_len: u32_of(c.data.len()),
            fault_offset: c.fault_offset,
            reserved: 0,
        };
        let start = out.len();
        out.extend_from_slice(bytemuck::bytes_of(&h));
        out.extend_from_slice(&c.data);
        out.resize(start + size, 0);
    }
    out
}

/// The bytes of an ENTRY record on `cpu`.
#[must_use]
pub fn entry_record(cpu: u32, e: &EntrySpec) -> Vec<u8> {
    let body = abi::Entry {
        size: u32_of(size_of::<abi::Entry>()),
        nr_items: u32_of(e.items.len()),
        args: e.args,
        start_ns: e.start_ns.unwrap_or(e.time_ns),
    };
    let items = items(&e.items);
    let size = size_of::<abi::RecordHeader>() + size_of::<abi::Entry>() + items.len();
    let h = header(
        abi::RECORD_ENTRY,
        size,
        cpu,
        Who(e.call_id, e.time_ns, e.pid, e.tid),
        e.flags,
    );
    let mut out = bytemuck::bytes_of(&h).to_vec();
    out.extend_from_slice(bytemuck::bytes_of(&body));
    out.extend_from_slice(&items);
    out
}

/// The bytes of an EXIT record on `cpu`: without capture items, as every
/// EXIT of ABI version 4.
#[must_use]
pub fn exit_record(cpu: u32, x: &ExitSpec) -> Vec<u8> {
    let body = abi::Exit {
        size: u32_of(size_of::<abi::Exit>()),
        flags: x.flags,
        ret: x.ret,
        duration_ns: x.duration_ns,
        required_size: x.required_size,
        nr_items: 0,
        entry_pos: x.entry_pos,
    };
    let size = size_of::<abi::RecordHeader>() + size_of::<abi::Exit>();
    let h = header(
        abi::RECORD_EXIT,
        size,
        cpu,
        Who(x.call_id, x.time_ns, x.pid, x.tid),
        0,
    );
    let mut out = bytemuck::bytes_of(&h).to_vec();
    out.extend_from_slice(bytemuck::bytes_of(&body));
    out
}

/// The bytes of a LOST record on `cpu`.
#[must_use]
pub fn lost_record(cpu: u32, time_ns: u64, body: &abi::Lost) -> Vec<u8> {
    let size = size_of::<abi::RecordHeader>() + size_of::<abi::Lost>();
    let h = header(abi::RECORD_LOST, size, cpu, Who(0, time_ns, 0, 0), 0);
    let mut out = bytemuck::bytes_of(&h).to_vec();
    out.extend_from_slice(bytemuck::bytes_of(body));
    out
}

/// One CPU's ring under construction.
#[derive(Debug, Clone)]
pub struct RingBuilder {
    /// The ring's CPU.
    pub cpu: u32,
    data: Vec<u8>,
    start_pos: u64,
    producer_pos: u64,
    produced: u64,
    lost: [u64; abi::LOST_NR_SLOTS],
    /// Losses since the last LOST record: counts and ranges.
    pending: Option<abi::Lost>,
}

impl RingBuilder {
    /// An empty ring of `data_size` bytes.
    ///
    /// # Panics
    /// If `data_size` is not a power of two, as the kernel's never is.
    #[must_use]
    pub fn new(cpu: u32, data_size: usize) -> Self {
        assert!(data_size.is_power_of_two());
        RingBuilder {
            cpu,
            data: vec![0; data_size],
            start_pos: 0,
            producer_pos: 0,
            produced: 0,
            lost: [0; abi::LOST_NR_SLOTS],
            pending: None,
        }
    }

    /// Starts the ring at `pos`, as if a consumer had already read up to
    /// there (so that records wrap around the end of the data area).
    ///
    /// # Panics
    /// If records were written already.
    #[must_use]
    pub fn start_at(mut self, pos: u64) -> Self {
        assert_eq!(self.producer_pos, self.start_pos, "start_at on a used ring");
        self.start_pos = pos;
        self.producer_pos = pos;
        self
    }

    /// The producer position.
    #[must_use]
    pub fn producer_pos(&self) -> u64 {
        self.producer_pos
    }

    /// Writes raw bytes at the producer position and advances it (for
    /// corrupt records); counts nothing. Returns where they start.
    ///
    /// # Panics
    /// If the unread bytes would no longer fit the data area: a kernel
    /// would drop the record, this builder refuses to lose it silently.
    pub fn raw(&mut self, bytes: &[u8]) -> u64 {
        let pos = self.producer_pos;
        let n = self.data.len();
        for (i, b) in bytes.iter().enumerate() {
            let off = usize::try_from((pos + i as u64) % n as u64).unwrap();
            self.data[off] = *b;
        }
        self.producer_pos += bytes.len() as u64;
        assert!(
            self.producer_pos - self.start_pos <= n as u64,
            "the ring is full"
        );
        pos
    }

    fn flush_lost(&mut self, time_ns: u64) {
        if let Some(body) = self.pending.take() {
            let rec = lost_record(self.cpu, time_ns.max(body.last_time_ns), &body);
            self.raw(&rec);
        }
    }

    /// Writes an ENTRY (after a pending LOST record); returns its position.
    pub fn entry(&mut self, e: &EntrySpec) -> u64 {
        self.flush_lost(e.time_ns);
        self.produced += 1;
        self.raw(&entry_record(self.cpu, e))
    }

    /// Writes an EXIT (after a pending LOST record); returns its position.
    pub fn exit(&mut self, x: &ExitSpec) -> u64 {
        self.flush_lost(x.time_ns);
        self.produced += 1;
        self.raw(&exit_record(self.cpu, x))
    }

    /// Drops a record as the kernel does when the ring is full: counted in
    /// `meta.lost[reason]`, reported by the next LOST record. Returns the
    /// position it was offered at (a dropped ENTRY's `entry_pos`).
    pub fn drop_record(&mut self, reason: usize, call_id: u64, time_ns: u64) -> u64 {
        self.lost[reason] += 1;
        let p = self.pending.get_or_insert(abi::Lost {
            size: u32_of(size_of::<abi::Lost>()),
            first_time_ns: time_ns,
            min_call_id: call_id,
            ..Default::default()
        });
        p.lost[reason] += 1;
        p.last_time_ns = time_ns;
        p.min_call_id = p.min_call_id.min(call_id);
        p.max_call_id = p.max_call_id.max(call_id);
        self.producer_pos
    }

    /// The golden ring image: meta page, consumer page (`consumer_pos` at
    /// the start position), data area.
    #[must_use]
    pub fn image(&self) -> Vec<u8> {
        let data_size = self.data.len();
        let meta = abi::Meta {
            magic: abi::MAGIC,
            abi_version: abi::ABI_VERSION,
            meta_size: u32_of(size_of::<abi::Meta>()),
            cpu: self.cpu,
            data_size: data_size as u64,
            consumer_offset: PAGE as u64,
            data_offset: 2 * PAGE as u64,
            producer_pos: self.producer_pos,
            produced: self.produced,
            lost: self.lost,
            ..abi::Meta::default()
        };
        let mut img = vec![0u8; 2 * PAGE + data_size];
        img[..size_of::<abi::Meta>()].copy_from_slice(bytemuck::bytes_of(&meta));
        img[PAGE..PAGE + 8].copy_from_slice(&self.start_pos.to_le_bytes());
        img[2 * PAGE..].copy_from_slice(&self.data);
        img
    }
}

/// A `struct perf_event_attr` of `len` bytes with `size` in its size field
/// (136 bytes of storage at least, so members can be set beyond `len` and
/// then cut off).
#[must_use]
pub fn attr(size: u32) -> Vec<u8> {
    let mut a = vec![0u8; 136];
    a[4..8].copy_from_slice(&size.to_le_bytes());
    a
}

/// Sets a member of attr bytes through the decoder's table.
///
/// # Panics
/// If the table has no member `name`, or `attr` is too short for it.
pub fn set(attr: &mut [u8], name: &str, value: u64) {
    let m = crate::decode::member(name).unwrap_or_else(|| panic!("no member {name}"));
    let mut word = [0u8; 8];
    word[..m.width].copy_from_slice(&attr[m.offset..m.offset + m.width]);
    let mut w = u64::from_le_bytes(word);
    let (shift, len) = m.bits.unwrap_or((0, u32_of(m.width * 8)));
    let mask = if len >= 64 {
        u64::MAX
    } else {
        (1u64 << len) - 1
    };
    w = (w & !(mask << shift)) | ((value & mask) << shift);
    attr[m.offset..m.offset + m.width].copy_from_slice(&w.to_le_bytes()[..m.width]);
}

/// The argument words of a call, ints sign-extended as the kernel sees
/// them from a 64-bit caller.
#[must_use]
pub fn args(attr_uptr: u64, pid: i32, cpu: i32, group_fd: i32, flags: u64) -> [u64; 6] {
    let w = |v: i32| u64::from_le_bytes(i64::from(v).to_le_bytes());
    [attr_uptr, w(pid), w(cpu), w(group_fd), flags, 0]
}
