//! Raw trace files (`reader -w FILE`, `reader show FILE`) and the
//! detection of golden ring images.
//!
//! # Trace file format, version 1
//!
//! A trace file is the stream of [`DrainMsg`]s the assembler took, written
//! down as it took them, so that `reader show` replays it through the same
//! code and prints the same bytes as the live run did. All integers are
//! little-endian.
//!
//! ```text
//! header:  magic        8 bytes  "ANTI-TRC"
//!          version      u32      1 (this format)
//!          abi_version  u32      ANTINOMIE_ABI_VERSION of the records
//!          header_len   u32      bytes from the magic to the first frame
//!          nr_cpus      u32
//!          window_ns    u64      the reordering window used
//!          cpus         u32 × nr_cpus, the rings drained
//!          nr_pmus      u32      dynamic PMU types known when recording:
//!          pmus         nr_pmus × (type u32, name_len u32, name bytes)
//!          realtime_ns  i64      CLOCK_REALTIME − CLOCK_MONOTONIC when the
//!                                recording started (wall-clock times,
//!                                `-t`); absent from older files, whose
//!                                header_len ends before it
//! frames:  kind u32, cpu u32, len u64, then len bytes of payload:
//!          1 RECORDS  the raw bytes of the valid records of one drain
//!                     pass, back to back, exactly as in the ring
//!          2 IDLE     time_ns u64: the ring was empty then
//!          3 CORRUPT  pos u64, offset u64, fatal u32, msg_len u32, msg
//!          4 DONE     start_pos u64, then producer_pos, consumer_pos,
//!                     produced, lost[8] (u64 each: the final counters),
//!                     then records, skipped, bytes (u64: what the
//!                     consumer saw)
//!          5 END      empty: the file is complete
//! ```
//!
//! A reader skips frames of unknown kinds by their length. A file without
//! END (the recorder was killed, the disk filled up) is decoded as far as
//! it goes: up to its last complete frame, and [`TraceReader::truncated_at`]
//! says where an incomplete last frame starts; rings without DONE count as
//! finished.
//!
//! [`TraceReader`] reads frame by frame from any [`Read`] (a file, a pipe):
//! memory is one frame, whatever the file's size.

use std::io::{self, Read, Write};

use antinomie_abi as abi;

use crate::decode::PmuTypes;
use crate::pipeline::{DrainMsg, Recorder};
use crate::record::RecordError;
use crate::ring::{ConsumerStats, CorruptRecord, RingCounters};
use crate::Error;

/// The magic at the start of a trace file.
pub const TRACE_MAGIC: &[u8; 8] = b"ANTI-TRC";
/// The trace format version this reader writes and reads.
pub const TRACE_VERSION: u32 = 1;

const FRAME_RECORDS: u32 = 1;
const FRAME_IDLE: u32 = 2;
const FRAME_CORRUPT: u32 = 3;
const FRAME_DONE: u32 = 4;
const FRAME_END: u32 = 5;

/// What a trace file says about the run that wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceHeader {
    /// The ABI version of the records.
    pub abi_version: u32,
    /// The reordering window used.
    pub window_ns: u64,
    /// The CPUs whose rings were drained.
    pub cpus: Vec<u32>,
    /// Dynamic PMU types known when recording.
    pub pmus: PmuTypes,
    /// `CLOCK_REALTIME` − `CLOCK_MONOTONIC` in ns when the recording
    /// started, to show wall-clock times; `None` in older files.
    pub realtime_offset_ns: Option<i64>,
}

/// A decoded trace file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    /// Its header.
    pub header: TraceHeader,
    /// The messages, in order.
    pub msgs: Vec<DrainMsg>,
    /// Whether the END frame was there.
    pub complete: bool,
    /// The byte offset of an incomplete last frame, if the file was cut
    /// inside one.
    pub truncated_at: Option<u64>,
}

/// Writes a trace file; a [`Recorder`] for [`crate::pipeline::run`].
#[derive(Debug)]
pub struct TraceWriter<W: Write> {
    out: W,
}

fn u32_len(n: usize) -> io::Result<u32> {
    u32::try_from(n).map_err(|_| io::Error::other("trace field too large"))
}

impl<W: Write> TraceWriter<W> {
    /// Writes the header.
    ///
    /// # Errors
    /// An I/O error.
    pub fn new(mut out: W, header: &TraceHeader) -> io::Result<Self> {
        let mut h = Vec::new();
        h.extend_from_slice(TRACE_MAGIC);
        h.extend_from_slice(&TRACE_VERSION.to_le_bytes());
        h.extend_from_slice(&header.abi_version.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes()); // header_len, below
        h.extend_from_slice(&u32_len(header.cpus.len())?.to_le_bytes());
        h.extend_from_slice(&header.window_ns.to_le_bytes());
        for c in &header.cpus {
            h.extend_from_slice(&c.to_le_bytes());
        }
        let pmus: Vec<_> = header.pmus.pairs().collect();
        h.extend_from_slice(&u32_len(pmus.len())?.to_le_bytes());
        for (t, name) in pmus {
            h.extend_from_slice(&t.to_le_bytes());
            h.extend_from_slice(&u32_len(name.len())?.to_le_bytes());
            h.extend_from_slice(name.as_bytes());
        }
        if let Some(offset) = header.realtime_offset_ns {
            h.extend_from_slice(&offset.to_le_bytes());
        }
        let len = u32_len(h.len())?.to_le_bytes();
        h[16..20].copy_from_slice(&len);
        out.write_all(&h)?;
        Ok(TraceWriter { out })
    }

    fn frame(&mut self, kind: u32, cpu: u32, payload: &[u8]) -> io::Result<()> {
        let mut f = Vec::with_capacity(16);
        f.extend_from_slice(&kind.to_le_bytes());
        f.extend_from_slice(&cpu.to_le_bytes());
        f.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        self.out.write_all(&f)?;
        self.out.write_all(payload)
    }

    /// Writes the END frame and flushes.
    ///
    /// # Errors
    /// An I/O error.
    pub fn finish(mut self) -> io::Result<W> {
        self.frame(FRAME_END, 0, &[])?;
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: Write> Recorder for TraceWriter<W> {
    fn record(&mut self, msg: &DrainMsg) -> io::Result<()> {
        match msg {
            DrainMsg::Records { cpu, bytes } => self.frame(FRAME_RECORDS, *cpu, bytes),
            DrainMsg::Idle { cpu, time_ns } => self.frame(FRAME_IDLE, *cpu, &time_ns.to_le_bytes()),
            DrainMsg::Corrupt(c) => {
                let msg = c.error.to_string();
                let mut p = Vec::new();
                p.extend_from_slice(&c.pos.to_le_bytes());
                p.extend_from_slice(&c.offset.to_le_bytes());
                p.extend_from_slice(&u32::from(c.fatal).to_le_bytes());
                p.extend_from_slice(&u32_len(msg.len())?.to_le_bytes());
                p.extend_from_slice(msg.as_bytes());
                self.frame(FRAME_CORRUPT, c.cpu, &p)
            }
            DrainMsg::Done {
                cpu,
                start_pos,
                counters,
                stats,
            } => {
                let mut p = Vec::new();
                for v in [
                    *start_pos,
                    counters.producer_pos,
                    counters.consumer_pos,
                    counters.produced,
                ]
                .into_iter()
                .chain(counters.lost)
                .chain([stats.records, stats.skipped, stats.bytes])
                {
                    p.extend_from_slice(&v.to_le_bytes());
                }
                self.frame(FRAME_DONE, *cpu, &p)
            }
        }
    }
}

/// A cursor over untrusted bytes; every read is bounds-checked.
struct Cur<'a> {
    b: &'a [u8],
    off: usize,
}

impl<'a> Cur<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Error> {
        let end = self.off.checked_add(n).filter(|&e| e <= self.b.len());
        let Some(end) = end else {
            return Err(Error::BadTrace(format!(
                "truncated at byte {} reading {what}",
                self.off
            )));
        };
        let s = &self.b[self.off..end];
        self.off = end;
        Ok(s)
    }

    fn u32(&mut self, what: &str) -> Result<u32, Error> {
        let s = self.take(4, what)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }

    fn u64(&mut self, what: &str) -> Result<u64, Error> {
        let s = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Ok(u64::from_le_bytes(a))
    }
}

/// Whether `bytes` start like a trace file.
#[must_use]
pub fn is_trace(bytes: &[u8]) -> bool {
    bytes.starts_with(TRACE_MAGIC)
}

/// Decodes a trace file held in memory (see [`TraceReader`]).
///
/// # Errors
/// [`Error::BadTrace`] for a malformed header or frame, [`Error::AbiVersion`]
/// for records of another ABI version. A file cut short is not an error:
/// see [`Trace::truncated_at`].
pub fn read_trace(bytes: &[u8]) -> Result<Trace, Error> {
    let mut r = TraceReader::new(bytes)?;
    let msgs = r.by_ref().collect::<Result<Vec<_>, _>>()?;
    Ok(Trace {
        header: r.header().clone(),
        msgs,
        complete: r.complete(),
        truncated_at: r.truncated_at(),
    })
}

/// The largest header this reader accepts: the CPU list and the PMU
/// names of any real machine fit many times over.
const HEADER_MAX: usize = 1 << 20;

/// Reads up to `buf.len()` bytes, short only at the end of the input.
fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

fn io_error(e: &io::Error) -> Error {
    Error::BadTrace(format!("reading: {e}"))
}

/// A trace file read frame by frame: an iterator of its messages.
///
/// The iteration ends at the END frame, at the end of the input, or at an
/// incomplete last frame ([`TraceReader::truncated_at`]); a malformed
/// frame or an I/O error is yielded as an error, once, and ends it.
#[derive(Debug)]
pub struct TraceReader<R: Read> {
    r: R,
    header: TraceHeader,
    /// Bytes consumed so far.
    off: u64,
    complete: bool,
    truncated_at: Option<u64>,
    finished: bool,
}

impl<R: Read> TraceReader<R> {
    /// Reads and checks the header.
    ///
    /// # Errors
    /// [`Error::BadTrace`] for a missing magic, another format version, a
    /// header cut short or malformed, or an I/O error; [`Error::AbiVersion`]
    /// for records of another ABI version.
    pub fn new(mut r: R) -> Result<Self, Error> {
        let mut fixed = [0u8; 32];
        let n = read_full(&mut r, &mut fixed).map_err(|e| io_error(&e))?;
        if !is_trace(&fixed[..n]) {
            return Err(Error::BadTrace("no ANTI-TRC magic".into()));
        }
        let mut c = Cur {
            b: &fixed[..n],
            off: 8,
        };
        let version = c.u32("version")?;
        if version != TRACE_VERSION {
            return Err(Error::BadTrace(format!(
                "format version {version}, this reader reads {TRACE_VERSION}"
            )));
        }
        let abi_version = c.u32("abi_version")?;
        if abi_version != abi::ABI_VERSION {
            return Err(Error::AbiVersion {
                kernel: abi_version,
                reader: abi::ABI_VERSION,
            });
        }
        let header_len = c.u32("header_len")? as usize;
        let nr_cpus = c.u32("nr_cpus")?;
        let window_ns = c.u64("window_ns")?;
        if !(c.off..=HEADER_MAX).contains(&header_len) {
            return Err(Error::BadTrace(format!("bad header_len {header_len}")));
        }
        let mut rest = vec![0u8; header_len - c.off];
        let got = read_full(&mut r, &mut rest).map_err(|e| io_error(&e))?;
        let mut c = Cur {
            b: &rest[..got],
            off: 0,
        };
        let at = |c: &Cur<'_>| c.off as u64 + 32;
        let mut cpus = Vec::new();
        for _ in 0..nr_cpus {
            cpus.push(c.u32("cpus").map_err(|_| bad_header(at(&c), "cpus"))?);
        }
        let nr_pmus = c
            .u32("nr_pmus")
            .map_err(|_| bad_header(at(&c), "nr_pmus"))?;
        let mut pmus = Vec::new();
        for _ in 0..nr_pmus {
            let t = c.u32("pmu type").map_err(|_| bad_header(at(&c), "pmus"))?;
            let n = c
                .u32("pmu name length")
                .map_err(|_| bad_header(at(&c), "pmus"))? as usize;
            let name = c
                .take(n, "pmu name")
                .map_err(|_| bad_header(at(&c), "pmus"))?;
            pmus.push((t, String::from_utf8_lossy(name).into_owned()));
        }
        // Older files end their header before the wall-clock offset.
        let realtime_offset_ns = if c.b.len() >= c.off + 8 {
            let offset = c
                .u64("realtime_ns")
                .map_err(|_| bad_header(at(&c), "realtime_ns"))?;
            Some(i64::from_le_bytes(offset.to_le_bytes()))
        } else {
            None
        };
        if got < rest.len() {
            return Err(bad_header(got as u64 + 32, "the header"));
        }
        Ok(TraceReader {
            r,
            header: TraceHeader {
                abi_version,
                window_ns,
                cpus,
                pmus: PmuTypes::from_pairs(pmus),
                realtime_offset_ns,
            },
            off: header_len as u64,
            complete: false,
            truncated_at: None,
            finished: false,
        })
    }

    /// The header.
    #[must_use]
    pub fn header(&self) -> &TraceHeader {
        &self.header
    }

    /// Whether the END frame was read.
    #[must_use]
    pub fn complete(&self) -> bool {
        self.complete
    }

    /// Where the incomplete last frame starts, once the iteration met one.
    #[must_use]
    pub fn truncated_at(&self) -> Option<u64> {
        self.truncated_at
    }

    /// The next frame, or `None` at the end (see the type's documentation).
    fn frame(&mut self) -> Result<Option<DrainMsg>, Error> {
        loop {
            let start = self.off;
            let mut head = [0u8; 16];
            let n = read_full(&mut self.r, &mut head).map_err(|e| io_error(&e))?;
            if n == 0 {
                return Ok(None);
            }
            if n < head.len() {
                self.truncated_at = Some(start);
                return Ok(None);
            }
            let mut c = Cur { b: &head, off: 0 };
            let kind = c.u32("frame kind")?;
            let cpu = c.u32("frame cpu")?;
            let len = c.u64("frame length")?;
            // Read what is there, at most `len`: a corrupt length costs
            // no more memory than the file has.
            let mut payload = Vec::new();
            (&mut self.r)
                .take(len)
                .read_to_end(&mut payload)
                .map_err(|e| io_error(&e))?;
            if (payload.len() as u64) < len {
                self.truncated_at = Some(start);
                return Ok(None);
            }
            // Both bounded by the input's length, which fits u64.
            self.off = start.saturating_add(16).saturating_add(len);
            if kind == FRAME_END {
                self.complete = true;
                return Ok(None);
            }
            if let Some(msg) = decode_frame(kind, cpu, payload)? {
                return Ok(Some(msg));
            }
        }
    }
}

fn bad_header(at: u64, what: &str) -> Error {
    Error::BadTrace(format!("truncated at byte {at} reading {what}"))
}

impl<R: Read> Iterator for TraceReader<R> {
    type Item = Result<DrainMsg, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finished {
            return None;
        }
        let next = self.frame();
        if !matches!(next, Ok(Some(_))) {
            self.finished = true;
        }
        next.transpose()
    }
}

/// Decodes one frame's payload; `None` for a kind this reader does not
/// know (skipped by its length).
fn decode_frame(kind: u32, cpu: u32, payload: Vec<u8>) -> Result<Option<DrainMsg>, Error> {
    if kind == FRAME_RECORDS {
        return Ok(Some(DrainMsg::Records {
            cpu,
            bytes: payload,
        }));
    }
    let mut p = Cur {
        b: &payload,
        off: 0,
    };
    Ok(Some(match kind {
        FRAME_IDLE => DrainMsg::Idle {
            cpu,
            time_ns: p.u64("idle time")?,
        },
        FRAME_CORRUPT => {
            let pos = p.u64("corrupt pos")?;
            let offset = p.u64("corrupt offset")?;
            let fatal = p.u32("corrupt fatal")? != 0;
            let n = p.u32("corrupt message length")? as usize;
            let msg = String::from_utf8_lossy(p.take(n, "corrupt message")?).into_owned();
            DrainMsg::Corrupt(CorruptRecord {
                cpu,
                pos,
                offset,
                error: RecordError::Recorded(msg),
                fatal,
            })
        }
        FRAME_DONE => {
            let start_pos = p.u64("start_pos")?;
            let producer_pos = p.u64("producer_pos")?;
            let consumer_pos = p.u64("consumer_pos")?;
            let produced = p.u64("produced")?;
            let mut lost = [0u64; abi::LOST_NR_SLOTS];
            for l in &mut lost {
                *l = p.u64("lost")?;
            }
            let stats = ConsumerStats {
                records: p.u64("records")?,
                skipped: p.u64("skipped")?,
                bytes: p.u64("bytes")?,
            };
            DrainMsg::Done {
                cpu,
                start_pos,
                counters: RingCounters {
                    producer_pos,
                    consumer_pos,
                    produced,
                    lost,
                },
                stats,
            }
        }
        _ => return Ok(None),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let header = TraceHeader {
            abi_version: abi::ABI_VERSION,
            window_ns: 7,
            cpus: vec![0, 3],
            pmus: PmuTypes::from_pairs([(8, "uprobe".to_owned())]),
            realtime_offset_ns: Some(-1_700_000_000_123_456_789),
        };
        let msgs = vec![
            DrainMsg::Records {
                cpu: 3,
                bytes: vec![1, 2, 3],
            },
            DrainMsg::Idle {
                cpu: 0,
                time_ns: 99,
            },
            DrainMsg::Corrupt(CorruptRecord {
                cpu: 0,
                pos: 8,
                offset: 8,
                error: RecordError::Recorded("bad record size 3".into()),
                fatal: true,
            }),
            DrainMsg::Done {
                cpu: 3,
                start_pos: 0,
                counters: RingCounters {
                    produced: 5,
                    ..Default::default()
                },
                stats: ConsumerStats::default(),
            },
        ];
        let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
        for m in &msgs {
            w.record(m).unwrap();
        }
        let bytes = w.finish().unwrap();
        let t = read_trace(&bytes).unwrap();
        assert!(t.complete);
        assert_eq!(t.header, header);
        assert_eq!(t.msgs, msgs);
        // Every truncation is an error (inside the header) or the frames
        // before the cut, with the cut frame's offset; never a panic.
        let mut frame_starts = vec![u64::from(u32::from_le_bytes(
            bytes[16..20].try_into().unwrap(),
        ))];
        let mut at = frame_starts[0];
        while at < bytes.len() as u64 {
            let i = usize::try_from(at).unwrap();
            at += 16 + u64::from_le_bytes(bytes[i + 8..i + 16].try_into().unwrap());
            frame_starts.push(at);
        }
        for n in 0..bytes.len() {
            let Ok(t) = read_trace(&bytes[..n]) else {
                assert!(n < usize::try_from(frame_starts[0]).unwrap(), "{n}");
                continue;
            };
            assert!(!t.complete);
            let whole = frame_starts.iter().filter(|&&s| s <= n as u64).count() - 1;
            assert_eq!(t.msgs[..], msgs[..whole.min(msgs.len())], "cut at {n}");
            let boundary = frame_starts.contains(&(n as u64));
            assert_eq!(
                t.truncated_at,
                (!boundary).then(|| frame_starts[whole]),
                "cut at {n}"
            );
        }
    }

    /// One byte per read(2), as a slow pipe may deliver it.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.0.len()).min(1);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_stream_is_read_frame_by_frame() {
        let header = TraceHeader {
            abi_version: abi::ABI_VERSION,
            window_ns: 0,
            cpus: vec![0],
            pmus: PmuTypes::none(),
            realtime_offset_ns: Some(42),
        };
        let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
        for i in 0..3u64 {
            w.record(&DrainMsg::Idle { cpu: 0, time_ns: i }).unwrap();
        }
        let bytes = w.finish().unwrap();
        let mut r = TraceReader::new(Trickle(&bytes)).unwrap();
        let times: Vec<u64> = r
            .by_ref()
            .map(|m| match m.unwrap() {
                DrainMsg::Idle { time_ns, .. } => time_ns,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(times, [0, 1, 2]);
        assert!(r.complete());
        assert_eq!(r.truncated_at(), None);
    }
}
