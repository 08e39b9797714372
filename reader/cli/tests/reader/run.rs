// SPDX-License-Identifier: GPL-2.0-only
//! `reader -- COMMAND` on a host without the device: the command line,
//! and every failure to set the run up (no device, no cgroup2, a cgroup
//! the reader cannot use) ends it before COMMAND runs. Each COMMAND would
//! create a marker file; none may exist afterwards. `--proc` gives the
//! reader a procfs of the test's making (its `self/mountinfo` names the
//! cgroup2 mount), so that no test touches the host's cgroups. The
//! capture itself needs the patched kernel: the guest's end-to-end test.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The reader's status when it failed before or while running COMMAND.
const CANNOT_TEST: i32 = 125;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("antinomie-run-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `reader ARGS -- sh -c 'touch MARKER'`, with no device.
fn run_touching(dir: &Path, args: &[&str], marker: &Path) -> Output {
    let touch = format!("touch '{}'", marker.display());
    let device = dir.join("no-device");
    Command::new(env!("CARGO_BIN_EXE_reader"))
        .args(["--device", device.to_str().unwrap()])
        .args(args)
        .args(["--", "sh", "-c", &touch])
        .output()
        .unwrap()
}

/// A procfs whose `self/mountinfo` holds `mountinfo` and whose
/// `self/cgroup` says the reader is in the root cgroup.
fn fake_proc(dir: &Path, mountinfo: &str) -> PathBuf {
    let proc = dir.join("proc");
    std::fs::create_dir_all(proc.join("self")).unwrap();
    std::fs::write(proc.join("self/mountinfo"), mountinfo).unwrap();
    std::fs::write(proc.join("self/cgroup"), "0::/\n").unwrap();
    proc
}

fn cgroup2_at(point: &Path) -> String {
    format!(
        "22 1 0:21 / /proc rw,nosuid - proc proc rw\n41 31 0:38 / {} rw,relatime - cgroup2 cgroup2 rw\n",
        point.display()
    )
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn dash_dash_needs_a_command() {
    let out = Command::new(env!("CARGO_BIN_EXE_reader"))
        .args(["--follow", "--"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`--` must be followed by the COMMAND"),
        "{}",
        stderr(&out)
    );
    let out = Command::new(env!("CARGO_BIN_EXE_reader"))
        .arg("--lossy")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "--lossy without a COMMAND: {}",
        stderr(&out)
    );
}

#[test]
fn a_bad_filter_runs_nothing() {
    let dir = scratch("filter");
    let marker = dir.join("ran");
    let out = run_touching(&dir, &["--filter", "pid =="], &marker);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("bad filter"), "{}", stderr(&out));
    assert!(!marker.exists(), "COMMAND ran");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_device_runs_nothing() {
    let dir = scratch("device");
    let marker = dir.join("ran");
    // A cgroup as far as the reader checks before the device: its
    // cgroup.procs can be written.
    let cgroup = dir.join("cgroup");
    std::fs::create_dir(&cgroup).unwrap();
    std::fs::write(cgroup.join("cgroup.procs"), "").unwrap();
    let out = run_touching(&dir, &["--cgroup", cgroup.to_str().unwrap()], &marker);
    assert_eq!(out.status.code(), Some(CANNOT_TEST), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no such device (is this a kernel built with CONFIG_ANTINOMIE=y?)"),
        "{}",
        stderr(&out)
    );
    assert!(!marker.exists(), "COMMAND ran");
    assert_eq!(
        std::fs::read_to_string(cgroup.join("cgroup.procs")).unwrap(),
        "",
        "a process was added"
    );
    assert!(cgroup.exists(), "--cgroup DIR stays");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn no_cgroup2_mount_runs_nothing() {
    let dir = scratch("no-cgroup2");
    let marker = dir.join("ran");
    // cgroup v1 only.
    let proc = fake_proc(
        &dir,
        "22 1 0:21 / /proc rw - proc proc rw\n32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n",
    );
    let out = run_touching(&dir, &["--proc", proc.to_str().unwrap()], &marker);
    assert_eq!(out.status.code(), Some(CANNOT_TEST), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("no cgroup v2 hierarchy is mounted") && err.contains("mount -t cgroup2"),
        "{err}"
    );
    assert!(!marker.exists(), "COMMAND ran");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_cgroup_the_reader_cannot_use_runs_nothing() {
    let dir = scratch("bad-cgroup");
    let marker = dir.join("ran");
    // The mount point is a plain directory: the reader makes its cgroup
    // there, finds no cgroup.procs in it, and removes it.
    let plain = dir.join("plain");
    std::fs::create_dir(&plain).unwrap();
    let proc = fake_proc(&dir, &cgroup2_at(&plain));
    let out = run_touching(&dir, &["--proc", proc.to_str().unwrap()], &marker);
    assert_eq!(out.status.code(), Some(CANNOT_TEST), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is not a cgroup v2 directory the reader can add COMMAND to"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_dir(&plain).unwrap().count(),
        0,
        "the cgroup made was left behind"
    );
    // A mount point the reader cannot make a directory in.
    let proc = fake_proc(&dir, &cgroup2_at(&dir.join("missing")));
    let out = run_touching(&dir, &["--proc", proc.to_str().unwrap()], &marker);
    assert_eq!(out.status.code(), Some(CANNOT_TEST), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("creating the cgroup"),
        "{}",
        stderr(&out)
    );
    // The reader's own cgroup outside the mounted subtree: what COMMAND
    // leaves running would have nowhere to go.
    let proc = fake_proc(&dir, &cgroup2_at(&plain).replace(" / ", " /work "));
    let out = run_touching(&dir, &["--proc", proc.to_str().unwrap()], &marker);
    assert_eq!(out.status.code(), Some(CANNOT_TEST), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is not under the cgroup2 mount"),
        "{}",
        stderr(&out)
    );
    // --cgroup DIR that is no cgroup.
    let out = run_touching(&dir, &["--cgroup", plain.to_str().unwrap()], &marker);
    assert_eq!(out.status.code(), Some(CANNOT_TEST), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is not a cgroup v2 directory"),
        "{}",
        stderr(&out)
    );
    assert!(!marker.exists(), "COMMAND ran");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A procfs of the test's making for `reader -p`: each PID's cgroup file
/// says its `cgroup` (made under a cgroup2 mount on a plain directory,
/// `dir/cg`), its stat file is the real one; returns the reader's
/// arguments, `--proc` and the `-p`s.
fn attach_proc(dir: &Path, pids: &[(u32, &str)]) -> Vec<String> {
    let point = dir.join("cg");
    std::fs::create_dir_all(&point).unwrap();
    let proc = fake_proc(dir, &cgroup2_at(&point));
    let mut args = vec!["--proc".to_owned(), proc.to_str().unwrap().to_owned()];
    for (pid, cgroup) in pids {
        let own = proc.join(pid.to_string());
        std::fs::create_dir_all(&own).unwrap();
        std::fs::write(own.join("cgroup"), format!("0::{cgroup}\n")).unwrap();
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            std::fs::write(own.join("stat"), stat).unwrap();
        }
        std::fs::create_dir_all(point.join(cgroup.trim_start_matches('/'))).unwrap();
        args.extend(["-p".to_owned(), pid.to_string()]);
    }
    args
}

/// `reader ARGS` with a device that does not exist.
fn reader_without_device(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_reader"))
        .args(args)
        .args(["--device", "/nonexistent/antinomie"])
        .output()
        .unwrap()
}

/// `reader -p PID...` on [`attach_proc`]'s procfs.
fn attach(dir: &Path, pids: &[(u32, &str)]) -> Output {
    reader_without_device(&attach_proc(dir, pids))
}

/// `reader -p` refused the attach before touching anything: exit 2, an
/// error saying `why`, and no cgroup made under any of `cgroups`.
fn assert_attach_refused(out: &Output, why: &str, dir: &Path, cgroups: &[&str]) {
    assert_eq!(out.status.code(), Some(2), "{}", stderr(out));
    assert!(stderr(out).contains(why), "{}", stderr(out));
    for c in cgroups {
        assert_eq!(
            std::fs::read_dir(dir.join("cg").join(c)).unwrap().count(),
            0,
            "a cgroup was left under {c}"
        );
    }
}

#[test]
fn attaching_to_no_process_moves_nothing() {
    let dir = scratch("attach-none");
    // Pids are below pid_max (at most 2^22): this one names no process.
    let out = attach(&dir, &[(4_194_305, "/work")]);
    assert_attach_refused(&out, "no process 4194305 to attach to", &dir, &["work"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn attaching_follows_one_cgroup() {
    let dir = scratch("attach-two");
    let mut a = Command::new("sleep").arg("30").spawn().unwrap();
    let mut b = Command::new("sleep").arg("30").spawn().unwrap();
    let out = attach(&dir, &[(a.id(), "/one"), (b.id(), "/two")]);
    let _ = (a.kill(), b.kill(), a.wait(), b.wait());
    assert_attach_refused(&out, "in different cgroups", &dir, &["one", "two"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn attaching_where_no_process_can_move_leaves_nothing() {
    let dir = scratch("attach-plain");
    let mut a = Command::new("sleep").arg("30").spawn().unwrap();
    // A plain directory: the cgroup made below it has no cgroup.procs.
    let out = attach(&dir, &[(a.id(), "/work")]);
    let _ = (a.kill(), a.wait());
    assert_attach_refused(&out, "is not a cgroup v2 directory", &dir, &["work"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn attaching_to_a_kernel_thread_is_refused() {
    let dir = scratch("attach-kthread");
    let mut a = Command::new("sleep").arg("30").spawn().unwrap();
    let args = attach_proc(&dir, &[(a.id(), "/work")]);
    // Its flags say PF_KTHREAD (0x200000); its name holds a space and a
    // parenthesis, as a command name may.
    std::fs::write(
        dir.join("proc").join(a.id().to_string()).join("stat"),
        format!(
            "{} (kworker/0:1 (x)) I 2 0 0 0 -1 2097216 0 0 0 0\n",
            a.id()
        ),
    )
    .unwrap();
    let out = reader_without_device(&args);
    let _ = (a.kill(), a.wait());
    assert_attach_refused(&out, "is a kernel thread", &dir, &["work"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ready_fd_needs_a_run_that_follows() {
    let out = reader_without_device(&["--ready-fd".to_owned(), "7".to_owned()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--ready-fd goes with --follow or -p"),
        "{}",
        stderr(&out)
    );
    // Not a descriptor the reader was given.
    let out = reader_without_device(&["--follow", "--ready-fd", "97"].map(str::to_owned));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--ready-fd 97"), "{}", stderr(&out));
}
