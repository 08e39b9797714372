//! `antinomie-reader`: drains Antinomie's per-CPU rings, merges the records
//! in time order, pairs each call's ENTRY and EXIT, decodes them and prints
//! them as strace-like text or JSON Lines.
//!
//! ```text
//!  ring (cpu 0) ─ drain thread ─┐
//!  ring (cpu 1) ─ drain thread ─┼─ crossbeam ─▶ Merger ─▶ Pairer ─▶ Sink (text | JSON)
//!  ring (cpu n) ─ drain thread ─┘   (DrainMsg)   (time)   (call_id)     └▶ trace file
//! ```
//!
//! Modules, bottom up:
//! * [`decode`]: the `perf_event_attr` member table and name tables.
//! * [`field`]: the vocabulary of a record key (value, type, constants,
//!   capture status names), shared by the syscall table and the call.
//! * [`syscall`]: the capture rules per syscall, the rows everything that
//!   knows a syscall reads, and the reference page
//!   (`reader describe perf_event_open`).
//! * [`record`]: validated views of one record's bytes (an ENTRY or EXIT
//!   of a syscall without a row is rejected), and owned records.
//! * [`ring`]: the consumer of one ring over live or image memory.
//! * [`call`]: [`call::Call`], a paired, decoded call, and its record keys
//!   as its syscall's row makes them ([`call::call_fields`]).
//! * [`pipeline`]: drain threads, the time merge, pairing, the summary.
//! * [`filter`]: the Syscall Trace filter (`--filter`), over the fields of
//!   the call and attr tables.
//! * [`output`]: text and JSON Lines.
//! * [`trace`]: the raw trace file (`-w`, `reader show`).
//! * [`diff`]: `reader diff`, two runs compared call by call.
//! * [`device`]: `/dev/antinomie`: ioctls, mappings, `poll()`.

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

pub use error::Error;
