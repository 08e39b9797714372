// SPDX-License-Identifier: GPL-2.0-only
//! Raw trace files (`reader -w FILE`, `reader show FILE`) and the
//! detection of golden ring images.
//!
//! # Trace file format, version 2
//!
//! A trace file is the stream of [`DrainMsg`]s the drain sent,
//! written down in the order the queue delivered them (the live run's
//! assembler decodes the same stream, from the file itself with
//! [`crate::pipeline::run_to_trace`]), so that `reader show` replays it
//! through the same code and prints the same bytes as the live run did.
//! All integers are little-endian.
//!
//! A RECORDS frame holds every record a drain pass framed, a record whose
//! body does not parse or that claims another CPU included: the decoder
//! skips and reports such a record. (Readers before this rule had the drain
//! remove them; one of those decodes a newer file alike except that it
//! stops the ring at such a record instead of skipping it.)
//!
//! ```text
//! header:  magic        8 bytes  "ANTI-TRC"
//!          version      u32      2 (this format; 1 had no START frames)
//!          abi_version  u32      ANTINOMIE_ABI_VERSION of the records
//!          header_len   u32      bytes from the magic to the first frame
//!          nr_cpus      u32
//!          window_ns    u64      the reordering window used
//!          cpus         u32 × nr_cpus, the rings the run started with:
//!                                every ring (in a file of a reader whose
//!                                kernel gave a CPU its ring when it came
//!                                online, a ring that joined later has
//!                                frames but is not listed; one named
//!                                only by a DONE was not read)
//!          nr_pmus      u32      dynamic PMU types known when recording:
//!          pmus         nr_pmus × (type u32, name_len u32, name bytes)
//!          realtime_ns  i64      CLOCK_REALTIME − CLOCK_MONOTONIC when the
//!                                recording started (wall-clock times,
//!                                `-t`); absent from older files, whose
//!                                header_len ends before it
//! frames:  kind u32, cpu u32, len u64, then len bytes of payload:
//!          6 START    start_pos u64: the reader begins reading the ring,
//!                     whose consumer position this is (before the
//!                     ring's first other frame): an EXIT whose ENTRY
//!                     lies before it there had it read by an earlier
//!                     reader
//!          1 RECORDS  the raw bytes of the records one drain pass
//!                     framed, back to back, exactly as in the ring
//!                     (bodies are validated when the file is decoded)
//!          2 IDLE     time_ns u64: the ring was empty then
//!          3 CORRUPT  pos u64, offset u64 (u64::MAX: not known),
//!                     fatal u32, msg_len u32, msg
//!          4 DONE     start_pos u64, then producer_pos, consumer_pos,
//!                     produced, lost[8] (u64 each: the final counters),
//!                     then records, skipped, bytes (u64: what the
//!                     consumer saw: records framed, records skipped
//!                     record by record, which a drain pass leaves to
//!                     the decoder, bytes), then, when the ring's meta page
//!                     has them (absent from older files), lossless
//!                     on, waits, wait_ns (u64 each)
//!          5 END      empty: the file is complete
//! ```
//!
//! A file whose `abi_version` is not this reader's, older or newer, is
//! refused before any frame is read, with both versions named
//! ([`Error::AbiVersion`]): the ABI version is bumped only when records
//! change meaning (growth alone needs none), so a trace of another
//! version cannot be decoded as this reader's records without printing
//! wrong calls. Replay it with a reader of its ABI. `magic`, `version`
//! and `abi_version` keep their offsets in every format version, and the
//! ABI version is checked first, so that any reader can name it. A file
//! of another format version is refused too, with both named. A
//! reader skips frames of unknown kinds by their length. A file without
//! END (the recorder was killed, the disk filled up) is decoded as far as
//! it goes: up to its last complete frame, and [`TraceReader::truncated_at`]
//! says where an incomplete last frame starts; rings without DONE count as
//! finished.
//!
//! [`TraceReader`] reads frame by frame from any [`Read`](std::io::Read) (a file, a pipe):
//! memory is one frame, whatever the file's size.

mod reader;
mod writer;

pub use self::reader::TraceReader;
pub use self::writer::TraceWriter;
use crate::decode::PmuTypes;
use crate::pipeline::DrainMsg;
use crate::Error;

/// The magic at the start of a trace file.
pub const TRACE_MAGIC: &[u8; 8] = b"ANTI-TRC";
/// The trace format version this reader writes and reads.
pub const TRACE_VERSION: u32 = 2;

const FRAME_RECORDS: u32 = 1;
const FRAME_IDLE: u32 = 2;
const FRAME_CORRUPT: u32 = 3;
const FRAME_DONE: u32 = 4;
const FRAME_END: u32 = 5;
const FRAME_START: u32 = 6;
/// A CORRUPT frame's offset when the record's data offset is not known.
const OFFSET_UNKNOWN: u64 = u64::MAX;

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
#[cfg(test)]
mod tests {
    use std::io::{self, Read};

    use antinomie_abi as abi;

    use super::*;
    use crate::pipeline::Recorder;
    use crate::record::RecordError;
    use crate::ring::{ConsumerStats, CorruptRecord, LosslessCounters, RingCounters};

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
            DrainMsg::Start {
                cpu: 3,
                start_pos: 0x1_0000_0040,
            },
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
                offset: Some(8),
                error: RecordError::Recorded("bad record size 3".into()),
                fatal: true,
            }),
            // Found where a batch was decoded: no data offset.
            DrainMsg::Corrupt(CorruptRecord {
                cpu: 3,
                pos: 0x1_0000_0048,
                offset: None,
                error: RecordError::Recorded("lost body size 40 does not fit".into()),
                fatal: false,
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
            // A meta page with the lossless counters.
            DrainMsg::Done {
                cpu: 0,
                start_pos: 8,
                counters: RingCounters {
                    produced: 9,
                    lossless: Some(LosslessCounters {
                        on: true,
                        waits: 4,
                        wait_ns: 12_345,
                    }),
                    ..Default::default()
                },
                stats: ConsumerStats {
                    records: 9,
                    skipped: 0,
                    bytes: 1024,
                },
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

    /// Takes at most 3 bytes a call, and every other call is
    /// interrupted before it takes any: the frames come out whole anyway.
    struct Stingy {
        out: Vec<u8>,
        calls: usize,
    }

    impl io::Write for Stingy {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.calls += 1;
            if self.calls.is_multiple_of(2) {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let n = buf.len().min(3);
            self.out.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// A trace of one CPU, records of ABI `abi_version`, nothing else
    /// recorded.
    fn one_cpu_header(abi_version: u32) -> TraceHeader {
        TraceHeader {
            abi_version,
            window_ns: 0,
            cpus: vec![0],
            pmus: PmuTypes::none(),
            realtime_offset_ns: None,
        }
    }

    /// `msgs` written to `out` as a whole trace.
    fn write_trace<W: io::Write>(out: W, header: &TraceHeader, msgs: &[DrainMsg]) -> W {
        let mut w = TraceWriter::new(out, header).unwrap();
        for m in msgs {
            w.record(m).unwrap();
        }
        w.finish().unwrap()
    }

    #[test]
    fn frames_survive_short_and_interrupted_writes() {
        let header = one_cpu_header(abi::ABI_VERSION);
        let msgs = [
            DrainMsg::Start {
                cpu: 0,
                start_pos: 0,
            },
            DrainMsg::Records {
                cpu: 0,
                bytes: (0..=255).collect(),
            },
            DrainMsg::Records {
                cpu: 0,
                bytes: vec![],
            },
            DrainMsg::Idle { cpu: 0, time_ns: 5 },
        ];
        let stingy = Stingy {
            out: Vec::new(),
            calls: 0,
        };
        let whole = write_trace(stingy, &header, &msgs).out;
        assert_eq!(whole, write_trace(Vec::new(), &header, &msgs));
        let trace = read_trace(&whole).unwrap();
        assert_eq!(trace.msgs, msgs);
    }

    /// A complete trace file of no frames whose records are of ABI
    /// `abi_version`, in format `version`.
    fn empty_trace(abi_version: u32, version: u32) -> Vec<u8> {
        let mut file = write_trace(Vec::new(), &one_cpu_header(abi_version), &[]);
        file[8..12].copy_from_slice(&version.to_le_bytes());
        file
    }

    /// The rule for traces of another ABI: refused before any frame is
    /// read, older or newer, with both versions named, whatever the
    /// file's format version (the ABI version is at the same offset in
    /// every one).
    #[test]
    fn a_trace_of_another_abi_is_refused_with_both_versions_named() {
        assert!(read_trace(&empty_trace(abi::ABI_VERSION, TRACE_VERSION)).is_ok());
        for found in [1, abi::ABI_VERSION - 1, abi::ABI_VERSION + 1] {
            for version in [1, TRACE_VERSION, TRACE_VERSION + 1] {
                let err = TraceReader::new(&empty_trace(found, version)[..]).unwrap_err();
                assert!(
                    matches!(
                        err,
                        Error::AbiVersion {
                            of: crate::AbiOf::Trace,
                            found: f,
                            reader,
                        } if f == found && reader == abi::ABI_VERSION
                    ),
                    "ABI {found}, format {version}: {err:?}"
                );
                assert_eq!(
                    err.to_string(),
                    format!(
                        "the trace file's records are of Antinomie ABI version {found}, this \
                         reader's is {}: use a reader of ABI version {found}",
                        abi::ABI_VERSION
                    )
                );
            }
        }
    }

    /// A trace of this ABI in another format version is refused too, with
    /// both format versions named.
    #[test]
    fn a_trace_of_another_format_version_is_refused() {
        for version in [1, TRACE_VERSION + 1] {
            let err = read_trace(&empty_trace(abi::ABI_VERSION, version)).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!(
                    "bad trace file: format version {version}, this reader reads {TRACE_VERSION}"
                )
            );
        }
    }

    #[test]
    fn a_stream_is_read_frame_by_frame() {
        let header = TraceHeader {
            realtime_offset_ns: Some(42),
            ..one_cpu_header(abi::ABI_VERSION)
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
