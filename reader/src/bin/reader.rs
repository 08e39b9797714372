//! `reader`: prints the `perf_event_open(2)` calls Antinomie captured.
//!
//! ```text
//! reader [--follow] [--format text|json] [--json-schema full|compact] [-o FILE] [-w TRACE] [--enable] [--device PATH] [--filter EXPR]
//!        [-p PID] [--tid TID] [-t|-tt|-ttt|-r]
//! reader show [--format text|json] [--json-schema full|compact] [-o FILE] [--filter EXPR] FILE...  # a trace file (- for stdin), or golden ring images
//! reader dump-rings DIR                       # each CPU's ring as DIR/cpuN.ring
//! reader fields                               # the filter's fields
//! reader diff [--match tid|order|auto] [--duration-ratio R] A B  # two runs, call by call
//! reader describe perf_event_open             # the syscall's reference page
//! ```

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};

use antinomie_abi as abi;
use antinomie_reader::decode::PmuTypes;
use antinomie_reader::device::{Device, DEFAULT_DEVICE};
use antinomie_reader::diff;
use antinomie_reader::filter::{self, Filter};
use antinomie_reader::output::{Format, JsonSchema, TimeStyle, WriterSink};
use antinomie_reader::pipeline::{self, Assembler, DrainMsg, Mode, Recorder, Summary};
use antinomie_reader::ring::{ImageRing, RingConsumer};
use antinomie_reader::syscall;
use antinomie_reader::trace::{self, TraceHeader, TraceWriter};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FormatArg {
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
enum JsonSchemaArg {
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
/// A summary (calls, per-CPU produced/consumed/lost) goes to stderr.
#[derive(Debug, Parser)]
#[command(name = "reader", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    live: LiveArgs,
    #[command(flatten)]
    common: CommonArgs,
}

#[derive(Debug, clap::Args)]
struct CommonArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text, global = true)]
    format: FormatArg,
    /// Keys of a JSON call line (`reader diff` reads the full schema).
    #[arg(long, value_enum, default_value_t = JsonSchemaArg::Full, global = true)]
    json_schema: JsonSchemaArg,
    /// Do not print the summary on stderr.
    #[arg(long, global = true)]
    no_summary: bool,
    /// More diagnostics on stderr (repeat for more).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// Write the text or JSON lines to FILE instead of stdout (as
    /// `strace -o` and `perf trace -o`).
    #[arg(short = 'o', long = "output", value_name = "FILE", global = true)]
    output: Option<PathBuf>,
    /// Show each line's time as the wall-clock time of day (-t), with
    /// microseconds (-tt), or as seconds since the epoch (-ttt), as strace
    /// does; the default is `CLOCK_MONOTONIC` seconds.
    #[arg(short = 't', action = clap::ArgAction::Count, global = true)]
    timestamps: u8,
    /// Show each line's time as the time since the previous line (as
    /// `strace -r`).
    #[arg(
        short = 'r',
        long = "relative-timestamps",
        global = true,
        conflicts_with = "timestamps"
    )]
    relative: bool,
    /// Only the calls of process PID (repeat for more): shorthand for
    /// `--filter 'pid in {PID}'`, and-ed with --filter.
    #[arg(short = 'p', long = "pid", value_name = "PID", global = true)]
    pids: Vec<u32>,
    /// Only the calls of thread TID (repeat for more): shorthand for
    /// `--filter 'tid in {TID}'`, and-ed with --filter.
    #[arg(long = "tid", value_name = "TID", global = true)]
    tids: Vec<u32>,
}

impl CommonArgs {
    fn time_style(&self) -> Result<TimeStyle> {
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
    fn id_filter(&self) -> Option<String> {
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
struct LiveArgs {
    /// Keep draining until SIGINT or SIGTERM, sleeping in `poll()`.
    #[arg(long)]
    follow: bool,
    /// Also save the raw records to FILE, a trace (decode it later with
    /// `reader show FILE`), as `tcpdump -w` does.
    #[arg(short = 'w', long = "write", value_name = "FILE")]
    write: Option<PathBuf>,
    /// Switch capture on if it is off. The kernel switches it off again
    /// when the reader exits, as the consumer that switched it on.
    #[arg(long)]
    enable: bool,
    /// The capture device.
    #[arg(long, value_name = "PATH", default_value = DEFAULT_DEVICE)]
    device: PathBuf,
    /// Where sysfs is mounted (PMU types, possible CPUs).
    #[arg(long, value_name = "PATH", default_value = "/sys")]
    sysfs: PathBuf,
    /// How long a record may wait for slower rings, in --follow mode.
    #[arg(long, value_name = "MS", default_value_t = 50)]
    reorder_window_ms: u64,
    /// `poll()` timeout in --follow mode, so that idle rings let output flow.
    #[arg(long, value_name = "MS", default_value_t = 100)]
    poll_timeout_ms: u64,
    /// Print only the calls that match EXPR (see `reader fields`), e.g.
    /// `syscall.errno == E2BIG && args.attr_uptr.size > 136`. Checked before
    /// the device is opened; --output still saves every record.
    #[arg(long, value_name = "EXPR")]
    filter: Option<String>,
}

#[derive(Debug, Subcommand)]
enum Command {
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
    /// file or `--format json` output). Exit status 0: equal, 1: they
    /// differ, 2: bad usage or unreadable input.
    Diff {
        /// Run A.
        a: PathBuf,
        /// Run B.
        b: PathBuf,
        /// How threads are paired: by tid, by spawn order (pid, then tid
        /// ranks), or auto (tid when both runs have the same threads).
        #[arg(long = "match", value_enum, default_value_t = MatchArg::Auto)]
        matching: MatchArg,
        /// Also compare durations: report a call whose slower run took
        /// more than R times the faster one.
        #[arg(long, value_name = "R", value_parser = parse_ratio)]
        duration_ratio: Option<f64>,
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

fn init_tracing(verbose: u8) {
    let level = match verbose {
        0 => tracing::Level::WARN,
        1 => tracing::Level::INFO,
        2 => tracing::Level::DEBUG,
        _ => tracing::Level::TRACE,
    };
    tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(io::stderr)
        .with_target(false)
        .without_time()
        .init();
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum MatchArg {
    Auto,
    Tid,
    Order,
}

fn parse_ratio(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(r) if r >= 1.0 && r.is_finite() => Ok(r),
        _ => Err(format!("`{s}` is not a ratio >= 1")),
    }
}

/// `reader diff`: 0 equal, 1 different, 2 unreadable input.
fn diff_runs(
    run_a: &Path,
    run_b: &Path,
    matching: MatchArg,
    ratio: Option<f64>,
    common: &CommonArgs,
) -> ExitCode {
    // Pids, tids and times differ between runs: these options cannot
    // select or show anything comparable.
    if !common.pids.is_empty()
        || !common.tids.is_empty()
        || common.timestamps > 0
        || common.relative
    {
        eprintln!("reader: diff: -p, --tid, -t and -r do not apply to diff (pids, tids and times differ between runs)");
        return ExitCode::from(2);
    }
    let runs = diff::load(run_a).and_then(|ra| Ok((ra, diff::load(run_b)?)));
    let (ra, rb) = match runs {
        Ok(runs) => runs,
        Err(why) => {
            eprintln!("reader: diff: {why}");
            return ExitCode::from(2);
        }
    };
    let matching = match matching {
        MatchArg::Auto => diff::Matching::Auto,
        MatchArg::Tid => diff::Matching::Tid,
        MatchArg::Order => diff::Matching::Order,
    };
    let opts = diff::Options {
        matching,
        duration_ratio: ratio,
    };
    let report = diff::diff(&ra, &rb, &opts);
    let out: Box<dyn Write> = match &common.output {
        Some(path) => match File::create(path) {
            Ok(f) => Box::new(f),
            Err(e) => {
                eprintln!("reader: diff: creating {}: {e}", path.display());
                return ExitCode::from(2);
            }
        },
        None => Box::new(io::stdout().lock()),
    };
    let mut out = BufWriter::new(out);
    let written = match common.format {
        FormatArg::Text => report.write_text(&mut out),
        FormatArg::Json => report.write_json(&mut out),
    };
    if let Err(e) = written.and_then(|()| out.flush()) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("reader: diff: writing the output: {e}");
            return ExitCode::from(2);
        }
    }
    ExitCode::from(u8::from(!report.equal()))
}

/// Exit status of a rejected filter, as for other usage errors.
const BAD_FILTER: u8 = 2;

/// Parses a `--filter`, and-ed with what `-p`/`--tid` stand for, or
/// explains why not on stderr.
fn parse_filter(src: Option<&str>, ids: Option<String>) -> Result<Option<Filter>, ExitCode> {
    // The user's own expression alone first, so that an error points into it.
    if let (Some(user), Some(_)) = (src, &ids) {
        if let Err(e) = Filter::parse(user) {
            eprintln!("reader: bad filter: {e}");
            return Err(ExitCode::from(BAD_FILTER));
        }
    }
    let src = match (src, ids) {
        (None, None) => return Ok(None),
        (Some(user), None) => user.to_owned(),
        (None, Some(ids)) => ids,
        (Some(user), Some(ids)) => format!("({user}) && {ids}"),
    };
    match Filter::parse(&src) {
        Ok(f) => {
            tracing::info!("filter: {}", f.canonical());
            Ok(Some(f))
        }
        Err(e) => {
            eprintln!("reader: bad filter: {e}");
            Err(ExitCode::from(BAD_FILTER))
        }
    }
}

/// Parses the command line. The global options (`-v`, `--format`,
/// `--no-summary`) go before or after a subcommand; the live reader's own
/// options do not go with a subcommand (clap's
/// `args_conflicts_with_subcommands` would refuse the global ones too).
fn parse_cli() -> Cli {
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

fn main() -> ExitCode {
    let cli = parse_cli();
    init_tracing(cli.common.verbose);
    // A bad filter is rejected before anything is opened.
    let src = match &cli.command {
        None => cli.live.filter.as_deref(),
        Some(Command::Show { filter, .. }) => filter.as_deref(),
        Some(_) => None,
    };
    let filter = match parse_filter(src, cli.common.id_filter()) {
        Ok(f) => f,
        Err(code) => return code,
    };
    match run(cli, filter) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("reader: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli, filter: Option<Filter>) -> Result<ExitCode> {
    let common = cli.common;
    let mut truncated = false;
    let summary = match cli.command {
        None => live(&cli.live, &common, filter)?,
        Some(Command::Show { files, pmu, .. }) => {
            let (summary, cut) = show(&files, &pmu, &common, filter)?;
            truncated = cut;
            summary
        }
        Some(Command::DumpRings { dir, device, sysfs }) => {
            dump_rings(&dir, &device, &sysfs)?;
            return Ok(ExitCode::SUCCESS);
        }
        Some(Command::Diff {
            a,
            b,
            matching,
            duration_ratio,
        }) => return Ok(diff_runs(&a, &b, matching, duration_ratio, &common)),
        Some(Command::Fields) => {
            print_stdout(&filter::fields_text())?;
            return Ok(ExitCode::SUCCESS);
        }
        Some(Command::Describe { syscall }) => {
            let Some(page) = syscall::reference_page(&syscall) else {
                bail!(
                    "no reference page for `{syscall}`: this reader knows {}",
                    syscall::SYSCALLS
                        .iter()
                        .map(|s| s.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            };
            print_stdout(&page)?;
            return Ok(ExitCode::SUCCESS);
        }
    };
    if !common.no_summary && !summary.broken_pipe {
        eprint!("{}", summary.to_text());
    }
    let corrupt = summary.cpus.values().any(|c| c.stopped || c.skipped > 0);
    if corrupt {
        eprintln!("reader: corrupt records were found (see above)");
        return Ok(ExitCode::from(3));
    }
    if truncated {
        eprintln!("reader: the trace file is truncated (see above)");
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

/// The sink of the text or JSON lines: stdout, or the `-o` file.
/// `realtime_offset_ns` (`CLOCK_REALTIME` − `CLOCK_MONOTONIC`) is what
/// `-t`, `-tt` and `-ttt` need.
fn line_sink(
    common: &CommonArgs,
    pmus: PmuTypes,
    follow: bool,
    realtime_offset_ns: Option<i64>,
) -> Result<WriterSink<BufWriter<Box<dyn Write>>>> {
    let style = common.time_style()?;
    let offset = match (style.needs_wall_clock(), realtime_offset_ns) {
        (false, _) => 0,
        (true, Some(offset)) => offset,
        (true, None) => bail!(
            "-t, -tt and -ttt need the wall clock of the recording, which ring images \
             and traces of older readers do not hold (-r and the default time work)"
        ),
    };
    let out: Box<dyn Write> = match &common.output {
        Some(path) => {
            Box::new(File::create(path).with_context(|| format!("creating {}", path.display()))?)
        }
        None => Box::new(io::stdout()),
    };
    Ok(WriterSink::new(
        BufWriter::with_capacity(64 * 1024, out),
        common.format.into(),
        pmus,
        follow,
    )
    .with_json_schema(common.json_schema.into())
    .with_time_style(style, offset))
}

/// `CLOCK_REALTIME` − `CLOCK_MONOTONIC` now, in ns: turns record times
/// into wall-clock times.
fn realtime_offset_ns() -> i64 {
    let ns = |t: rustix::time::Timespec| t.tv_sec * 1_000_000_000 + t.tv_nsec;
    let mono = ns(rustix::time::clock_gettime(
        rustix::time::ClockId::Monotonic,
    ));
    let real = ns(rustix::time::clock_gettime(rustix::time::ClockId::Realtime));
    real - mono
}

/// Writes `text` to stdout; a closed pipe is not an error.
fn print_stdout(text: &str) -> Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e).context("writing the output"),
        _ => Ok(()),
    }
}

fn live(args: &LiveArgs, common: &CommonArgs, filter: Option<Filter>) -> Result<Summary> {
    let mut dev = Device::open(&args.device)?;
    if args.enable && !dev.enabled() {
        dev.enable()?;
        tracing::info!("capture enabled");
    } else if !dev.enabled() {
        tracing::warn!("capture is off: showing what the rings hold (--enable switches it on)");
    }
    let cpus = dev.possible_cpus(&args.sysfs);
    let mut rings = Vec::new();
    for &cpu in &cpus {
        rings.push(RingConsumer::new(dev.map_ring(cpu)?));
    }
    let pmus = PmuTypes::from_sysfs(&args.sysfs);
    let window_ns = args.reorder_window_ms.saturating_mul(1_000_000);
    let realtime_offset_ns = realtime_offset_ns();
    let mut writer = match &args.write {
        Some(path) => {
            let f = File::create(path).with_context(|| format!("creating {}", path.display()))?;
            let header = TraceHeader {
                abi_version: abi::ABI_VERSION,
                window_ns,
                cpus: cpus.clone(),
                pmus: pmus.clone(),
                realtime_offset_ns: Some(realtime_offset_ns),
            };
            Some(TraceWriter::new(BufWriter::new(f), &header).context("writing the trace header")?)
        }
        None => None,
    };
    let mode = if args.follow {
        Mode::Follow(Box::new(
            dev.waker(Duration::from_millis(args.poll_timeout_ms))?,
        ))
    } else {
        Mode::Once
    };
    let mut sink = line_sink(common, pmus.clone(), args.follow, Some(realtime_offset_ns))?;
    let mut assembler = Assembler::new(&cpus, window_ns, &mut sink);
    if let Some(f) = filter {
        assembler.set_filter(Box::new(f.with_pmus(pmus)));
    }
    let summary = pipeline::run(
        rings,
        mode,
        assembler,
        writer.as_mut().map(|w| w as &mut dyn Recorder),
    )
    .context("writing the output")?;
    if let Some(w) = writer {
        w.finish().context("writing the trace file")?;
    }
    Ok(summary)
}

fn parse_pmus(specs: &[String]) -> Result<PmuTypes> {
    let mut pairs = Vec::new();
    for spec in specs {
        let Some((name, ty)) = spec.split_once('=') else {
            bail!("--pmu {spec}: expected NAME=TYPE");
        };
        let ty: u32 = ty
            .parse()
            .with_context(|| format!("--pmu {spec}: bad type"))?;
        pairs.push((ty, name.to_owned()));
    }
    Ok(PmuTypes::from_pairs(pairs))
}

/// What `reader show` decodes: a trace file streamed frame by frame, or
/// ring images read whole.
enum ShowInput {
    Trace(trace::TraceReader<Box<dyn io::Read>>),
    Image(ImageRing),
}

/// Opens `path` (`-`: standard input) and tells a trace file from a ring
/// image by its first bytes.
fn open_input(path: &Path) -> Result<ShowInput> {
    let name = path.display();
    let mut input: Box<dyn io::Read> = if path == Path::new("-") {
        Box::new(io::stdin().lock())
    } else {
        Box::new(io::BufReader::new(
            File::open(path).with_context(|| format!("opening {name}"))?,
        ))
    };
    let mut head = Vec::new();
    io::Read::read_to_end(
        &mut io::Read::take(&mut input, trace::TRACE_MAGIC.len() as u64),
        &mut head,
    )
    .with_context(|| format!("reading {name}"))?;
    let is_trace = trace::is_trace(&head);
    let mut input: Box<dyn io::Read> = Box::new(io::Read::chain(io::Cursor::new(head), input));
    if is_trace {
        return Ok(ShowInput::Trace(
            trace::TraceReader::new(input).with_context(|| format!("decoding {name}"))?,
        ));
    }
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut input, &mut bytes).with_context(|| format!("reading {name}"))?;
    Ok(ShowInput::Image(
        ImageRing::from_bytes(bytes)
            .with_context(|| format!("{name}: neither a trace file nor a ring image"))?,
    ))
}

/// `reader show`; returns the summary, and whether the trace file was cut
/// inside a frame. A trace file is streamed: memory does not grow with it.
fn show(
    files: &[PathBuf],
    pmu: &[String],
    common: &CommonArgs,
    filter: Option<Filter>,
) -> Result<(Summary, bool)> {
    let mut images = Vec::new();
    let mut traces = Vec::new();
    for path in files {
        match open_input(path)? {
            ShowInput::Trace(t) => traces.push((path, t)),
            ShowInput::Image(i) => images.push(i),
        }
    }
    let (cpus, window_ns, pmus, realtime_offset_ns, trace, msgs) =
        match (traces.len(), images.is_empty()) {
            (1, true) => {
                let (path, t) = traces.remove(0);
                let h = t.header().clone();
                let pmus = if pmu.is_empty() {
                    h.pmus
                } else {
                    parse_pmus(pmu)?
                };
                (
                    h.cpus,
                    h.window_ns,
                    pmus,
                    h.realtime_offset_ns,
                    Some((path, t)),
                    Vec::new(),
                )
            }
            (0, false) => {
                let (cpus, msgs) = drain_images(images)?;
                (cpus, 0, parse_pmus(pmu)?, None, None, msgs)
            }
            _ => bail!("give one trace file, or one or more ring images (not both)"),
        };
    let mut sink = line_sink(common, pmus.clone(), false, realtime_offset_ns)?;
    let mut assembler = Assembler::new(&cpus, window_ns, &mut sink);
    if let Some(f) = filter {
        assembler.set_filter(Box::new(f.with_pmus(pmus)));
    }
    let Some((path, mut t)) = trace else {
        return Ok((pipeline::replay(msgs, assembler)?, false));
    };
    let mut failed = None;
    let msgs = t
        .by_ref()
        .map_while(|m| m.map_err(|e| failed = Some(e)).ok());
    let summary = pipeline::replay(msgs, assembler)?;
    if let Some(e) = failed {
        return Err(e).with_context(|| format!("decoding {}", path.display()));
    }
    let truncated = t.truncated_at();
    if let Some(at) = truncated {
        tracing::warn!(
            "{}: cut short inside the frame at byte {at}: decoded up to the last complete frame",
            path.display()
        );
    } else if !t.complete() {
        tracing::warn!("the trace file has no END frame: the recording was cut short");
    }
    Ok((summary, truncated.is_some()))
}

/// Drains ring images, one after the other, into the messages a live
/// drain would have produced.
fn drain_images(images: Vec<ImageRing>) -> Result<(Vec<u32>, Vec<DrainMsg>)> {
    let mut cpus: Vec<u32> = images.iter().map(|i| i.meta().cpu).collect();
    cpus.sort_unstable();
    if cpus.windows(2).any(|w| w[0] == w[1]) {
        bail!("two ring images of the same CPU");
    }
    Ok((cpus, antinomie_reader::pipeline::drain_once(images)))
}

fn dump_rings(dir: &Path, device: &Path, sysfs: &Path) -> Result<()> {
    let dev = Device::open(device)?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for cpu in dev.possible_cpus(sysfs) {
        let ring = dev.map_ring(cpu)?;
        let path = dir.join(format!("cpu{cpu}.ring"));
        let mut f = File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        f.write_all(&ring.snapshot())
            .with_context(|| format!("writing {}", path.display()))?;
        println!("{}", path.display());
    }
    Ok(())
}
