//! `reader`: prints the `perf_event_open(2)` calls Antinomie captured.
//!
//! ```text
//! reader [--follow] [--format text|json] [--output FILE] [--enable] [--device PATH] [--filter EXPR]
//! reader show [--format text|json] [--filter EXPR] FILE...  # a trace file (- for stdin), or golden ring images
//! reader dump-rings DIR                       # each CPU's ring as DIR/cpuN.ring
//! reader fields                               # the filter's fields
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
use antinomie_reader::filter::{self, Filter};
use antinomie_reader::output::{Format, WriterSink};
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
    /// Do not print the summary on stderr.
    #[arg(long, global = true)]
    no_summary: bool,
    /// More diagnostics on stderr (repeat for more).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
}

#[derive(Debug, clap::Args)]
struct LiveArgs {
    /// Keep draining until SIGINT or SIGTERM, sleeping in `poll()`.
    #[arg(long)]
    follow: bool,
    /// Also save the raw records to FILE (decode later with `reader show FILE`).
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Switch capture on if it is off.
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

/// Exit status of a rejected filter, as for other usage errors.
const BAD_FILTER: u8 = 2;

/// Parses a `--filter`, or explains why not on stderr.
fn parse_filter(src: Option<&str>) -> Result<Option<Filter>, ExitCode> {
    let Some(src) = src else {
        return Ok(None);
    };
    match Filter::parse(src) {
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
    let filter = match parse_filter(src) {
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

fn stdout_sink(
    format: FormatArg,
    pmus: PmuTypes,
    follow: bool,
) -> WriterSink<BufWriter<io::Stdout>> {
    WriterSink::new(
        BufWriter::with_capacity(64 * 1024, io::stdout()),
        format.into(),
        pmus,
        follow,
    )
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
    let mut writer = match &args.output {
        Some(path) => {
            let f = File::create(path).with_context(|| format!("creating {}", path.display()))?;
            let header = TraceHeader {
                abi_version: abi::ABI_VERSION,
                window_ns,
                cpus: cpus.clone(),
                pmus: pmus.clone(),
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
    let mut sink = stdout_sink(common.format, pmus.clone(), args.follow);
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
    let (cpus, window_ns, pmus, trace, msgs) = match (traces.len(), images.is_empty()) {
        (1, true) => {
            let (path, t) = traces.remove(0);
            let h = t.header().clone();
            let pmus = if pmu.is_empty() {
                h.pmus
            } else {
                parse_pmus(pmu)?
            };
            (h.cpus, h.window_ns, pmus, Some((path, t)), Vec::new())
        }
        (0, false) => {
            let (cpus, msgs) = drain_images(images)?;
            (cpus, 0, parse_pmus(pmu)?, None, msgs)
        }
        _ => bail!("give one trace file, or one or more ring images (not both)"),
    };
    let mut sink = stdout_sink(common.format, pmus.clone(), false);
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
