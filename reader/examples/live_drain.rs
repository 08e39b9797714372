// SPDX-License-Identifier: GPL-2.0-only
//! Drains the per-CPU rings of `/dev/antinomie` and prints each captured
//! `perf_event_open` call as a strace-like line, then the run's summary
//! (per CPU: produced, consumed, lost) on stderr. Needs the patched
//! kernel and `CAP_PERFMON` (or root).
//!
//! ```sh
//! cargo run -p antinomie-reader --example live_drain            # what the rings hold, once
//! cargo run -p antinomie-reader --example live_drain -- 10      # follow for 10 seconds
//! ```
//!
//! Capture is left as it is: switch it on with `reader --enable` (or
//! `ANTINOMIE_IOC_ENABLE`) first. Every possible CPU has its ring from
//! the start, online or not, so mapping the rings once covers a CPU that
//! comes online during the run.

use std::error::Error;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use antinomie_reader::decode::PmuTypes;
use antinomie_reader::device::Device;
use antinomie_reader::output::{Format, WriterSink};
use antinomie_reader::pipeline::{self, Assembler, Mode};
use antinomie_reader::ring::RingConsumer;
use rustix::time::{
    timerfd_create, timerfd_settime, Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags,
    Timespec,
};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("live_drain: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let seconds: Option<u64> = match std::env::args().nth(1) {
        Some(s) => Some(s.parse().map_err(|e| format!("{s}: not seconds: {e}"))?),
        None => None,
    };
    let sysfs = Path::new("/sys");
    let mut dev = Device::open(Path::new("/dev/antinomie"))?;
    if !dev.enabled() {
        eprintln!("capture is off: showing what the rings hold");
    }
    let rings: Vec<_> = dev
        .map_rings(sysfs)?
        .into_iter()
        .map(RingConsumer::new)
        .collect();
    let cpus: Vec<u32> = rings.iter().map(RingConsumer::cpu).collect();
    let mode = match seconds {
        None => Mode::Once,
        // The waker sleeps in poll() on the device and wakes the drain
        // threads; once the stop fd is readable (here a timer; `reader`
        // uses a signal pipe) every ring is drained once more and the
        // run ends.
        // The device wakes poll() once a ring holds a batch (the
        // watermark `reader --follow` uses; restored when `dev` is
        // dropped).
        Some(s) => {
            dev.set_watermark(dev.follow_watermark(0))?;
            Mode::Follow {
                waker: Box::new(dev.waker(Duration::from_millis(100), timer(s)?)?),
                queue_bytes: pipeline::DEFAULT_QUEUE_BYTES,
                threads_started: None,
            }
        }
    };
    let pmus = PmuTypes::from_sysfs(sysfs);
    let mut sink = WriterSink::new(io::stdout().lock(), Format::Text, pmus, seconds.is_some());
    let assembler = Assembler::new(&cpus, pipeline::DEFAULT_WINDOW_NS, &mut sink);
    let summary = pipeline::run(rings, mode, assembler, None)?;
    eprint!("{}", summary.to_text());
    Ok(())
}

/// A timer fd that becomes readable `seconds` from now.
fn timer(seconds: u64) -> io::Result<OwnedFd> {
    let fd = timerfd_create(TimerfdClockId::Monotonic, TimerfdFlags::CLOEXEC)?;
    let at = Itimerspec {
        it_interval: Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        it_value: Timespec {
            tv_sec: i64::try_from(seconds).unwrap_or(i64::MAX),
            tv_nsec: 0,
        },
    };
    timerfd_settime(&fd, TimerfdTimerFlags::empty(), &at)?;
    Ok(fd)
}
