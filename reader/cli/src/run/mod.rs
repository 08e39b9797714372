// SPDX-License-Identifier: GPL-2.0-only
//! `reader [OPTIONS] -- COMMAND [ARGS...]`: runs COMMAND and captures the
//! calls of COMMAND and of every process and thread it starts, nothing
//! else, until COMMAND exits (strace's habit).
//!
//! No pid is followed in user space: COMMAND runs in a cgroup v2
//! directory of its own (`cgroup`), and the capture is limited to that
//! cgroup (`Device::set_scope`, `ANTINOMIE_SCOPE_F_CAPTURE`): every fork,
//! clone and exec stays in it by construction, and nothing races COMMAND.
//! Step by step:
//!
//! 1. SIGINT and SIGQUIT ignored, SIGTERM and SIGHUP held (`process`);
//! 2. the cgroup made (or `--cgroup DIR` checked), the device opened;
//!    either failing ends the run before COMMAND is forked;
//! 3. the child forked, held before exec (`child`), SIGTERM and SIGHUP
//!    passed on to it from then on;
//! 4. the child put in the cgroup, the capture limited to it, lossless
//!    mode switched on when the reader may (`--lossy`: never), capture
//!    enabled;
//! 5. the rings mapped, what they hold left unread, the drain started,
//!    and then the child released: it execs COMMAND;
//! 6. COMMAND's exit makes its pidfd (the waker's stop fd) readable: the
//!    rings are drained once more and the run ends, as SIGINT ends a
//!    `--follow` run; the device is closed, which switches off what the
//!    reader switched on through it (capture, lossless mode, the scope);
//! 7. COMMAND reaped, the cgroup made for it emptied (what COMMAND left
//!    running moved to the reader's own cgroup, with a warning) and
//!    removed.
//!
//! The exit status follows from how COMMAND ended and whether the capture
//! is whole ([`exit_status`]).

mod attach;
mod cgroup;
mod child;

use std::cell::Cell;
use std::rc::Rc;

use anyhow::{Context, Result};
use rustix::process::PidfdFlags;

use antinomie_reader::device::Device;
use antinomie_reader::filter::Filter;
use antinomie_reader::pipeline::Summary;
use antinomie_reader::Error;

use crate::args::{CommonArgs, LiveArgs};
use crate::exit::CANNOT_TEST;
use crate::live::{self, Follow};
use crate::process::{CommandSignals, Forwarding};

pub(crate) use attach::attach;
use cgroup::WorkCgroup;
use child::Child;
pub(crate) use child::Ended;

/// A run of COMMAND.
#[derive(Debug)]
pub(crate) struct Ran {
    /// What the capture summed up; `None` when it failed once COMMAND ran
    /// (reported then).
    pub(crate) summary: Option<Summary>,
    /// How COMMAND ended.
    pub(crate) ended: Ended,
}

/// Runs `args.run` under capture. An error before COMMAND was released
/// (no cgroup, no device, ...) is returned; one after it is reported at
/// once, and the reader waits for COMMAND to exit (it is the user's, the
/// reader does not kill it) with the capture stopped.
pub(crate) fn run(args: &LiveArgs, common: &CommonArgs, filter: Option<Filter>) -> Result<Ran> {
    let signals = CommandSignals::hold()?;
    // Dropped in the reverse order: the child is reaped before the cgroup
    // goes, and signals are passed on to it only until it is reaped.
    let cgroup = match &args.cgroup {
        Some(dir) => WorkCgroup::given(dir)?,
        None => WorkCgroup::make(&args.proc)?,
    };
    let mut dev = Device::open(&args.device)?;
    let mut child = Child::fork_held(&args.run, signals.inherited())?;
    let forwarding = Forwarding::start(child.pid())?;
    let pid = child.pid();
    cgroup.add(pid)?;
    cgroup.limit_capture(&mut dev)?;
    tracing::info!(
        "COMMAND is pid {pid}, in the cgroup {}",
        cgroup.dir().display()
    );
    lossless_unless_lossy(&mut dev, args)?;
    dev.enable()?;
    let stop = rustix::process::pidfd_open(pid, PidfdFlags::empty())
        .context("opening a pidfd of COMMAND")?;
    let release = child.release().context("COMMAND released twice")?;
    let released = Rc::new(Cell::new(false));
    let started = {
        let released = Rc::clone(&released);
        Box::new(move || {
            released.set(true);
            if let Err(e) = release.go() {
                tracing::warn!("could not release COMMAND (pid {pid}): {e}");
            }
        })
    };
    let follow = Follow {
        stop,
        started: Some(started),
        skip_unread: true,
    };
    let summary = match live::capture(dev, args, common, filter, Some(follow)) {
        Ok(summary) => Some(summary),
        Err(e) if !released.get() => return Err(e),
        Err(e) => {
            report!("reader: error: {e:#}");
            report!("reader: the capture stopped; waiting for COMMAND (pid {pid}) to exit");
            None
        }
    };
    child.wait_exit()?;
    drop(forwarding);
    let ended = child.reap()?;
    drop(cgroup);
    Ok(Ran { summary, ended })
}

/// Lossless mode for the traced tasks of a COMMAND or `-p`, unless
/// `--lossy`: tried, and left off with a warning without `CAP_SYS_ADMIN`
/// unless `--lossless` asked for it.
fn lossless_unless_lossy(dev: &mut Device, args: &LiveArgs) -> Result<()> {
    if args.lossy {
        return Ok(());
    }
    match dev.set_lossless(true) {
        Ok(()) => tracing::info!("lossless mode on"),
        Err(Error::Io { source, .. })
            if !args.lossless && source.raw_os_error() == Some(libc::EPERM) =>
        {
            tracing::warn!(
                "lossless mode needs CAP_SYS_ADMIN: capturing without it, so records that do \
                 not fit their ring are lost and counted (--lossy: without this warning)"
            );
        }
        Err(e) => return Err(e.into()),
    }
    Ok(())
}

/// What `reader -- COMMAND` exits with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// This status.
    Status(u8),
    /// Killed by this signal, as COMMAND was.
    Signal(i32),
}

/// The exit status of a run whose COMMAND ended as `ended`, `whole` if
/// the capture lost no record and found none corrupt: 127 COMMAND not
/// found, 126 not executable (as shells say; nothing of it was captured,
/// so loss does not matter); else [`CANNOT_TEST`] if the capture is not
/// whole, whatever COMMAND's status; else COMMAND's status, or its
/// signal. (The reader's own failure is [`CANNOT_TEST`] too.)
pub(crate) fn exit_status(ended: Ended, whole: bool) -> Exit {
    match ended {
        Ended::NotRun(libc::ENOENT) => Exit::Status(127),
        Ended::NotRun(_) => Exit::Status(126),
        _ if !whole => Exit::Status(CANNOT_TEST),
        Ended::Exited(code) => Exit::Status(code),
        Ended::Killed(sig) => Exit::Signal(sig),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_statuses() {
        use Ended::{Exited, Killed, NotRun};
        use Exit::{Signal, Status};
        for whole in [true, false] {
            assert_eq!(exit_status(NotRun(libc::ENOENT), whole), Status(127));
            assert_eq!(exit_status(NotRun(libc::EACCES), whole), Status(126));
            assert_eq!(exit_status(NotRun(libc::ENOEXEC), whole), Status(126));
        }
        assert_eq!(exit_status(Exited(0), true), Status(0));
        assert_eq!(exit_status(Exited(3), true), Status(3));
        assert_eq!(exit_status(Exited(CANNOT_TEST), true), Status(CANNOT_TEST));
        assert_eq!(
            exit_status(Killed(libc::SIGSEGV), true),
            Signal(libc::SIGSEGV)
        );
        // Records lost or corrupt: the capture cannot answer, whatever
        // COMMAND did.
        assert_eq!(exit_status(Exited(0), false), Status(CANNOT_TEST));
        assert_eq!(exit_status(Exited(1), false), Status(CANNOT_TEST));
        assert_eq!(
            exit_status(Killed(libc::SIGINT), false),
            Status(CANNOT_TEST)
        );
    }
}
