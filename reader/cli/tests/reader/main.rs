// SPDX-License-Identifier: GPL-2.0-only
//! The `reader` executable's integration tests: one binary, one module per
//! command. Each runs the built executable (`CARGO_BIN_EXE_reader`) and
//! checks its output against the library's or the golden files.
//!
//! * `show`: `reader show` on ring images and trace files, byte for byte;
//!   exit statuses; standard input; a closed pipe; the trace file
//!   `scripts/bpf-to-trace.py` writes.
//! * `options`: the strace-like options (`-o`, `-p`, `--tid`, `-t`, `-r`).
//! * `habits`: strace's `-Z`, `-z` (their filters' output exactly),
//!   `-c`, `-C` (the table), `-f` (nothing), and `--summary json`.
//! * `filter`: `--filter`, `reader fields`, `reader describe` and the
//!   checked-in reference page.
//! * `diff`: `reader diff` on synthetic JSON runs and on a real trace.
//! * `loss`: the first summary line of `show` and `diff` counts the
//!   kernel's final loss; `diff` of a lossy run exits 3 unless
//!   `--allow-loss`.
//! * `help`: every command's `--help` is docs/reader-cli.md, and ends
//!   with the exit-status table of reader/README.md; README.md's sample
//!   output is the golden output's lines it names.
//! * `generate`: `reader --generate`'s man page and completion scripts
//!   name what `--help` lists; the man page gives its help texts and its
//!   exit-status table.
//! * `run`: `reader -- COMMAND`'s command line, and its failures before
//!   COMMAND runs (no device, no cgroup2, a cgroup it cannot use).
//!
//! `support` is the test-support crate `antinomie-reader-testkit`, shared
//! with the library's tests. `ANTINOMIE_UPDATE_GOLDEN=1 cargo test`
//! rewrites the golden files, the reference pages and the README's
//! exit-status table (review the diff).

use antinomie_reader_testkit as support;

mod diff;
mod filter;
mod generate;
mod habits;
mod help;
mod loss;
mod options;
mod run;
mod show;
