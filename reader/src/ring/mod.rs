// SPDX-License-Identifier: GPL-2.0-only
//! The consumer side of one CPU's ring.
//!
//! Files: the types shared by every ring here; `consumer.rs` the
//! [`RingConsumer`] and its [`RecordGuard`]; `image.rs` [`ImageRing`];
//! `shared.rs` the copies out of ring memory; `builder.rs` ring images
//! built record by record (`builder::RingBuilder`, with the `test-util`
//! feature).
//!
//! [`RingMemory`] abstracts where the ring lives: the live device mapping
//! ([`crate::device::MappedRing`]: meta page read-only, consumer page
//! read-write, data pages mapped twice so that a record is always
//! contiguous) or a plain byte image ([`ImageRing`]: a golden ring image or
//! a test's, data held once, so a record may straddle the end of the data
//! area). Either way the consumer never borrows ring memory: it *copies*
//! each record out ([`RingMemory::read_data`]; on the live ring with
//! relaxed atomic loads, `copy_shared`), as io-uring's consumers do, and
//! validates and decodes the copy. No `&[u8]` ever points at memory the
//! kernel may write.
//!
//! [`RingConsumer`] reads `producer_pos` with Acquire (the header's
//! MEMORY ORDERING point (B)), hands out one record at a time as a
//! [`RecordGuard`] whose bytes live in the consumer's scratch buffer and
//! cannot outlive the guard, and advances `consumer_pos` when the guard is
//! dropped; the new position is published with Release (point (C)) in
//! batches, and at the end of every drain pass. [`RingConsumer::drain_into`]
//! copies every record of a pass straight into the caller's batch buffer.
//!
//! Ring positions are free-running `u64`s that the kernel lets wrap: every
//! difference and sum of positions is `wrapping_*` on purpose.
//!
//! # Corrupt records: the policy
//!
//! Every record is validated before it is decoded ([`crate::record`]): the
//! kernel-written memory is untrusted. Record by record
//! ([`RingConsumer::next_record`]) the consumer validates each whole; a
//! drain pass ([`RingConsumer::drain_into`]) frames the records and
//! applies the framing half of the policy, and the merge that decodes its
//! batch applies the rest ([`crate::pipeline::Merger::push_batch`]). A bad
//! record is reported as a [`CorruptRecord`] carrying the CPU and the ring
//! position, never a panic:
//!
//! * A *framing* error (bad size, misaligned position, a record running past
//!   `producer_pos`, a bad `hdr_size`, type 0, inconsistent positions) means
//!   the next record cannot be located. The consumer **stops this ring**:
//!   it publishes the position of the last good record, returns the error
//!   once ([`CorruptRecord::fatal`]), and then yields nothing more. The
//!   other rings carry on. The undecodable bytes stay in the ring, where
//!   the kernel counts what it cannot write as lost, so nothing is lost
//!   silently.
//! * An error inside a well-framed record (unknown type, a body or capture
//!   item that does not nest, a wrong `cpu`) skips that record by its size
//!   and continues: the header says readers skip types they do not know.
//! * A consumer position that is invalid when the consumer starts (ahead of
//!   the producer, more than `data_size` behind it, or misaligned) is
//!   reported and the consumer resynchronises at `producer_pos`.

#[cfg(any(test, feature = "test-util"))]
pub mod builder;
mod consumer;
mod image;
mod shared;

use antinomie_abi as abi;

use crate::record::RecordError;

pub use consumer::{RecordGuard, RingConsumer};
pub use image::ImageRing;
pub(crate) use shared::{copy_shared, copy_shared_uninit};

/// A ring's positions and counters as the kernel reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RingCounters {
    /// `meta.producer_pos`.
    pub producer_pos: u64,
    /// `consumer.consumer_pos`.
    pub consumer_pos: u64,
    /// `meta.produced`: ENTRY and EXIT records written.
    pub produced: u64,
    /// `meta.lost[]`: ENTRY and EXIT records dropped, by reason.
    pub lost: [u64; abi::LOST_NR_SLOTS],
    /// Lossless mode and its waits; `None` when not known: a meta page
    /// too short to hold them, or counters from a trace file.
    pub lossless: Option<LosslessCounters>,
}

/// Lossless mode as a ring's meta page shows it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LosslessCounters {
    /// `meta.flags` has `META_F_LOSSLESS`: callers wait for room.
    pub on: bool,
    /// `meta.waits`: records whose producer waited for room.
    pub waits: u64,
    /// `meta.wait_ns`: the time those waits took, in all.
    pub wait_ns: u64,
}

/// The bytes of `struct antinomie_meta` before the lossless fields: the
/// smallest meta page this reader accepts. The fields after it are read
/// only when `meta_size` covers them.
pub const META_BASE_SIZE: usize = std::mem::offset_of!(abi::Meta, flags);

/// Whether a meta page of `meta_size` bytes holds the lossless fields.
#[must_use]
pub fn meta_has_lossless(meta_size: u32) -> bool {
    meta_size as usize >= size_of::<abi::Meta>()
}

/// Where a ring's memory is. Implementations own (or map) the memory for
/// their whole lifetime.
pub trait RingMemory {
    /// The ring's CPU.
    fn cpu(&self) -> u32;
    /// Bytes of the data area: a power of two.
    fn data_size(&self) -> u64;
    /// Copies `out.len()` bytes of the data area, starting `offset` bytes
    /// into it, wrapping around its end. The consumer calls it with
    /// `offset < data_size` and `out.len() <= data_size` only; an
    /// implementation may panic otherwise.
    fn read_data(&self, offset: usize, out: &mut [u8]);
    /// Appends `len` bytes of the data area from `offset` to `out`, as
    /// [`RingMemory::read_data`] reads them (a drain pass takes its whole
    /// batch this way). The default zeroes the new bytes, then reads into
    /// them; an implementation that can copy into `out`'s spare capacity
    /// directly saves that pass over the batch.
    fn append_data(&self, offset: usize, len: usize, out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + len, 0);
        self.read_data(offset, &mut out[start..]);
    }
    /// `meta.producer_pos`, loaded with Acquire: MEMORY ORDERING (B).
    fn load_producer_pos(&self) -> u64;
    /// `consumer.consumer_pos` as currently stored.
    fn load_consumer_pos(&self) -> u64;
    /// Stores `consumer.consumer_pos` with Release: MEMORY ORDERING (C).
    fn store_consumer_pos(&self, pos: u64);
    /// The counters, each read with a relaxed load.
    fn counters(&self) -> RingCounters;
}

/// A record that could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cpu {cpu}: {} record at ring position {pos:#x}{}: {error}{}",
    if *.fatal { "corrupt" } else { "skipped" },
    offset.map(|o| format!(" (data offset {o:#x})")).unwrap_or_default(),
    if *.fatal { "; ring stopped" } else { "" })]
pub struct CorruptRecord {
    /// The ring's CPU.
    pub cpu: u32,
    /// The free-running ring position of the record.
    pub pos: u64,
    /// Its offset in the data area (`pos & (data_size - 1)`); `None`
    /// when the record was found bad where its batch was decoded, which
    /// knows positions but not the ring's size (a trace file does not
    /// hold it).
    pub offset: Option<u64>,
    /// What is wrong.
    pub error: RecordError,
    /// Whether the ring was stopped (a framing error) rather than the one
    /// record skipped.
    pub fatal: bool,
}

/// What a consumer saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConsumerStats {
    /// Records handed out: validated (record by record) or framed (a
    /// drain pass, whose batches are validated where they are decoded).
    pub records: u64,
    /// Records skipped (non-fatal errors found record by record).
    pub skipped: u64,
    /// Bytes consumed.
    pub bytes: u64,
}
