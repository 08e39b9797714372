//! What the `reader` process does to itself: the signals that end a
//! `--follow` run, and the priority of the thread that prints.

use std::os::fd::OwnedFd;

use anyhow::{Context, Result};
use rustix::pipe::PipeFlags;

/// Default of `--print-nice`: the thread that merges, pairs and prints runs
/// at nice +10 from the drain threads, which then weigh about 9 times as
/// much on a busy CPU (the scheduler's weights for nice 0 and 10 are 1024
/// and 110).
pub(crate) const DEFAULT_PRINT_NICE: i32 = 10;

/// The read end of a pipe that SIGINT and SIGTERM write to from now on:
/// the stop fd of the device's waker, so that either signal drains the
/// rings once more and ends the run instead of killing the process.
pub(crate) fn stop_on_signals() -> Result<OwnedFd> {
    // A plain pipe, not a socket pair: a minimal kernel (the test guest)
    // may have no AF_UNIX. Non-blocking, so the signal handler's write
    // can never block.
    let (read, write) = rustix::pipe::pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK)
        .context("creating the signal pipe")?;
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let write = write.try_clone().context("creating the signal pipe")?;
        signal_hook::low_level::pipe::register(sig, write)
            .context("installing the signal handlers")?;
    }
    Ok(read)
}

/// Raises the calling thread's nice value by `delta` (capped at 19).
///
/// A full ring drops records, a full queue only makes the drain threads
/// wait: so when the CPU is short (a busy machine, or a guest under
/// single-threaded emulation), draining must win it over decoding and
/// printing, which the queue lets fall behind and catch up. Linux keeps a
/// nice value per thread, so called once the drain threads and the waker
/// run, this leaves them as they were. Raising it needs no privilege;
/// failing to is not fatal.
pub(crate) fn lower_own_priority(delta: i32) {
    if delta <= 0 {
        return;
    }
    let me = Some(rustix::thread::gettid());
    let result = rustix::process::getpriority_process(me).and_then(|now| {
        let lowered = now.saturating_add(delta).min(19);
        rustix::process::setpriority_process(me, lowered).map(|()| (now, lowered))
    });
    match result {
        Ok((now, lowered)) => {
            tracing::info!("merging and printing at nice {lowered}, the drain threads at {now}");
        }
        Err(e) => tracing::warn!("could not lower the printing thread's priority: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::lower_own_priority;

    #[test]
    fn lowering_the_priority_moves_this_thread_only() {
        // On threads of their own: a nice value cannot be lowered back
        // without privilege.
        std::thread::spawn(|| {
            let me = Some(rustix::thread::gettid());
            let before = rustix::process::getpriority_process(me).unwrap();
            let (tx, rx) = std::sync::mpsc::channel();
            let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
            let other = std::thread::spawn(move || {
                go_rx.recv().unwrap();
                let other = Some(rustix::thread::gettid());
                tx.send(rustix::process::getpriority_process(other).unwrap())
                    .unwrap();
            });
            lower_own_priority(3);
            go_tx.send(()).unwrap();
            other.join().unwrap();
            let after = rustix::process::getpriority_process(me).unwrap();
            assert_eq!(after, (before + 3).min(19), "this thread");
            assert_eq!(rx.recv().unwrap(), before, "a thread spawned before");
            lower_own_priority(30);
            let capped = rustix::process::getpriority_process(me).unwrap();
            assert_eq!(capped, 19, "capped at 19");
        })
        .join()
        .unwrap();
    }
}
