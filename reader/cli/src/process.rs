// SPDX-License-Identifier: GPL-2.0-only
//! What the `reader` process does to itself: the signals that end a
//! `--follow` run, the signals while a COMMAND runs (`reader --
//! COMMAND`: ignored or passed on, as strace does), ending as a killed
//! COMMAND ended, and the priorities of the drain and printing threads.

use std::io;
use std::os::fd::OwnedFd;
use std::process::ExitCode;

use anyhow::{Context, Result};
use rustix::pipe::PipeFlags;
use rustix::process::{Pid, Signal};
use signal_hook::SigId;

/// Default of `--print-nice`: the thread that merges, pairs and prints runs
/// at nice +10 from the reader's own, where the drain thread stays unless
/// `--drain-nice` moves it; the drain then weighs about 9 times as much on
/// a busy CPU (the scheduler's weights for nice 0 and 10 are 1024 and 110).
pub(crate) const DEFAULT_PRINT_NICE: i32 = 10;

/// The signals that end a `--follow` run.
pub(crate) const STOP_FOLLOW: &[i32] = &[signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM];

/// The signals that end a `-p` run (detach), as under `strace -p`: those
/// that would otherwise kill the reader before it moves the processes
/// back (SIGKILL cannot be caught).
pub(crate) const STOP_ATTACH: &[i32] = &[
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
    signal_hook::consts::SIGQUIT,
];

/// The read end of a pipe that the signals `stop` write to from now on:
/// the stop fd of the device's waker, so that the drain thread drains
/// every ring once more and ends the run instead of killing the process.
pub(crate) fn stop_on_signals(stop: &[i32]) -> Result<OwnedFd> {
    // A plain pipe, not a socket pair: a minimal kernel (the test guest)
    // may have no AF_UNIX. Non-blocking, so the signal handler's write
    // can never block.
    let (read, write) = rustix::pipe::pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK)
        .context("creating the signal pipe")?;
    for &sig in stop {
        let write = write.try_clone().context("creating the signal pipe")?;
        signal_hook::low_level::pipe::register(sig, write)
            .context("installing the signal handlers")?;
    }
    Ok(read)
}

/// `--ready-fd FD`: takes FD over and returns what writes `ready` and a
/// newline to it and closes it, called once the capture runs. A failed
/// write is only reported: the capture goes on.
pub(crate) fn ready_notifier(fd: i32) -> Result<Box<dyn FnOnce()>> {
    // SAFETY: fcntl(F_GETFD) reads a descriptor's flags and touches no
    // memory; -1 means the descriptor is not open.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
        return Err(io::Error::last_os_error()).with_context(|| format!("--ready-fd {fd}"));
    }
    // SAFETY: the descriptor is open (checked above), above stderr (the
    // argument's range), and was inherited for this use: nothing else in
    // the reader owns it, as the reader's own files are opened later and
    // get other numbers.
    let fd = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    Ok(Box::new(move || {
        if let Err(e) = rustix::io::write(&fd, b"ready\n") {
            tracing::warn!("--ready-fd: writing `ready` failed: {e}");
        }
    }))
}

/// The signal state COMMAND starts with: the reader's own before it
/// changed it for the run (SIGINT's and SIGQUIT's actions, the mask).
pub(crate) struct Inherited {
    int: libc::sigaction,
    quit: libc::sigaction,
    mask: libc::sigset_t,
}

impl Inherited {
    /// The calling thread's state now.
    pub(crate) fn current() -> io::Result<Self> {
        // SAFETY: all-zero bytes are a valid `sigaction` and `sigset_t`
        // (plain C structures of integers and a function pointer that
        // sigaction() overwrites); with a null new action or set,
        // sigaction() and sigprocmask() only write the old one into them.
        unsafe {
            let mut state: Inherited = std::mem::zeroed();
            for (sig, old) in [
                (libc::SIGINT, &mut state.int),
                (libc::SIGQUIT, &mut state.quit),
            ] {
                if libc::sigaction(sig, std::ptr::null(), old) != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            if libc::sigprocmask(libc::SIG_SETMASK, std::ptr::null(), &raw mut state.mask) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(state)
        }
    }

    /// Gives this process the state saved, with SIGPIPE's default action
    /// (Rust ignores SIGPIPE, and an ignored signal stays ignored across
    /// exec; `std::process::Command` restores it the same way). For the
    /// forked child before it execs COMMAND: it calls only `sigaction()`
    /// and `sigprocmask()`, which are async-signal-safe, and allocates
    /// nothing.
    pub(crate) fn restore(&self) {
        // SAFETY: the actions and the mask are ones sigaction() and
        // sigprocmask() returned (or zeroed: SIG_DFL, no signal
        // blocked); a default action for SIGPIPE is always valid. The
        // results are ignored: there is nothing better to do in the child
        // than exec COMMAND with what could be restored.
        unsafe {
            libc::sigaction(libc::SIGINT, &raw const self.int, std::ptr::null_mut());
            libc::sigaction(libc::SIGQUIT, &raw const self.quit, std::ptr::null_mut());
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            libc::sigprocmask(
                libc::SIG_SETMASK,
                &raw const self.mask,
                std::ptr::null_mut(),
            );
        }
    }
}

/// The reader's signals while a COMMAND runs, as under strace: SIGINT and
/// SIGQUIT ignored (the terminal sends them to the whole foreground
/// process group, COMMAND included, which decides what they do; Ctrl-C
/// that ends COMMAND ends the run), SIGTERM and SIGHUP passed on to
/// COMMAND (which then ends the run, or does not). They stay so until the
/// reader exits.
pub(crate) struct CommandSignals {
    inherited: Inherited,
}

/// Signals a COMMAND is sent when the reader is.
const FORWARDED: [Signal; 2] = [Signal::TERM, Signal::HUP];

/// The signal set of [`FORWARDED`].
fn forwarded_set() -> libc::sigset_t {
    // SAFETY: all-zero bytes are a valid `sigset_t`, which sigemptyset()
    // then initialises; the signals are valid.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut set);
        for sig in FORWARDED {
            libc::sigaddset(&raw mut set, sig.as_raw());
        }
        set
    }
}

impl CommandSignals {
    /// Ignores SIGINT and SIGQUIT, and blocks SIGTERM and SIGHUP until
    /// [`Forwarding::start`]: called before the reader makes
    /// anything it must undo (the cgroup), so that no signal ends it
    /// before it can, and before it forks (the child restores
    /// [`CommandSignals::inherited`]). SIGCHLD gets its default action, as
    /// strace gives it: one ignored (inherited so) would reap COMMAND
    /// before the reader could learn its status. The process must still
    /// have one thread: the mask is the calling thread's, which threads
    /// started later inherit.
    pub(crate) fn hold() -> Result<Self> {
        let inherited = Inherited::current().context("reading the signal state")?;
        let block = forwarded_set();
        // SAFETY: SIG_IGN is a valid action for SIGINT and SIGQUIT,
        // SIG_DFL for SIGCHLD, and `block` a valid set.
        let failed = unsafe {
            libc::signal(libc::SIGINT, libc::SIG_IGN) == libc::SIG_ERR
                || libc::signal(libc::SIGQUIT, libc::SIG_IGN) == libc::SIG_ERR
                || libc::signal(libc::SIGCHLD, libc::SIG_DFL) == libc::SIG_ERR
                || libc::sigprocmask(libc::SIG_BLOCK, &raw const block, std::ptr::null_mut()) != 0
        };
        if failed {
            return Err(io::Error::last_os_error()).context("setting the signals up for COMMAND");
        }
        Ok(CommandSignals { inherited })
    }

    /// What COMMAND starts with.
    pub(crate) fn inherited(&self) -> &Inherited {
        &self.inherited
    }
}

/// SIGTERM and SIGHUP passed on to COMMAND, until dropped (they are then
/// ignored): drop it before COMMAND is reaped, after which its pid may
/// name another process.
#[derive(Debug)]
pub(crate) struct Forwarding(Vec<SigId>);

impl Forwarding {
    /// Passes SIGTERM and SIGHUP on to `pid` until dropped, and unblocks
    /// them: one that came since [`CommandSignals::hold`] is passed on now.
    pub(crate) fn start(pid: Pid) -> Result<Forwarding> {
        let mut forwarding = Forwarding(Vec::new());
        for sig in FORWARDED {
            // SAFETY: the action makes one system call, kill(2), through
            // rustix's raw system call (no errno, no lock, no
            // allocation): async-signal-safe. unregister() waits for a
            // handler running it to return, so it neither runs nor will
            // once the Forwarding is dropped, and the caller reaps `pid`
            // only after that: it cannot reach another process.
            let id = unsafe {
                signal_hook::low_level::register(sig.as_raw(), move || {
                    let _ = rustix::process::kill_process(pid, sig);
                })
            }
            .context("installing the signal handlers")?;
            forwarding.0.push(id);
        }
        let unblock = forwarded_set();
        // SAFETY: `unblock` is a valid set.
        if unsafe { libc::sigprocmask(libc::SIG_UNBLOCK, &raw const unblock, std::ptr::null_mut()) }
            != 0
        {
            return Err(io::Error::last_os_error()).context("unblocking SIGTERM and SIGHUP");
        }
        Ok(forwarding)
    }
}

impl Drop for Forwarding {
    fn drop(&mut self) {
        for id in self.0.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// Ends the reader as COMMAND ended when a signal killed it, as strace
/// does: with no core file (`RLIMIT_CORE` 0: the reader's would take the
/// place of COMMAND's), `sig`'s default action back, `sig` unblocked and
/// raised. Called last, once every thread has ended and the output is
/// flushed. If the reader is still alive after that (a signal whose
/// default action does not end a process), it exits with 128 + `sig`, the
/// status a shell gives a command killed by `sig`.
pub(crate) fn die_of(sig: i32) -> ExitCode {
    let _ = io::Write::flush(&mut io::stdout());
    let core = rustix::process::getrlimit(rustix::process::Resource::Core);
    let _ = rustix::process::setrlimit(
        rustix::process::Resource::Core,
        rustix::process::Rlimit {
            current: Some(0),
            maximum: core.maximum,
        },
    );
    // SAFETY: SIG_DFL is a valid action for any signal sigaction()
    // accepts (it refuses SIGKILL and SIGSTOP, whose action is the
    // default anyway); the set is initialised by sigemptyset().
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        let mut unblock: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut unblock);
        libc::sigaddset(&raw mut unblock, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &raw const unblock, std::ptr::null_mut());
        libc::raise(sig);
    }
    ExitCode::from(u8::try_from(128 + sig).unwrap_or(u8::MAX))
}

/// The calling thread's nice value: the reader's own, before the drain
/// thread's is set; the printing thread's counts from it. 0 if it cannot
/// be read (with a warning).
pub(crate) fn own_nice() -> i32 {
    rustix::process::getpriority_process(Some(rustix::thread::gettid())).unwrap_or_else(|e| {
        tracing::warn!("could not read the reader's nice value: {e}");
        0
    })
}

/// Sets the calling thread's nice value to `nice` (`--drain-nice`), just
/// before the drain thread and the spool are spawned, which inherit it.
/// Lowering it needs `CAP_SYS_NICE` or `RLIMIT_NICE`; refused, the thread
/// keeps its own, with a warning: the run goes on.
pub(crate) fn set_own_nice_for_drain(nice: i32) {
    let me = Some(rustix::thread::gettid());
    match rustix::process::setpriority_process(me, nice) {
        Ok(()) => tracing::info!("draining at nice {nice}"),
        Err(e) => tracing::warn!(
            "--drain-nice {nice}: {e} (a lower nice value needs CAP_SYS_NICE or RLIMIT_NICE); draining at the reader's"
        ),
    }
}

/// Sets the calling thread's nice value to `own + delta` (at most 19):
/// called by the thread that merges, pairs and prints once the drain
/// thread and the spool run, so that when the CPU is short (a busy
/// machine, or a guest under single-threaded emulation) draining wins it
/// over decoding and printing, which the queue lets fall behind and catch
/// up. Linux keeps a nice value per thread, so the
/// drain thread and the spool stay as they were. Raising a nice value
/// needs no privilege; failing to is not fatal.
pub(crate) fn lower_own_priority(own: i32, delta: i32) {
    let me = Some(rustix::thread::gettid());
    let printing = own.saturating_add(delta).min(19);
    let result = rustix::process::getpriority_process(me)
        .and_then(|drain| rustix::process::setpriority_process(me, printing).map(|()| drain));
    match result {
        Ok(drain) => {
            tracing::info!("merging and printing at nice {printing}, the drain thread at {drain}");
        }
        Err(e) => tracing::warn!("could not lower the printing thread's priority: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::{lower_own_priority, own_nice, set_own_nice_for_drain};

    /// The nice value a thread spawned now starts with.
    fn nice_of_a_new_thread() -> i32 {
        std::thread::spawn(own_nice).join().unwrap()
    }

    /// Whether this thread may lower its nice value: tried on a scratch
    /// thread (root in a user namespace holds `CAP_SYS_NICE` in `CapEff`, yet
    /// may not; `RLIMIT_NICE` may let anyone).
    fn may_lower_nice() -> bool {
        std::thread::spawn(|| {
            let me = Some(rustix::thread::gettid());
            let own = own_nice();
            own > -20 && rustix::process::setpriority_process(me, own - 1).is_ok()
        })
        .join()
        .unwrap()
    }

    #[test]
    fn the_drain_nice_is_what_threads_spawned_after_start_with() {
        // On threads of their own: a nice value, once lowered or raised,
        // stays with its thread.
        let lower = may_lower_nice();
        std::thread::spawn(move || {
            let own = own_nice();
            let asked = (own - 2).max(-20);
            set_own_nice_for_drain(asked);
            let drain = if lower { asked } else { own };
            assert_eq!(own_nice(), drain, "this thread");
            assert_eq!(nice_of_a_new_thread(), drain, "a thread spawned after");
        })
        .join()
        .unwrap();
        // A higher value needs no privilege: always honoured.
        std::thread::spawn(|| {
            let asked = (own_nice() + 3).min(19);
            set_own_nice_for_drain(asked);
            assert_eq!(own_nice(), asked, "this thread");
            assert_eq!(nice_of_a_new_thread(), asked, "a thread spawned after");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn the_printing_nice_counts_from_the_readers_own_and_moves_this_thread_only() {
        // On threads of their own: a nice value cannot be lowered back
        // without privilege.
        std::thread::spawn(|| {
            let current = own_nice();
            let (tx, rx) = std::sync::mpsc::channel();
            let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
            let other = std::thread::spawn(move || {
                go_rx.recv().unwrap();
                tx.send(own_nice()).unwrap();
            });
            // A reader whose own value was 2 below this thread's (the
            // drain's, here): the printer lands 1 above, not 3.
            lower_own_priority(current - 2, 3);
            go_tx.send(()).unwrap();
            other.join().unwrap();
            assert_eq!(own_nice(), (current + 1).min(19), "this thread");
            assert_eq!(rx.recv().unwrap(), current, "a thread spawned before");
            lower_own_priority(current, 30);
            assert_eq!(own_nice(), 19, "capped at 19");
        })
        .join()
        .unwrap();
    }
}
