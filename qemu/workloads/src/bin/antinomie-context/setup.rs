// SPDX-License-Identifier: GPL-2.0-only
//! The set-up of a context, done as root before the program starts: the
//! sysctl, then the credentials. It returns and lets `main` exec the
//! read-back check, so that what is checked is what survives an exec.

use std::io;

use super::{Context, OTHER_UID, UNPRIVILEGED_UID};

/// `CAP_PERFMON`'s number.
const CAP_PERFMON: u32 = 38;
/// `_LINUX_CAPABILITY_VERSION_3`: two 32-bit words per set.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

fn check(ret: libc::c_long, what: &str) -> Result<(), String> {
    if ret < 0 {
        Err(format!("{what}: {}", io::Error::last_os_error()))
    } else {
        Ok(())
    }
}

/// Writes `value` to `path` (a sysctl or a /proc file).
fn write_file(path: &str, value: &str) -> Result<(), String> {
    std::fs::write(path, value).map_err(|e| format!("writing {value:?} to {path}: {e}"))
}

/// Sets the sysctl, then becomes the context's credentials.
pub fn enter(context: Context) -> Result<(), String> {
    write_file(
        "/proc/sys/kernel/perf_event_paranoid",
        &context.paranoid().to_string(),
    )?;
    match context {
        Context::Root => Ok(()),
        Context::User(_) => become_uid(UNPRIVILEGED_UID, false),
        Context::Perfmon => {
            become_uid(UNPRIVILEGED_UID, true)?;
            keep_only_perfmon()
        }
        Context::Userns => {
            become_uid(UNPRIVILEGED_UID, false)?;
            new_user_namespace(UNPRIVILEGED_UID)
        }
    }
}

/// Drops every supplementary group and becomes `uid` (its own gid too):
/// real, effective and saved ids. `keep_caps`: the permitted set survives
/// the change (`PR_SET_KEEPCAPS`), else every capability goes.
fn become_uid(uid: u32, keep_caps: bool) -> Result<(), String> {
    // SAFETY: these calls change only this (single-threaded) process's
    // credentials; their arguments are plain integers or NULL with size 0.
    unsafe {
        if keep_caps {
            check(
                libc::prctl(libc::PR_SET_KEEPCAPS, 1, 0, 0, 0).into(),
                "PR_SET_KEEPCAPS",
            )?;
        }
        check(libc::setgroups(0, std::ptr::null()).into(), "setgroups")?;
        check(libc::setresgid(uid, uid, uid).into(), "setresgid")?;
        check(libc::setresuid(uid, uid, uid).into(), "setresuid")?;
        // A uid change makes the process non-dumpable, which makes its
        // /proc/self files root's: uid_map could then not be written.
        check(
            libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0).into(),
            "PR_SET_DUMPABLE",
        )?;
    }
    Ok(())
}

/// Keeps `CAP_PERFMON` alone, in every set and as an ambient capability,
/// so that the program (not set-uid, no file caps) holds it after exec.
fn keep_only_perfmon() -> Result<(), String> {
    let bit = 1u32 << (CAP_PERFMON - 32);
    let mut header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [
        CapData {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        },
        CapData {
            effective: bit,
            permitted: bit,
            inheritable: bit,
        },
    ];
    // SAFETY: header and data are the v3 layout capset(2) reads (one
    // header, two data words); both live across the call.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_capset,
            std::ptr::from_mut(&mut header),
            data.as_ptr(),
        )
    };
    check(ret, "capset(CAP_PERFMON)")?;
    // SAFETY: plain integer arguments.
    let ret = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_RAISE,
            libc::c_ulong::from(CAP_PERFMON),
            0,
            0,
        )
    };
    check(ret.into(), "PR_CAP_AMBIENT_RAISE CAP_PERFMON")
}

/// A new user namespace whose uid and gid 0 are `uid` outside: the
/// process holds every capability inside it and none outside.
fn new_user_namespace(uid: u32) -> Result<(), String> {
    // SAFETY: plain flag argument; the process is single-threaded, as
    // unshare(CLONE_NEWUSER) requires.
    let ret = unsafe { libc::unshare(libc::CLONE_NEWUSER) };
    check(ret.into(), "unshare(CLONE_NEWUSER)")?;
    // An unprivileged process may map its gid only once setgroups is off.
    write_file("/proc/self/setgroups", "deny")?;
    write_file("/proc/self/uid_map", &format!("0 {uid} 1"))?;
    write_file("/proc/self/gid_map", &format!("0 {uid} 1"))
}

/// `struct clone_args` of clone3(2), up to `set_tid_size`.
#[repr(C)]
#[derive(Default)]
struct CloneArgs {
    flags: u64,
    pidfd: u64,
    child_tid: u64,
    parent_tid: u64,
    exit_signal: u64,
    stack: u64,
    stack_size: u64,
    tls: u64,
    set_tid: u64,
    set_tid_size: u64,
}

/// Starts a process with pid `pid` owned by [`OTHER_UID`] that sleeps
/// until killed (or until this process dies): "another user's task". The
/// pid is fixed (clone3 with `set_tid`, which root may ask for) so that it
/// is the same number in every run and `reader diff` sees the same
/// argument.
pub fn start_other_user_task(pid: i32) -> Result<i32, String> {
    let tids = [pid];
    let mut args = CloneArgs {
        exit_signal: libc::SIGCHLD as u64,
        set_tid: tids.as_ptr() as u64,
        set_tid_size: 1,
        ..CloneArgs::default()
    };
    // SAFETY: args is a valid clone_args of the size passed, and set_tid
    // points at one pid that lives across the call. Without CLONE_VM the
    // child gets a copy of this single-threaded process, as with fork.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_clone3,
            std::ptr::from_mut(&mut args),
            std::mem::size_of::<CloneArgs>(),
        )
    };
    if ret < 0 {
        return Err(format!(
            "clone3 with pid {pid} for another user's task: {}",
            io::Error::last_os_error()
        ));
    }
    if ret > 0 {
        return Ok(i32::try_from(ret).expect("a pid fits in i32"));
    }
    // The child: raw system calls only (the C library's view of this
    // copy, e.g. its cached thread id, is the parent's).
    // SAFETY: plain integer arguments; each call affects this process
    // only, and exit_group never returns.
    unsafe {
        let uid = libc::c_long::from(OTHER_UID);
        let ok = libc::syscall(libc::SYS_prctl, libc::PR_SET_PDEATHSIG, libc::SIGKILL) == 0
            && libc::syscall(libc::SYS_setgroups, 0, 0) == 0
            && libc::syscall(libc::SYS_setresgid, uid, uid, uid) == 0
            && libc::syscall(libc::SYS_setresuid, uid, uid, uid) == 0;
        if !ok {
            libc::syscall(libc::SYS_exit_group, 1);
        }
        loop {
            libc::syscall(libc::SYS_pause);
        }
    }
}
