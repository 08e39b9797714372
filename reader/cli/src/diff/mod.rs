// SPDX-License-Identifier: GPL-2.0-only
//! `reader diff`: compares two runs, streamed, with the library's
//! [`antinomie_reader::diff`], and prints the report (`render.rs`); a run
//! that lost records is compared only with `--allow-loss` (`loss.rs`).

mod loss;
mod render;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use antinomie_reader::diff::{self, RunLoss};

use crate::args::{CommonArgs, FormatArg, MatchArg};
use crate::exit::{DIFFER, INCOMPLETE, TROUBLE};

/// `reader diff`: 0 equal, [`DIFFER`], [`TROUBLE`] (bad usage, an
/// unreadable input, an output that cannot be written), [`INCOMPLETE`]
/// when a run lost records and `allow_loss` is false: neither equal nor
/// different, so that a CI job gating on 1 does not take a lossy run for
/// a regression.
pub(crate) fn diff_runs(
    run_a: &Path,
    run_b: &Path,
    matching: MatchArg,
    ratio: Option<f64>,
    allow_loss: bool,
    common: &CommonArgs,
) -> ExitCode {
    // Pids, tids and times differ between runs: these options cannot
    // select or show anything comparable.
    if !common.pids.is_empty()
        || !common.tids.is_empty()
        || common.timestamps > 0
        || common.relative
    {
        report!("reader: diff: -p, --tid, -t and -r do not apply to diff (pids, tids and times differ between runs)");
        return ExitCode::from(TROUBLE);
    }
    // The loss first: a lossy run is not compared unless asked, as a call
    // it lost would pass for a difference.
    let losses = RunLoss::read(run_a).and_then(|la| Ok((la, RunLoss::read(run_b)?)));
    let (loss_a, loss_b) = match losses {
        Ok(losses) => losses,
        Err(why) => {
            report!("reader: diff: {why}");
            return ExitCode::from(TROUBLE);
        }
    };
    let lossy = loss_a.total().is_lossy() || loss_b.total().is_lossy();
    let matching = match matching {
        MatchArg::Auto => diff::Matching::Auto,
        MatchArg::Tid => diff::Matching::Tid,
        MatchArg::Order => diff::Matching::Order,
    };
    let opts = diff::Options {
        matching,
        duration_ratio: ratio,
        window: diff::DEFAULT_WINDOW,
    };
    let out: Box<dyn Write> = match &common.output {
        Some(path) => match File::create(path) {
            Ok(f) => Box::new(f),
            Err(e) => {
                report!("reader: diff: creating {}: {e}", path.display());
                return ExitCode::from(TROUBLE);
            }
        },
        None => Box::new(io::stdout().lock()),
    };
    let mut out = BufWriter::new(out);
    if lossy && !allow_loss {
        let written = match common.format {
            FormatArg::Text => loss::write_inconclusive_text(&loss_a, &loss_b, &mut out),
            FormatArg::Json => loss::write_inconclusive_json(&loss_a, &loss_b, &mut out),
        };
        return finish(written, &mut out).unwrap_or(ExitCode::from(INCOMPLETE));
    }
    // The runs are read as streams: each difference is written as soon
    // as it is decided, the summary at the end.
    let format = common.format;
    let duration_shown = ratio.is_some();
    let mut write_difference = |d: &diff::Difference| match format {
        FormatArg::Text => render::difference_text(d, duration_shown, &mut out),
        FormatArg::Json => render::difference_json(d, &mut out),
    };
    let mut summary = match diff::diff(run_a, run_b, &opts, &mut write_difference) {
        Ok(summary) => summary,
        Err(diff::DiffError::Output(e)) if e.kind() == io::ErrorKind::BrokenPipe => {
            return ExitCode::from(DIFFER)
        }
        Err(why) => {
            report!("reader: diff: {why}");
            return ExitCode::from(TROUBLE);
        }
    };
    summary.loss = Some((loss_a, loss_b));
    let written = match format {
        FormatArg::Text => render::summary_text(&summary, &mut out),
        FormatArg::Json => render::summary_json(&summary, &mut out),
    };
    let status = if summary.equal() { 0 } else { DIFFER };
    finish(written, &mut out).unwrap_or(ExitCode::from(status))
}

/// Flushes the report; the exit status [`TROUBLE`] if it could not be written (a
/// closed pipe is not an error: `reader diff | head`).
fn finish<W: Write>(written: io::Result<()>, out: &mut W) -> Option<ExitCode> {
    match written.and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            report!("reader: diff: writing the output: {e}");
            Some(ExitCode::from(TROUBLE))
        }
        _ => None,
    }
}
