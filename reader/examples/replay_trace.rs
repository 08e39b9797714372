// SPDX-License-Identifier: GPL-2.0-only
//! Replays a trace file that `reader -w FILE` saved and prints its calls,
//! one strace-like line each, then the run's summary on stderr: what
//! `reader show FILE` does, with the library alone.
//!
//! ```sh
//! cargo run -p antinomie-reader --example replay_trace -- FILE
//! cargo run -p antinomie-reader --example replay_trace -- reader/tests/data/synthetic/run.trace
//! ```
//!
//! The file is read frame by frame: memory stays one frame, whatever its
//! size. `cargo test` runs this example's test, which replays the
//! repository's synthetic trace and compares the lines with what
//! `reader show` prints for it.

use std::error::Error;
use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::process::ExitCode;

use antinomie_reader::output::{Format, WriterSink};
use antinomie_reader::pipeline::{self, Assembler, Summary};
use antinomie_reader::trace::TraceReader;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("replay_trace: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let Some(path) = std::env::args_os().nth(1) else {
        return Err("usage: replay_trace FILE (a trace file `reader -w` wrote)".into());
    };
    let file = File::open(&path).map_err(|e| format!("opening {}: {e}", path.to_string_lossy()))?;
    let summary = replay(BufReader::new(file), io::stdout().lock())?;
    eprint!("{}", summary.to_text());
    Ok(())
}

/// Replays the trace file `input` into text lines on `out`.
///
/// The header says which rings the run read, its reordering window and
/// the dynamic PMU types of the recording machine; the frames are the
/// drained batches, which the assembler merges, pairs and decodes as it
/// did live.
fn replay(input: impl Read, out: impl Write) -> Result<Summary, Box<dyn Error>> {
    // Refuses a file of another ABI or format version, naming both.
    let trace = TraceReader::new(input)?;
    let header = trace.header().clone();
    let mut sink = WriterSink::new(out, Format::Text, header.pmus.clone(), false);
    // A frame that cannot be decoded ends the replay after what came
    // before it has been printed, and is the error.
    let mut failed = None;
    let msgs = trace.map_while(|m| m.map_err(|e| failed = Some(e)).ok());
    let summary = pipeline::replay(
        msgs,
        Assembler::new(&header.cpus, header.window_ns, &mut sink),
    )?;
    match failed {
        Some(e) => Err(e.into()),
        None => Ok(summary),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::replay;

    #[test]
    fn replays_the_synthetic_trace_as_reader_show_prints_it() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/synthetic");
        let trace = std::fs::read(data.join("run.trace")).unwrap();
        let mut out = Vec::new();
        let summary = replay(&trace[..], &mut out).unwrap();
        let expected = std::fs::read_to_string(data.join("expected.txt")).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), expected);
        assert!(summary.calls() > 0);
    }

    #[test]
    fn a_file_that_is_no_trace_is_refused() {
        let err = replay(&b"not a trace"[..], Vec::new()).unwrap_err();
        assert!(err.to_string().contains("ANTI-TRC"), "{err}");
    }
}
