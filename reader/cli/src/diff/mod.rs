//! `reader diff`: compares two runs, streamed, with the library's
//! [`antinomie_reader::diff`], and prints the report (`render.rs`).

mod render;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use antinomie_reader::diff;

use crate::args::{CommonArgs, FormatArg, MatchArg};

/// `reader diff`: 0 equal, 1 different, 2 unreadable input.
pub(crate) fn diff_runs(
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
        report!("reader: diff: -p, --tid, -t and -r do not apply to diff (pids, tids and times differ between runs)");
        return ExitCode::from(2);
    }
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
                return ExitCode::from(2);
            }
        },
        None => Box::new(io::stdout().lock()),
    };
    let mut out = BufWriter::new(out);
    // The runs are read as streams: each difference is written as soon
    // as it is decided, the summary at the end.
    let format = common.format;
    let duration_shown = ratio.is_some();
    let mut write_difference = |d: &diff::Difference| match format {
        FormatArg::Text => render::difference_text(d, duration_shown, &mut out),
        FormatArg::Json => render::difference_json(d, &mut out),
    };
    let summary = match diff::diff(run_a, run_b, &opts, &mut write_difference) {
        Ok(summary) => summary,
        Err(diff::DiffError::Output(e)) if e.kind() == io::ErrorKind::BrokenPipe => {
            return ExitCode::from(1)
        }
        Err(why) => {
            report!("reader: diff: {why}");
            return ExitCode::from(2);
        }
    };
    let written = match format {
        FormatArg::Text => render::summary_text(&summary, &mut out),
        FormatArg::Json => render::summary_json(&summary, &mut out),
    };
    if let Err(e) = written.and_then(|()| out.flush()) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            report!("reader: diff: writing the output: {e}");
            return ExitCode::from(2);
        }
    }
    ExitCode::from(u8::from(!summary.equal()))
}
