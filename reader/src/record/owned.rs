// SPDX-License-Identifier: GPL-2.0-only
//! Owned records: what the merger queues, the pairer holds and a call
//! carries. They keep their capture items in the batch they were drained
//! in ([`Batch`]) rather than copying them.

use std::fmt;
use std::sync::{Arc, OnceLock};

use antinomie_abi as abi;

use super::{CaptureView, ItemIter, Items, RecordView};

/// An owned capture item: what tests and tools build records from
/// ([`EntryRecord::new`]).
#[derive(Clone, PartialEq, Eq)]
pub struct CaptureData {
    /// The item header.
    pub header: abi::Capture,
    /// The captured bytes.
    pub data: Vec<u8>,
}

impl fmt::Debug for CaptureData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CaptureData")
            .field("header", &self.header)
            .field("data_len", &self.data.len())
            .finish()
    }
}

impl From<CaptureView<'_>> for CaptureData {
    fn from(c: CaptureView<'_>) -> Self {
        CaptureData {
            header: c.header,
            data: c.data.to_vec(),
        }
    }
}

/// The bytes of one drain pass (or trace frame), shared by every record
/// parsed from them: a record keeps its capture items where they already
/// are instead of copying each into a `Vec` of its own (one allocation
/// per batch, none per record), and the batch is freed when its last
/// record is.
pub type Batch = Arc<Vec<u8>>;

/// The validated capture items of an owned record: a range of its batch.
///
/// The range is kept in `u32`s (a record's size is one), and its end is
/// not kept but found from the validated items' sizes: so an ENTRY fits
/// 120 bytes and a [`Record`] 128, which the compiler moves with a few
/// vector moves; a record moves four or five times between the merge and
/// the output, and a bigger one was a `memcpy` call each time.
#[derive(Clone)]
pub struct SharedItems {
    batch: Batch,
    start: u32,
    count: u32,
}

impl SharedItems {
    /// No items.
    fn none() -> Self {
        static EMPTY: OnceLock<Batch> = OnceLock::new();
        SharedItems {
            batch: Arc::clone(EMPTY.get_or_init(Batch::default)),
            start: 0,
            count: 0,
        }
    }

    /// The items of `items`, which lie within `batch` when the view was
    /// parsed from it (no copy), else copied into a batch of their own.
    fn of(items: Items<'_>, batch: Option<&Batch>) -> Self {
        if items.count == 0 {
            return Self::none();
        }
        let len = items.bytes.len();
        // Where the view's bytes start within the batch, if they do (and
        // at an offset a `u32` holds, else they are copied): an address
        // comparison only, the bytes are read through `batch`.
        let within = batch.and_then(|b| {
            let start = (items.bytes.as_ptr() as usize).checked_sub(b.as_ptr() as usize)?;
            let end = start.checked_add(len)?;
            let start32 = u32::try_from(start).ok()?;
            (end <= b.len() && std::ptr::eq(b[start..end].as_ptr(), items.bytes.as_ptr()))
                .then(|| (Arc::clone(b), start32))
        });
        let (batch, start) = within.unwrap_or_else(|| (Arc::new(items.bytes.to_vec()), 0));
        SharedItems {
            batch,
            start,
            count: items.count,
        }
    }

    /// Lays `items` out as a record does (each header, then its data,
    /// padded to the record alignment).
    fn build(items: &[CaptureData]) -> Self {
        let mut bytes = Vec::new();
        for c in items {
            let mut h = c.header;
            let hdr = size_of::<abi::Capture>();
            let align = abi::RECORD_ALIGN as usize;
            let size = (hdr + c.data.len()).div_ceil(align) * align;
            h.hdr_size = u32::try_from(hdr).unwrap_or(u32::MAX);
            h.copied_len = u32::try_from(c.data.len()).unwrap_or(u32::MAX);
            h.size = u32::try_from(size).unwrap_or(u32::MAX);
            let at = bytes.len();
            bytes.extend_from_slice(bytemuck::bytes_of(&h));
            bytes.extend_from_slice(&c.data);
            bytes.resize(at + size, 0);
        }
        let count = u32::try_from(items.len()).unwrap_or(u32::MAX);
        match Items::validate(&bytes, count) {
            Ok(v) => Self::of(v, None),
            // Only an item of more than 4 GiB gets here.
            Err(_) => Self::none(),
        }
    }

    /// The items.
    #[must_use]
    pub fn iter(&self) -> ItemIter<'_> {
        ItemIter {
            bytes: self.bytes(),
            left: self.count,
        }
    }

    /// The items' bytes in their batch: each item's `size` from the
    /// first, validated when they were parsed ([`Items::validate`]);
    /// `get` keeps this panic-free all the same.
    fn bytes(&self) -> &[u8] {
        let rest = self.batch.get(self.start as usize..).unwrap_or(&[]);
        let mut len = 0usize;
        for _ in 0..self.count {
            let Some(size) = rest.get(len..len + 4) else {
                break;
            };
            len += u32::from_le_bytes([size[0], size[1], size[2], size[3]]) as usize;
        }
        rest.get(..len).unwrap_or(rest)
    }

    /// How many items there are.
    #[must_use]
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

impl<'a> IntoIterator for &'a SharedItems {
    type Item = CaptureView<'a>;
    type IntoIter = ItemIter<'a>;

    fn into_iter(self) -> ItemIter<'a> {
        self.iter()
    }
}

impl PartialEq for SharedItems {
    fn eq(&self, other: &Self) -> bool {
        self.count == other.count && self.bytes() == other.bytes()
    }
}

impl Eq for SharedItems {}

impl fmt::Debug for SharedItems {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// An owned ENTRY record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryRecord {
    /// The record header.
    pub header: abi::RecordHeader,
    /// The six raw argument words.
    pub args: [u64; 6],
    /// `CLOCK_MONOTONIC` when the call entered the syscall (the header's
    /// `time_ns` is when the record was written, at or after it).
    pub start_ns: u64,
    /// The capture items.
    pub items: SharedItems,
}

impl EntryRecord {
    /// An ENTRY of these parts (tests, tools).
    #[must_use]
    pub fn new(
        header: abi::RecordHeader,
        args: [u64; 6],
        start_ns: u64,
        items: &[CaptureData],
    ) -> Self {
        EntryRecord {
            header,
            args,
            start_ns,
            items: SharedItems::build(items),
        }
    }
}

/// An owned EXIT record. It keeps no capture items: an EXIT of ABI
/// version 4 carries none (a newer kernel's are validated when the record
/// is parsed, then left aside).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitRecord {
    /// The record header.
    pub header: abi::RecordHeader,
    /// The known prefix of the body (`ret`, `duration_ns`, `flags`,
    /// `required_size`, `entry_pos`).
    pub body: abi::Exit,
}

impl ExitRecord {
    /// An EXIT of these parts (tests, tools).
    #[must_use]
    pub fn new(header: abi::RecordHeader, body: abi::Exit) -> Self {
        ExitRecord { header, body }
    }
}

/// An owned LOST record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LostRecord {
    /// The record header.
    pub header: abi::RecordHeader,
    /// The known prefix of the body.
    pub body: abi::Lost,
}

/// An owned record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// ENTRY.
    Entry(EntryRecord),
    /// EXIT.
    Exit(ExitRecord),
    /// LOST: rare, and boxed so that it does not make every record as
    /// big as itself (see [`SharedItems`]).
    Lost(Box<LostRecord>),
}

impl Record {
    /// The record header.
    #[must_use]
    pub fn header(&self) -> &abi::RecordHeader {
        match self {
            Record::Entry(e) => &e.header,
            Record::Exit(e) => &e.header,
            Record::Lost(l) => &l.header,
        }
    }

    /// The owned form of `view`, which was parsed from `batch`: its items
    /// stay in the batch.
    #[must_use]
    pub fn in_batch(view: RecordView<'_>, batch: &Batch) -> Self {
        Self::owned(view, Some(batch))
    }

    fn owned(v: RecordView<'_>, batch: Option<&Batch>) -> Self {
        match v {
            RecordView::Entry(e) => Record::Entry(EntryRecord {
                header: e.header,
                args: e.body.args,
                start_ns: e.body.start_ns,
                items: SharedItems::of(e.items, batch),
            }),
            RecordView::Exit(e) => Record::Exit(ExitRecord {
                header: e.header,
                body: e.body,
            }),
            RecordView::Lost(l) => Record::Lost(Box::new(LostRecord {
                header: l.header,
                body: l.body,
            })),
        }
    }
}

/// A copy of the view's bytes (tests, tools); the pipeline uses
/// [`Record::in_batch`].
impl From<RecordView<'_>> for Record {
    fn from(v: RecordView<'_>) -> Self {
        Self::owned(v, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::parse;

    /// An ENTRY with one capture item of `data`.
    fn entry_bytes(data: &[u8]) -> Vec<u8> {
        let e = EntryRecord::new(
            abi::RecordHeader::default(),
            [1, 2, 3, 4, 5, 6],
            7,
            &[CaptureData {
                header: abi::Capture {
                    kind: abi::KIND_PERF_EVENT_ATTR,
                    ..Default::default()
                },
                data: data.to_vec(),
            }],
        );
        let items = e.items.bytes();
        let body = abi::Entry {
            size: u32::try_from(size_of::<abi::Entry>()).unwrap(),
            nr_items: 1,
            args: e.args,
            start_ns: e.start_ns,
        };
        let size = size_of::<abi::RecordHeader>() + size_of::<abi::Entry>() + items.len();
        let h = abi::RecordHeader {
            size: u32::try_from(size).unwrap(),
            r#type: abi::RECORD_ENTRY,
            hdr_size: u32::try_from(size_of::<abi::RecordHeader>()).unwrap(),
            // perf_event_open's: a record of a syscall without a table
            // does not parse.
            syscall_nr: 298,
            ..Default::default()
        };
        let mut b = bytemuck::bytes_of(&h).to_vec();
        b.extend_from_slice(bytemuck::bytes_of(&body));
        b.extend_from_slice(items);
        b
    }

    #[test]
    fn a_record_moves_without_a_memcpy_call() {
        // x86-64 compilers inline copies of up to 128 bytes (eight
        // 16-byte moves); see `SharedItems`.
        assert!(size_of::<Record>() <= 128, "{}", size_of::<Record>());
    }

    #[test]
    fn records_share_their_batch_and_copies_equal_them() {
        let batch: Batch = Arc::new(entry_bytes(b"attr bytes"));
        let shared = Record::in_batch(parse(&batch).unwrap(), &batch);
        let copied = Record::from(parse(&batch).unwrap());
        let (Record::Entry(s), Record::Entry(c)) = (&shared, &copied) else {
            panic!("not entries: {shared:?}");
        };
        // The shared record points into the batch; the copy does not.
        assert!(Arc::ptr_eq(&s.items.batch, &batch));
        assert!(!Arc::ptr_eq(&c.items.batch, &batch));
        assert_eq!(shared, copied);
        assert_eq!(s.items.iter().next().unwrap().data, b"attr bytes");
        assert_eq!(s.items.len(), 1);
        // A view from other bytes than the batch is copied, not misread.
        let other = entry_bytes(b"other bytes");
        let Record::Entry(o) = Record::in_batch(parse(&other).unwrap(), &batch) else {
            panic!("not an entry");
        };
        assert!(!Arc::ptr_eq(&o.items.batch, &batch));
        assert_eq!(o.items.iter().next().unwrap().data, b"other bytes");
    }
}
