// SPDX-License-Identifier: GPL-2.0-only
//! `antinomie-reader`: the library that reads what Antinomie captured of
//! `perf_event_open(2)`. It drains the per-CPU rings of `/dev/antinomie`
//! (or ring images, or a recorded trace file), merges the records in time
//! order, pairs each call's ENTRY and EXIT, decodes them, filters them and
//! formats them as strace-like text or JSON Lines. It is what the `reader`
//! command is built on (the `antinomie-reader-cli` crate, which adds the
//! command line, signals and printing), and what a test, a benchmark or
//! another tool uses to read the same records the same way.
//!
//! ```text
//!  ring (cpu 0) ─┐
//!  ring (cpu 1) ─┼─ drain thread ─▶ queue ─▶ Merger ─▶ Pairer ─▶ Sink (text | JSON)
//!  ring (cpu n) ─┘                (DrainMsg)  (time)   (call_id)     └▶ trace file
//! ```
//!
//! Modules, bottom up:
//! * [`decode`]: the `perf_event_attr` member table and name tables.
//! * [`field`]: the vocabulary of a record key (value, type, constants,
//!   capture status names), shared by the syscall table and the call.
//! * [`syscall`]: the capture rules per syscall, the rows everything that
//!   knows a syscall reads, and each syscall's reference page built from
//!   them ([`syscall::reference_page`]; `reader describe` prints it).
//! * [`record`]: validated views of one record's bytes (an ENTRY or EXIT
//!   of a syscall without a row is rejected), and owned records.
//! * [`ring`]: the consumer of one ring over live or image memory, and
//!   `ring::builder`, which builds ring images record by record (with the
//!   `test-util` feature, for tests and benchmarks).
//! * [`call`]: [`call::Call`], a paired, decoded call, and its record keys
//!   as its syscall's row makes them ([`call::call_fields`]).
//! * [`pipeline`]: the drain thread, the time merge, pairing, the summary.
//! * [`filter`]: the Syscall Trace filter, over the fields of the call and
//!   attr tables.
//! * [`output`]: text and JSON Lines.
//! * [`trace`]: the raw trace file.
//! * [`diff`]: two runs compared call by call.
//! * [`device`]: `/dev/antinomie`: ioctls, mappings, `poll()`.
//!
//! # Programs
//!
//! Two complete programs are in `examples/`: `live_drain` maps the rings
//! of `/dev/antinomie` and prints the calls as they complete (once, or
//! for some seconds), and `replay_trace` prints the calls of a trace file
//! that `reader -w` saved (`cargo run -p antinomie-reader --example
//! replay_trace -- FILE`; `cargo test` replays the repository's
//! synthetic trace with it).
//!
//! # Traces of another ABI
//!
//! A trace file is read by a reader of its records' ABI version only:
//! [`trace::TraceReader::new`] refuses one of another version, older or
//! newer, with [`Error::AbiVersion`], whose message names both versions
//! (`docs/design.md`, "Trace files", says why older ones are not read).
//! Ring images and the device are held to the same rule.
//!
//! # Features
//!
//! * `test-util` (off by default): `ring::builder`, ring images built
//!   record by record, for tests and benchmarks of code that consumes
//!   rings. Turn it on in `[dev-dependencies]`.
//!
//! # Draining a ring image
//!
//! A ring image is the bytes of one CPU's ring as the device maps them
//! (`reader dump-rings` writes them; `ring::builder` makes them, with the
//! `test-util` feature, as these examples do). A
//! [`ring::RingConsumer`] reads it exactly as it reads a live ring: one
//! validated record at a time.
//!
//! ```
//! # #[cfg(not(feature = "test-util"))]
//! # fn main() {}
//! # #[cfg(feature = "test-util")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use antinomie_reader::record::RecordView;
//! use antinomie_reader::ring::builder::{args, attr, set, CaptureSpec, EntrySpec, ExitSpec, RingBuilder};
//! use antinomie_reader::ring::{ImageRing, RingConsumer};
//!
//! // One call on CPU 0's ring: a software clock event, fd 3.
//! let mut ring = RingBuilder::new(0, 4096);
//! let mut sw_clock = attr(136);
//! set(&mut sw_clock, "type", 1);
//! ring.entry(&EntrySpec {
//!     call_id: 7,
//!     time_ns: 1_000,
//!     pid: 100,
//!     tid: 100,
//!     args: args(0x7ffd_0000_1000, 0, -1, -1, 0),
//!     items: vec![CaptureSpec::complete(&sw_clock)],
//!     ..EntrySpec::default()
//! });
//! ring.exit(&ExitSpec {
//!     call_id: 7,
//!     time_ns: 9_000,
//!     pid: 100,
//!     tid: 100,
//!     ret: 3,
//!     duration_ns: 8_000,
//!     ..ExitSpec::default()
//! });
//!
//! let mut consumer = RingConsumer::new(ImageRing::from_bytes(ring.image())?);
//! consumer.refresh();
//! let mut seen = Vec::new();
//! while let Some(record) = consumer.next_record() {
//!     let record = record?;
//!     match record.view() {
//!         RecordView::Entry(e) => seen.push(format!("ENTRY {} args[0]={:#x}", e.header.call_id, e.body.args[0])),
//!         RecordView::Exit(x) => seen.push(format!("EXIT {} ret={}", x.header.call_id, x.body.ret)),
//!         RecordView::Lost(_) => seen.push("LOST".to_owned()),
//!     }
//! }
//! assert_eq!(seen, ["ENTRY 7 args[0]=0x7ffd00001000", "EXIT 7 ret=3"]);
//! assert_eq!(consumer.counters().produced, 2);
//! assert_eq!(consumer.stats().records, 2);
//! # Ok(())
//! # }
//! ```
//!
//! # Decoding a trace file
//!
//! A trace file is the stream of drain messages written down
//! ([`trace::TraceWriter`]); replaying it through an
//! [`pipeline::Assembler`] merges, pairs and decodes the calls, which a
//! [`pipeline::Sink`] receives and [`output`] formats.
//!
//! ```
//! # #[cfg(not(feature = "test-util"))]
//! # fn main() {}
//! # #[cfg(feature = "test-util")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use antinomie_abi as abi;
//! use antinomie_reader::call::Call;
//! use antinomie_reader::decode::PmuTypes;
//! use antinomie_reader::output::call_text;
//! use antinomie_reader::pipeline::{self, Assembler, Recorder, Sink};
//! use antinomie_reader::record::LostRecord;
//! use antinomie_reader::ring::builder::{args, CaptureSpec, EntrySpec, ExitSpec, RingBuilder};
//! use antinomie_reader::ring::ImageRing;
//! use antinomie_reader::trace::{TraceHeader, TraceReader, TraceWriter};
//!
//! /// Keeps the calls it is given.
//! #[derive(Default)]
//! struct Calls(Vec<Call>);
//!
//! impl Sink for Calls {
//!     fn call(&mut self, call: &Call) -> std::io::Result<()> {
//!         self.0.push(call.clone());
//!         Ok(())
//!     }
//!     fn lost(&mut self, _: &LostRecord) -> std::io::Result<()> {
//!         Ok(())
//!     }
//!     fn flush(&mut self) -> std::io::Result<()> {
//!         Ok(())
//!     }
//! }
//!
//! // Write a trace file of one ring image (`reader -w` records a live run
//! // the same way); a NULL attr pointer fails with EFAULT.
//! let mut ring = RingBuilder::new(0, 4096);
//! let entry = EntrySpec { call_id: 1, time_ns: 1_000, pid: 42, tid: 42, ..EntrySpec::default() };
//! ring.entry(&EntrySpec {
//!     args: args(0, 0, -1, -1, 0),
//!     items: vec![CaptureSpec::empty(abi::STATUS_NULL_PTR, 0)],
//!     ..entry
//! });
//! ring.exit(&ExitSpec { call_id: 1, time_ns: 2_000, pid: 42, tid: 42, ret: -14, ..ExitSpec::default() });
//! let header = TraceHeader {
//!     abi_version: abi::ABI_VERSION,
//!     window_ns: pipeline::DEFAULT_WINDOW_NS,
//!     cpus: vec![0],
//!     pmus: PmuTypes::none(),
//!     realtime_offset_ns: None,
//! };
//! let mut writer = TraceWriter::new(Vec::new(), &header)?;
//! for msg in pipeline::drain_once(vec![ImageRing::from_bytes(ring.image())?]) {
//!     writer.record(&msg)?;
//! }
//! let file: Vec<u8> = writer.finish()?;
//!
//! // Read it back frame by frame, and replay it into the sink.
//! let trace = TraceReader::new(&file[..])?;
//! let header = trace.header().clone();
//! let msgs = trace.collect::<Result<Vec<_>, _>>()?;
//! let mut calls = Calls::default();
//! let summary = pipeline::replay(msgs, Assembler::new(&header.cpus, header.window_ns, &mut calls))?;
//! assert_eq!(summary.calls(), 1);
//! for call in &calls.0 {
//!     println!("{}", call_text(call, &header.pmus));
//! }
//! let line = call_text(&calls.0[0], &header.pmus);
//! assert!(line.contains("perf_event_open(NULL"), "{line}");
//! assert!(line.contains("= -1 EFAULT"), "{line}");
//! # Ok(())
//! # }
//! ```

pub mod call;
pub mod decode;
pub mod device;
pub mod diff;
mod error;
pub mod field;
pub mod filter;
mod jsonl;
pub mod output;
pub mod pipeline;
pub mod record;
pub mod ring;
pub mod syscall;
pub mod trace;

pub use error::{AbiOf, Error};
