// SPDX-License-Identifier: GPL-2.0-only
//! A pass `on+bpf`: capture on and the BPF contender attached for the same
//! calls, so that each call's attr as each tracer recorded it can be held
//! against the attr the kernel used.
//!
//! What the kernel used comes from capture's records: since ABI version 4
//! the ENTRY's attr is the kernel's own copy, taken from
//! `perf_copy_attr()`'s variables, the one read of the call. That view is
//! checked in turn against the bytes the campaign placed, on every call the
//! racing writer does not touch (their memory holds still, so the kernel
//! read exactly those). The contender's attr (its `min(size, 136)` bytes
//! read at `sys_enter`) is then compared with the kernel's over the bytes
//! both have.

use std::collections::HashMap;

use antinomie_abi as abi;

/// An attr as one side saw it: its size word (if it was read) and its
/// bytes from offset 0 (as many as were read).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct AttrView {
    pub(super) size_word: Option<u32>,
    pub(super) head: Vec<u8>,
}

impl AttrView {
    /// Whether the two disagree on what both hold: the size word if both
    /// read it, and the bytes up to the shorter head.
    fn differs(&self, other: &AttrView) -> bool {
        let n = self.head.len().min(other.head.len());
        matches!((self.size_word, other.size_word), (Some(a), Some(b)) if a != b)
            || self.head[..n] != other.head[..n]
    }
}

/// One call as capture recorded it: its ENTRY and EXIT, paired by call id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CaptureCall {
    pub(super) tid: u32,
    /// When the call began (the ENTRY's `start_ns`).
    pub(super) time_ns: u64,
    pub(super) args: [u64; 6],
    /// The ENTRY's attr: the kernel's own copy, what it used.
    pub(super) kernel: AttrView,
}

/// The contender's record of one call's entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ContenderCall {
    pub(super) pid: u32,
    pub(super) tid: u32,
    pub(super) args: [u64; 6],
    pub(super) status: u32,
    pub(super) attr: AttrView,
}

fn u32_at(b: &[u8], off: usize) -> Result<u32, String> {
    b.get(off..off + 4)
        .map(|s| u32::from_le_bytes(s.try_into().expect("4 bytes")))
        .ok_or_else(|| format!("a u32 at {off} past the end ({} bytes)", b.len()))
}

fn u64_at(b: &[u8], off: usize) -> Result<u64, String> {
    b.get(off..off + 8)
        .map(|s| u64::from_le_bytes(s.try_into().expect("8 bytes")))
        .ok_or_else(|| format!("a u64 at {off} past the end ({} bytes)", b.len()))
}

fn usize_at(b: &[u8], off: usize) -> Result<usize, String> {
    u32_at(b, off).map(|v| v as usize)
}

fn slice(b: &[u8], start: usize, len: usize) -> Result<&[u8], String> {
    b.get(start..start.checked_add(len).ok_or("an overflowing length")?)
        .ok_or_else(|| format!("{len} bytes at {start} past the end ({} bytes)", b.len()))
}

fn args_at(b: &[u8], off: usize) -> Result<[u64; 6], String> {
    let mut args = [0u64; 6];
    for (i, a) in args.iter_mut().enumerate() {
        *a = u64_at(b, off + 8 * i)?;
    }
    Ok(args)
}

/// The attr item of an ENTRY (`struct antinomie_capture` at `b`).
fn capture_item(b: &[u8]) -> Result<AttrView, String> {
    let (hdr_size, status, flags) = (usize_at(b, 4)?, u32_at(b, 16)?, u32_at(b, 20)?);
    let (declared, copied) = (u32_at(b, 24)?, usize_at(b, 28)?);
    let head = slice(b, hdr_size, copied)?.to_vec();
    // NOT_APPLICABLE: the kernel read nothing of the attr, not even its size.
    let size_read = status != abi::STATUS_NULL_PTR
        && status != abi::STATUS_NOT_APPLICABLE
        && flags & abi::CAPTURE_F_SIZE_FAULT == 0;
    // The kernel's copy holds the size word as read. Without bytes only
    // declared_size tells it, the size the kernel used, which is 64 for a
    // size word of 64 or of 0: that one is not known.
    let size_word = if head.len() >= 8 {
        Some(u32_at(&head, 4)?)
    } else {
        size_read.then_some(declared).filter(|&d| d != VER0_SIZE)
    };
    Ok(AttrView { size_word, head })
}

/// `PERF_ATTR_SIZE_VER0`, the size the kernel takes a size word of 0 for.
const VER0_SIZE: u32 = 64;

/// Every call of a trace file (`reader -w`: see reader/src/trace/mod.rs),
/// ENTRY and EXIT paired by call id; an error for a malformed file or a
/// record without its pair.
pub(super) fn capture_calls(trace: &[u8]) -> Result<Vec<CaptureCall>, String> {
    const FRAME_RECORDS: u32 = 1;
    if !trace.starts_with(b"ANTI-TRC") || u32_at(trace, 8)? != 2 {
        return Err("not a trace file of version 2".into());
    }
    if u32_at(trace, 12)? != abi::ABI_VERSION {
        return Err(format!(
            "a trace of ABI version {}, this program reads {}",
            u32_at(trace, 12)?,
            abi::ABI_VERSION
        ));
    }
    let mut pos = usize_at(trace, 16)?;
    let mut entries: HashMap<u64, CaptureCall> = HashMap::new();
    let mut calls = Vec::new();
    while pos < trace.len() {
        let kind = u32_at(trace, pos)?;
        let len = usize::try_from(u64_at(trace, pos + 8)?).map_err(|e| e.to_string())?;
        let payload = slice(trace, pos + 16, len)?;
        pos += 16 + len;
        if kind != FRAME_RECORDS {
            continue;
        }
        let mut r = 0;
        while r < payload.len() {
            let size = usize_at(payload, r)?;
            if size == 0 {
                return Err(format!("a record of size 0 at {r}"));
            }
            let rec = slice(payload, r, size)?;
            r += size;
            let (kind, hdr) = (u32_at(rec, 4)?, usize_at(rec, 8)?);
            let call_id = u64_at(rec, 16)?;
            let body = rec.get(hdr..).ok_or("a header past the record")?;
            match kind {
                abi::RECORD_ENTRY => {
                    let item = body.get(usize_at(body, 0)?..).ok_or("no item")?;
                    let call = CaptureCall {
                        tid: u32_at(rec, 36)?,
                        time_ns: u64_at(body, 56)?,
                        args: args_at(body, 8)?,
                        kernel: capture_item(item)?,
                    };
                    if entries.insert(call_id, call).is_some() {
                        return Err(format!("two ENTRYs of call {call_id:#x}"));
                    }
                }
                abi::RECORD_EXIT => {
                    let call = entries
                        .remove(&call_id)
                        .ok_or_else(|| format!("an EXIT of call {call_id:#x} without its ENTRY"))?;
                    calls.push(call);
                }
                _ => {}
            }
        }
    }
    if let Some(id) = entries.keys().next() {
        return Err(format!(
            "{} ENTRYs without their EXIT (call {id:#x})",
            entries.len()
        ));
    }
    Ok(calls)
}

/// The entries of the contender's records file (qemu/bpf-contender/contender.h).
pub(super) fn contender_calls(file: &[u8]) -> Result<Vec<ContenderCall>, String> {
    const MAGIC: u64 = 0x0031_4650_4254_4e41; // "ANTBPF1"
    const ENTRY: u32 = 1;
    const F_SIZE_FAULT: u32 = 1;
    // The file header: magic, the records' header size, their attr size.
    const FILE_HEADER: usize = 16;
    if u64_at(file, 0)? != MAGIC || u32_at(file, 8)? != 32 || u32_at(file, 12)? != 136 {
        return Err("not a contender records file of this layout".into());
    }
    let mut pos = FILE_HEADER;
    let mut calls = Vec::new();
    while pos < file.len() {
        let size = usize_at(file, pos)?;
        if size == 0 {
            return Err(format!("a record of size 0 at {pos}"));
        }
        let rec = slice(file, pos, size)?;
        pos += size;
        if u32_at(rec, 4)? != ENTRY {
            continue;
        }
        let status = u32_at(rec, 88)?;
        let size_read = u32_at(rec, 28)? & F_SIZE_FAULT == 0 && status != abi::STATUS_NULL_PTR;
        let read = status == abi::STATUS_COMPLETE || status == abi::STATUS_TRUNCATED;
        calls.push(ContenderCall {
            pid: u32_at(rec, 16)?,
            tid: u32_at(rec, 20)?,
            args: args_at(rec, 32)?,
            status,
            attr: AttrView {
                size_word: size_read.then(|| u32_at(rec, 80)).transpose()?,
                head: if read {
                    slice(rec, 96, usize_at(rec, 84)?)?.to_vec()
                } else {
                    Vec::new()
                },
            },
        });
    }
    Ok(calls)
}

/// The fidelity counts of a pass `on+bpf`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Fidelity {
    pub(super) calls: u64,
    pub(super) racy: u64,
    /// The contender's attr differs from the kernel's (size word or bytes).
    pub(super) contender_wrong: u64,
    pub(super) contender_wrong_racy: u64,
    /// Its read failed (status FAULT) ...
    pub(super) contender_unread: u64,
    /// ... although the kernel read bytes of the attr.
    pub(super) contender_unread_kernel_read: u64,
    /// Its attr cut at 136 bytes.
    pub(super) contender_truncated: u64,
    /// Capture's record not what the kernel used (on a call nothing
    /// raced): each also goes to the errors.
    pub(super) capture_wrong: u64,
    /// What fails the run, one line each.
    pub(super) errors: Vec<String>,
}

/// One call of a pass `on+bpf`: its capture record, its contender record,
/// whether the racing writer rewrote its attr, and the bytes the campaign
/// placed (what the kernel read, when the writer does not touch them).
pub(super) struct Compared<'a> {
    pub(super) capture: &'a CaptureCall,
    pub(super) contender: &'a ContenderCall,
    pub(super) racy: bool,
    pub(super) placed: &'a [u8],
}

impl Fidelity {
    /// Counts one call; `what` names it in an error.
    pub(super) fn add(&mut self, c: &Compared<'_>, what: &str) {
        self.calls += 1;
        self.racy += u64::from(c.racy);
        // perf_event_open(2)'s five arguments: the syscall tracepoint
        // carries no sixth word, the contender records it as 0.
        if c.capture.args[..5] != c.contender.args[..5] {
            self.errors.push(format!(
                "{what}: the tracers paired different calls: capture args {:x?}, contender args {:x?}",
                c.capture.args, c.contender.args
            ));
            return;
        }
        let kernel = &c.capture.kernel;
        if !c.racy {
            let placed = AttrView {
                size_word: c
                    .placed
                    .get(4..8)
                    .map(|w| u32::from_le_bytes(w.try_into().expect("4 bytes"))),
                head: c.placed.to_vec(),
            };
            if kernel.differs(&placed) {
                self.capture_wrong += 1;
                self.errors.push(format!(
                    "{what}: nothing rewrote the attr, yet capture's record is {kernel:x?} where {placed:x?} was placed"
                ));
            }
        }
        match c.contender.status {
            abi::STATUS_FAULT => {
                self.contender_unread += 1;
                self.contender_unread_kernel_read += u64::from(!kernel.head.is_empty());
            }
            abi::STATUS_TRUNCATED => self.contender_truncated += 1,
            _ => {}
        }
        if c.contender.attr.differs(kernel) {
            self.contender_wrong += 1;
            self.contender_wrong_racy += u64::from(c.racy);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An attr of `size` bytes whose size word says `size`, filled with `fill`.
    fn attr(size: u32, fill: u8) -> Vec<u8> {
        let mut a = vec![fill; size as usize];
        a[4..8].copy_from_slice(&size.to_le_bytes());
        a
    }

    fn view(bytes: &[u8]) -> AttrView {
        AttrView {
            size_word: Some(u32_at(bytes, 4).unwrap()),
            head: bytes.to_vec(),
        }
    }

    fn capture_call(kernel: &[u8]) -> CaptureCall {
        CaptureCall {
            tid: 7,
            time_ns: 4,
            args: [0x1000, 0, u64::MAX, u64::MAX, 8, 0],
            kernel: view(kernel),
        }
    }

    fn contender_call(status: u32, attr: AttrView) -> ContenderCall {
        ContenderCall {
            pid: 7,
            tid: 7,
            args: [0x1000, 0, u64::MAX, u64::MAX, 8, 0],
            status,
            attr,
        }
    }

    fn count(calls: &[(CaptureCall, ContenderCall, bool, Vec<u8>)]) -> Fidelity {
        let mut f = Fidelity::default();
        for (i, (capture, contender, racy, placed)) in calls.iter().enumerate() {
            f.add(
                &Compared {
                    capture,
                    contender,
                    racy: *racy,
                    placed,
                },
                &format!("call {i}"),
            );
        }
        f
    }

    #[test]
    fn a_racing_writer_between_the_reads_counts_against_the_contender_only() {
        let (a, b) = (attr(136, 1), attr(136, 2));
        // The contender read a; the kernel read b, and capture recorded
        // the kernel's copy.
        let f = count(&[(
            capture_call(&b),
            contender_call(1, view(&a)),
            true,
            a.clone(),
        )]);
        assert_eq!(
            (f.calls, f.racy, f.contender_wrong, f.contender_wrong_racy),
            (1, 1, 1, 1)
        );
        assert_eq!(f.capture_wrong, 0);
        assert!(f.errors.is_empty(), "{:?}", f.errors);
        // The contender read after the writer, as the kernel did: right.
        let f = count(&[(capture_call(&b), contender_call(1, view(&b)), true, a)]);
        assert_eq!(f.contender_wrong, 0);
    }

    #[test]
    fn the_contender_is_compared_over_the_bytes_both_have() {
        let placed = attr(200, 3);
        let kernel = &placed[..136];
        // Truncated at 136, as the kernel's head is: no difference.
        let mut cut = view(kernel);
        cut.size_word = Some(200);
        let f = count(&[(
            capture_call(kernel),
            contender_call(4, cut),
            false,
            placed.clone(),
        )]);
        assert_eq!((f.contender_wrong, f.contender_truncated), (0, 1));
        assert!(f.errors.is_empty(), "{:?}", f.errors);
        // A failed read: no bytes to compare, counted as unread, and as
        // unread where the kernel did read.
        let f = count(&[(
            capture_call(kernel),
            contender_call(
                3,
                AttrView {
                    size_word: Some(200),
                    head: Vec::new(),
                },
            ),
            false,
            placed.clone(),
        )]);
        assert_eq!(
            (
                f.contender_wrong,
                f.contender_unread,
                f.contender_unread_kernel_read
            ),
            (0, 1, 1)
        );
        // A different size word alone is a difference.
        let f = count(&[(
            capture_call(kernel),
            contender_call(
                3,
                AttrView {
                    size_word: Some(64),
                    head: Vec::new(),
                },
            ),
            false,
            placed,
        )]);
        assert_eq!(f.contender_wrong, 1);
    }

    #[test]
    fn capture_is_held_to_the_placed_bytes_where_nothing_races() {
        let (a, b) = (attr(64, 1), attr(64, 2));
        // A record that is not what was placed: a bug.
        let f = count(&[(
            capture_call(&b),
            contender_call(1, view(&a)),
            false,
            a.clone(),
        )]);
        assert_eq!((f.capture_wrong, f.errors.len()), (1, 1));
        // Where a writer raced, the kernel may have read either.
        let f = count(&[(
            capture_call(&b),
            contender_call(1, view(&b)),
            true,
            a.clone(),
        )]);
        assert_eq!((f.capture_wrong, f.errors.len()), (0, 0));
        // Calls of different arguments paired: an error, not a count.
        let mut other = contender_call(1, view(&a));
        other.args[4] = 0;
        let f = count(&[(capture_call(&a), other, false, a)]);
        assert_eq!((f.contender_wrong, f.errors.len()), (0, 1));
    }

    /// A trace file (format version 2) of one call whose ENTRY holds the
    /// kernel's copy `kernel`, begun at time 4.
    fn trace_of(kernel: &[u8]) -> Vec<u8> {
        fn item(data: &[u8]) -> Vec<u8> {
            let len = u32::try_from(data.len()).unwrap();
            let mut it = Vec::new();
            for v in [40 + len.next_multiple_of(8), 40, 0, 1, 1, 0, len, len, 0, 0] {
                it.extend_from_slice(&v.to_le_bytes());
            }
            it.extend_from_slice(data);
            it.resize(it.len().next_multiple_of(8), 0);
            it
        }
        fn record(kind: u32, body: &[u8]) -> Vec<u8> {
            let mut r = Vec::new();
            let size = u32::try_from(48 + body.len()).unwrap();
            for v in [size, kind, 48, 0] {
                r.extend_from_slice(&v.to_le_bytes());
            }
            for v in [0x42u64, 5] {
                r.extend_from_slice(&v.to_le_bytes());
            }
            for v in [7u32, 7, 0, 298] {
                r.extend_from_slice(&v.to_le_bytes());
            }
            r.extend_from_slice(body);
            r
        }
        let mut entry_body = Vec::new();
        for v in [64u32, 1] {
            entry_body.extend_from_slice(&v.to_le_bytes());
        }
        for a in [0x1000u64, 0, u64::MAX, u64::MAX, 8, 0, 4] {
            entry_body.extend_from_slice(&a.to_le_bytes());
        }
        entry_body.extend(item(kernel));
        let mut exit_body = Vec::new();
        for v in [40u32, 0] {
            exit_body.extend_from_slice(&v.to_le_bytes());
        }
        for v in [-22i64, 10] {
            exit_body.extend_from_slice(&v.to_le_bytes());
        }
        for v in [0u32, 0] {
            exit_body.extend_from_slice(&v.to_le_bytes());
        }
        exit_body.extend_from_slice(&0u64.to_le_bytes());
        let mut records = record(abi::RECORD_ENTRY, &entry_body);
        records.extend(record(abi::RECORD_EXIT, &exit_body));
        let mut t = b"ANTI-TRC".to_vec();
        for v in [2u32, abi::ABI_VERSION, 24, 0] {
            t.extend_from_slice(&v.to_le_bytes());
        }
        for (kind, payload) in [
            (6u32, 0u64.to_le_bytes().to_vec()),
            (2, 9u64.to_le_bytes().to_vec()),
            (1, records),
            (5, Vec::new()),
        ] {
            t.extend_from_slice(&kind.to_le_bytes());
            t.extend_from_slice(&0u32.to_le_bytes());
            t.extend_from_slice(&(payload.len() as u64).to_le_bytes());
            t.extend(payload);
        }
        t
    }

    #[test]
    fn reads_a_call_and_the_kernel_s_copy_from_a_trace_file() {
        let a = attr(72, 1);
        let calls = capture_calls(&trace_of(&a)).unwrap();
        assert_eq!(calls, vec![capture_call(&a)]);
        let mut cut = trace_of(&a);
        cut.truncate(cut.len() - 20);
        assert!(capture_calls(&cut).is_err());
        // A trace of another ABI version is refused.
        let mut old = trace_of(&a);
        old[12..16].copy_from_slice(&(abi::ABI_VERSION - 1).to_le_bytes());
        assert!(capture_calls(&old).unwrap_err().contains("ABI version"));
    }

    #[test]
    fn a_size_word_of_0_or_64_is_not_told_apart_without_bytes() {
        let item = |status: u32, declared: u32| {
            let mut it = Vec::new();
            for v in [40u32, 40, 0, 1, status, 0, declared, 0, 0, 0] {
                it.extend_from_slice(&v.to_le_bytes());
            }
            capture_item(&it).unwrap()
        };
        assert_eq!(item(abi::STATUS_FAULT, 64).size_word, None);
        assert_eq!(item(abi::STATUS_FAULT, 136).size_word, Some(136));
        assert_eq!(item(abi::STATUS_INVALID_SIZE, 1).size_word, Some(1));
    }

    #[test]
    fn reads_the_contender_file() {
        let a = attr(72, 1);
        let mut f = Vec::new();
        f.extend_from_slice(&0x0031_4650_4254_4e41u64.to_le_bytes());
        for v in [32u32, 136] {
            f.extend_from_slice(&v.to_le_bytes());
        }
        let mut e = Vec::new();
        for v in [232u32, 1] {
            e.extend_from_slice(&v.to_le_bytes());
        }
        e.extend_from_slice(&5u64.to_le_bytes());
        for v in [7u32, 7, 0, 0] {
            e.extend_from_slice(&v.to_le_bytes());
        }
        for v in [0x1000u64, 0, u64::MAX, u64::MAX, 8, 0] {
            e.extend_from_slice(&v.to_le_bytes());
        }
        for v in [72u32, 72, 1, 0] {
            e.extend_from_slice(&v.to_le_bytes());
        }
        let mut bytes = a.clone();
        bytes.resize(136, 0);
        e.extend(bytes);
        f.extend(&e);
        // An exit record, skipped.
        let mut x = Vec::new();
        for v in [40u32, 2] {
            x.extend_from_slice(&v.to_le_bytes());
        }
        x.resize(40, 0);
        f.extend(x);
        assert_eq!(
            contender_calls(&f).unwrap(),
            vec![contender_call(1, view(&a))]
        );
        assert!(contender_calls(&f[..f.len() - 1]).is_err());
    }
}
