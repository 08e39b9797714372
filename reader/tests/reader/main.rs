//! The reader's integration tests: one binary, one module per area.
//!
//! * `ring`: wrap-around in byte images, corrupt records.
//! * `cli`: the binary's strace-like options (`-o`, `-p`, `--tid`, `-t`, `-r`).
//! * `pipeline`: cross-CPU pairing, unfinished calls, LOST records, the
//!   summary's produced = consumed + lost check.
//! * `follow`: a long `--follow` run over lossy rings: bounded pairing
//!   state, every call printed once, exact loss accounting.
//! * `decode`: the attr table against the real uapi header, every member
//!   at every `PERF_ATTR_SIZE_VER*` boundary, unknown bits.
//! * `golden`: golden ring images and their byte-exact text and JSON
//!   output; save → show round trips; the `reader` binary itself.
//! * `diff`: `reader diff` on synthetic JSON runs and on a real trace.
//! * `fuzz`: random bytes never panic the decoder.
//! * `filter`: the Syscall Trace filter: every field reachable and agreeing
//!   with the JSON output, random filters against a reference evaluator,
//!   `--filter`, `reader fields`, the checked-in reference page.
//!
//! `support` holds the ring producer and the scenario the golden files
//! come from. `ANTINOMIE_UPDATE_GOLDEN=1 cargo test` rewrites the golden
//! files (review the diff).

mod support;

mod cli;
mod decode;
mod diff;
mod filter;
mod follow;
mod fuzz;
mod golden;
mod pipeline;
mod ring;
