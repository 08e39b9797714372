// SPDX-License-Identifier: GPL-2.0-only
//! The cgroup v2 directory COMMAND runs in, and the capture is limited
//! to: made for the run under the cgroup2 mount (`antinomie-reader.PID`,
//! removed at the end), or the one `--cgroup DIR` names (left as it is).
//!
//! The mount is the first `cgroup2` line of `/proc/self/mountinfo`; the
//! reader's own cgroup, where what COMMAND leaves running goes before the
//! directory is removed, is the `0::` line of `/proc/self/cgroup` (a path
//! below the mount's root: in a cgroup namespace or a bind mount, the
//! mount shows a subtree). Both are read from `--proc` (`/proc`), so that
//! the tests can give the reader a system without cgroup2.

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rustix::process::Pid;

use antinomie_reader::device::Device;

/// A cgroup2 mount, from a line of `/proc/PID/mountinfo`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Mount {
    /// The cgroup mounted there, as `/proc/PID/cgroup` names cgroups.
    pub(crate) root: PathBuf,
    /// Where it is mounted.
    pub(crate) point: PathBuf,
}

/// The first cgroup2 mount of a `/proc/PID/mountinfo`: `ID PARENT
/// MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER`, paths
/// with space, tab, newline and backslash escaped in octal.
pub(crate) fn cgroup2_mount(mountinfo: &str) -> Option<Mount> {
    mountinfo.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(' ').collect();
        let dash = fields.iter().skip(6).position(|f| *f == "-")? + 6;
        (fields.get(dash + 1) == Some(&"cgroup2")).then(|| Mount {
            root: unescape(fields[3]),
            point: unescape(fields[4]),
        })
    })
}

/// A mountinfo path field: `\NNN` (three octal digits) is that byte.
fn unescape(field: &str) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b.get(i + 1..i + 4).filter(|d| {
            b[i] == b'\\' && d[0] <= b'3' && d.iter().all(|c| (b'0'..=b'7').contains(c))
        });
        if let Some(d) = octal {
            out.push(d.iter().fold(0u8, |n, c| n * 8 + (c - b'0')));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

/// The cgroup v2 path of `/proc/PID/cgroup`: its `0::PATH` line.
pub(crate) fn unified_path(proc_cgroup: &str) -> Option<&str> {
    proc_cgroup.lines().find_map(|l| l.strip_prefix("0::"))
}

/// The directory of the cgroup `path` (as `/proc/PID/cgroup` names it)
/// under `mount`; `None` when the mount does not show it.
pub(crate) fn dir_under(mount: &Mount, path: &str) -> Option<PathBuf> {
    let rel = Path::new(path).strip_prefix(&mount.root).ok()?;
    Some(mount.point.join(rel))
}

/// The cgroup COMMAND runs in, or the processes `-p` attaches to are
/// moved to.
#[derive(Debug)]
pub(crate) struct WorkCgroup {
    dir: PathBuf,
    /// Its `cgroup.procs`, opened before COMMAND is forked: a cgroup the
    /// reader cannot add a process to is refused before anything runs.
    procs: File,
    /// For a directory made for this run, where what is in it at the end
    /// goes before the directory is removed.
    made_from: Option<Home>,
}

/// Where the processes of a directory made for a run go at its end.
#[derive(Debug)]
enum Home {
    /// The reader's own cgroup, for what COMMAND left running (a warning:
    /// the reader neither waits for nor kills what it did not start).
    Reader(PathBuf),
    /// The cgroup the attached processes came from, their parent: they
    /// go back, with whatever they started meanwhile.
    Attached(PathBuf),
}

impl Home {
    fn dir(&self) -> &Path {
        match self {
            Home::Reader(dir) | Home::Attached(dir) => dir,
        }
    }
}

impl WorkCgroup {
    /// `--cgroup DIR`: COMMAND runs in DIR, which stays.
    pub(crate) fn given(dir: &Path) -> Result<Self> {
        Ok(WorkCgroup {
            procs: open_procs(dir)?,
            dir: dir.to_path_buf(),
            made_from: None,
        })
    }

    /// A directory made for this run under the cgroup2 mount that `proc`
    /// (procfs) names.
    pub(crate) fn make(proc: &Path) -> Result<Self> {
        let read = |name: &str| {
            let path = proc.join("self").join(name);
            fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))
        };
        let mount = mounted(
            proc,
            "`reader -- COMMAND` runs COMMAND in a cgroup of its own",
        )?;
        let own = read("cgroup")?;
        let Some(home) = unified_path(&own).and_then(|p| dir_under(&mount, p)) else {
            bail!(
                "the reader's own cgroup ({} says {:?}) is not under the cgroup2 mount {}: \
                 what COMMAND leaves running could not be moved back to it",
                proc.join("self/cgroup").display(),
                unified_path(&own).unwrap_or("no cgroup v2 line"),
                mount.point.display()
            );
        };
        let dir = mount
            .point
            .join(format!("antinomie-reader.{}", std::process::id()));
        fs::create_dir(&dir).with_context(|| {
            format!(
                "creating the cgroup {} for COMMAND (the reader needs write access to the \
                 cgroup2 hierarchy; --cgroup DIR names a cgroup to use instead)",
                dir.display()
            )
        })?;
        Self::made(dir, Home::Reader(home))
    }

    /// A directory made below the cgroup of the processes `pids` (all in
    /// one), for `-p`: moved there, they keep their cgroup's limits, which
    /// apply to its whole subtree, and go back to it at the end.
    pub(crate) fn below_cgroup_of(proc: &Path, pids: &[u32]) -> Result<Self> {
        let mount = mounted(proc, "-p moves the process into a cgroup of its own")?;
        let mut home: Option<(u32, String)> = None;
        for &pid in pids {
            let path = proc.join(pid.to_string()).join("cgroup");
            let text = fs::read_to_string(&path).with_context(|| {
                format!("reading {} (is there a process {pid}?)", path.display())
            })?;
            let cgroup = unified_path(&text)
                .with_context(|| format!("{} has no cgroup v2 line", path.display()))?
                .to_owned();
            match &home {
                None => home = Some((pid, cgroup)),
                Some((first, c)) if *c != cgroup => bail!(
                    "the processes to attach to are in different cgroups ({first} in {c}, {pid} \
                     in {cgroup}): the capture follows one; attach to them one at a time"
                ),
                Some(_) => {}
            }
        }
        let Some((first, cgroup)) = home else {
            bail!("no process to attach to");
        };
        let Some(home) = dir_under(&mount, &cgroup) else {
            bail!(
                "the cgroup of process {first} ({cgroup}) is not under the cgroup2 mount {}",
                mount.point.display()
            );
        };
        let dir = home.join(format!("antinomie-reader.{}", std::process::id()));
        fs::create_dir(&dir).with_context(|| {
            format!(
                "creating the cgroup {} below the one of process {first} (the reader needs write \
                 access there)",
                dir.display()
            )
        })?;
        Self::made(dir, Home::Attached(home))
    }

    /// `dir`, just made, which goes at the end.
    fn made(dir: PathBuf, home: Home) -> Result<Self> {
        match open_procs(&dir) {
            Ok(procs) => Ok(WorkCgroup {
                dir,
                procs,
                made_from: Some(home),
            }),
            Err(e) => {
                let _ = fs::remove_dir(&dir);
                Err(e)
            }
        }
    }

    /// The directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Limits `dev`'s capture to the cgroup and below it.
    pub(crate) fn limit_capture(&self, dev: &mut Device) -> Result<()> {
        let dir = File::open(&self.dir)
            .with_context(|| format!("opening the cgroup {}", self.dir.display()))?;
        dev.set_scope(dir.as_fd())
            .with_context(|| format!("limiting capture to the cgroup {}", self.dir.display()))
    }

    /// Moves process `pid` (with all its threads) into the cgroup.
    pub(crate) fn add(&self, pid: Pid) -> Result<()> {
        (&self.procs)
            .write_all(pid.as_raw_nonzero().to_string().as_bytes())
            .with_context(|| {
                format!(
                    "moving process {pid} into the cgroup {}",
                    self.dir.display()
                )
            })
    }
}

/// The cgroup2 mount that `proc` (procfs) names in `self/mountinfo`, or
/// an error that says `why` the reader needs one and how to mount it.
fn mounted(proc: &Path, why: &str) -> Result<Mount> {
    let path = proc.join("self/mountinfo");
    let mountinfo =
        fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    cgroup2_mount(&mountinfo).with_context(|| {
        format!(
            "no cgroup v2 hierarchy is mounted ({} has no cgroup2 line): {why}; mount cgroup2 \
             first (`mount -t cgroup2 none /sys/fs/cgroup`)",
            path.display()
        )
    })
}

fn open_procs(dir: &Path) -> Result<File> {
    let path = dir.join("cgroup.procs");
    OpenOptions::new().write(true).open(&path).with_context(|| {
        format!(
            "{} is not a cgroup v2 directory the reader can add COMMAND to: opening {}",
            dir.display(),
            path.display()
        )
    })
}

impl Drop for WorkCgroup {
    /// A directory made for the run goes, once what is in it (and in
    /// cgroups made below it) is moved to its [`Home`].
    fn drop(&mut self) {
        let Some(home) = &self.made_from else {
            return;
        };
        let mut moved = BTreeSet::new();
        if let Err(e) = empty_and_remove(&self.dir, home.dir(), &mut moved) {
            tracing::warn!("could not remove the cgroup {}: {e:#}", self.dir.display());
        }
        if moved.is_empty() {
            return;
        }
        match home {
            Home::Reader(to) => {
                let (n, what) = match moved.len() {
                    1 => (1, "process COMMAND left behind still runs"),
                    n => (n, "processes COMMAND left behind still run"),
                };
                tracing::warn!(
                    "{n} {what}: moved from {} to the reader's cgroup {}",
                    self.dir.display(),
                    to.display()
                );
            }
            Home::Attached(to) => {
                tracing::info!("{} processes moved back to {}", moved.len(), to.display());
            }
        }
    }
}

/// Moves the processes of `dir` and of the cgroups below it to `home`
/// (adding their pids to `moved`), and removes them, deepest first.
fn empty_and_remove(dir: &Path, home: &Path, moved: &mut BTreeSet<u32>) -> Result<()> {
    for entry in fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let entry = entry.with_context(|| format!("listing {}", dir.display()))?;
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            empty_and_remove(&entry.path(), home, moved)?;
        }
    }
    // A process may fork while it is moved: read again until none is left.
    let procs = dir.join("cgroup.procs");
    let home_procs = home.join("cgroup.procs");
    for _ in 0..100 {
        let pids: Vec<u32> = fs::read_to_string(&procs)
            .with_context(|| format!("reading {}", procs.display()))?
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if pids.is_empty() {
            return remove_emptied(dir);
        }
        let mut to = OpenOptions::new()
            .write(true)
            .open(&home_procs)
            .with_context(|| format!("opening {}", home_procs.display()))?;
        for pid in pids {
            match to.write_all(pid.to_string().as_bytes()) {
                // Exited meanwhile.
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                r => {
                    r.with_context(|| format!("moving pid {pid} to {}", home.display()))?;
                    moved.insert(pid);
                }
            }
        }
    }
    Err(io::Error::other("processes keep appearing in it"))
        .context(format!("emptying {}", dir.display()))
}

/// Removes the cgroup `dir`, emptied: EBUSY while a task that left it is
/// still exiting (a zombie keeps its cgroup populated until reaped).
fn remove_emptied(dir: &Path) -> Result<()> {
    for _ in 0..50 {
        match fs::remove_dir(dir) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            r => return r.with_context(|| format!("removing {}", dir.display())),
        }
    }
    fs::remove_dir(dir)
        .with_context(|| format!("removing {} (still busy after 1 s)", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// From a host with cgroup v1 controllers and the unified hierarchy
    /// beside them, a container (cgroup namespace, optional fields), and
    /// a mount point with a space.
    const MOUNTINFO: &str = "\
22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:9 master:3 - cgroup2 cgroup2 rw
42 31 0:38 /work /mnt/my\\040cgroups rw,relatime - cgroup2 none rw
";

    #[test]
    fn the_first_cgroup2_mount_is_found() {
        assert_eq!(
            cgroup2_mount(MOUNTINFO),
            Some(Mount {
                root: "/".into(),
                point: "/sys/fs/cgroup/unified".into()
            })
        );
        let second = MOUNTINFO.lines().nth(4).unwrap();
        assert_eq!(
            cgroup2_mount(second),
            Some(Mount {
                root: "/work".into(),
                point: "/mnt/my cgroups".into()
            })
        );
        // cgroup v1 only, a filesystem named like an option, and garbage.
        assert_eq!(
            cgroup2_mount(&MOUNTINFO.lines().take(3).collect::<Vec<_>>().join("\n")),
            None
        );
        assert_eq!(cgroup2_mount("1 2 3:4 / /x cgroup2 - tmpfs none rw"), None);
        assert_eq!(cgroup2_mount("cgroup2 - cgroup2"), None);
        assert_eq!(cgroup2_mount(""), None);
    }

    #[test]
    fn escapes_are_undone() {
        assert_eq!(
            unescape(r"/a\040b\011c\012d\134e"),
            PathBuf::from("/a b\tc\nd\\e")
        );
        // Not an escape: kept as it is.
        assert_eq!(unescape(r"/a\09"), PathBuf::from(r"/a\09"));
        assert_eq!(unescape(r"/a\4"), PathBuf::from(r"/a\4"));
    }

    #[test]
    fn the_own_cgroup_is_the_unified_line() {
        let hybrid = "9:name=systemd:/\n4:memory:/x/y\n0::/system.slice/job.scope\n";
        assert_eq!(unified_path(hybrid), Some("/system.slice/job.scope"));
        assert_eq!(unified_path("0::/\n"), Some("/"));
        assert_eq!(unified_path("4:memory:/x\n"), None);
        let mount = Mount {
            root: "/".into(),
            point: "/sys/fs/cgroup".into(),
        };
        assert_eq!(dir_under(&mount, "/"), Some("/sys/fs/cgroup".into()));
        assert_eq!(dir_under(&mount, "/a/b"), Some("/sys/fs/cgroup/a/b".into()));
        let sub = Mount {
            root: "/work".into(),
            point: "/mnt/c".into(),
        };
        assert_eq!(dir_under(&sub, "/work/job"), Some("/mnt/c/job".into()));
        assert_eq!(dir_under(&sub, "/work"), Some("/mnt/c".into()));
        // Outside the mounted subtree (or a sibling named alike).
        assert_eq!(dir_under(&sub, "/other"), None);
        assert_eq!(dir_under(&sub, "/workshop"), None);
    }
}
