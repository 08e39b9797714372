// SPDX-License-Identifier: GPL-2.0-only
//! The BPF side of a pass `bpf`: `antinomie-bpf` (`qemu/bpf-contender/`)
//! attached for the whole pass, draining its ring buffer to a file, and its
//! summary.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `antinomie-bpf --variant tp|raw`, its summary on stderr in a file.
pub(super) struct Contender {
    child: Child,
    err_path: PathBuf,
}

/// The counts of the contender's summary line that a pass reports.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct ContenderSummary {
    pub(super) produced: u64,
    pub(super) consumed: u64,
    pub(super) lost: u64,
    pub(super) entries: u64,
    pub(super) exits: u64,
    /// Entries whose attr read failed (`bpf_probe_read_user` does not fault
    /// pages in: a page the kernel would fault in reads as a failure).
    pub(super) fault: u64,
    pub(super) truncated: u64,
}

impl ContenderSummary {
    /// `antinomie-bpf: variant=tp drain=live produced=N consumed=N ...`
    fn parse(text: &str) -> Option<Self> {
        let line = text
            .lines()
            .find(|l| l.starts_with("antinomie-bpf: variant="))?;
        let fields: HashMap<&str, u64> = line
            .split_whitespace()
            .filter_map(|w| w.split_once('='))
            .filter_map(|(k, v)| Some((k, v.parse().ok()?)))
            .collect();
        Some(ContenderSummary {
            produced: *fields.get("produced")?,
            consumed: *fields.get("consumed")?,
            lost: *fields.get("lost")?,
            entries: *fields.get("entries")?,
            exits: *fields.get("exits")?,
            fault: *fields.get("fault")?,
            truncated: *fields.get("truncated")?,
        })
    }
}

impl Contender {
    /// Starts it and waits until its programs are attached.
    pub(super) fn start(
        bin: &Path,
        variant: &str,
        out: &Path,
        err_path: &Path,
    ) -> Result<Self, String> {
        let ready = err_path.with_extension("ready");
        let _ = std::fs::remove_file(&ready);
        let err =
            std::fs::File::create(err_path).map_err(|e| format!("{}: {e}", err_path.display()))?;
        let mut child = Command::new(bin)
            .arg("--variant")
            .arg(variant)
            .arg("--out")
            .arg(out)
            .arg("--ready")
            .arg(&ready)
            .stdout(Stdio::null())
            .stderr(err)
            .spawn()
            .map_err(|e| format!("{}: {e}", bin.display()))?;
        let t0 = Instant::now();
        while !ready.exists() {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!(
                    "antinomie-bpf exited with {status} before attaching: {}",
                    std::fs::read_to_string(err_path).unwrap_or_default().trim()
                ));
            }
            if t0.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                let _ = child.wait();
                return Err("antinomie-bpf did not attach within 60 s".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = std::fs::remove_file(&ready);
        Ok(Contender {
            child,
            err_path: err_path.to_owned(),
        })
    }

    /// SIGINT, wait, and its summary.
    pub(super) fn stop(mut self) -> Result<ContenderSummary, String> {
        let pid = i32::try_from(self.child.id()).expect("a pid");
        // SAFETY: the contender is this process's child, not yet waited for.
        unsafe { libc::kill(pid, libc::SIGINT) };
        let status = self
            .child
            .wait()
            .map_err(|e| format!("waiting for antinomie-bpf: {e}"))?;
        let text = std::fs::read_to_string(&self.err_path).unwrap_or_default();
        let _ = std::fs::remove_file(&self.err_path);
        if !status.success() {
            return Err(format!(
                "antinomie-bpf exited with {status}: {}",
                text.trim()
            ));
        }
        ContenderSummary::parse(&text)
            .ok_or_else(|| format!("no summary from antinomie-bpf: {}", text.trim()))
    }
}

#[cfg(test)]
mod tests {
    use super::ContenderSummary;

    #[test]
    fn parses_the_summary_line() {
        let text = "libbpf: noise\nantinomie-bpf: variant=tp drain=live produced=10 consumed=9 \
                    lost=1 unread=0 entries=5 exits=4 malformed=0 unreadable_exits=0 \
                    complete=2 null=1 fault=1 truncated=1\n";
        assert_eq!(
            ContenderSummary::parse(text),
            Some(ContenderSummary {
                produced: 10,
                consumed: 9,
                lost: 1,
                entries: 5,
                exits: 4,
                fault: 1,
                truncated: 1,
            })
        );
        assert_eq!(
            ContenderSummary::parse("antinomie-bpf: variant=tp produced=x"),
            None
        );
    }
}
