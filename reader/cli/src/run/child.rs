// SPDX-License-Identifier: GPL-2.0-only
//! COMMAND's process: forked and held until the capture runs, then
//! exec'd; waited for without reaping anything else.
//!
//! `std::process::Command::spawn` cannot be used: it returns once the
//! child has exec'd, and COMMAND must not run before it is in its cgroup
//! (which needs its pid) and the capture is on. So the reader forks, and
//! the child waits, blocked reading a pipe, until the reader writes one
//! byte ([`Release::go`]) or closes the pipe (the child then exits without
//! running COMMAND). An exec that fails sends its errno back over a second
//! pipe, which a successful exec closes (both are close-on-exec).
//!
//! The child does only what is async-signal-safe between fork and exec
//! (sigaction, sigprocmask, read, write, close, execvp, _exit), and
//! allocates nothing: the argument vector is made before the fork. So the
//! fork is sound even in a process with threads (the tests have them); the
//! reader forks before it starts any, so that nothing of another thread
//! is half-done in the copy either.

use std::ffi::{c_char, CString, OsString};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

use anyhow::{Context, Result};
use rustix::pipe::PipeFlags;
use rustix::process::{Pid, WaitId, WaitIdOptions, WaitOptions};

use crate::process::Inherited;

/// How COMMAND ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// It could not be exec'd: the errno of `execvp()`.
    NotRun(i32),
    /// It exited with this status.
    Exited(u8),
    /// A signal killed it.
    Killed(i32),
}

/// The status of a child the reader gave up on before releasing it (it
/// never ran COMMAND, and nothing reads this status).
const NOT_RELEASED: i32 = 125;

/// COMMAND's process, forked and held.
#[derive(Debug)]
pub(crate) struct Child {
    pid: Pid,
    /// The write end of the pipe the child waits on.
    go: Option<OwnedFd>,
    /// The read end of the pipe an exec failure is reported on.
    exec_error: OwnedFd,
    reaped: bool,
}

/// What releases the held child: its pipe's write end.
#[derive(Debug)]
pub(crate) struct Release(OwnedFd);

impl Release {
    /// Lets the child exec COMMAND.
    pub(crate) fn go(self) -> io::Result<()> {
        rustix::io::write(&self.0, b"g")?;
        Ok(())
    }
}

impl Child {
    /// Forks the child that will run `argv` (`argv[0]` found in `PATH` as
    /// `execvp()` does) with the signal state `signals`, once released.
    pub(crate) fn fork_held(argv: &[OsString], signals: &Inherited) -> Result<Child> {
        let strings: Vec<CString> = argv
            .iter()
            .map(|a| CString::new(a.as_bytes()))
            .collect::<Result<_, _>>()
            .context("COMMAND's arguments")?;
        let mut ptrs: Vec<*const c_char> = strings.iter().map(|a| a.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        let (go_read, go_write) =
            rustix::pipe::pipe_with(PipeFlags::CLOEXEC).context("creating COMMAND's pipes")?;
        let (error_read, error_write) =
            rustix::pipe::pipe_with(PipeFlags::CLOEXEC).context("creating COMMAND's pipes")?;
        // Read once the child is reaped, when what it wrote is there: a
        // copy of the write end another fork may hold must not block it.
        rustix::io::ioctl_fionbio(&error_read, true).context("creating COMMAND's pipes")?;
        // SAFETY: in the child, `held` does only async-signal-safe calls
        // on memory made before the fork (`ptrs` and the `strings` it
        // points to, `signals`), which the child's copy of the address
        // space holds unchanged, and never returns: it execs or _exits, so
        // no destructor, atexit handler or stdio buffer of the parent's
        // runs in the child. (POSIX does not list execvp(), for its PATH
        // search; glibc's and musl's search with buffers on the stack,
        // taking no lock and allocating nothing, which
        // `std::process::Command` relies on as well.) The parent goes on
        // as before.
        match unsafe { libc::fork() } {
            -1 => Err(io::Error::last_os_error()).context("forking COMMAND"),
            0 => unsafe {
                // SAFETY: see the fork above; the fds are the child's
                // copies of the pipes.
                held(
                    [go_read.as_raw_fd(), error_write.as_raw_fd()],
                    [go_write.as_raw_fd(), error_read.as_raw_fd()],
                    &ptrs,
                    signals,
                )
            },
            pid => {
                Ok(Child {
                    // fork() returned a positive pid.
                    pid: Pid::from_raw(pid).context("fork() returned no pid")?,
                    go: Some(go_write),
                    exec_error: error_read,
                    reaped: false,
                })
            }
        }
    }

    /// The child's pid (it is not reaped before [`Child::reap`]).
    pub(crate) fn pid(&self) -> Pid {
        self.pid
    }

    /// What releases the child; `None` if taken already.
    pub(crate) fn release(&mut self) -> Option<Release> {
        self.go.take().map(Release)
    }

    /// Waits until the child has exited, without reaping it: its pid stays
    /// its own (for signals passed on) until [`Child::reap`].
    pub(crate) fn wait_exit(&self) -> Result<()> {
        loop {
            match rustix::process::waitid(
                WaitId::Pid(self.pid),
                WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
            ) {
                Err(rustix::io::Errno::INTR) => {}
                r => return r.map(drop).context("waiting for COMMAND"),
            }
        }
    }

    /// Waits for the child, reaps it, and says how COMMAND ended.
    pub(crate) fn reap(mut self) -> Result<Ended> {
        self.go = None;
        let status = loop {
            match rustix::process::waitpid(Some(self.pid), WaitOptions::empty()) {
                Err(rustix::io::Errno::INTR) => {}
                r => break r.context("waiting for COMMAND")?,
            }
        };
        self.reaped = true;
        let mut errno = [0u8; 4];
        if matches!(rustix::io::read(&self.exec_error, &mut errno), Ok(4)) {
            return Ok(Ended::NotRun(i32::from_ne_bytes(errno)));
        }
        let Some((_, status)) = status else {
            anyhow::bail!("waiting for COMMAND: no status");
        };
        match (status.exit_status(), status.terminating_signal()) {
            (Some(code), _) => Ok(Ended::Exited(u8::try_from(code).unwrap_or(u8::MAX))),
            (None, Some(sig)) => Ok(Ended::Killed(sig)),
            (None, None) => anyhow::bail!("waiting for COMMAND: status {status:?}"),
        }
    }
}

impl Drop for Child {
    /// A child not released exits when its pipe closes; a released one is
    /// waited for. Either is reaped.
    fn drop(&mut self) {
        if !self.reaped {
            self.go = None;
            while let Err(rustix::io::Errno::INTR) =
                rustix::process::waitpid(Some(self.pid), WaitOptions::empty())
            {}
        }
    }
}

/// The child: waits for the release, then execs `argv`. `mine` are its
/// ends of the pipes (go's read end, the error's write end), `theirs`
/// the parent's, closed here so that the go pipe reads end-of-file once
/// the parent drops its end.
///
/// # Safety
/// Only in the child of a fork, with `argv` a null-terminated vector of
/// pointers to NUL-terminated strings and the fds open.
unsafe fn held(
    mine: [RawFd; 2],
    theirs: [RawFd; 2],
    argv: &[*const c_char],
    signals: &Inherited,
) -> ! {
    let [go, error] = mine;
    // SAFETY: close(), read(), execvp(), write() and _exit() on the
    // caller's fds and strings, as the function's contract states.
    unsafe {
        for fd in theirs {
            libc::close(fd);
        }
        signals.restore();
        let mut byte = 0u8;
        loop {
            match libc::read(go, std::ptr::from_mut(&mut byte).cast(), 1) {
                1 => break,
                -1 if io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) => {}
                _ => libc::_exit(NOT_RELEASED),
            }
        }
        libc::close(go);
        libc::execvp(argv[0], argv.as_ptr());
        let errno = io::Error::last_os_error().raw_os_error().unwrap_or(0);
        let bytes = errno.to_ne_bytes();
        libc::write(error, bytes.as_ptr().cast(), bytes.len());
        libc::_exit(if errno == libc::ENOENT { 127 } else { 126 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("antinomie-child-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// `sh -c SCRIPT` held, with this process's signal state.
    fn held_sh(script: &str) -> Child {
        let argv: Vec<OsString> = ["sh", "-c", script].iter().map(Into::into).collect();
        Child::fork_held(&argv, &Inherited::current().unwrap()).unwrap()
    }

    fn touch(marker: &Path) -> String {
        format!("echo ran > '{}'", marker.display())
    }

    #[test]
    fn the_child_runs_only_once_released() {
        let dir = scratch("released");
        let marker = dir.join("ran");
        let mut child = held_sh(&touch(&marker));
        std::thread::sleep(Duration::from_millis(200));
        assert!(!marker.exists(), "COMMAND ran before its release");
        child.release().unwrap().go().unwrap();
        assert!(child.release().is_none(), "one release");
        child.wait_exit().unwrap();
        assert_eq!(child.reap().unwrap(), Ended::Exited(0));
        assert!(marker.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_child_never_released_never_runs() {
        let dir = scratch("dropped");
        let marker = dir.join("ran");
        let child = held_sh(&touch(&marker));
        let pid = child.pid();
        drop(child);
        // Reaped: the pid is no child of this process any more.
        assert_eq!(
            rustix::process::waitpid(Some(pid), WaitOptions::NOHANG).unwrap_err(),
            rustix::io::Errno::CHILD
        );
        assert!(!marker.exists(), "COMMAND ran without a release");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn exit_statuses_and_signals_come_back() {
        for (script, ended) in [
            ("exit 3", Ended::Exited(3)),
            ("exit 0", Ended::Exited(0)),
            ("kill -TERM $$", Ended::Killed(libc::SIGTERM)),
        ] {
            let mut child = held_sh(script);
            child.release().unwrap().go().unwrap();
            assert_eq!(child.reap().unwrap(), ended, "{script}");
        }
    }

    #[test]
    fn exec_failures_are_reported() {
        let run = |argv: &[&Path]| {
            let argv: Vec<OsString> = argv.iter().map(Into::into).collect();
            let mut child = Child::fork_held(&argv, &Inherited::current().unwrap()).unwrap();
            child.release().unwrap().go().unwrap();
            child.reap().unwrap()
        };
        let missing = Path::new("antinomie-no-such-command");
        assert_eq!(run(&[missing]), Ended::NotRun(libc::ENOENT));
        let dir = scratch("exec");
        // Not executable: no execute bit (which root needs too).
        let script = dir.join("script");
        std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
        assert_eq!(run(&[&script]), Ended::NotRun(libc::EACCES));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
