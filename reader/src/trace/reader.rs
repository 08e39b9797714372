// SPDX-License-Identifier: GPL-2.0-only
//! Reading a trace file frame by frame: [`TraceReader`].

use std::io::{self, Read};

use antinomie_abi as abi;

use super::{
    is_trace, TraceHeader, FRAME_CORRUPT, FRAME_DONE, FRAME_END, FRAME_IDLE, FRAME_RECORDS,
    FRAME_START, OFFSET_UNKNOWN, TRACE_VERSION,
};
use crate::decode::PmuTypes;
use crate::pipeline::DrainMsg;
use crate::record::RecordError;
use crate::ring::{ConsumerStats, CorruptRecord, LosslessCounters, RingCounters};
use crate::{AbiOf, Error};

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

/// The most a frame's length field makes the reader allocate before the
/// frame's bytes arrive: a frame is one drain pass over one ring, up to
/// the ring's size (256 KiB by default), and a corrupt length cannot make
/// the reader take more than this ahead of the bytes.
const FRAME_PREALLOC_MAX: u64 = 16 << 20;

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
        // Every format version so far has the ABI version here; it is
        // checked first, as the reason a reader cannot decode a file is
        // most often that its records are of another ABI.
        let abi_version = c.u32("abi_version")?;
        if abi_version != abi::ABI_VERSION {
            return Err(Error::AbiVersion {
                of: AbiOf::Trace,
                found: abi_version,
                reader: abi::ABI_VERSION,
            });
        }
        if version != TRACE_VERSION {
            return Err(Error::BadTrace(format!(
                "format version {version}, this reader reads {TRACE_VERSION}"
            )));
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
            // Read what is there, at most `len`. Room for a whole frame up
            // to FRAME_PREALLOC_MAX is taken at once (read_to_end would
            // otherwise grow the buffer from nothing, copying it each
            // time); beyond that the buffer grows as bytes arrive, so a
            // corrupt length costs at most FRAME_PREALLOC_MAX more than
            // the file holds.
            let mut payload =
                Vec::with_capacity(usize::try_from(len.min(FRAME_PREALLOC_MAX)).unwrap_or(0));
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
        FRAME_START => DrainMsg::Start {
            cpu,
            start_pos: p.u64("start_pos")?,
        },
        FRAME_IDLE => DrainMsg::Idle {
            cpu,
            time_ns: p.u64("idle time")?,
        },
        FRAME_CORRUPT => {
            let pos = p.u64("corrupt pos")?;
            let offset = Some(p.u64("corrupt offset")?).filter(|&o| o != OFFSET_UNKNOWN);
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
            // Absent from the files of older readers.
            let lossless = if p.b.len() > p.off {
                Some(LosslessCounters {
                    on: p.u64("lossless on")? != 0,
                    waits: p.u64("lossless waits")?,
                    wait_ns: p.u64("lossless wait_ns")?,
                })
            } else {
                None
            };
            DrainMsg::Done {
                cpu,
                start_pos,
                counters: RingCounters {
                    producer_pos,
                    consumer_pos,
                    produced,
                    lost,
                    lossless,
                },
                stats,
            }
        }
        _ => return Ok(None),
    }))
}
