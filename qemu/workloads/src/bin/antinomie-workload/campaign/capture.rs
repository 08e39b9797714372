// SPDX-License-Identifier: GPL-2.0-only
//! The capture side of a pass `on`: the device's counters, `reader --follow
//! --enable --lossless` and its JSON summary, and the per-epoch accounting
//! check.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use antinomie_abi as abi;
use antinomie_workloads::device::Device;
use serde::Deserialize;

/// Per possible CPU: (cpu, produced, lost by reason), what the accounting
/// compares.
pub(super) fn counters(dev: &Device) -> Result<Vec<(u32, u64, [u64; abi::LOST_NR_SLOTS])>, String> {
    Ok(dev
        .counters()?
        .into_iter()
        .map(|c| (c.cpu, c.produced, c.lost))
        .collect())
}

/// `reader --follow --enable --lossless --summary json [-w TRACE]
/// [--cgroup DIR]`, its summary on stderr in a file. Lossless: a call
/// whose records would not fit waits for the reader, so an epoch loses no
/// record.
pub(super) struct Reader {
    child: Child,
    err_path: PathBuf,
}

impl Reader {
    /// Starts it, with `-w trace` and `--cgroup cgroup` if given, and waits
    /// until it says, on the pipe it inherits as `--ready-fd`, that it
    /// drains the rings: capture and lossless mode are on, and every
    /// record from then on waits in the rings for it.
    pub(super) fn start(
        bin: &Path,
        err_path: &Path,
        trace: Option<&Path>,
        cgroup: Option<&Path>,
    ) -> Result<Self, String> {
        let err =
            std::fs::File::create(err_path).map_err(|e| format!("{}: {e}", err_path.display()))?;
        // The write end is inherited (not close-on-exec): nothing else is
        // spawned meanwhile, the workers wait at the epoch's barrier.
        let (ready, ready_w) = ready_pipe()?;
        let mut command = Command::new(bin);
        command
            .args(["--follow", "--enable", "--lossless", "--summary", "json"])
            .arg("--ready-fd")
            .arg(ready_w.as_raw_fd().to_string())
            .args(
                trace
                    .iter()
                    .flat_map(|t| [std::ffi::OsStr::new("-w"), t.as_os_str()]),
            )
            .args(
                cgroup
                    .iter()
                    .flat_map(|c| [std::ffi::OsStr::new("--cgroup"), c.as_os_str()]),
            )
            .stdout(Stdio::null())
            .stderr(err);
        let mut child = command
            .spawn()
            .map_err(|e| format!("{}: {e}", bin.display()))?;
        // The reader holds the write end now: EOF means it exited.
        drop(ready_w);
        let mut said = String::new();
        let read = std::io::BufReader::new(ready).read_line(&mut said);
        if read.is_err() || said != "ready\n" {
            let _ = child.kill();
            let status = child.wait();
            return Err(format!(
                "reader --follow did not get ready ({read:?}, exit {status:?}): {}",
                std::fs::read_to_string(err_path).unwrap_or_default().trim()
            ));
        }
        Ok(Reader {
            child,
            err_path: err_path.to_owned(),
        })
    }

    /// SIGINT, wait, and the per-CPU rows of the JSON summary it printed.
    pub(super) fn stop(mut self) -> Result<Vec<SummaryRow>, String> {
        let pid = i32::try_from(self.child.id()).expect("a pid");
        // SAFETY: the reader is this process's child, not yet waited for.
        unsafe { libc::kill(pid, libc::SIGINT) };
        let status = self
            .child
            .wait()
            .map_err(|e| format!("waiting for the reader: {e}"))?;
        let text = std::fs::read_to_string(&self.err_path).unwrap_or_default();
        if !status.success() {
            return Err(format!(
                "reader --follow exited with {status}: {}",
                text.trim()
            ));
        }
        let summary = text
            .lines()
            .rfind(|l| l.starts_with('{'))
            .ok_or_else(|| format!("no JSON summary from the reader: {}", text.trim()))?;
        let summary: JsonSummary = serde_json::from_str(summary)
            .map_err(|e| format!("the reader's JSON summary: {e}: {summary}"))?;
        Ok(summary.cpus)
    }
}

/// A pipe whose read end is close-on-exec and whose write end is not:
/// (read end, write end), the write end for a child to inherit.
fn ready_pipe() -> Result<(std::fs::File, OwnedFd), String> {
    let mut fds = [0; 2];
    // SAFETY: pipe2() writes two descriptors into the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), 0) } == -1 {
        return Err(format!("pipe2: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: fds[0] was just made by pipe2(); F_SETFD touches no memory.
    if unsafe { libc::fcntl(fds[0], libc::F_SETFD, libc::FD_CLOEXEC) } == -1 {
        return Err(format!("fcntl: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: both were just made by pipe2() and are owned by nothing else.
    Ok(unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            OwnedFd::from_raw_fd(fds[1]),
        )
    })
}

/// The part of the reader's `--summary json` object an epoch checks
/// (reader/README.md has every key).
#[derive(Debug, Deserialize)]
struct JsonSummary {
    cpus: Vec<SummaryRow>,
}

/// One CPU of the reader's summary: the kernel's counters as the reader
/// read them from the ring's header last, and what it consumed.
#[derive(Debug, Deserialize)]
pub(super) struct SummaryRow {
    cpu: u32,
    /// `null` when the reader did not get the ring's final counters.
    produced: Option<u64>,
    consumed: u64,
    /// Lost records by reason (`ring_full`, `bad_consumer`, ...), `null`
    /// without final counters.
    lost: Option<BTreeMap<String, u64>>,
    skipped: u64,
    check: String,
}
/// The running totals of a pass.
#[derive(Debug, Default)]
pub(super) struct Tally {
    pub(super) capture_epochs: usize,
    pub(super) off_epochs: usize,
    pub(super) calls_captured: u64,
    pub(super) records_produced: u64,
    pub(super) records_lost: u64,
    /// Capture epochs after which the reader's exit freed the rings.
    pub(super) rings_freed: usize,
    /// A pass `bpf` or `on+bpf`: the contender's summary.
    pub(super) contender: Option<super::contender::ContenderSummary>,
    /// A pass `on+bpf`: each call's attr as each tracer recorded it against
    /// the attr the kernel used.
    pub(super) fidelity: Option<super::fidelity::Fidelity>,
    pub(super) mismatches: Vec<String>,
}

/// Checks one capture epoch: per CPU, the reader consumed what the kernel
/// produced, produced + lost = 2 records per call made on that CPU, and,
/// as the reader runs in lossless mode, none was lost. The counts are the
/// kernel's as the reader read them from each ring's header at its end:
/// the reader drained the rings and was their last user, so its exit
/// normally freed them, and `after` (`GET_COUNTERS` once it exited) shows
/// fresh rings, every counter 0. Rings that outlived it (their reaping
/// can also run from a workqueue once the last mapping goes, after the
/// next open) must hold exactly the counts the reader saw.
pub(super) fn check_epoch(
    e: usize,
    calls_on_cpu: &[(u32, u64)],
    rows: &[SummaryRow],
    after: &[(u32, u64, [u64; abi::LOST_NR_SLOTS])],
    tally: &mut Tally,
) {
    let freed = after
        .iter()
        .all(|(_, produced, lost)| *produced == 0 && lost.iter().all(|&l| l == 0));
    tally.rings_freed += usize::from(freed);
    for &(cpu, after_produced, after_lost) in after {
        let calls = calls_on_cpu
            .iter()
            .filter(|(c, _)| *c == cpu)
            .map(|(_, n)| n)
            .sum::<u64>();
        let mut why = Vec::new();
        match rows.iter().find(|r| r.cpu == cpu) {
            None => why.push("no row in the reader's summary".to_owned()),
            Some(SummaryRow { produced: None, .. } | SummaryRow { lost: None, .. }) => {
                why.push("the reader has no final counters of the ring".to_owned());
            }
            Some(
                r @ SummaryRow {
                    produced: Some(produced),
                    lost: Some(lost_by_reason),
                    ..
                },
            ) => {
                let produced = *produced;
                let lost: u64 = lost_by_reason.values().sum();
                tally.records_produced += produced;
                tally.records_lost += lost;
                let after_lost_all: u64 = after_lost.iter().sum();
                if !freed && (after_produced != produced || after_lost_all != lost) {
                    why.push(format!(
                        "the rings outlived the reader, and GET_COUNTERS says produced {after_produced}, lost {after_lost_all} where the reader saw {produced}, {lost}"
                    ));
                }
                if r.consumed != produced {
                    why.push(format!(
                        "the reader consumed {} of {produced} records produced",
                        r.consumed
                    ));
                }
                if r.skipped != 0 || r.check != "ok" {
                    why.push(format!(
                        "the reader's check says {}, {} records skipped",
                        r.check, r.skipped
                    ));
                }
                if produced + lost != 2 * calls {
                    why.push(format!(
                        "produced {produced} + lost {lost} != 2 records x {calls} calls made on it"
                    ));
                }
                if lost != 0 {
                    why.push(format!(
                        "{lost} records lost in lossless mode: {lost_by_reason:?}"
                    ));
                }
            }
        }
        if !why.is_empty() {
            tally
                .mismatches
                .push(format!("epoch {e}, cpu {cpu}: {}", why.join("; ")));
        }
    }
}
