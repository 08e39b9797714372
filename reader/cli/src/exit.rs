// SPDX-License-Identifier: GPL-2.0-only
//! The `reader` command's exit statuses: one table for every command, so
//! that a number means the same thing whatever the command. The table's
//! text ([`TABLE`]) is the after-help of every `--help`, the EXIT STATUS
//! section of the man page (`reader --generate man`) and the "Exit
//! status" section of reader/README.md, which a test keeps equal to it.
//!
//! As GNU `diff`, `cmp` and `grep` do, 1 is an answer (the runs differ),
//! never a failure, and 2 is trouble (bad usage or an error), so that a
//! CI job gating on `reader diff`'s 1 never takes a failure for a
//! regression. `reader -- COMMAND` exits with COMMAND's own status, so its
//! own failure is 125 instead, as `env` and `timeout` do.

/// `reader diff`: the runs differ.
pub(crate) const DIFFER: u8 = 1;

/// Trouble: bad usage (clap's own errors exit 2 too) or a bad filter, or
/// an error: no device, access denied, an unreadable input, an output
/// that cannot be written.
pub(crate) const TROUBLE: u8 = 2;

/// The answer is incomplete: corrupt records, a trace file cut short,
/// records lost under `reader -p`, or under `reader diff` a run that lost
/// records (without `--allow-loss`).
pub(crate) const INCOMPLETE: u8 = 3;

/// `reader -- COMMAND`: the reader failed, or the capture is not whole
/// (records lost or corrupt): "cannot test", as `git bisect run` and
/// `scripts/run-in-guest.sh` read it.
pub(crate) const CANNOT_TEST: u8 = 125;

/// The table, as `--help` prints it after the options.
pub(crate) const TABLE: &str = "\
Exit status:
  0    success; reader diff: the runs are equal
  1    reader diff: the runs differ
  2    bad usage, a bad filter, or an error (no device, access denied, an
       unreadable input, an output that cannot be written)
  3    incomplete: corrupt records, a trace file cut short; reader diff: a
       run lost records (not compared without --allow-loss); reader -p:
       records lost

  reader -- COMMAND, first match wins:
  2    bad usage or a bad filter (nothing ran)
  125  the reader failed, or the capture is not whole (records lost or
       corrupt), whatever COMMAND's status (stderr gives it)
  127  COMMAND was not found; 126: it could not be executed
  else COMMAND's status; killed by signal N, the reader kills itself with
       N, or exits 128 + N if it survives that";

#[cfg(test)]
mod tests {
    use super::*;

    /// Each status the code returns has its row, first on its line.
    #[test]
    fn the_table_names_every_status() {
        let rows: Vec<&str> = TABLE
            .lines()
            .filter_map(|l| l.strip_prefix("  ")?.split_whitespace().next())
            .collect();
        for code in [0, DIFFER, TROUBLE, INCOMPLETE, CANNOT_TEST, 127] {
            assert!(
                rows.contains(&code.to_string().as_str()),
                "{code}: {rows:?}"
            );
        }
    }
}
