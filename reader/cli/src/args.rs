//! The `reader` binary's command line (clap).

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::{Parser, Subcommand, ValueEnum};

use antinomie_reader::device::DEFAULT_DEVICE;
use antinomie_reader::output::{Format, JsonSchema, TimeStyle};
use antinomie_reader::pipeline;

use crate::process;

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

/// Prints the `perf_event_open(2)` calls captured by Antinomie.
///
/// Without a command: drains what the rings of /dev/antinomie hold, prints
/// it, and exits; with --follow keeps printing until SIGINT or SIGTERM.
/// A summary (calls, per-CPU produced/consumed/lost) goes to stderr; its
/// first line counts every record lost by the kernel's final counters,
/// reported by a LOST record or not.
///
/// Exit status: 0; 1 an error; 2 a bad filter; 3 corrupt records, or a
/// trace file cut short. `reader diff`: 0 equal, 1 the runs differ, 2 bad
/// usage or unreadable input, 3 inconclusive: a run lost records (not
/// compared without --allow-loss).
#[derive(Debug, Parser)]
#[command(name = "reader", version)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    #[command(flatten)]
    pub(crate) live: LiveArgs,
    #[command(flatten)]
    pub(crate) common: CommonArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct CommonArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text, global = true)]
    pub(crate) format: FormatArg,
    /// Keys of a JSON call line (`reader diff` reads the full schema).
    #[arg(long, value_enum, default_value_t = JsonSchemaArg::Full, global = true)]
    pub(crate) json_schema: JsonSchemaArg,
    /// Do not print the summary on stderr.
    #[arg(long, global = true)]
    pub(crate) no_summary: bool,
    /// More diagnostics on stderr (repeat for more).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub(crate) verbose: u8,
    /// Write the text or JSON lines to FILE instead of stdout (as
    /// `strace -o` and `perf trace -o`).
    #[arg(short = 'o', long = "output", value_name = "FILE", global = true)]
    pub(crate) output: Option<PathBuf>,
    /// Show each line's time as the wall-clock time of day (-t), with
    /// microseconds (-tt), or as seconds since the epoch (-ttt), as strace
    /// does; the default is `CLOCK_MONOTONIC` seconds.
    #[arg(short = 't', action = clap::ArgAction::Count, global = true)]
    pub(crate) timestamps: u8,
    /// Show each line's time as the time since the previous line (as
    /// `strace -r`).
    #[arg(
        short = 'r',
        long = "relative-timestamps",
        global = true,
        conflicts_with = "timestamps"
    )]
    pub(crate) relative: bool,
    /// Only the calls of process PID (repeat for more): shorthand for
    /// `--filter 'pid in {PID}'`, and-ed with --filter.
    #[arg(short = 'p', long = "pid", value_name = "PID", global = true)]
    pub(crate) pids: Vec<u32>,
    /// Only the calls of thread TID (repeat for more): shorthand for
    /// `--filter 'tid in {TID}'`, and-ed with --filter.
    #[arg(long = "tid", value_name = "TID", global = true)]
    pub(crate) tids: Vec<u32>,
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

    /// The `--filter` the `-p`/`--tid` shorthands stand for.
    pub(crate) fn id_filter(&self) -> Option<String> {
        let set = |field: &str, ids: &[u32]| {
            let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
            format!("{field} in {{{}}}", ids.join(", "))
        };
        let mut parts = Vec::new();
        if !self.pids.is_empty() {
            parts.push(set("pid", &self.pids));
        }
        if !self.tids.is_empty() {
            parts.push(set("tid", &self.tids));
        }
        (!parts.is_empty()).then(|| parts.join(" && "))
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct LiveArgs {
    /// Keep draining until SIGINT or SIGTERM, sleeping in `poll()`.
    #[arg(long)]
    pub(crate) follow: bool,
    /// Also save the raw records to FILE, a trace (decode it later with
    /// `reader show FILE`), as `tcpdump -w` does.
    #[arg(short = 'w', long = "write", value_name = "FILE")]
    pub(crate) write: Option<PathBuf>,
    /// Switch capture on if it is off.
    #[arg(long)]
    pub(crate) enable: bool,
    /// Lossless mode while this reader runs: a call whose records would
    /// not fit its ring waits for the reader before it does anything (up
    /// to the kernel's `antinomie.lossless_timeout_ms`) instead of losing
    /// them. For test runs; it slows the traced calls down. Needs
    /// `CAP_SYS_ADMIN`. The kernel switches it off when the reader exits.
    #[arg(long)]
    pub(crate) lossless: bool,
    /// Capture only the calls of tasks in the cgroup v2 directory DIR and
    /// below it (a workload started there), while this reader runs; with
    /// `--lossless`, only they wait. Other tasks' calls are not captured:
    /// they cannot fill the rings the workload needs.
    #[arg(long, value_name = "DIR")]
    pub(crate) cgroup: Option<PathBuf>,
    /// The capture device.
    #[arg(long, value_name = "PATH", default_value = DEFAULT_DEVICE)]
    pub(crate) device: PathBuf,
    /// Where sysfs is mounted (PMU types, possible CPUs).
    #[arg(long, value_name = "PATH", default_value = "/sys")]
    pub(crate) sysfs: PathBuf,
    /// How long a record may wait for slower rings, in --follow mode.
    #[arg(long, value_name = "MS", default_value_t = 50)]
    pub(crate) reorder_window_ms: u64,
    /// In --follow mode, wake up once a ring holds this many unread bytes
    /// (the device's `poll()` watermark; put back on exit). 0: a sixteenth
    /// of a ring, at most 64 KiB. The poll timeout bounds how long fewer
    /// bytes wait.
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pub(crate) wake_bytes: u64,
    /// `poll()` timeout in --follow mode, so that idle rings let output flow.
    #[arg(long, value_name = "MS", default_value_t = 100)]
    pub(crate) poll_timeout_ms: u64,
    /// In --follow mode, the most bytes of drained records waiting to be
    /// printed (128 MiB by default). When the output falls that far behind,
    /// draining waits: records then wait in the rings, and a full ring
    /// drops and counts them.
    #[arg(long, value_name = "BYTES", default_value_t = pipeline::DEFAULT_QUEUE_BYTES)]
    pub(crate) queue_bytes: usize,
    /// In --follow mode, how much higher the nice value of the thread that
    /// decodes and prints is than the drain threads' (0-19), so that on a
    /// busy CPU draining the rings wins over printing, which the queue lets
    /// fall behind.
    #[arg(long, value_name = "N", default_value_t = process::DEFAULT_PRINT_NICE,
          value_parser = clap::value_parser!(i32).range(0..=19))]
    pub(crate) print_nice: i32,
    /// Print only the calls that match EXPR (see `reader fields`), e.g.
    /// `syscall.errno == E2BIG && args.attr_uptr.size > 136`. Checked before
    /// the device is opened; --output still saves every record.
    #[arg(long, value_name = "EXPR")]
    pub(crate) filter: Option<String>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Decode a saved trace file, or golden ring images (one per CPU).
    Show {
        /// A trace file from --output (`-`: standard input), or *.ring images.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Name a dynamic PMU type for ring images: NAME=TYPE (e.g. kprobe=6).
        #[arg(long, value_name = "NAME=TYPE")]
        pmu: Vec<String>,
        /// Print only the calls that match EXPR (see `reader fields`).
        #[arg(long, value_name = "EXPR")]
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
    ///
    /// Exit status: 0 equal, 1 they differ, 2 bad usage or unreadable
    /// input, 3 inconclusive: a run lost records and --allow-loss was not
    /// given.
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

/// Parses the command line. The global options (`-v`, `--format`,
/// `--no-summary`) go before or after a subcommand; the live reader's own
/// options do not go with a subcommand (clap's
/// `args_conflicts_with_subcommands` would refuse the global ones too).
pub(crate) fn parse_cli() -> Cli {
    use clap::{CommandFactory, FromArgMatches};
    let mut cmd = Cli::command();
    let matches = cmd.get_matches_mut();
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
            cmd.error(
                clap::error::ErrorKind::ArgumentConflict,
                format!("{name} is an option of the live reader; it cannot be used with `{sub}`"),
            )
            .exit();
        }
    }
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut cmd).exit())
}
