// SPDX-License-Identifier: GPL-2.0-only
//! Typed, validated views of single records, and their owned forms.
//!
//! A record is parsed from exactly its own bytes (`header.size` of them).
//! Every structure is located by the sizes the record states (`hdr_size`,
//! the bodies' and items' `size`), never by `size_of`, so a newer kernel
//! whose structures grew still parses: the reader needs at least the bytes
//! it knows and ignores the rest. Every count and size is checked against
//! the bytes actually there before it is used, since the memory comes from
//! the kernel through a shared mapping and is treated as untrusted.
//!
//! The owned forms ([`Record`], which the pipeline queues and pairs) are
//! in `owned.rs`.

use antinomie_abi as abi;
use bytemuck::Pod;

mod owned;

pub use owned::{Batch, CaptureData, EntryRecord, ExitRecord, LostRecord, Record, SharedItems};

/// Bytes of `struct antinomie_record_header` this reader needs.
pub const HEADER_SIZE: usize = size_of::<abi::RecordHeader>();

/// Why a record is not valid. Framing errors ([`RecordError::is_framing`])
/// make the position of the next record unknown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// Fewer bytes remain before the producer position than a header needs.
    #[error(
        "truncated header: {available} bytes left before producer_pos, header needs {HEADER_SIZE}"
    )]
    TruncatedHeader {
        /// Bytes left.
        available: u64,
    },
    /// The positions are inconsistent: the producer is ahead of the
    /// consumer by more than the data area, or behind it.
    #[error("bad positions: producer_pos {producer_pos:#x}, consumer_pos {consumer_pos:#x}, data_size {data_size:#x}")]
    BadPositions {
        /// `meta.producer_pos`.
        producer_pos: u64,
        /// The consumer position.
        consumer_pos: u64,
        /// Bytes of the data area.
        data_size: u64,
    },
    /// The record does not start at an `ANTINOMIE_RECORD_ALIGN` boundary.
    #[error("misaligned record position (not a multiple of {})", abi::RECORD_ALIGN)]
    Misaligned,
    /// `size` is smaller than a header or not a multiple of the alignment.
    #[error("bad record size {size}")]
    BadSize {
        /// The size found.
        size: u32,
    },
    /// `size` runs past the producer position.
    #[error("record size {size} overruns the {available} bytes before producer_pos")]
    Overrun {
        /// The size found.
        size: u32,
        /// Bytes left.
        available: u64,
    },
    /// `hdr_size` is smaller than the header this reader knows, or larger
    /// than the record.
    #[error("bad hdr_size {hdr_size} in a record of {size} bytes")]
    BadHdrSize {
        /// The header size found.
        hdr_size: u32,
        /// The record size.
        size: u32,
    },
    /// `type` is 0, which zeroed memory holds: not a record.
    #[error("record type 0 (zeroed memory)")]
    ZeroType,
    /// A `type` this reader does not know; skipped by its size.
    #[error("unknown record type {0}")]
    UnknownType(u32),
    /// An ENTRY or EXIT of a syscall without a row in the reader's table
    /// ([`crate::syscall::SYSCALLS`]): it cannot be decoded, so it is
    /// skipped by its size.
    #[error("syscall number {0} has no capture table in this reader")]
    UnknownSyscall(u32),
    /// The record's `cpu` is not the ring's.
    #[error("record claims cpu {claimed}")]
    WrongCpu {
        /// The cpu in the header.
        claimed: u32,
    },
    /// A body is smaller than the structure this reader knows, or does not
    /// fit in the record.
    #[error("{what} body size {size} does not fit (needs {min}, {room} bytes in the record)")]
    BadBody {
        /// Which record type.
        what: &'static str,
        /// The body's `size`.
        size: u32,
        /// What this reader needs.
        min: usize,
        /// What the record has after its header.
        room: usize,
    },
    /// An error as a trace file recorded it.
    #[error("{0}")]
    Recorded(String),
    /// A capture item's sizes do not nest within the record.
    #[error("capture item {index}: {why}")]
    BadItem {
        /// Index of the item in the record.
        index: u32,
        /// What is wrong.
        why: String,
    },
}

impl RecordError {
    /// Whether the error breaks the framing, so that no further record of
    /// the ring can be located. Other errors leave `size` intact: that one
    /// record is skipped.
    #[must_use]
    pub fn is_framing(&self) -> bool {
        matches!(
            self,
            RecordError::TruncatedHeader { .. }
                | RecordError::BadPositions { .. }
                | RecordError::Misaligned
                | RecordError::BadSize { .. }
                | RecordError::Overrun { .. }
                | RecordError::BadHdrSize { .. }
                | RecordError::ZeroType
        )
    }
}

/// Reads a `T` from the start of `bytes`, which the caller has checked to
/// be long enough.
fn read<T: Pod>(bytes: &[u8]) -> T {
    bytemuck::pod_read_unaligned(&bytes[..size_of::<T>()])
}

/// Reads and checks the framing of the record header at the start of
/// `bytes`, with `available` bytes up to the producer position.
///
/// # Errors
/// A framing error, or [`RecordError::ZeroType`].
pub fn parse_header(bytes: &[u8], available: u64) -> Result<abi::RecordHeader, RecordError> {
    if available < HEADER_SIZE as u64 || bytes.len() < HEADER_SIZE {
        return Err(RecordError::TruncatedHeader { available });
    }
    let h: abi::RecordHeader = read(bytes);
    if (h.size as usize) < HEADER_SIZE || !h.size.is_multiple_of(abi::RECORD_ALIGN) {
        return Err(RecordError::BadSize { size: h.size });
    }
    if u64::from(h.size) > available {
        return Err(RecordError::Overrun {
            size: h.size,
            available,
        });
    }
    if (h.hdr_size as usize) < HEADER_SIZE || h.hdr_size > h.size {
        return Err(RecordError::BadHdrSize {
            hdr_size: h.hdr_size,
            size: h.size,
        });
    }
    if h.r#type == 0 {
        return Err(RecordError::ZeroType);
    }
    Ok(h)
}

/// A validated view of one record's bytes.
#[derive(Debug, Clone, Copy)]
pub enum RecordView<'a> {
    /// `ANTINOMIE_RECORD_ENTRY`.
    Entry(EntryView<'a>),
    /// `ANTINOMIE_RECORD_EXIT`.
    Exit(ExitView<'a>),
    /// `ANTINOMIE_RECORD_LOST`.
    Lost(LostView),
}

impl RecordView<'_> {
    /// The record header.
    #[must_use]
    pub fn header(&self) -> &abi::RecordHeader {
        match self {
            RecordView::Entry(e) => &e.header,
            RecordView::Exit(e) => &e.header,
            RecordView::Lost(l) => &l.header,
        }
    }
}

/// A validated ENTRY record.
#[derive(Debug, Clone, Copy)]
pub struct EntryView<'a> {
    /// The record header.
    pub header: abi::RecordHeader,
    /// The known prefix of the body.
    pub body: abi::Entry,
    items: Items<'a>,
}

impl<'a> EntryView<'a> {
    /// The capture items.
    #[must_use]
    pub fn items(&self) -> ItemIter<'a> {
        self.items.iter()
    }
}

/// A validated EXIT record.
#[derive(Debug, Clone, Copy)]
pub struct ExitView<'a> {
    /// The record header.
    pub header: abi::RecordHeader,
    /// The known prefix of the body.
    pub body: abi::Exit,
    items: Items<'a>,
}

impl<'a> ExitView<'a> {
    /// The capture items: none in ABI version 4, whose EXITs carry none
    /// (a newer kernel's are validated, and the reader leaves them aside).
    #[must_use]
    pub fn items(&self) -> ItemIter<'a> {
        self.items.iter()
    }
}

/// A validated LOST record.
#[derive(Debug, Clone, Copy)]
pub struct LostView {
    /// The record header.
    pub header: abi::RecordHeader,
    /// The known prefix of the body.
    pub body: abi::Lost,
}

/// One capture item: its header and its `copied_len` data bytes.
#[derive(Debug, Clone, Copy)]
pub struct CaptureView<'a> {
    /// The known prefix of the item header.
    pub header: abi::Capture,
    /// The captured bytes.
    pub data: &'a [u8],
}

/// The validated item area of a record.
#[derive(Debug, Clone, Copy)]
struct Items<'a> {
    bytes: &'a [u8],
    count: u32,
}

impl<'a> Items<'a> {
    /// Checks `count` items laid out from the start of `bytes`.
    fn validate(bytes: &'a [u8], count: u32) -> Result<Self, RecordError> {
        let mut off = 0usize;
        for index in 0..count {
            let bad = |why: String| RecordError::BadItem { index, why };
            let rest = &bytes[off..];
            if rest.len() < size_of::<abi::Capture>() {
                return Err(bad(format!(
                    "starts {off} bytes into the item area of {} bytes, no room for its header",
                    bytes.len()
                )));
            }
            let c: abi::Capture = read(rest);
            let hdr = c.hdr_size as usize;
            let size = c.size as usize;
            if hdr < size_of::<abi::Capture>() {
                return Err(bad(format!("hdr_size {hdr} is too small")));
            }
            if !size.is_multiple_of(abi::RECORD_ALIGN as usize) || size > rest.len() {
                return Err(bad(format!(
                    "size {size} is misaligned or overruns the {} bytes left",
                    rest.len()
                )));
            }
            if hdr
                .checked_add(c.copied_len as usize)
                .is_none_or(|end| end > size)
            {
                return Err(bad(format!(
                    "hdr_size {hdr} + copied_len {} exceeds its size {size}",
                    c.copied_len
                )));
            }
            off += size;
        }
        Ok(Items {
            bytes: &bytes[..off],
            count,
        })
    }

    fn iter(&self) -> ItemIter<'a> {
        ItemIter {
            bytes: self.bytes,
            left: self.count,
        }
    }
}

/// Iterator over validated capture items.
#[derive(Debug, Clone)]
pub struct ItemIter<'a> {
    bytes: &'a [u8],
    left: u32,
}

impl<'a> Iterator for ItemIter<'a> {
    type Item = CaptureView<'a>;

    fn next(&mut self) -> Option<CaptureView<'a>> {
        if self.left == 0 || self.bytes.len() < size_of::<abi::Capture>() {
            return None;
        }
        self.left -= 1;
        let header: abi::Capture = read(self.bytes);
        // Validated: hdr_size + copied_len <= size <= bytes.len(). `get`
        // keeps this panic-free all the same.
        let hdr = header.hdr_size as usize;
        let data = self
            .bytes
            .get(hdr..hdr + header.copied_len as usize)
            .unwrap_or(&[]);
        self.bytes = self.bytes.get(header.size as usize..).unwrap_or(&[]);
        Some(CaptureView { header, data })
    }
}

/// Splits a record's bytes after its header into the body (of at least
/// `T`'s size) and what follows the body.
fn body<'a, T: Pod>(
    bytes: &'a [u8],
    h: &abi::RecordHeader,
    what: &'static str,
) -> Result<(T, &'a [u8]), RecordError> {
    let after = &bytes[h.hdr_size as usize..];
    let size = u32::from_le_bytes([
        *after.first().unwrap_or(&0),
        *after.get(1).unwrap_or(&0),
        *after.get(2).unwrap_or(&0),
        *after.get(3).unwrap_or(&0),
    ]);
    let min = size_of::<T>();
    if after.len() < 4 || (size as usize) < min || size as usize > after.len() {
        return Err(RecordError::BadBody {
            what,
            size,
            min,
            room: after.len(),
        });
    }
    Ok((read(after), &after[size as usize..]))
}

/// Parses one record from exactly its bytes (`bytes.len()` must be the
/// record's `size`, as framed by [`parse_header`]).
///
/// # Errors
/// Any [`RecordError`]: framing, unknown type or syscall, bad body or item.
pub fn parse(bytes: &[u8]) -> Result<RecordView<'_>, RecordError> {
    let h = parse_header(bytes, bytes.len() as u64)?;
    let bytes = &bytes[..h.size as usize];
    let calls_a_known_syscall = crate::syscall::by_nr(h.syscall_nr).is_some();
    if matches!(h.r#type, abi::RECORD_ENTRY | abi::RECORD_EXIT) && !calls_a_known_syscall {
        return Err(RecordError::UnknownSyscall(h.syscall_nr));
    }
    match h.r#type {
        abi::RECORD_ENTRY => {
            let (body, rest): (abi::Entry, _) = body(bytes, &h, "entry")?;
            let items = Items::validate(rest, body.nr_items)?;
            Ok(RecordView::Entry(EntryView {
                header: h,
                body,
                items,
            }))
        }
        abi::RECORD_EXIT => {
            let (body, rest): (abi::Exit, _) = body(bytes, &h, "exit")?;
            let items = Items::validate(rest, body.nr_items)?;
            Ok(RecordView::Exit(ExitView {
                header: h,
                body,
                items,
            }))
        }
        abi::RECORD_LOST => {
            let (body, _): (abi::Lost, _) = body(bytes, &h, "lost")?;
            Ok(RecordView::Lost(LostView { header: h, body }))
        }
        other => Err(RecordError::UnknownType(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(size: u32, ty: u32) -> Vec<u8> {
        let h = abi::RecordHeader {
            size,
            r#type: ty,
            hdr_size: 48,
            call_id: 1,
            // perf_event_open's number: ENTRYs and EXITs of a syscall
            // without a table do not parse.
            syscall_nr: 298,
            ..Default::default()
        };
        bytemuck::bytes_of(&h).to_vec()
    }

    fn lost_record() -> Vec<u8> {
        let mut b = header(48 + 104, abi::RECORD_LOST);
        let l = abi::Lost {
            size: 104,
            lost: [3, 0, 0, 0, 0, 0, 0, 0],
            ..Default::default()
        };
        b.extend_from_slice(bytemuck::bytes_of(&l));
        b
    }

    #[test]
    fn lost_parses() {
        let b = lost_record();
        match parse(&b).unwrap() {
            RecordView::Lost(l) => assert_eq!(l.body.lost[0], 3),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn framing_errors() {
        let mut b = lost_record();
        b[0] = 47;
        assert!(matches!(parse(&b), Err(RecordError::BadSize { size: 47 })));
        b[0] = 160;
        assert!(matches!(parse(&b), Err(RecordError::Overrun { .. })));
        let b = header(48, 0);
        assert_eq!(parse(&b).unwrap_err(), RecordError::ZeroType);
        let b = header(48, 9);
        let e = parse(&b).unwrap_err();
        assert_eq!(e, RecordError::UnknownType(9));
        assert!(!e.is_framing());
    }

    #[test]
    fn a_call_record_of_a_syscall_without_a_table_is_skipped() {
        for ty in [abi::RECORD_ENTRY, abi::RECORD_EXIT] {
            let mut b = header(48, ty);
            // syscall_nr: 1 (write), which no row of the table has.
            b[44..48].copy_from_slice(&1u32.to_le_bytes());
            let e = parse(&b).unwrap_err();
            assert_eq!(e, RecordError::UnknownSyscall(1));
            assert!(!e.is_framing());
            assert_eq!(
                e.to_string(),
                "syscall number 1 has no capture table in this reader"
            );
        }
    }

    #[test]
    fn bigger_bodies_from_newer_kernels_parse() {
        // hdr_size 56 and a lost body of 112: both grew by 8 bytes.
        let mut h = abi::RecordHeader {
            size: 56 + 112,
            r#type: abi::RECORD_LOST,
            hdr_size: 56,
            ..Default::default()
        };
        let mut b = bytemuck::bytes_of(&h).to_vec();
        b.extend_from_slice(&[0xee; 8]);
        let l = abi::Lost {
            size: 112,
            max_call_id: 7,
            ..Default::default()
        };
        b.extend_from_slice(bytemuck::bytes_of(&l));
        b.extend_from_slice(&[0xee; 8]);
        match parse(&b).unwrap() {
            RecordView::Lost(l) => assert_eq!(l.body.max_call_id, 7),
            other => panic!("{other:?}"),
        }
        // A body smaller than this reader knows is refused.
        h.size = 48 + 8;
        h.hdr_size = 48;
        let mut b = bytemuck::bytes_of(&h).to_vec();
        b.extend_from_slice(&[8, 0, 0, 0, 0, 0, 0, 0]);
        assert!(matches!(parse(&b), Err(RecordError::BadBody { .. })));
    }

    #[test]
    fn items_must_nest() {
        let entry = abi::Entry {
            size: 64,
            nr_items: 1,
            ..Default::default()
        };
        let cap = abi::Capture {
            size: 48,
            hdr_size: 40,
            copied_len: 9,
            ..Default::default()
        };
        let mut b = header(48 + 64 + 48, abi::RECORD_ENTRY);
        b.extend_from_slice(bytemuck::bytes_of(&entry));
        b.extend_from_slice(bytemuck::bytes_of(&cap));
        b.extend_from_slice(&[0; 8]);
        assert!(matches!(
            parse(&b),
            Err(RecordError::BadItem { index: 0, .. })
        ));
        // copied_len 8 fits.
        b[48 + 64 + 28] = 8;
        match parse(&b).unwrap() {
            RecordView::Entry(e) => assert_eq!(e.items().next().unwrap().data.len(), 8),
            other => panic!("{other:?}"),
        }
        // Two items claimed, one present.
        b[48 + 4] = 2;
        assert!(matches!(
            parse(&b),
            Err(RecordError::BadItem { index: 1, .. })
        ));
    }
}
