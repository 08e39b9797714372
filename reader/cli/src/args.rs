// SPDX-License-Identifier: GPL-2.0-only
//! The `reader` binary's command line (clap).

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::{Parser, Subcommand, ValueEnum};

use antinomie_reader::device::DEFAULT_DEVICE;
use antinomie_reader::output::{Format, JsonSchema, TimeStyle};
use antinomie_reader::pipeline;

use crate::{exit, process};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum FormatArg {
    /// One strace-like line per call.
    Text,
    /// JSON Lines with stable keys.
    Json,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Text => Format::Text,
            FormatArg::Json => Format::Json,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SummaryArg {
    /// A headline and a table, for people.
    Text,
    /// One JSON object on one line, for scripts (keys: reader/README.md).
    Json,
}

/// What `-c` and `-C` ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Counting {
    /// `-c`: the table instead of the calls.
    Only,
    /// `-C`: the calls, then the table.
    Also,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum JsonSchemaArg {
    /// Every key on every line, null where it does not apply.
    Full,
    /// No nulls, no duplicate or names keys, only non-zero attr members,
    /// each as its filter field `args.attr_uptr.<member>`.
    Compact,
}

impl From<JsonSchemaArg> for JsonSchema {
    fn from(s: JsonSchemaArg) -> Self {
        match s {
            JsonSchemaArg::Full => JsonSchema::Full,
            JsonSchemaArg::Compact => JsonSchema::Compact,
        }
    }
}

/// What `--generate` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum GenerateArg {
    /// The man page, reader.1 (roff).
    Man,
    /// bash's completion script.
    #[value(name = "complete-bash")]
    Bash,
    /// zsh's completion script.
    #[value(name = "complete-zsh")]
    Zsh,
    /// fish's completion script.
    #[value(name = "complete-fish")]
    Fish,
}

// The groups of `--help`, so that the long option list can be scanned;
// the options without one (-v, -h, -V and a subcommand's own) are clap's
// "Options".
const OUTPUT: &str = "Output";
const FILTERING: &str = "Filtering";
const SUMMARY: &str = "Summary and counts";
const CAPTURE: &str = "Capture";
const RUN: &str = "Run COMMAND or attach";
const FOLLOW: &str = "Follow mode";

/// Prints the `perf_event_open(2)` calls captured by Antinomie.
///
/// Without a subcommand: drains what the rings of /dev/antinomie hold, prints
/// it, and exits; with --follow keeps printing until SIGINT or SIGTERM.
/// `reader [OPTIONS] -- COMMAND [ARGS...]` runs COMMAND and prints the
/// calls of COMMAND and of every process and thread it starts, nothing
/// else, until COMMAND exits (as strace does). A summary (calls, per-CPU
/// produced/consumed/lost) goes to stderr; its first line counts every
/// record lost by the kernel's final counters, reported by a LOST record
/// or not.
///
/// COMMAND runs in a cgroup v2 directory of its own, made under the
/// cgroup2 mount (`--cgroup DIR`: that one, kept), to which the capture
/// is limited, in lossless mode when the reader has `CAP_SYS_ADMIN`
/// (`--lossy`: never). While it runs the reader ignores SIGINT and
/// SIGQUIT (the terminal sends them to COMMAND too) and passes SIGTERM and
/// SIGHUP on to it.
#[derive(Debug, Parser)]
#[command(
    name = "reader",
    version,
    subcommand_value_name = "SUBCOMMAND",
    subcommand_help_heading = "Subcommands",
    // What --lossy needs: tasks the reader runs or attaches to.
    group = clap::ArgGroup::new("traced").args(["run", "attach"])
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    // The common options first: their groups (output, filtering, summary)
    // head `--help`, before the live reader's own.
    #[command(flatten)]
    pub(crate) common: CommonArgs,
    #[command(flatten)]
    pub(crate) live: LiveArgs,
    /// Print the man page or a shell's completion script, made from this
    /// command line's definition, and exit.
    // Hidden: it is for packagers and installers (reader/README.md), not a
    // way to read captured calls.
    #[arg(long, value_enum, value_name = "KIND", hide = true, exclusive = true)]
    pub(crate) generate: Option<GenerateArg>,
}

// Command-line flags: each is a switch of its own, not a state to model.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, clap::Args)]
pub(crate) struct CommonArgs {
    /// More diagnostics on stderr (repeat for more).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub(crate) verbose: u8,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text, global = true, help_heading = OUTPUT)]
    pub(crate) format: FormatArg,
    /// Keys of a JSON call line (`reader diff` reads the full schema).
    #[arg(long, value_enum, default_value_t = JsonSchemaArg::Full, global = true, help_heading = OUTPUT)]
    pub(crate) json_schema: JsonSchemaArg,
    /// Write the text or JSON lines to FILE instead of stdout (as
    /// `strace -o` and `perf trace -o`).
    #[arg(short = 'o', long = "output", value_name = "FILE", global = true, help_heading = OUTPUT)]
    pub(crate) output: Option<PathBuf>,
    /// Show each line's time as the wall-clock time of day (-t), with
    /// microseconds (-tt), or as seconds since the epoch (-ttt), as strace
    /// does; the default is `CLOCK_MONOTONIC` seconds.
    #[arg(short = 't', action = clap::ArgAction::Count, global = true, help_heading = OUTPUT)]
    pub(crate) timestamps: u8,
    /// Show each line's time as the time since the previous line (as
    /// `strace -r`).
    #[arg(
        short = 'r',
        long = "relative-timestamps",
        global = true,
        conflicts_with = "timestamps",
        help_heading = OUTPUT
    )]
    pub(crate) relative: bool,
    /// Only the calls of process PID (repeat for more): shorthand for
    /// `--filter 'pid in {PID}'`, and-ed with --filter. (`-p PID` attaches
    /// to a process, as strace's.)
    #[arg(
        long = "pid",
        value_name = "PID",
        global = true,
        help_heading = FILTERING
    )]
    pub(crate) pids: Vec<u32>,
    /// Only the calls of thread TID (repeat for more): shorthand for
    /// `--filter 'tid in {TID}'`, and-ed with --filter.
    #[arg(
        long = "tid",
        value_name = "TID",
        global = true,
        help_heading = FILTERING
    )]
    pub(crate) tids: Vec<u32>,
    /// Only the calls that failed (as `strace -Z`): shorthand for
    /// `--filter 'ret < 0'`, and-ed with --filter. An unfinished call,
    /// whose result is unknown, is shown by neither -Z nor -z.
    #[arg(
        short = 'Z',
        long = "failed-only",
        global = true,
        conflicts_with = "successful_only",
        help_heading = FILTERING
    )]
    pub(crate) failed_only: bool,
    /// Only the calls that succeeded (as `strace -z`): shorthand for
    /// `--filter 'ret >= 0'`, and-ed with --filter.
    #[arg(
        short = 'z',
        long = "successful-only",
        global = true,
        help_heading = FILTERING
    )]
    pub(crate) successful_only: bool,
    /// Accepted and ignored, for strace's habit: the calls of the
    /// children and threads of what is captured are always shown.
    #[arg(short = 'f', global = true, help_heading = FILTERING)]
    pub(crate) follow_forks: bool,
    /// Do not print the summary on stderr (wins over --summary).
    #[arg(long, global = true, help_heading = SUMMARY)]
    pub(crate) no_summary: bool,
    /// The summary on stderr as text, or as one JSON object on one line
    /// with stable keys (see reader/README.md), for scripts.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = SummaryArg::Text,
          global = true, help_heading = SUMMARY)]
    pub(crate) summary: SummaryArg,
    /// Instead of the calls, print at the end a table of them by outcome:
    /// success and each errno, with the calls seen in part (unfinished,
    /// entry lost, ...) on rows of their own; calls, % of calls, time in
    /// all and per call (as `strace -c`). To -o FILE if given; -w still
    /// saves every record; counts the calls the filters keep.
    #[arg(
        short = 'c',
        long = "counts-only",
        global = true,
        conflicts_with = "counts",
        help_heading = SUMMARY
    )]
    pub(crate) counts_only: bool,
    /// Print the calls, then the table of -c (as `strace -C`).
    #[arg(short = 'C', long = "counts", global = true, help_heading = SUMMARY)]
    pub(crate) counts: bool,
}

impl CommonArgs {
    pub(crate) fn time_style(&self) -> Result<TimeStyle> {
        Ok(match (self.relative, self.timestamps) {
            (true, _) => TimeStyle::Relative,
            (false, 0) => TimeStyle::Monotonic,
            (false, 1) => TimeStyle::WallSeconds,
            (false, 2) => TimeStyle::WallMicros,
            (false, 3) => TimeStyle::Epoch,
            (false, _) => bail!("-t can be given at most three times (-ttt)"),
        })
    }

    /// `-c` or `-C`, if either.
    pub(crate) fn counting(&self) -> Option<Counting> {
        match (self.counts_only, self.counts) {
            (true, _) => Some(Counting::Only),
            (false, true) => Some(Counting::Also),
            (false, false) => None,
        }
    }

    /// The `--filter` the `-Z`/`-z`/`-p`/`--tid` shorthands stand for.
    pub(crate) fn shorthand_filter(&self) -> Option<String> {
        let set = |field: &str, ids: &[u32]| {
            let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
            format!("{field} in {{{}}}", ids.join(", "))
        };
        let mut parts = Vec::new();
        if self.failed_only {
            parts.push("ret < 0".to_owned());
        }
        if self.successful_only {
            parts.push("ret >= 0".to_owned());
        }
        if !self.pids.is_empty() {
            parts.push(set("pid", &self.pids));
        }
        if !self.tids.is_empty() {
            parts.push(set("tid", &self.tids));
        }
        (!parts.is_empty()).then(|| parts.join(" && "))
    }
}

// Command-line flags: each is a switch of its own, not a state to model.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, clap::Args)]
pub(crate) struct LiveArgs {
    /// Keep draining until SIGINT or SIGTERM, sleeping in `poll()`.
    #[arg(long, help_heading = CAPTURE)]
    pub(crate) follow: bool,
    /// Also save the raw records to FILE, a trace (decode it later with
    /// `reader show FILE`), as `tcpdump -w` does.
    #[arg(short = 'w', long = "write", value_name = "FILE", help_heading = OUTPUT)]
    pub(crate) write: Option<PathBuf>,
    /// Switch capture on if it is off.
    #[arg(long, help_heading = CAPTURE)]
    pub(crate) enable: bool,
    /// Lossless mode while this reader runs: a call whose records would
    /// not fit its ring waits for the reader before it does anything (up
    /// to the kernel's `antinomie.lossless_timeout_ms`) instead of losing
    /// them. For test runs; it slows the traced calls down. Needs
    /// `CAP_SYS_ADMIN`. The kernel switches it off when the reader exits.
    /// With a COMMAND it is the default, tried and left off with a warning
    /// without `CAP_SYS_ADMIN`; --lossless then makes that an error.
    #[arg(long, help_heading = CAPTURE)]
    pub(crate) lossless: bool,
    /// With a COMMAND or -p: do not switch lossless mode on (records that
    /// do not fit are lost and counted, and the traced tasks never wait).
    #[arg(long, conflicts_with = "lossless", requires = "traced", help_heading = RUN)]
    pub(crate) lossy: bool,
    /// Attach to the running process PID (repeat for more, all in one
    /// cgroup), as `strace -p` does: capture the calls of its threads and
    /// of the processes it starts from now on, until it exits (all of
    /// them) or SIGINT, SIGTERM, SIGHUP or SIGQUIT detaches. It moves into a cgroup
    /// made below its own while attached (its own cgroup's limits still
    /// apply) and back at the end. Lossless mode as with a COMMAND.
    #[arg(short = 'p', long = "attach", value_name = "PID",
          value_parser = clap::value_parser!(u32).range(1..),
          conflicts_with_all = ["run", "cgroup", "follow"], help_heading = RUN)]
    pub(crate) attach: Vec<u32>,
    /// Capture only the calls of tasks in the cgroup v2 directory DIR and
    /// below it (a workload started there), while this reader runs; with
    /// `--lossless`, only they wait. Other tasks' calls are not captured:
    /// they cannot fill the rings the workload needs. With a COMMAND: run
    /// COMMAND in DIR (whatever else runs there is captured too) instead
    /// of a cgroup made for it, and leave DIR as it is.
    #[arg(long, value_name = "DIR", help_heading = CAPTURE)]
    pub(crate) cgroup: Option<PathBuf>,
    /// The capture device.
    #[arg(long, value_name = "PATH", default_value = DEFAULT_DEVICE, help_heading = CAPTURE)]
    pub(crate) device: PathBuf,
    /// Where sysfs is mounted (PMU types, possible CPUs).
    #[arg(long, value_name = "PATH", default_value = "/sys", help_heading = CAPTURE)]
    pub(crate) sysfs: PathBuf,
    /// Where procfs is mounted: with a COMMAND, `self/mountinfo` names the
    /// cgroup2 mount and `self/cgroup` the reader's own cgroup.
    #[arg(long, value_name = "PATH", default_value = "/proc", help_heading = CAPTURE)]
    pub(crate) proc: PathBuf,
    /// With --follow or -p: once the rings are mapped and drained (with
    /// -p, once the processes are moved), write `ready` and a newline to
    /// the open file descriptor FD (3 or above) and close it, so that a
    /// script starts what it traces only then, as `bwrap --sync-fd` does.
    /// A reader that fails before closes it unwritten.
    #[arg(long, value_name = "FD", value_parser = clap::value_parser!(i32).range(3..),
          conflicts_with = "run", help_heading = FOLLOW)]
    pub(crate) ready_fd: Option<i32>,
    /// How long a record may wait for slower rings, in --follow mode.
    #[arg(long, value_name = "MS", default_value_t = 50, help_heading = FOLLOW)]
    pub(crate) reorder_window_ms: u64,
    /// In --follow mode, wake up once a ring holds this many unread bytes
    /// (the device's `poll()` watermark; put back on exit). 0: a sixteenth
    /// of a ring, at most 64 KiB. The poll timeout bounds how long fewer
    /// bytes wait.
    #[arg(long, value_name = "BYTES", default_value_t = 0, help_heading = FOLLOW)]
    pub(crate) wake_bytes: u64,
    /// `poll()` timeout in --follow mode, so that idle rings let output flow.
    #[arg(long, value_name = "MS", default_value_t = 100, help_heading = FOLLOW)]
    pub(crate) poll_timeout_ms: u64,
    /// In --follow mode, the most bytes of drained records waiting to be
    /// printed, or with -w to be written to the trace, which then holds
    /// what waits to be printed (128 MiB by default). When that falls so far
    /// behind, draining waits: records then wait in the rings, and a full
    /// ring drops and counts them.
    #[arg(long, value_name = "BYTES", default_value_t = pipeline::DEFAULT_QUEUE_BYTES, help_heading = FOLLOW)]
    pub(crate) queue_bytes: usize,
    /// In --follow mode, run the drain thread (and the spool of -w) at nice
    /// value N (-20 to 19) instead of the reader's own, as `perf record -r`
    /// runs its reader at a real-time priority: a ring that waits for its
    /// drain drops records, and a lower N lets the drain, which only copies,
    /// go ahead of the traced tasks on a busy CPU (of those in its own
    /// scheduling group: with the cgroup cpu controller on, a COMMAND's
    /// cgroup is weighed apart). Below the reader's own value it needs
    /// `CAP_SYS_NICE` or `RLIMIT_NICE`; refused, the drain stays at the
    /// reader's, with a warning.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i32).range(-20..=19),
          allow_negative_numbers = true, help_heading = FOLLOW)]
    pub(crate) drain_nice: Option<i32>,
    /// In --follow mode, how much higher the nice value of the thread that
    /// decodes and prints is than the reader's own (0-19), so that on a
    /// busy CPU draining the rings wins over printing, which the queue lets
    /// fall behind.
    #[arg(long, value_name = "N", default_value_t = process::DEFAULT_PRINT_NICE,
          value_parser = clap::value_parser!(i32).range(0..=19), help_heading = FOLLOW)]
    pub(crate) print_nice: i32,
    /// Print only the calls that match EXPR (see `reader fields`), e.g.
    /// `syscall.errno == E2BIG && args.attr_uptr.size > 136`. Checked before
    /// the device is opened; `-w` still saves every record.
    #[arg(long, value_name = "EXPR", help_heading = FILTERING)]
    pub(crate) filter: Option<String>,
    /// The command to run and capture, after `--`: its arguments are taken
    /// as they are, options included. The run follows (as --follow) until
    /// COMMAND exits.
    #[arg(last = true, value_name = "COMMAND", value_parser = clap::value_parser!(OsString),
          help_heading = RUN)]
    pub(crate) run: Vec<OsString>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Decode a saved trace file, or golden ring images (one per CPU).
    Show {
        /// A trace file from `-w` (`-`: standard input), or *.ring images.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Name a dynamic PMU type for ring images: NAME=TYPE (e.g. kprobe=6).
        #[arg(long, value_name = "NAME=TYPE")]
        pmu: Vec<String>,
        /// Print only the calls that match EXPR (see `reader fields`).
        #[arg(long, value_name = "EXPR", help_heading = FILTERING)]
        filter: Option<String>,
    },
    /// List the filter's fields with their types and meanings.
    Fields,
    /// Compare two runs of the same workload call by call (each a trace
    /// file or `--format json` output).
    ///
    /// A run that lost records (by the kernel's final counters, reported
    /// by a LOST record or not) lacks calls, which a comparison would
    /// report as differences: such runs are not compared unless
    /// --allow-loss; the report then names the rings and call ids the loss
    /// concerns. JSON Lines carry only the LOST records, so their loss is
    /// a lower bound.
    Diff {
        /// Run A.
        a: PathBuf,
        /// Run B.
        b: PathBuf,
        /// How threads are paired: by tid, by order of first appearance
        /// (of processes, then of threads by their first call), or auto
        /// (the same tid, else the same rank in the process's tid
        /// order).
        #[arg(long = "match", value_enum, default_value_t = MatchArg::Auto)]
        matching: MatchArg,
        /// Also compare durations: report a call whose slower run took
        /// more than R times the faster one.
        #[arg(long, value_name = "R", value_parser = parse_ratio)]
        duration_ratio: Option<f64>,
        /// Compare runs that lost records (what they hold: calls may be
        /// missing from either) instead of exiting 3.
        #[arg(long)]
        allow_loss: bool,
    },
    /// Print a syscall's reference page (Markdown): what it takes, what
    /// Antinomie records of it, and its filter fields.
    Describe {
        /// The syscall.
        #[arg(value_name = "SYSCALL")]
        syscall: String,
    },
    /// Write each CPU's ring as a golden ring image DIR/cpuN.ring.
    DumpRings {
        /// Where to write the images.
        dir: PathBuf,
        /// The capture device.
        #[arg(long, value_name = "PATH", default_value = DEFAULT_DEVICE)]
        device: PathBuf,
        /// Where sysfs is mounted.
        #[arg(long, value_name = "PATH", default_value = "/sys")]
        sysfs: PathBuf,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum MatchArg {
    Auto,
    Tid,
    Order,
}

pub(crate) fn parse_ratio(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(r) if r >= 1.0 && r.is_finite() => Ok(r),
        _ => Err(format!("`{s}` is not a ratio >= 1")),
    }
}

/// The command line's definition: the derived one, with the exit-status
/// table after every command's options.
pub(crate) fn command() -> clap::Command {
    use clap::CommandFactory;
    Cli::command()
        .after_help(exit::TABLE)
        .mut_subcommands(|sub| sub.after_help(exit::TABLE))
}

/// Parses the command line, or exits with clap's message and status 2.
pub(crate) fn parse_cli() -> Cli {
    parse_from(std::env::args_os()).unwrap_or_else(|e| e.exit())
}

/// Parses `args` (the program name first). The global options (`-v`,
/// `--format`, `--no-summary`) go before or after a subcommand; the live
/// reader's own options do not go with a subcommand (clap's
/// `args_conflicts_with_subcommands` would refuse the global ones too).
/// `--` with no COMMAND after it is refused: clap takes it for an empty
/// COMMAND, which would be the plain live reader.
pub(crate) fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    use clap::FromArgMatches;
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let mut cmd = command();
    let matches = cmd.try_get_matches_from_mut(&args)?;
    if let Some(sub) = matches.subcommand_name() {
        let live = <LiveArgs as clap::Args>::augment_args(clap::Command::new("live"));
        let given = live.get_arguments().find(|a| {
            matches.value_source(a.get_id().as_str())
                == Some(clap::parser::ValueSource::CommandLine)
        });
        if let Some(arg) = given {
            let name = arg
                .get_long()
                .map_or_else(|| arg.get_id().to_string(), |l| format!("--{l}"));
            return Err(cmd.error(
                clap::error::ErrorKind::ArgumentConflict,
                format!("{name} is an option of the live reader; it cannot be used with `{sub}`"),
            ));
        }
    }
    let cli = Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))?;
    // `exclusive` keeps the other options away from --generate, not a
    // subcommand.
    if let (Some(_), Some(sub)) = (cli.generate, matches.subcommand_name()) {
        return Err(cmd.error(
            clap::error::ErrorKind::ArgumentConflict,
            format!("--generate prints a file and exits; it cannot be used with `{sub}`"),
        ));
    }
    if cli.common.counting().is_some() && cli.common.format == FormatArg::Json {
        return Err(cmd.error(
            clap::error::ErrorKind::ArgumentConflict,
            "-c and -C print a text table: --format json does not go with them",
        ));
    }
    // No option takes `--` as its value (clap refuses it), so a `--`
    // without a subcommand is the one before COMMAND.
    if cli.command.is_none() && cli.live.run.is_empty() && args.iter().skip(1).any(|a| a == "--") {
        return Err(cmd.error(
            clap::error::ErrorKind::MissingRequiredArgument,
            "`--` must be followed by the COMMAND to run",
        ));
    }
    Ok(cli)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        parse_from(std::iter::once("reader").chain(args.iter().copied()))
    }

    #[test]
    fn a_command_is_kept_verbatim() {
        let cli = parse(&[
            "--format", "json", "-o", "x", "--", "cmd", "-o", "--follow", "--", "show", "-",
        ])
        .unwrap();
        assert!(cli.command.is_none());
        assert_eq!(cli.live.run, ["cmd", "-o", "--follow", "--", "show", "-"]);
        assert!(!cli.live.follow, "an option after -- is COMMAND's");
        assert_eq!(cli.common.output, Some(PathBuf::from("x")));
        // A subcommand's name after `--` is COMMAND.
        let cli = parse(&["--", "show", "trace"]).unwrap();
        assert!(cli.command.is_none());
        assert_eq!(cli.live.run, ["show", "trace"]);
        assert!(parse(&[]).unwrap().live.run.is_empty());
    }

    #[test]
    fn dash_dash_needs_a_command() {
        for args in [&["--"][..], &["--follow", "--"], &["-o", "x", "--"]] {
            let e = parse(args).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{args:?}");
            assert!(e.to_string().contains("COMMAND"), "{e}");
        }
        // A subcommand's own `--`.
        let cli = parse(&["show", "--", "-trace"]).unwrap();
        assert!(
            matches!(cli.command, Some(Command::Show { files, .. }) if files == [PathBuf::from("-trace")])
        );
    }

    #[test]
    fn p_attaches_and_goes_alone() {
        let cli = parse(&["-p", "7", "-p", "8", "-o", "x"]).unwrap();
        assert_eq!(cli.live.attach, [7, 8]);
        assert_eq!(cli.common.shorthand_filter(), None);
        assert!(parse(&["--attach", "7", "--lossy"]).is_ok());
        for args in [
            &["-p", "7", "--", "true"][..],
            &["-p", "7", "--cgroup", "/x"],
            &["-p", "7", "--follow"],
            &["-p", "0"],
            &["show", "-p", "7", "x"],
            // --lossy needs something to trace.
            &["--lossy"],
        ] {
            assert_eq!(parse(args).unwrap_err().exit_code(), 2, "{args:?}");
        }
    }

    #[test]
    fn failed_only_is_ret_below_zero_and_goes_with_the_ids() {
        let filter = |args: &[&str]| parse(args).unwrap().common.shorthand_filter();
        assert_eq!(filter(&["-Z"]).as_deref(), Some("ret < 0"));
        assert_eq!(
            filter(&["show", "-z", "--pid", "7", "x"]).as_deref(),
            Some("ret >= 0 && pid in {7}")
        );
        assert_eq!(filter(&["-f"]), None);
        assert_eq!(parse(&["-Z", "-z"]).unwrap_err().exit_code(), 2);
    }

    #[test]
    fn lossy_is_for_a_command() {
        assert!(parse(&["--lossy", "--", "cmd"]).unwrap().live.lossy);
        assert_eq!(parse(&["--lossy"]).unwrap_err().exit_code(), 2);
        assert_eq!(
            parse(&["--lossy", "--lossless", "--", "cmd"])
                .unwrap_err()
                .exit_code(),
            2
        );
    }
}
