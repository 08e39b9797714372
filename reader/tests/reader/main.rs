// SPDX-License-Identifier: GPL-2.0-only
//! The reader library's integration tests: one binary, one module per
//! area. (The `reader` executable's are the binary crate's, in
//! `reader/cli/tests/`.)
//!
//! * `ring`: wrap-around in byte images, corrupt records.
//! * `pipeline`: cross-CPU pairing, unfinished calls, LOST records, the
//!   summary's produced = consumed + lost check.
//! * `loss`: the summary's headline and `diff::RunLoss` count the loss by
//!   the kernel's final counters, reported by a LOST record or not, and
//!   say when it is known only in part.
//! * `follow`: a long follow-mode run over lossy rings: bounded pairing
//!   state, every call output once, exact loss accounting.
//! * `decode`: the attr table against the real uapi header, every member
//!   at every `PERF_ATTR_SIZE_VER*` boundary, unknown bits.
//! * `golden`: golden ring images and their byte-exact text and JSON
//!   output; save → show round trips.
//! * `spool`: a recorded run writes its trace whatever the printing does.
//! * `fuzz`: random bytes never panic the decoder.
//! * `diff`: the streaming comparison: one cause per diverging thread,
//!   equal runs, what happens past the alignment window.
//! * `counts`: the table of `reader -c` and the JSON summary on the
//!   golden scenario, exactly.
//! * `filter`: the Syscall Trace filter: every field reachable and agreeing
//!   with the JSON output, random filters against a reference evaluator.
//!
//! `support` is the test-support crate `antinomie-reader-testkit` (the
//! scenario the golden files come from, golden-file helpers).
//! `ANTINOMIE_UPDATE_GOLDEN=1 cargo test` rewrites the golden files
//! (review the diff).

use antinomie_reader_testkit as support;

mod counts;
mod decode;
mod diff;
mod filter;
mod follow;
mod fuzz;
mod golden;
mod loss;
mod pipeline;
mod ring;
mod spool;
