// SPDX-License-Identifier: GPL-2.0-only
//! `reader`: prints the `perf_event_open(2)` calls Antinomie captured.
//!
//! ```text
//! reader [--follow] [--format text|json] [--json-schema full|compact] [-o FILE] [-w TRACE] [--enable] [--device PATH] [--filter EXPR]
//!        [--pid PID] [--tid TID] [-Z|-z] [-c|-C] [-f] [-t|-tt|-ttt|-r] [--summary text|json|--no-summary]
//! reader [live options] [--cgroup DIR] [--lossy] -- COMMAND [ARGS...]  # run COMMAND, capture it and what it starts
//! reader [live options] [--lossy] -p PID...   # attach to running processes, as strace -p
//! reader show [--format text|json] [--json-schema full|compact] [-o FILE] [--filter EXPR] FILE...  # a trace file (- for stdin), or golden ring images
//! reader dump-rings DIR                       # each CPU's ring as DIR/cpuN.ring
//! reader fields                               # the filter's fields
//! reader diff [--match tid|order|auto] [--duration-ratio R] [--allow-loss] A B  # two runs, call by call
//! reader describe perf_event_open             # the syscall's reference page
//! reader --generate man|complete-bash|complete-zsh|complete-fish  # hidden: for installers
//! ```
//!
//! The library `antinomie_reader` does the draining, pairing, decoding,
//! filtering and formatting; this crate is the process around it: `args`
//! the command line, `live` the live reader and `dump-rings`, `run`
//! `reader -- COMMAND` (COMMAND's process and cgroup), `show`
//! `reader show`, `diff` `reader diff` and its report, `process` the
//! signals and thread priority, `generate` `reader --generate`. `reader
//! describe` prints the reference page the library builds from its
//! syscall table.

/// `eprintln!`, except that a stderr that cannot be written (a full disk,
/// a closed pipe) is ignored instead of panicking: there is nowhere left
/// to report it, and the exit status still says what happened.
macro_rules! report {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod args;
mod diff;
mod exit;
mod generate;
mod live;
mod process;
mod run;
mod show;

use std::ffi::OsStr;
use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use serde::Serialize;

use antinomie_reader::filter::{self, Filter};
use antinomie_reader::pipeline::Summary;
use antinomie_reader::syscall;

use args::{parse_cli, Cli, Command, CommonArgs, SummaryArg};
use run::{Ended, Exit};

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

/// Parses a `--filter`, and-ed with what `-Z`/`-z`/`-p`/`--tid` stand
/// for, or explains why not on stderr.
fn parse_filter(src: Option<&str>, ids: Option<String>) -> Result<Option<Filter>, ExitCode> {
    // The user's own expression alone first, so that an error points into it.
    if let (Some(user), Some(_)) = (src, &ids) {
        if let Err(e) = Filter::parse(user) {
            report!("reader: bad filter: {e}");
            return Err(ExitCode::from(exit::TROUBLE));
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
            report!("reader: bad filter: {e}");
            Err(ExitCode::from(exit::TROUBLE))
        }
    }
}

fn main() -> ExitCode {
    let cli = parse_cli();
    init_tracing(cli.common.verbose);
    if cli.common.follow_forks {
        tracing::info!("-f: children and threads are always followed; nothing to switch on");
    }
    // A bad filter is rejected before anything is opened.
    let src = match &cli.command {
        None => cli.live.filter.as_deref(),
        Some(Command::Show { filter, .. }) => filter.as_deref(),
        Some(_) => None,
    };
    let filter = match parse_filter(src, cli.common.shorthand_filter()) {
        Ok(f) => f,
        Err(code) => return code,
    };
    // With a COMMAND, 2 may be COMMAND's own status: the reader's own
    // failure must read otherwise.
    let failed = if cli.command.is_none() && !cli.live.run.is_empty() {
        ExitCode::from(exit::CANNOT_TEST)
    } else {
        ExitCode::from(exit::TROUBLE)
    };
    match run(cli, filter) {
        Ok(code) => code,
        Err(e) => {
            report!("reader: error: {e:#}");
            failed
        }
    }
}

fn run(cli: Cli, filter: Option<Filter>) -> Result<ExitCode> {
    if let Some(kind) = cli.generate {
        print_stdout(&generate::generated(kind)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let common = cli.common;
    let mut truncated = false;
    // `-p` answers for the processes it attached to, as COMMAND's run does:
    // a lost record leaves that answer incomplete.
    let mut loss_is_incomplete = false;
    let summary = match cli.command {
        None if !cli.live.run.is_empty() => {
            let ran = run::run(&cli.live, &common, filter)?;
            return Ok(command_finished(&ran, &cli.live.run[0], &common));
        }
        None if !cli.live.attach.is_empty() => {
            loss_is_incomplete = true;
            run::attach(&cli.live, &common, filter)?
        }
        None => live::live(&cli.live, &common, filter)?,
        Some(Command::Show { files, pmu, .. }) => {
            let (summary, cut) = show::show(&files, &pmu, &common, filter)?;
            truncated = cut;
            summary
        }
        Some(Command::DumpRings { dir, device, sysfs }) => {
            live::dump_rings(&dir, &device, &sysfs)?;
            return Ok(ExitCode::SUCCESS);
        }
        Some(Command::Diff {
            a,
            b,
            matching,
            duration_ratio,
            allow_loss,
        }) => {
            return Ok(diff::diff_runs(
                &a,
                &b,
                matching,
                duration_ratio,
                allow_loss,
                &common,
            ))
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
    // A text summary comes first, its headline stderr's first line, and
    // what makes the answer incomplete after it; a JSON one last, for
    // scripts.
    let json = common.summary == SummaryArg::Json;
    if !json {
        print_summary(&summary, &common);
    }
    let mut incomplete = corrupt(&summary);
    let loss = summary.loss();
    if loss_is_incomplete && loss.is_lossy() {
        report!("reader: the capture lost {} records", loss.lost);
        incomplete = true;
    }
    if truncated {
        report!("reader: the trace file is truncated (see above)");
        incomplete = true;
    }
    if json {
        print_summary(&summary, &common);
    }
    Ok(if incomplete {
        ExitCode::from(exit::INCOMPLETE)
    } else {
        ExitCode::SUCCESS
    })
}

/// The summary on stderr as `--summary` says, unless `--no-summary` or
/// the output was closed.
fn print_summary(summary: &Summary, common: &CommonArgs) {
    if !common.no_summary && !summary.broken_pipe {
        let text = match common.summary {
            SummaryArg::Text => summary.to_text(),
            SummaryArg::Json => summary.to_json(),
        };
        let _ = io::stderr().write_all(text.as_bytes());
    }
}

/// Whether the run found corrupt records; says so on stderr (the summary
/// that follows counts them).
fn corrupt(summary: &Summary) -> bool {
    let corrupt = summary.cpus.values().any(|c| c.stopped || c.skipped > 0);
    if corrupt {
        report!("reader: corrupt records were found (see above)");
    }
    corrupt
}

/// The end of `reader -- COMMAND`: the summary, how COMMAND ended, and the
/// exit status [`run::exit_status`] gives; a COMMAND killed by a signal
/// kills the reader with it. A JSON summary comes last on stderr, with
/// how COMMAND ended and what the reader exits with in it ([`RunJson`]).
fn command_finished(ran: &run::Ran, command: &OsStr, common: &CommonArgs) -> ExitCode {
    let name = command.to_string_lossy();
    let whole = match &ran.summary {
        Some(summary) => {
            // The text summary first (its headline is stderr's first
            // line); the JSON one comes last, below.
            if common.summary == SummaryArg::Text {
                print_summary(summary, common);
            }
            let corrupt = corrupt(summary);
            let loss = summary.loss();
            if loss.is_lossy() {
                report!("reader: the capture lost {} records", loss.lost);
            }
            !corrupt && !loss.is_lossy()
        }
        // The capture failed, as the reader said then.
        None => false,
    };
    let how = match ran.ended {
        Ended::NotRun(errno) => {
            let why = match errno {
                libc::ENOENT => "command not found".to_owned(),
                _ => io::Error::from_raw_os_error(errno).to_string(),
            };
            report!("reader: cannot run `{name}`: {why}");
            None
        }
        Ended::Exited(code) => Some(format!("exited with status {code}")),
        Ended::Killed(sig) => Some(format!(
            "was killed by signal {sig}{}",
            signal_hook::low_level::signal_name(sig)
                .map_or_else(String::new, |n| format!(" ({n})"))
        )),
    };
    let exit = run::exit_status(ran.ended, whole);
    match how {
        Some(how) if !whole => report!(
            "reader: `{name}` {how}; the reader exits with {}: the capture is not whole",
            exit::CANNOT_TEST
        ),
        Some(how) if !common.no_summary && common.summary == SummaryArg::Text => {
            report!("reader: `{name}` {how}");
        }
        _ => {}
    }
    if let Some(summary) = &ran.summary {
        if common.summary == SummaryArg::Json && !common.no_summary && !summary.broken_pipe {
            let json = RunJson {
                summary: summary.json_object(),
                command: CommandJson::new(ran.ended),
                capture_whole: whole,
                exit: match exit {
                    Exit::Status(code) => Some(code),
                    Exit::Signal(_) => None,
                },
            };
            // Numbers, strings and bools only: serialising cannot fail.
            let mut line = serde_json::to_string(&json).unwrap_or_default();
            line.push('\n');
            let _ = io::stderr().write_all(line.as_bytes());
        }
    }
    match exit {
        Exit::Status(code) => ExitCode::from(code),
        Exit::Signal(sig) => process::die_of(sig),
    }
}

/// `reader -- COMMAND`'s `--summary json` object: the summary's keys,
/// then these (reader/README.md).
#[derive(Serialize)]
struct RunJson<S: Serialize> {
    #[serde(flatten)]
    summary: S,
    command: CommandJson,
    /// No record lost, none corrupt, the capture did not fail.
    capture_whole: bool,
    /// What the reader exits with; `null` when it dies of COMMAND's signal.
    exit: Option<u8>,
}

/// How COMMAND ended: exactly one key is not `null`.
#[derive(Serialize)]
struct CommandJson {
    /// Its exit status.
    exited: Option<u8>,
    /// The signal that killed it.
    signal: Option<i32>,
    /// Why it could not be run: `execvp()`'s errno, by name (`ENOENT`, ...).
    not_run: Option<String>,
}

impl CommandJson {
    fn new(ended: Ended) -> Self {
        let mut json = CommandJson {
            exited: None,
            signal: None,
            not_run: None,
        };
        match ended {
            Ended::Exited(code) => json.exited = Some(code),
            Ended::Killed(sig) => json.signal = Some(sig),
            Ended::NotRun(errno) => {
                json.not_run = Some(
                    u32::try_from(errno)
                        .ok()
                        .and_then(antinomie_reader::decode::errno)
                        .map_or_else(|| format!("errno {errno}"), |e| e.name.to_owned()),
                );
            }
        }
        json
    }
}

/// Writes `text` to stdout; a closed pipe is not an error.
fn print_stdout(text: &str) -> Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e).context("writing the output"),
        _ => Ok(()),
    }
}
