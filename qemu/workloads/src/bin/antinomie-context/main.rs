// SPDX-License-Identifier: GPL-2.0-only
//! `antinomie-context CONTEXT -- PROGRAM [ARGS...]`: runs PROGRAM in a
//! privilege context, so that a corpus program's `perf_event_open(2)`
//! calls go through the permission checks a root caller skips.
//!
//! The contexts: `root`; `perfmon` (an unprivileged uid holding
//! `CAP_PERFMON` alone, as an ambient capability); `user-p4`, `user-p3`,
//! `user-p2`, `user-p1`, `user-p0`, `user-m1` (an unprivileged uid, no
//! caps, `kernel.perf_event_paranoid` 4, 3, 2, 1, 0, -1: the pinned kernel
//! treats 3 and 4 as 2, the stricter levels some distributions patch in
//! refuse more); `userns` (an unprivileged
//! uid in a new user namespace: every cap inside it, none outside). All
//! but the `user-*` contexts run at paranoid 2, the default.
//!
//! Run as root, it sets the sysctl and the credentials, then execs itself
//! as `antinomie-context --verify CONTEXT -- PROGRAM...`, which reads back
//! what the kernel reports (`/proc/self/status` `Uid`, `CapEff` and `CapPrm`,
//! `/proc/self/uid_map`, `/proc/sys/kernel/perf_event_paranoid`), refuses
//! to go on (exit 125, one line saying why) when it is not what the
//! context claims, prints `context: NAME uid=U caps=HEX paranoid=P
//! userns=0|1` to stderr and execs PROGRAM. The check runs after an exec
//! because capabilities are recomputed there: what it sees is what the
//! program gets. `--verify CONTEXT` alone checks the calling process.
//!
//! `--other-user-task` first starts a sleeping process owned by a second
//! unprivileged uid, at the fixed pid [`OTHER_PID`], exports that pid as
//! `ANTINOMIE_OTHER_PID`, runs the rest in a child and kills the sleeper
//! when the program ends; the exit status is then the program's (128 +
//! the signal when one killed it).
//!
//! Exit status 125 when a context cannot be set up or is not what it
//! claims (or on a usage error), as `git bisect run`'s "cannot test".

mod setup;
mod verify;

use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode};

use clap::Parser;

/// The unprivileged uid (and gid) of every context but `root`.
const UNPRIVILEGED_UID: u32 = 1000;
/// The owner of "another user's task".
const OTHER_UID: u32 = 1001;
/// The pid of "another user's task": fixed, so that it is the same
/// argument in every run (below the default `pid_max`, 32768, and above
/// what a guest's boot uses).
const OTHER_PID: i32 = 30_000;
/// The harness's own failure, not the program's.
const CANNOT_TEST: u8 = 125;

/// A privilege context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    Root,
    Perfmon,
    /// An unprivileged uid at this `perf_event_paranoid`.
    User(i32),
    Userns,
}

impl Context {
    const ALL: [Context; 9] = [
        Context::Root,
        Context::Perfmon,
        Context::User(4),
        Context::User(3),
        Context::User(2),
        Context::User(1),
        Context::User(0),
        Context::User(-1),
        Context::Userns,
    ];

    fn name(self) -> &'static str {
        match self {
            Context::Root => "root",
            Context::Perfmon => "perfmon",
            Context::User(4) => "user-p4",
            Context::User(3) => "user-p3",
            Context::User(2) => "user-p2",
            Context::User(1) => "user-p1",
            Context::User(0) => "user-p0",
            Context::User(-1) => "user-m1",
            Context::User(_) => unreachable!("only the paranoid levels of Context::ALL"),
            Context::Userns => "userns",
        }
    }

    fn parse(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|c| c.name() == name)
            .ok_or_else(|| {
                let names: Vec<_> = Self::ALL.iter().map(|c| c.name()).collect();
                format!("unknown context {name:?} (one of {})", names.join(", "))
            })
    }

    /// The `perf_event_paranoid` the context runs at.
    fn paranoid(self) -> i32 {
        match self {
            Context::User(level) => level,
            _ => 2,
        }
    }
}

/// The options.
#[derive(Debug, Parser)]
#[command(name = "antinomie-context")]
struct Args {
    /// Only check that this process is in CONTEXT (then exec PROGRAM, if
    /// given).
    #[arg(long)]
    verify: bool,
    /// Start another user's sleeping task first and export its pid as
    /// `ANTINOMIE_OTHER_PID`.
    #[arg(long, conflicts_with = "verify")]
    other_user_task: bool,
    /// root, perfmon, user-p4, user-p3, user-p2, user-p1, user-p0, user-m1
    /// or userns.
    context: String,
    /// The program and its arguments.
    #[arg(last = true)]
    program: Vec<String>,
}

fn fail(context: &str, why: &str) -> ExitCode {
    eprintln!("antinomie-context: {context}: {why}");
    ExitCode::from(CANNOT_TEST)
}

/// Execs `program` (from `PATH`); returns only on failure.
fn exec(program: &[String], what: &str) -> String {
    let err = Command::new(&program[0]).args(&program[1..]).exec();
    format!("cannot exec {what} {}: {err}", program[0])
}

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(CANNOT_TEST);
        }
    };
    let context = match Context::parse(&args.context) {
        Ok(c) => c,
        Err(e) => return fail(&args.context, &e),
    };
    let name = context.name();
    if args.verify {
        let seen = match verify::Observed::read() {
            Ok(s) => s,
            Err(e) => return fail(name, &e),
        };
        if let Err(why) = verify::check(context, &seen) {
            return fail(name, &format!("not what the context claims: {why}"));
        }
        eprintln!("{}", seen.describe(context));
        if args.program.is_empty() {
            return ExitCode::SUCCESS;
        }
        return fail(name, &exec(&args.program, "the program"));
    }
    if args.program.is_empty() {
        return fail(name, "no program to run (CONTEXT -- PROGRAM [ARGS...])");
    }
    // SAFETY: no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return fail(name, "setting up a context needs root");
    }
    let again: Vec<String> = ["/proc/self/exe", "--verify", name, "--"]
        .into_iter()
        .map(str::to_owned)
        .chain(args.program)
        .collect();
    if !args.other_user_task {
        if let Err(e) = setup::enter(context) {
            return fail(name, &e);
        }
        return fail(name, &exec(&again, "the check"));
    }
    match run_beside_other_user_task(context, &again) {
        Ok(code) => ExitCode::from(code),
        Err(e) => fail(name, &e),
    }
}

/// Starts the other user's task, checks its owner, runs `again` in a
/// child in `context`, then kills the task; returns the child's status.
fn run_beside_other_user_task(context: Context, again: &[String]) -> Result<u8, String> {
    let other = setup::start_other_user_task(OTHER_PID)?;
    let stop_other = || {
        // SAFETY: `other` is this process's own child, not yet reaped.
        unsafe {
            libc::kill(other, libc::SIGKILL);
            libc::waitpid(other, std::ptr::null_mut(), 0);
        }
    };
    if let Err(e) = wait_for_owner(other, OTHER_UID) {
        stop_other();
        return Err(e);
    }
    // SAFETY: this process is single-threaded; the child only sets up its
    // credentials and execs.
    let child = unsafe { libc::fork() };
    if child < 0 {
        stop_other();
        return Err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    if child == 0 {
        let why = match setup::enter(context) {
            Ok(()) => {
                let err = Command::new(&again[0])
                    .args(&again[1..])
                    .env("ANTINOMIE_OTHER_PID", other.to_string())
                    .exec();
                format!("cannot exec the check: {err}")
            }
            Err(e) => e,
        };
        eprintln!("antinomie-context: {}: {why}", context.name());
        std::process::exit(i32::from(CANNOT_TEST));
    }
    let mut status = 0;
    // SAFETY: `child` is this process's child; status is a valid out-pointer.
    let waited = unsafe { libc::waitpid(child, &raw mut status, 0) };
    stop_other();
    if waited != child {
        return Err(format!("waitpid: {}", std::io::Error::last_os_error()));
    }
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    Ok(u8::try_from(code).unwrap_or(u8::MAX))
}

/// Waits (up to 2 s) until `/proc/PID/status` shows `uid` as all four
/// uids: the kernel's word that the task is another user's.
fn wait_for_owner(pid: i32, uid: u32) -> Result<(), String> {
    let path = format!("/proc/{pid}/status");
    let want = format!("{uid}\t{uid}\t{uid}\t{uid}");
    for _ in 0..200 {
        let text = std::fs::read_to_string(&path).map_err(|e| format!("reading {path}: {e}"))?;
        let uids = text.lines().find_map(|l| l.strip_prefix("Uid:"));
        if uids.map(str::trim) == Some(want.as_str()) {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    Err(format!("task {pid} is not owned by uid {uid} after 2 s"))
}
