// SPDX-License-Identifier: GPL-2.0-only
//! A recorded run (`pipeline::run_to_trace`, `reader -w`): the trace is
//! written whatever the printing does, and printed as it replays.

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use antinomie_reader::call::Call;
use antinomie_reader::decode::PmuTypes;
use antinomie_reader::output::{Format, WriterSink};
use antinomie_reader::pipeline::{self, Assembler, Mode, Sink, Tick, Waker};
use antinomie_reader::record::LostRecord;
use antinomie_reader::trace::read_trace;

use crate::pipeline::Script;
use crate::support::{
    consumers, run_images, scenario_images, show_images, trace_header, ScratchFile,
};

fn follow(queue_bytes: usize) -> Mode {
    Mode::Follow {
        waker: Box::new(Script(3)),
        queue_bytes,
        threads_started: None,
    }
}

/// A sink that does not print its first call until the trace file at its
/// path is complete (END written), or 20 s have passed: a terminal that
/// stopped reading.
struct Stalled<'a> {
    trace: &'a ScratchFile,
    complete_before_first_call: Option<bool>,
    calls: usize,
}

impl Sink for Stalled<'_> {
    fn call(&mut self, _: &Call) -> io::Result<()> {
        if self.complete_before_first_call.is_none() {
            let deadline = Instant::now() + Duration::from_secs(20);
            let complete = loop {
                let bytes = std::fs::read(&self.trace.0)?;
                if read_trace(&bytes).is_ok_and(|t| t.complete) {
                    break true;
                }
                if Instant::now() > deadline {
                    break false;
                }
                std::thread::sleep(Duration::from_millis(10));
            };
            self.complete_before_first_call = Some(complete);
        }
        self.calls += 1;
        Ok(())
    }
    fn lost(&mut self, _: &LostRecord) -> io::Result<()> {
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn the_trace_is_complete_while_the_printing_stalls() {
    // A queue that holds one message: were the file written by the thread
    // that prints, the drain would wait for the stalled sink, and the
    // file would not be complete before the first call is printed.
    let images = scenario_images();
    let (_, once) = run_images(&images, Format::Text, &PmuTypes::none(), None);
    let header = trace_header();
    let scratch = ScratchFile::new("stalled");
    let file = scratch.create();
    let mut sink = Stalled {
        trace: &scratch,
        complete_before_first_call: None,
        calls: 0,
    };
    let summary = pipeline::run_to_trace(
        consumers(&images),
        follow(1),
        Assembler::new(&header.cpus, header.window_ns, &mut sink),
        &file,
        &header,
    )
    .unwrap();
    assert_eq!(sink.complete_before_first_call, Some(true));
    assert_eq!(sink.calls, 19);
    assert_eq!(summary, once);
    let trace = read_trace(&std::fs::read(&scratch.0).unwrap()).unwrap();
    assert!(trace.complete && trace.truncated_at.is_none());
    assert_eq!(replayed(trace.msgs), once);
}

/// The summary of a trace's messages replayed.
fn replayed(msgs: Vec<pipeline::DrainMsg>) -> pipeline::Summary {
    let header = trace_header();
    let mut sink = WriterSink::new(io::sink(), Format::Text, PmuTypes::none(), false);
    pipeline::replay(
        msgs,
        Assembler::new(&header.cpus, header.window_ns, &mut sink),
    )
    .unwrap()
}

/// A sink whose reader went away: `reader -w T | head -n 0`.
struct Closed;

impl Sink for Closed {
    fn call(&mut self, _: &Call) -> io::Result<()> {
        Err(io::ErrorKind::BrokenPipe.into())
    }
    fn lost(&mut self, _: &LostRecord) -> io::Result<()> {
        Err(io::ErrorKind::BrokenPipe.into())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A waker that ticks every millisecond for as long as nothing stops the
/// run, counting its ticks; it gives up after `limit`.
struct Ticking {
    ticks: Arc<AtomicU32>,
    limit: u32,
}

impl Waker for Ticking {
    fn wait(&mut self) -> Tick {
        std::thread::sleep(Duration::from_millis(1));
        if self.ticks.fetch_add(1, Ordering::Relaxed) >= self.limit {
            Tick::Stop
        } else {
            Tick::Drain
        }
    }
}

#[test]
fn a_closed_output_ends_the_printing_and_the_trace_still_completes() {
    let images = scenario_images();
    let header = trace_header();
    let scratch = ScratchFile::new("closed");
    let file = scratch.create();
    let ticks = Arc::new(AtomicU32::new(0));
    let limit = 20_000;
    let summary = pipeline::run_to_trace(
        consumers(&images),
        Mode::Follow {
            waker: Box::new(Ticking {
                ticks: Arc::clone(&ticks),
                limit,
            }),
            queue_bytes: pipeline::DEFAULT_QUEUE_BYTES,
            threads_started: None,
        },
        Assembler::new(&header.cpus, header.window_ns, &mut Closed),
        &file,
        &header,
    )
    .unwrap();
    assert!(summary.broken_pipe);
    // The closed output stopped the drain, not the waker's own limit.
    assert!(
        ticks.load(Ordering::Relaxed) < limit,
        "the drain was not stopped"
    );
    let trace = read_trace(&std::fs::read(&scratch.0).unwrap()).unwrap();
    assert!(trace.complete, "no END after the output closed");
    // Every ring's records and its DONE are in the file.
    let (_, whole) = show_images(&images, Format::Text, &PmuTypes::none());
    assert_eq!(replayed(trace.msgs), whole);
}

#[test]
fn a_trace_that_cannot_be_written_fails_the_run_and_says_so() {
    let images = scenario_images();
    let header = trace_header();
    // Every write to /dev/full fails with ENOSPC.
    let full = File::options()
        .read(true)
        .write(true)
        .open("/dev/full")
        .unwrap();
    let mut sink = Closed;
    let err = pipeline::run_to_trace(
        consumers(&images),
        follow(pipeline::DEFAULT_QUEUE_BYTES),
        Assembler::new(&header.cpus, header.window_ns, &mut sink),
        &full,
        &header,
    )
    .unwrap_err();
    assert!(
        err.to_string().starts_with("writing the trace file: "),
        "{err}"
    );
    assert!(err.to_string().contains("(os error 28)"), "{err}");
}
