// SPDX-License-Identifier: GPL-2.0-only
//! The live reader (`reader`, `reader --follow`; `run` sets the device up
//! for a COMMAND and runs the same capture), `reader dump-rings`, and the
//! line sink every command that prints calls shares, with the table of
//! `-c` and `-C`.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use antinomie_abi as abi;
use antinomie_reader::decode::PmuTypes;
use antinomie_reader::device::Device;
use antinomie_reader::filter::Filter;
use antinomie_reader::output::WriterSink;
use antinomie_reader::pipeline::{self, Assembler, CountingSink, Counts, Mode, Sink, Summary};
use antinomie_reader::ring::{RingConsumer, RingMemory};
use antinomie_reader::trace::{TraceHeader, TraceWriter};

use crate::args::{CommonArgs, Counting, LiveArgs};
use crate::process;

/// The text or JSON lines' sink.
pub(crate) type LineSink = WriterSink<BufWriter<Box<dyn Write>>>;

/// The sink of the text or JSON lines: stdout, or the `-o` file.
/// `realtime_offset_ns` (`CLOCK_REALTIME` − `CLOCK_MONOTONIC`) is what
/// `-t`, `-tt` and `-ttt` need.
pub(crate) fn line_sink(
    common: &CommonArgs,
    pmus: PmuTypes,
    follow: bool,
    realtime_offset_ns: Option<i64>,
) -> Result<LineSink> {
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

/// Runs `run` with the sink the calls go to: `sink`, or with -c a
/// [`Counts`] instead, with -C both; then writes -c's or -C's table to
/// `sink`'s output, after the calls, unless the output was closed.
pub(crate) fn with_counts(
    common: &CommonArgs,
    mut sink: LineSink,
    run: impl FnOnce(&mut dyn Sink) -> Result<Summary>,
) -> Result<Summary> {
    let mut counts = Counts::default();
    let summary = match common.counting() {
        None => return run(&mut sink),
        Some(Counting::Only) => run(&mut counts)?,
        Some(Counting::Also) => run(&mut CountingSink::new(&mut counts, &mut sink))?,
    };
    if !summary.broken_pipe {
        let mut out = sink.into_inner();
        match out
            .write_all(counts.to_text().as_bytes())
            .and_then(|()| out.flush())
        {
            Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
                return Err(e).context("writing the table of -c");
            }
            _ => {}
        }
    }
    Ok(summary)
}

/// `CLOCK_REALTIME` − `CLOCK_MONOTONIC` now, in ns: turns record times
/// into wall-clock times.
pub(crate) fn realtime_offset_ns() -> i64 {
    let ns = |t: rustix::time::Timespec| t.tv_sec * 1_000_000_000 + t.tv_nsec;
    let mono = ns(rustix::time::clock_gettime(
        rustix::time::ClockId::Monotonic,
    ));
    let real = ns(rustix::time::clock_gettime(rustix::time::ClockId::Realtime));
    real - mono
}

pub(crate) fn live(
    args: &LiveArgs,
    common: &CommonArgs,
    filter: Option<Filter>,
) -> Result<Summary> {
    if args.ready_fd.is_some() && !args.follow {
        bail!("--ready-fd goes with --follow or -p: a drain without them is over at once");
    }
    let ready = args.ready_fd.map(process::ready_notifier).transpose()?;
    let mut dev = Device::open(&args.device)?;
    if let Some(dir) = &args.cgroup {
        let cgroup = File::open(dir).with_context(|| format!("opening {}", dir.display()))?;
        dev.set_scope(cgroup.as_fd())
            .with_context(|| format!("limiting capture to the cgroup {}", dir.display()))?;
        tracing::info!("capturing only the calls of cgroup {}", dir.display());
    }
    if args.lossless {
        dev.set_lossless(true)?;
        tracing::info!("lossless mode on");
    }
    if args.enable && !dev.enabled() {
        dev.enable()?;
        tracing::info!("capture enabled");
    } else if !dev.enabled() {
        tracing::warn!("capture is off: showing what the rings hold (--enable switches it on)");
    }
    let follow = if args.follow {
        Some(Follow {
            stop: process::stop_on_signals(process::STOP_FOLLOW)?,
            started: ready,
            skip_unread: false,
        })
    } else {
        None
    };
    capture(dev, args, common, filter, follow)
}

/// How a followed run goes: what ends it, and what it does first.
pub(crate) struct Follow {
    /// The waker's stop fd: once it polls readable, the rings are drained
    /// once more and the run ends (SIGINT or SIGTERM's pipe, COMMAND's
    /// pidfd).
    pub(crate) stop: OwnedFd,
    /// Called once the drain thread runs, after the printing thread's
    /// priority is lowered (COMMAND's release).
    pub(crate) started: Option<Box<dyn FnOnce()>>,
    /// Leave the records the rings hold unread, as from before the run:
    /// for a COMMAND, which has made no call yet (they count as not
    /// consumed in this run).
    pub(crate) skip_unread: bool,
}

/// Maps the rings of `dev`, set up by the caller, and runs the pipeline
/// into the `-o` sink and the `-w` trace: once, or followed until
/// `follow`'s stop fd says stop. The device is released at the end, and
/// with it what the caller switched on through it.
pub(crate) fn capture(
    mut dev: Device,
    args: &LiveArgs,
    common: &CommonArgs,
    filter: Option<Filter>,
    follow: Option<Follow>,
) -> Result<Summary> {
    let mapped = dev.map_rings(&args.sysfs)?;
    let cpus: Vec<u32> = mapped.iter().map(RingMemory::cpu).collect();
    let mut rings: Vec<_> = mapped.into_iter().map(RingConsumer::new).collect();
    if follow.as_ref().is_some_and(|f| f.skip_unread) {
        let skipped: u64 = rings.iter_mut().map(RingConsumer::skip_unread).sum();
        tracing::info!("left {skipped} bytes of records from before the run unread");
    }
    let pmus = PmuTypes::from_sysfs(&args.sysfs);
    let window_ns = args.reorder_window_ms.saturating_mul(1_000_000);
    let realtime_offset_ns = realtime_offset_ns();
    let trace = args.write.as_deref().map(open_trace).transpose()?;
    let header = TraceHeader {
        abi_version: abi::ABI_VERSION,
        window_ns,
        cpus: cpus.clone(),
        pmus: pmus.clone(),
        realtime_offset_ns: Some(realtime_offset_ns),
    };
    let following = follow.is_some();
    let mode = match follow {
        Some(Follow { stop, started, .. }) => {
            let bytes = dev.follow_watermark(args.wake_bytes);
            dev.set_watermark(bytes)?;
            tracing::info!("poll() watermark: {bytes} bytes");
            let print_nice = args.print_nice;
            let own_nice = process::own_nice();
            Mode::Follow {
                waker: Box::new(dev.waker(Duration::from_millis(args.poll_timeout_ms), stop)?),
                queue_bytes: args.queue_bytes,
                threads_started: Some(Box::new(move || {
                    process::lower_own_priority(own_nice, print_nice);
                    if let Some(started) = started {
                        started();
                    }
                })),
            }
        }
        None => Mode::Once,
    };
    let sink = line_sink(common, pmus.clone(), following, Some(realtime_offset_ns))?;
    if following {
        // Threads inherit their creator's nice value: set just before the
        // drain thread and the spool are spawned, and put back for this
        // thread, which prints, once they run (threads_started).
        if let Some(nice) = args.drain_nice {
            process::set_own_nice_for_drain(nice);
        }
    }
    let summary = with_counts(common, sink, |sink| {
        let mut assembler = Assembler::new(&cpus, window_ns, sink);
        if let Some(f) = filter {
            assembler.set_filter(Box::new(f.with_pmus(pmus)));
        }
        match trace {
            Some(TraceFile::Spooled(file)) => {
                pipeline::run_to_trace(rings, mode, assembler, &file, &header)
            }
            Some(TraceFile::Streamed(out)) => {
                let mut w = TraceWriter::new(BufWriter::new(out), &header)?;
                let summary = pipeline::run(rings, mode, assembler, Some(&mut w))?;
                w.finish()?;
                Ok(summary)
            }
            None => pipeline::run(rings, mode, assembler, None),
        }
        .context("writing the output")
    })?;
    Ok(summary)
}

/// Where `-w` writes.
enum TraceFile {
    /// A regular file, created empty for reading and writing: a spool
    /// thread writes it as the rings are drained and the printing reads
    /// it back ([`pipeline::run_to_trace`]).
    Spooled(File),
    /// Anything else (a pipe, a FIFO, a terminal, `/dev/null`), which
    /// cannot be read back: the printing thread writes it as it decodes.
    Streamed(File),
}

fn open_trace(path: &Path) -> Result<TraceFile> {
    let creating = || format!("creating {}", path.display());
    match std::fs::metadata(path) {
        Ok(m) if !m.file_type().is_file() => Ok(TraceFile::Streamed(
            File::create(path).with_context(creating)?,
        )),
        _ => Ok(TraceFile::Spooled(
            File::options()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(path)
                .with_context(creating)?,
        )),
    }
}

pub(crate) fn dump_rings(dir: &Path, device: &Path, sysfs: &Path) -> Result<()> {
    let dev = Device::open(device)?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let rings = dev.map_rings(sysfs)?;
    for ring in rings {
        let cpu = ring.cpu();
        let path = dir.join(format!("cpu{cpu}.ring"));
        let mut f = File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        f.write_all(&ring.snapshot())
            .with_context(|| format!("writing {}", path.display()))?;
        println!("{}", path.display());
    }
    Ok(())
}
