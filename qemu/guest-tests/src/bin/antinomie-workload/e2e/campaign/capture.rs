//! The capture side of a pass `on`: the device's counters, `reader --follow
//! --enable --lossless` and its summary, and the per-epoch accounting check.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use antinomie_abi as abi;
use antinomie_guest_tests::device::Device;

/// Per possible CPU: (cpu, produced, lost by reason), what the accounting
/// compares.
pub(super) fn counters(dev: &Device) -> Result<Vec<(u32, u64, [u64; abi::LOST_NR_SLOTS])>, String> {
    Ok(dev
        .counters()?
        .into_iter()
        .map(|c| (c.cpu, c.produced, c.lost))
        .collect())
}

/// `reader --follow --enable --lossless [-w TRACE] [--cgroup DIR]`, its
/// summary on stderr in a file. Lossless: a call whose records would not
/// fit waits for the reader, so an epoch loses no record.
pub(super) struct Reader {
    child: Child,
    err_path: PathBuf,
}

impl Reader {
    /// Starts it, with `-w trace` and `--cgroup cgroup` if given, and waits
    /// until capture is on.
    pub(super) fn start(
        bin: &Path,
        err_path: &Path,
        trace: Option<&Path>,
        cgroup: Option<&Path>,
    ) -> Result<Self, String> {
        let err =
            std::fs::File::create(err_path).map_err(|e| format!("{}: {e}", err_path.display()))?;
        let mut child = Command::new(bin)
            .args(["--follow", "--enable", "--lossless"])
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
            .stderr(err)
            .spawn()
            .map_err(|e| format!("{}: {e}", bin.display()))?;
        let maps = format!("/proc/{}/maps", child.id());
        let t0 = Instant::now();
        // Capture is on once the reader maps the rings (it enables first).
        while !std::fs::read_to_string(&maps).is_ok_and(|m| m.contains("/dev/antinomie")) {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!(
                    "reader --follow exited with {status} before mapping the rings: {}",
                    std::fs::read_to_string(err_path).unwrap_or_default().trim()
                ));
            }
            if t0.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                let _ = child.wait();
                return Err("reader --follow did not map the rings within 60 s".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Reader {
            child,
            err_path: err_path.to_owned(),
        })
    }

    /// SIGINT, wait, and the rows of the summary it printed.
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
        let rows: Vec<SummaryRow> = text.lines().filter_map(SummaryRow::parse).collect();
        if rows.is_empty() {
            return Err(format!(
                "no per-CPU rows in the reader's summary: {}",
                text.trim()
            ));
        }
        Ok(rows)
    }
}

/// One CPU row of the reader's summary table: the kernel's counters as
/// the reader read them from the ring's header last, and what it consumed.
#[derive(Debug)]
pub(super) struct SummaryRow {
    cpu: u32,
    produced: u64,
    consumed: u64,
    ring_full: u64,
    bad_consumer: u64,
    skipped: u64,
    check: String,
}

impl SummaryRow {
    /// `cpu produced consumed ring_full (reported) bad_cons (reported) skipped check...`
    fn parse(line: &str) -> Option<Self> {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.len() < 9 {
            return None;
        }
        Some(SummaryRow {
            cpu: w[0].parse().ok()?,
            produced: w[1].parse().ok()?,
            consumed: w[2].parse().ok()?,
            ring_full: w[3].parse().ok()?,
            bad_consumer: w[5].parse().ok()?,
            skipped: w[7].parse().ok()?,
            check: w[8..].join(" "),
        })
    }
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
            Some(r) => {
                let lost = r.ring_full + r.bad_consumer;
                tally.records_produced += r.produced;
                tally.records_lost += lost;
                let after_lost_all: u64 = after_lost.iter().sum();
                if !freed && (after_produced != r.produced || after_lost_all != lost) {
                    why.push(format!(
                        "the rings outlived the reader, and GET_COUNTERS says produced {after_produced}, lost {after_lost_all} where the reader saw {}, {lost}",
                        r.produced
                    ));
                }
                if r.consumed != r.produced {
                    why.push(format!(
                        "the reader consumed {} of {} records produced",
                        r.consumed, r.produced
                    ));
                }
                if r.skipped != 0 || !r.check.starts_with("ok") {
                    why.push(format!(
                        "the reader's check says {}, {} records skipped",
                        r.check, r.skipped
                    ));
                }
                if r.produced + lost != 2 * calls {
                    why.push(format!(
                        "produced {} + lost {lost} != 2 records x {calls} calls made on it",
                        r.produced
                    ));
                }
                if lost != 0 {
                    why.push(format!("{lost} records lost in lossless mode"));
                }
                if r.bad_consumer != 0 {
                    why.push(format!(
                        "{} records lost to a bad consumer position",
                        r.bad_consumer
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
