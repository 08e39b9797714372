//! `reader`: prints the `perf_event_open(2)` calls Antinomie captured.
//!
//! ```text
//! reader [--follow] [--format text|json] [--json-schema full|compact] [-o FILE] [-w TRACE] [--enable] [--device PATH] [--filter EXPR]
//!        [-p PID] [--tid TID] [-t|-tt|-ttt|-r]
//! reader show [--format text|json] [--json-schema full|compact] [-o FILE] [--filter EXPR] FILE...  # a trace file (- for stdin), or golden ring images
//! reader dump-rings DIR                       # each CPU's ring as DIR/cpuN.ring
//! reader fields                               # the filter's fields
//! reader diff [--match tid|order|auto] [--duration-ratio R] [--allow-loss] A B  # two runs, call by call
//! reader describe perf_event_open             # the syscall's reference page
//! ```
//!
//! The library `antinomie_reader` does the draining, pairing, decoding,
//! filtering and formatting; this crate is the process around it: `args`
//! the command line, `live` the live reader and `dump-rings`, `show`
//! `reader show`, `diff` `reader diff` and its report, `process` the
//! signals and thread priority. `reader describe` prints the reference
//! page the library builds from its syscall table.

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
mod live;
mod process;
mod show;

use std::io::{self, Write};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};

use antinomie_reader::filter::{self, Filter};
use antinomie_reader::syscall;

use args::{parse_cli, Cli, Command};

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

/// Parses a `--filter`, and-ed with what `-p`/`--tid` stand for, or
/// explains why not on stderr.
fn parse_filter(src: Option<&str>, ids: Option<String>) -> Result<Option<Filter>, ExitCode> {
    // The user's own expression alone first, so that an error points into it.
    if let (Some(user), Some(_)) = (src, &ids) {
        if let Err(e) = Filter::parse(user) {
            report!("reader: bad filter: {e}");
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
            report!("reader: bad filter: {e}");
            Err(ExitCode::from(BAD_FILTER))
        }
    }
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
            report!("reader: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli, filter: Option<Filter>) -> Result<ExitCode> {
    let common = cli.common;
    let mut truncated = false;
    let summary = match cli.command {
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
    if !common.no_summary && !summary.broken_pipe {
        let _ = io::stderr().write_all(summary.to_text().as_bytes());
    }
    let corrupt = summary.cpus.values().any(|c| c.stopped || c.skipped > 0);
    if corrupt {
        report!("reader: corrupt records were found (see above)");
        return Ok(ExitCode::from(3));
    }
    if truncated {
        report!("reader: the trace file is truncated (see above)");
        return Ok(ExitCode::from(3));
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `text` to stdout; a closed pipe is not an error.
fn print_stdout(text: &str) -> Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e).context("writing the output"),
        _ => Ok(()),
    }
}
