//! `reader diff`: loads and compares two runs with the library's
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
    let runs = diff::load(run_a).and_then(|ra| Ok((ra, diff::load(run_b)?)));
    let (ra, rb) = match runs {
        Ok(runs) => runs,
        Err(why) => {
            report!("reader: diff: {why}");
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
                report!("reader: diff: creating {}: {e}", path.display());
                return ExitCode::from(2);
            }
        },
        None => Box::new(io::stdout().lock()),
    };
    let mut out = BufWriter::new(out);
    let written = match common.format {
        FormatArg::Text => render::write_text(&report, &mut out),
        FormatArg::Json => render::write_json(&report, &mut out),
    };
    if let Err(e) = written.and_then(|()| out.flush()) {
        if e.kind() != io::ErrorKind::BrokenPipe {
            report!("reader: diff: writing the output: {e}");
            return ExitCode::from(2);
        }
    }
    ExitCode::from(u8::from(!report.equal()))
}
