// SPDX-License-Identifier: GPL-2.0-only
//! [`RingConsumer`]: one ring's records, copied out and validated, handed
//! out as [`RecordGuard`]s or drained in batches (the module
//! documentation of [`crate::ring`] has the protocol and the policy).

use antinomie_abi as abi;

use super::{ConsumerStats, CorruptRecord, RingCounters, RingMemory};
use crate::record::{self, RecordError, RecordView, HEADER_SIZE};

#[derive(Debug)]
struct Cursor {
    cpu: u32,
    data_size: u64,
    consumer_pos: u64,
    published_pos: u64,
    producer_pos: u64,
    batch: u64,
    stopped: bool,
    pending: Option<CorruptRecord>,
    stats: ConsumerStats,
}

impl Cursor {
    fn corrupt(&self, pos: u64, error: RecordError, fatal: bool) -> CorruptRecord {
        CorruptRecord {
            cpu: self.cpu,
            pos,
            offset: Some(pos & (self.data_size - 1)),
            error,
            fatal,
        }
    }
}

/// What is wrong with the span from `pos` to `cur.producer_pos` as a
/// whole (both a drain pass and [`fetch`] check it before reading).
fn span_error(cur: &Cursor, pos: u64, available: u64) -> Option<RecordError> {
    if available > cur.data_size {
        return Some(RecordError::BadPositions {
            producer_pos: cur.producer_pos,
            consumer_pos: pos,
            data_size: cur.data_size,
        });
    }
    (!pos.is_multiple_of(u64::from(abi::RECORD_ALIGN))).then_some(RecordError::Misaligned)
}

/// Validates one record's copied bytes, including that it claims this
/// ring's CPU.
fn check_record(bytes: &[u8], cpu: u32) -> Result<(), RecordError> {
    match record::parse(bytes) {
        Ok(view) if view.header().cpu != cpu => Err(RecordError::WrongCpu {
            claimed: view.header().cpu,
        }),
        Ok(_) => Ok(()),
        Err(error) => Err(error),
    }
}

fn publish<M: RingMemory>(mem: &M, cur: &mut Cursor) {
    if cur.consumer_pos != cur.published_pos {
        // ATOMICS: (C) store-release of consumer_pos, after the last read of
        // the records' bytes, pairing with the producer's (D) load-acquire;
        // done inside store_consumer_pos.
        mem.store_consumer_pos(cur.consumer_pos);
        cur.published_pos = cur.consumer_pos;
    }
}

/// The consumer of one ring.
#[derive(Debug)]
pub struct RingConsumer<M: RingMemory> {
    mem: M,
    /// The copy of the record a [`RecordGuard`] hands out.
    scratch: Vec<u8>,
    cur: Cursor,
}

/// A record [`fetch`] copied and validated.
struct Fetched {
    pos: u64,
    size: u32,
}

/// Copies the next record before `cur.producer_pos` out of `mem` and
/// appends it to `buf`, validated; `cur.consumer_pos` is not advanced for
/// a valid record (the caller does, when it is done with it). Errors are
/// handled as the module documentation says; `buf` is then left as it was.
fn fetch<M: RingMemory>(
    mem: &M,
    cur: &mut Cursor,
    buf: &mut Vec<u8>,
) -> Option<Result<Fetched, CorruptRecord>> {
    if let Some(warning) = cur.pending.take() {
        return Some(Err(warning));
    }
    if cur.stopped {
        return None;
    }
    let pos = cur.consumer_pos;
    let available = cur.producer_pos.wrapping_sub(pos);
    if available == 0 {
        return None;
    }
    let fail = |cur: &mut Cursor, error: RecordError| {
        cur.stopped = true;
        publish(mem, cur);
        Some(Err(cur.corrupt(pos, error, true)))
    };
    if let Some(error) = span_error(cur, pos, available) {
        return fail(cur, error);
    }
    // Masked by a power-of-two size that indexes memory: fits usize.
    #[allow(clippy::cast_possible_truncation)]
    let offset = (pos & (cur.data_size - 1)) as usize;
    let mut head = [0u8; HEADER_SIZE];
    if available >= HEADER_SIZE as u64 {
        mem.read_data(offset, &mut head);
    }
    let header = match record::parse_header(&head, available) {
        Ok(h) => h,
        Err(error) => return fail(cur, error),
    };
    // parse_header checked size <= available <= data_size.
    let size = header.size as usize;
    let start = buf.len();
    buf.resize(start + size, 0);
    mem.read_data(offset, &mut buf[start..]);
    match check_record(&buf[start..], cur.cpu) {
        Ok(()) => Some(Ok(Fetched {
            pos,
            size: header.size,
        })),
        Err(error) => {
            buf.truncate(start);
            if error.is_framing() {
                return fail(cur, error);
            }
            cur.consumer_pos = pos.wrapping_add(u64::from(header.size));
            cur.stats.skipped += 1;
            cur.stats.bytes += u64::from(header.size);
            Some(Err(cur.corrupt(pos, error, false)))
        }
    }
}

/// Moves the consumer past a record it is done with, publishing once a
/// batch has accumulated.
fn release<M: RingMemory>(mem: &M, cur: &mut Cursor, pos: u64, size: u32) {
    cur.consumer_pos = pos.wrapping_add(u64::from(size));
    cur.stats.records += 1;
    cur.stats.bytes += u64::from(size);
    if cur.consumer_pos.wrapping_sub(cur.published_pos) >= cur.batch {
        publish(mem, cur);
    }
}

impl<M: RingMemory> RingConsumer<M> {
    /// Starts consuming at the ring's stored consumer position. An invalid
    /// one is reported by the first [`RingConsumer::next_record`] and replaced by
    /// `producer_pos`.
    pub fn new(mem: M) -> Self {
        let data_size = mem.data_size();
        let producer_pos = mem.load_producer_pos();
        let stored = mem.load_consumer_pos();
        let mut cur = Cursor {
            cpu: mem.cpu(),
            data_size,
            consumer_pos: stored,
            published_pos: stored,
            producer_pos,
            batch: (data_size / 4).max(u64::from(abi::RECORD_ALIGN)),
            stopped: false,
            pending: None,
            stats: ConsumerStats::default(),
        };
        let behind = producer_pos.wrapping_sub(stored);
        if behind > data_size || !stored.is_multiple_of(u64::from(abi::RECORD_ALIGN)) {
            cur.pending = Some(cur.corrupt(
                stored,
                RecordError::BadPositions {
                    producer_pos,
                    consumer_pos: stored,
                    data_size,
                },
                false,
            ));
            cur.consumer_pos = producer_pos;
        }
        RingConsumer {
            mem,
            scratch: Vec::new(),
            cur,
        }
    }

    /// The ring's CPU.
    pub fn cpu(&self) -> u32 {
        self.cur.cpu
    }

    /// The memory consumed.
    pub fn memory(&self) -> &M {
        &self.mem
    }

    /// Sets how many consumed bytes make the consumer publish its position
    /// (default: a quarter of the data area).
    pub fn set_batch(&mut self, bytes: u64) {
        self.cur.batch = bytes.max(1);
    }

    /// Loads `producer_pos` (Acquire, point (B)) and returns the bytes
    /// available to read.
    pub fn refresh(&mut self) -> u64 {
        // ATOMICS: (B) load-acquire of producer_pos, pairing with the
        // producer's (A) store-release; done inside load_producer_pos.
        self.cur.producer_pos = self.mem.load_producer_pos();
        self.cur.producer_pos.wrapping_sub(self.cur.consumer_pos)
    }

    /// Publishes the consumer position now (Release, point (C)). Call
    /// before sleeping in `poll()`.
    pub fn publish(&mut self) {
        publish(&self.mem, &mut self.cur);
    }

    /// Leaves every record the ring holds now unread and publishes the
    /// position past them, for a run that wants only what is written from
    /// now on (`reader -- COMMAND`, whose command has made no call yet).
    /// Call it before draining: the run then starts there, and a summary
    /// counts the records skipped as not consumed in this run. Returns the
    /// bytes skipped.
    pub fn skip_unread(&mut self) -> u64 {
        let skipped = self.refresh();
        self.cur.consumer_pos = self.cur.producer_pos;
        publish(&self.mem, &mut self.cur);
        skipped
    }

    /// The position of the next record.
    pub fn position(&self) -> u64 {
        self.cur.consumer_pos
    }

    /// Whether a framing error stopped this ring.
    pub fn is_stopped(&self) -> bool {
        self.cur.stopped
    }

    /// What this consumer saw.
    pub fn stats(&self) -> ConsumerStats {
        self.cur.stats
    }

    /// The kernel's counters for this ring.
    pub fn counters(&self) -> RingCounters {
        self.mem.counters()
    }

    /// The next record before the `producer_pos` loaded by the last
    /// [`RingConsumer::refresh`], or `None` when there is none (or the ring
    /// is stopped). See the module documentation for the error policy.
    pub fn next_record(&mut self) -> Option<Result<RecordGuard<'_, M>, CorruptRecord>> {
        let RingConsumer { mem, scratch, cur } = self;
        let mem: &M = mem;
        scratch.clear();
        let fetched = match fetch(mem, cur, scratch)? {
            Ok(f) => f,
            Err(e) => return Some(Err(e)),
        };
        let scratch: &[u8] = scratch;
        // fetch validated these bytes just now.
        let view = record::parse(scratch).ok()?;
        Some(Ok(RecordGuard {
            view,
            bytes: scratch,
            pos: fetched.pos,
            size: fetched.size,
            cur,
            mem,
        }))
    }

    /// One drain pass: loads `producer_pos`, copies every record up to it
    /// that its header frames to the end of `out`, collects the errors,
    /// and publishes the consumer position. Returns the number of records
    /// appended.
    ///
    /// The drain is the part of `reader --follow` that must keep
    /// up with the producers, so a pass only moves bytes: the whole span
    /// up to `producer_pos` is copied out of the ring in one
    /// [`RingMemory::append_data`] call, and only the records' headers are
    /// read in `out`, to frame them. A framing error stops the ring there,
    /// exactly as record by record ([`RingConsumer::next_record`]). A
    /// framed record is not checked further here, and never removed:
    /// whoever decodes the batch parses every record anyway, and skips one
    /// whose body does not parse or that claims another CPU
    /// ([`crate::pipeline::Merger::push_batch`]), so a batch is the ring's
    /// bytes from one position to the next, and a record's position
    /// follows from the batch's.
    ///
    /// # Panics
    /// If the ring memory's [`RingMemory::append_data`] appends another
    /// number of bytes than asked (a broken implementation).
    pub fn drain_into(&mut self, out: &mut Vec<u8>, errors: &mut Vec<CorruptRecord>) -> usize {
        self.refresh();
        let RingConsumer { mem, cur, .. } = self;
        if let Some(warning) = cur.pending.take() {
            errors.push(warning);
        }
        let pos = cur.consumer_pos;
        let available = cur.producer_pos.wrapping_sub(pos);
        if cur.stopped || available == 0 {
            publish(mem, cur);
            return 0;
        }
        let stop = |cur: &mut Cursor, errors: &mut Vec<CorruptRecord>, at: u64, error| {
            cur.stopped = true;
            errors.push(cur.corrupt(at, error, true));
        };
        if let Some(error) = span_error(cur, pos, available) {
            stop(cur, errors, pos, error);
            publish(mem, cur);
            return 0;
        }
        // Masked by a power-of-two size that indexes memory: fits usize;
        // `available` is at most that size.
        #[allow(clippy::cast_possible_truncation)]
        let (offset, len) = ((pos & (cur.data_size - 1)) as usize, available as usize);
        let start = out.len();
        mem.append_data(offset, len, out);
        assert_eq!(
            out.len(),
            start + len,
            "RingMemory::append_data appended another length than asked"
        );
        // Frame the copy by its headers alone.
        let (mut at, mut n) = (start, 0);
        while at < out.len() {
            let size = match record::parse_header(&out[at..], (out.len() - at) as u64) {
                Ok(h) => h.size,
                Err(error) => {
                    stop(cur, errors, pos.wrapping_add((at - start) as u64), error);
                    break;
                }
            };
            n += 1;
            // parse_header checked size <= the bytes left.
            at += size as usize;
        }
        out.truncate(at);
        let framed = (at - start) as u64;
        cur.stats.records += n as u64;
        cur.stats.bytes += framed;
        let next_pos = pos.wrapping_add(framed);
        cur.consumer_pos = next_pos;
        publish(mem, cur);
        n
    }
}

impl<M: RingMemory> Drop for RingConsumer<M> {
    fn drop(&mut self) {
        self.publish();
    }
}

/// A record taken from the ring: a validated copy in the consumer's
/// scratch buffer. Dropping (or [`RecordGuard::commit`]ting) it releases
/// the record's space in the ring: the consumer position advances past it
/// and is published once a batch has accumulated. Its bytes and view
/// borrow from the guard, so they cannot be used after the release:
///
/// ```compile_fail,E0597
/// use antinomie_reader::ring::{ImageRing, RingConsumer};
///
/// fn escape(consumer: &mut RingConsumer<ImageRing>) {
///     consumer.refresh();
///     let bytes = {
///         let guard = consumer.next_record().unwrap().unwrap();
///         guard.bytes() // error[E0597]: `guard` does not live long enough
///     };
///     println!("{bytes:?}");
/// }
/// ```
///
/// The same with the view:
///
/// ```compile_fail,E0597
/// use antinomie_reader::ring::{ImageRing, RingConsumer};
///
/// fn escape(consumer: &mut RingConsumer<ImageRing>) {
///     consumer.refresh();
///     let view = {
///         let guard = consumer.next_record().unwrap().unwrap();
///         *guard.view() // error[E0597]: `guard` does not live long enough
///     };
///     println!("{view:?}");
/// }
/// ```
///
/// Used within the guard's scope, both compile:
///
/// ```
/// use antinomie_reader::ring::{ImageRing, RingConsumer};
///
/// fn read(consumer: &mut RingConsumer<ImageRing>) -> usize {
///     consumer.refresh();
///     let guard = consumer.next_record().unwrap().unwrap();
///     let n = guard.bytes().len();
///     let _ = guard.view().header();
///     n
/// }
/// ```
#[derive(Debug)]
pub struct RecordGuard<'r, M: RingMemory> {
    view: RecordView<'r>,
    bytes: &'r [u8],
    pos: u64,
    size: u32,
    cur: &'r mut Cursor,
    mem: &'r M,
}

impl<M: RingMemory> RecordGuard<'_, M> {
    /// The validated record, for as long as the guard lives.
    #[must_use]
    pub fn view(&self) -> &RecordView<'_> {
        &self.view
    }

    /// The record's raw bytes (`size` of them), for as long as the guard
    /// lives.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        self.bytes
    }

    /// The record's ring position.
    #[must_use]
    pub fn pos(&self) -> u64 {
        self.pos
    }

    /// Releases the record (the same as dropping the guard).
    pub fn commit(self) {}
}

impl<M: RingMemory> Drop for RecordGuard<'_, M> {
    fn drop(&mut self) {
        release(self.mem, self.cur, self.pos, self.size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::ImageRing;
    use std::mem::offset_of;

    /// A minimal in-memory ring: LOST records only (the integration tests
    /// have the full producer).
    fn image(data_size: u64, start: u64, records: &[(u32, u32)]) -> Vec<u8> {
        let page = 4096usize;
        let mut img = vec![0u8; 2 * page + usize::try_from(data_size).unwrap()];
        let mut pos = start;
        for &(size, ty) in records {
            let h = abi::RecordHeader {
                size,
                r#type: ty,
                hdr_size: 48,
                ..Default::default()
            };
            let mut rec = bytemuck::bytes_of(&h).to_vec();
            let body = abi::Lost {
                size: 104,
                ..Default::default()
            };
            rec.extend_from_slice(bytemuck::bytes_of(&body));
            rec.resize(size.max(152) as usize, 0);
            for (i, b) in rec.iter().enumerate() {
                let off = usize::try_from((pos + i as u64) % data_size).unwrap();
                img[2 * page + off] = *b;
            }
            pos += u64::from(size);
        }
        let meta = abi::Meta {
            magic: abi::MAGIC,
            abi_version: abi::ABI_VERSION,
            meta_size: u32::try_from(size_of::<abi::Meta>()).unwrap(),
            data_size,
            consumer_offset: 4096,
            data_offset: 8192,
            producer_pos: pos,
            ..Default::default()
        };
        img[..size_of::<abi::Meta>()].copy_from_slice(bytemuck::bytes_of(&meta));
        img[4096..4104].copy_from_slice(&start.to_le_bytes());
        img
    }

    #[test]
    fn wraps_and_publishes() {
        let img = image(512, 400, &[(152, 3), (152, 3)]);
        let mut c = RingConsumer::new(ImageRing::from_bytes(img).unwrap());
        let mut out = Vec::new();
        let mut errs = Vec::new();
        assert_eq!(c.drain_into(&mut out, &mut errs), 2);
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(c.memory().load_consumer_pos(), 704);
    }

    #[test]
    fn skipping_leaves_what_the_ring_holds_unread() {
        let img = image(512, 400, &[(152, 3), (152, 3)]);
        let mut c = RingConsumer::new(ImageRing::from_bytes(img).unwrap());
        assert_eq!(c.skip_unread(), 304);
        assert_eq!(c.position(), 704);
        assert_eq!(c.memory().load_consumer_pos(), 704, "published");
        let mut out = Vec::new();
        let mut errs = Vec::new();
        assert_eq!(c.drain_into(&mut out, &mut errs), 0);
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(c.stats().records, 0, "nothing counted as consumed");
    }

    #[test]
    fn lossless_counters_follow_meta_size() {
        let mut img = image(512, 0, &[]);
        let lossless = |img: &[u8]| {
            ImageRing::from_bytes(img.to_vec())
                .unwrap()
                .counters()
                .lossless
        };
        img[offset_of!(abi::Meta, flags)] = 1;
        img[offset_of!(abi::Meta, waits)] = 7;
        img[offset_of!(abi::Meta, wait_ns)] = 9;
        assert_eq!(
            lossless(&img),
            Some(crate::ring::LosslessCounters {
                on: true,
                waits: 7,
                wait_ns: 9
            })
        );
        // A meta page from before lossless mode: the bytes after it are not
        // counters, and the rest of the ring still reads.
        let base = u32::try_from(crate::ring::META_BASE_SIZE).unwrap();
        img[offset_of!(abi::Meta, meta_size)..][..4].copy_from_slice(&base.to_le_bytes());
        assert_eq!(lossless(&img), None);
        img[offset_of!(abi::Meta, meta_size)..][..4].copy_from_slice(&(base - 8).to_le_bytes());
        assert!(ImageRing::from_bytes(img).is_err());
    }

    #[test]
    fn overrun_stops_the_ring() {
        let mut img = image(512, 0, &[(152, 3)]);
        // Claim 160 bytes for a 152-byte record at the producer position.
        img[8192] = 160;
        let mut c = RingConsumer::new(ImageRing::from_bytes(img).unwrap());
        let e = c.next_record().unwrap().unwrap_err();
        assert!(e.fatal);
        assert_eq!((e.cpu, e.pos), (0, 0));
        assert!(c.next_record().is_none());
        assert!(c.is_stopped());
    }

    #[test]
    fn bad_consumer_position_resyncs() {
        let mut img = image(256, 0, &[(152, 3)]);
        img[4096] = 8; // consumer 8, producer 152: fine; now make it ahead.
        img[4096..4104].copy_from_slice(&1000u64.to_le_bytes());
        let mut c = RingConsumer::new(ImageRing::from_bytes(img).unwrap());
        c.refresh();
        let e = c.next_record().unwrap().unwrap_err();
        assert!(!e.fatal);
        assert!(c.next_record().is_none());
    }
}
