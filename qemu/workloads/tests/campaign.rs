// SPDX-License-Identifier: GPL-2.0-only
//! `antinomie-workload campaign` on the host kernel, without a capture
//! device: two passes with capture off must agree call by call (the
//! generator, its userfaultfd pages and its fd handling are deterministic,
//! so a difference in the guest's off/on passes is the capture's), and each
//! `--test-break` makes the run fail with a line that names what differed.

use std::process::{Command, Output};

fn campaign(passes: &str, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_antinomie-workload"))
        .args([
            "campaign",
            "--seed",
            "3",
            "--calls",
            "6000",
            "--burst",
            "500",
            "--passes",
            passes,
            "--device",
            "/nonexistent/antinomie",
        ])
        .args(extra)
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn two_passes_with_capture_off_agree_call_by_call() {
    let out = campaign("off,off", &[]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("pass 1 (Off) vs pass 0 (Off): 0 differences"),
        "{t}"
    );
    assert!(t.contains("pass 0 (Off): 6000 calls (+4 leaders)"), "{t}");
    // The userfaultfd pages were used: some calls faulted on them.
    let faults: u64 = t
        .lines()
        .find(|l| l.starts_with("campaign: pass 0 (Off): 6000 calls"))
        .and_then(|l| l.split(", ").find(|p| p.ends_with("userfaultfd faults")))
        .and_then(|p| p.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(faults > 0, "{t}");
}

#[test]
fn a_changed_result_fails_the_differential_with_the_call_named() {
    let out = campaign("off,off", &["--test-break", "outcome"]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(
        t.contains("campaign: DIFFERENCE thread 0 call 0 (size "),
        "{t}"
    );
    assert!(
        t.contains("pass 1 (Off) vs pass 0 (Off): 1 differences"),
        "{t}"
    );
    assert!(t.contains("campaign: FAILED"), "{t}");
}

#[test]
fn a_pass_on_needs_the_device() {
    let out = campaign("off,on", &[]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(
        t.contains("campaign: FAIL /nonexistent/antinomie is missing"),
        "{t}"
    );
}
