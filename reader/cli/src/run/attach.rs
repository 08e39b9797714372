// SPDX-License-Identifier: GPL-2.0-only
//! `reader -p PID`: attaches to running processes, as `strace -p` does.
//!
//! As for a COMMAND, the capture is limited to a cgroup, not to pids
//! followed in user space: the processes move (with all their threads)
//! into a cgroup made below their own (`WorkCgroup::below_cgroup_of`),
//! whose limits still apply to them there, and what they start from then
//! on is born in it. Processes they started before are not captured. The
//! run ends when every one of them has exited, or on SIGINT, SIGTERM,
//! SIGHUP or SIGQUIT (the reader detaches); they and whatever they started meanwhile
//! then move back to their cgroup, and the one made for them goes.

use std::cell::Cell;
use std::os::fd::OwnedFd;
use std::rc::Rc;

use anyhow::{bail, Context, Result};
use rustix::event::{poll, PollFd, PollFlags};
use rustix::pipe::PipeFlags;
use rustix::process::{Pid, PidfdFlags};

use antinomie_reader::device::Device;
use antinomie_reader::filter::Filter;
use antinomie_reader::pipeline::Summary;

use super::cgroup::WorkCgroup;
use super::lossless_unless_lossy;
use crate::args::{CommonArgs, LiveArgs};
use crate::live::{self, Follow};
use crate::process;

/// Attaches to `args.attach` and captures until they exit or a signal
/// detaches; they are back in their cgroup when this returns.
///
/// The capture is on, limited to the cgroup made for them, before they
/// move into it, and they move only once the rings are mapped and the
/// drain runs (as a COMMAND is released then): every call they make from
/// the move on is read, and nothing before it.
pub(crate) fn attach(
    args: &LiveArgs,
    common: &CommonArgs,
    filter: Option<Filter>,
) -> Result<Summary> {
    let own = std::process::id();
    if args.attach.contains(&own) {
        bail!("-p {own} is the reader itself");
    }
    // Pidfds first: a pid that names no process is refused before
    // anything moves, and a pid reused later is not taken for them.
    let mut pids = Vec::new();
    let mut pidfds = Vec::new();
    for &raw in &args.attach {
        let pid = i32::try_from(raw)
            .ok()
            .and_then(Pid::from_raw)
            .with_context(|| format!("-p {raw} is not a pid"))?;
        let pidfd = rustix::process::pidfd_open(pid, PidfdFlags::empty())
            .with_context(|| format!("no process {raw} to attach to"))?;
        refuse_kernel_thread(&args.proc, raw)?;
        pids.push(pid);
        pidfds.push(pidfd);
    }
    // The signals that detach, before there is anything to undo.
    let alive: Vec<OwnedFd> = pidfds
        .iter()
        .map(OwnedFd::try_clone)
        .collect::<Result<_, _>>()
        .context("duplicating a pidfd")?;
    let (stop, give_up) = stop_when_gone(pidfds)?;
    let ready = args.ready_fd.map(process::ready_notifier).transpose()?;
    let cgroup = Rc::new(WorkCgroup::below_cgroup_of(&args.proc, &args.attach)?);
    let mut dev = Device::open(&args.device)?;
    cgroup.limit_capture(&mut dev)?;
    lossless_unless_lossy(&mut dev, args)?;
    dev.enable()?;
    let failed = Rc::new(Cell::new(None));
    let started = {
        let (cgroup, failed) = (Rc::clone(&cgroup), Rc::clone(&failed));
        Box::new(move || {
            for (pid, pidfd) in pids.into_iter().zip(&alive) {
                // Its pidfd readable: it has exited, and its pid may name
                // another process by now.
                if exited(pidfd) {
                    tracing::warn!("process {pid} exited before the reader attached to it");
                    continue;
                }
                match cgroup.add(pid) {
                    Ok(()) => tracing::info!("attached to {pid}"),
                    // Exited meanwhile: its pidfd counts it as gone.
                    Err(e) if is_esrch(&e) => {
                        tracing::warn!("process {pid} exited before the reader attached to it");
                    }
                    Err(e) => {
                        failed.set(Some(e));
                        // Ends the run: the write end is the stop pipe's.
                        let _ = rustix::io::write(&give_up, b"x");
                        return;
                    }
                }
            }
            if let Some(ready) = ready {
                ready();
            }
        })
    };
    let follow = Follow {
        stop,
        started: Some(started),
        skip_unread: true,
    };
    let summary = live::capture(dev, args, common, filter, Some(follow));
    // The processes go back to their cgroup whether the capture succeeded
    // or not: the cgroup is dropped here, its last owner.
    drop(cgroup);
    if let Some(e) = failed.take() {
        return Err(e);
    }
    summary
}

/// Whether the process of `pidfd` has exited (its pidfd polls readable).
fn exited(pidfd: &OwnedFd) -> bool {
    let mut fds = [PollFd::new(pidfd, PollFlags::IN)];
    matches!(poll(&mut fds, Some(&rustix::time::Timespec { tv_sec: 0, tv_nsec: 0 })), Ok(n) if n > 0)
}

/// Kernel threads are not the reader's to move (`PF_KTHREAD` in the
/// flags, the ninth field of `PROC/PID/stat`): most refuse it, some
/// (kswapd) would go.
fn refuse_kernel_thread(proc: &std::path::Path, pid: u32) -> Result<()> {
    const PF_KTHREAD: u64 = 0x0020_0000;
    let path = proc.join(pid.to_string()).join("stat");
    let stat =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    // After the command name, which may hold spaces and parentheses.
    let flags = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(6))
        .and_then(|f| f.parse::<u64>().ok())
        .with_context(|| format!("no flags in {}", path.display()))?;
    if flags & PF_KTHREAD != 0 {
        bail!("process {pid} is a kernel thread: there is nothing to attach to");
    }
    Ok(())
}

fn is_esrch(e: &anyhow::Error) -> bool {
    e.downcast_ref::<std::io::Error>()
        .and_then(std::io::Error::raw_os_error)
        == Some(libc::ESRCH)
}

/// The stop fd of an attached run: readable once every process of
/// `pidfds` has exited, or a signal of [`process::STOP_ATTACH`] came, or
/// a byte is written to the second fd returned. A thread waits for them,
/// as the waker takes one fd.
fn stop_when_gone(pidfds: Vec<OwnedFd>) -> Result<(OwnedFd, OwnedFd)> {
    let signals = process::stop_on_signals(process::STOP_ATTACH)?;
    let (read, write) =
        rustix::pipe::pipe_with(PipeFlags::CLOEXEC).context("creating the stop pipe")?;
    let give_up = write.try_clone().context("creating the stop pipe")?;
    std::thread::Builder::new()
        .name("attach-stop".into())
        .spawn(move || {
            let mut running = pidfds;
            loop {
                let mut fds: Vec<PollFd> = std::iter::once(&signals)
                    .chain(&running)
                    .map(|fd| PollFd::new(fd, PollFlags::IN))
                    .collect();
                match poll(&mut fds, None) {
                    // A signal; its byte, if it is one of ours, is in the pipe.
                    Err(rustix::io::Errno::INTR) => continue,
                    Err(e) => {
                        tracing::warn!("waiting for the attached processes: {e}; detaching");
                        break;
                    }
                    Ok(_) => {}
                }
                let ready: Vec<bool> = fds.iter().map(|f| !f.revents().is_empty()).collect();
                drop(fds);
                if ready[0] {
                    tracing::info!("detaching (signal)");
                    break;
                }
                let mut ready = ready[1..].iter();
                running.retain(|_| !ready.next().copied().unwrap_or(false));
                if running.is_empty() {
                    tracing::info!("every attached process has exited");
                    break;
                }
            }
            // The waker reads "readable"; a failed write leaves the run to
            // end with the reader, which it cannot do otherwise.
            let _ = rustix::io::write(&write, b"x");
        })
        .context("starting the thread that waits for the attached processes")?;
    Ok((read, give_up))
}
