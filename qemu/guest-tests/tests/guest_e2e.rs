// SPDX-License-Identifier: GPL-2.0-only
//! The golden ring images captured in the guest
//! (`reader/tests/data/guest/NAME/`, written by `scripts/capture-golden.sh`),
//! checked against the log of the workload that made them: `reader show
//! --format json` of the images, and the committed `expected.jsonl`, must
//! both agree field by field with what `antinomie-e2e compare` derives from
//! `workload.jsonl` (every call for `compare: exact`, the shown ones for
//! `compare: --subset`). The byte-exact `expected.txt`/`expected.jsonl`
//! themselves are checked by the reader crate's `golden` test.
//!
//! The reader is another crate of the workspace, so Cargo does not hand
//! this test its binary: [`reader_bin`] asks Cargo to build it (a no-op
//! when `cargo test --workspace` already did) and takes the path Cargo
//! reports.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The `reader` binary of this workspace, built by Cargo for this run.
fn reader_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let out = Command::new(env!("CARGO"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args([
                "build",
                "--locked",
                "--quiet",
                "--package",
                "antinomie-reader-cli",
                "--bin",
                "reader",
                "--message-format",
                "json",
            ])
            .output()
            .expect("cannot run cargo to build the reader");
        assert!(
            out.status.success(),
            "cargo build of the reader failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "reader")
            .find_map(|m| m["executable"].as_str().map(PathBuf::from))
            .expect("cargo reported no reader executable")
    })
}

fn guest_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reader/tests/data/guest");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .map(|d| {
            d.map(|e| e.unwrap().path())
                .filter(|p| p.join("workload.jsonl").is_file())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

/// The `cpuN.ring` images of `dir`, in order.
fn ring_images(dir: &Path) -> Vec<PathBuf> {
    let mut rings: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ring"))
        .collect();
    rings.sort();
    rings
}

/// The comparator's mode flags from `capture.txt`'s `compare:` line.
fn mode(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("capture.txt")).unwrap_or_default();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("compare:"))
        .unwrap_or("exact")
        .trim();
    if line == "exact" {
        Vec::new()
    } else {
        line.split_whitespace().map(str::to_owned).collect()
    }
}

fn compare(dir: &Path, reader_json: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_antinomie-e2e"))
        .arg("compare")
        .args(mode(dir))
        .arg("--workload")
        .arg(dir.join("workload.jsonl"))
        .arg("--reader")
        .arg(reader_json)
        // No dynamic PMU names: as `reader show` without --pmu.
        .arg("--sysfs")
        .arg("/nonexistent")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{}: {} differs from the workload's log:\n{stdout}\n{stderr}",
        dir.display(),
        reader_json.display()
    );
    assert!(stdout.contains(" 0 failures"), "{stdout}");
}

#[test]
fn guest_images_decode_to_what_the_workload_did() {
    let dirs = guest_dirs();
    assert!(
        !dirs.is_empty(),
        "no guest golden images under reader/tests/data/guest"
    );
    for dir in dirs {
        let rings = ring_images(&dir);
        assert!(!rings.is_empty(), "{}: no ring images", dir.display());
        let shown = Command::new(reader_bin())
            .args(["show", "--format", "json", "--no-summary"])
            .args(&rings)
            .output()
            .unwrap();
        assert!(
            shown.status.success(),
            "{}: reader show failed",
            dir.display()
        );
        let tmp = std::env::temp_dir().join(format!(
            "antinomie-guest-{}-{}.jsonl",
            dir.file_name().unwrap().to_string_lossy(),
            std::process::id()
        ));
        std::fs::write(&tmp, &shown.stdout).unwrap();
        compare(&dir, &tmp);
        std::fs::remove_file(&tmp).unwrap();
        let expected = dir.join("expected.jsonl");
        if expected.is_file() {
            compare(&dir, &expected);
        }
    }
}

/// `antinomie-e2e filters` on the golden images: every field of `reader
/// fields` and the scenario cases select exactly the calls the workload's
/// log says (the check the `filter-e2e` guest scenario runs on a live
/// trace); on the lossy images (`--lossy`), every field again, with the
/// unfinished and entry-lost calls and the LOST records.
#[test]
fn filters_select_what_the_workload_did() {
    let dirs = guest_dirs();
    assert!(!dirs.is_empty(), "no guest golden images");
    for dir in dirs {
        let rings = ring_images(&dir);
        let lossy = !mode(&dir).is_empty();
        let out = Command::new(env!("CARGO_BIN_EXE_antinomie-e2e"))
            .arg("filters")
            .args(lossy.then_some("--lossy"))
            .arg("--reader")
            .arg(reader_bin())
            .arg("--workload")
            .arg(dir.join("workload.jsonl"))
            // The workload's `unknown-type` call (type 999) gets the
            // kprobe aliases of config1 and config2.
            .args(["--pmu", "kprobe=999"])
            .args(&rings)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{}: a filter selected other calls:\n{stdout}\n{stderr}",
            dir.display()
        );
        assert!(stdout.contains("filters: ok:"), "{stdout}");
    }
}

/// `antinomie-e2e diff-check` on the basic run against a copy where one
/// success became `EINVAL` and one `E2BIG` a success, in the workload's
/// log and in the reader's JSON alike (what a kernel change would do):
/// `reader diff` must report exactly those two calls, and the check must
/// fail on a diff that misses them or on logs that agree.
#[test]
fn diff_check_finds_the_changed_calls() {
    use serde_json::{json, Value};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reader/tests/data/guest/basic");
    let tmp = std::env::temp_dir().join(format!("antinomie-diffcheck-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let lines = |p: &Path| -> Vec<Value> {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let write = |name: &str, v: &[Value]| {
        let p = tmp.join(name);
        let text: String = v.iter().map(|l| l.to_string() + "\n").collect();
        std::fs::write(&p, text).unwrap();
        p
    };
    let (work_a, reader_a) = (dir.join("workload.jsonl"), dir.join("expected.jsonl"));
    let (mut work, mut shown) = (lines(&work_a), lines(&reader_a));
    let ok = work
        .iter()
        .position(|w| w["ret"].as_i64() >= Some(0))
        .unwrap();
    let e2big = work.iter().position(|w| w["errno"] == 7).unwrap();
    for (k, ret) in [(ok, -22), (e2big, 9)] {
        let tag = work[k]["args"][5].clone();
        let failed = ret < 0;
        let w = &mut work[k];
        w["ret"] = json!(ret);
        w["errno"] = if failed { json!(22) } else { Value::Null };
        w["required_size"] = Value::Null;
        let r = shown.iter_mut().find(|r| r["args.5"] == tag).unwrap();
        r["ret"] = json!(ret);
        r["syscall.errno"] = if failed { json!(22) } else { Value::Null };
        r["syscall.errno_name"] = if failed { json!("EINVAL") } else { Value::Null };
        r["syscall.success"] = json!(!failed);
        r["arg0.required_size"] = Value::Null;
    }
    let (work_b, reader_b) = (
        write("work-b.jsonl", &work),
        write("reader-b.jsonl", &shown),
    );
    let diff = |a: &Path, b: &Path, name: &str| {
        let out = Command::new(reader_bin())
            .args(["diff", "--format", "json"])
            .args([a, b])
            .output()
            .unwrap();
        write(
            name,
            &String::from_utf8(out.stdout)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect::<Vec<Value>>(),
        )
    };
    let check = |wa: &Path, wb: &Path, d: &Path| {
        Command::new(env!("CARGO_BIN_EXE_antinomie-e2e"))
            .arg("diff-check")
            .arg("--workload-a")
            .arg(wa)
            .arg("--workload-b")
            .arg(wb)
            .arg("--diff")
            .arg(d)
            .output()
            .unwrap()
    };
    let changed = diff(&reader_a, &reader_b, "changed.json");
    let out = check(&work_a, &work_b, &changed);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("2 must differ (2 by result); reader diff reported 2; 0 mismatches"),
        "{stdout}"
    );
    // A diff that reports nothing misses both calls.
    let equal = diff(&reader_a, &reader_a, "equal.json");
    let out = check(&work_a, &work_b, &equal);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr)
            .matches("not reported")
            .count(),
        2
    );
    // Logs that agree: both reported calls are extra.
    let out = check(&work_a, &work_a, &changed);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("reported as [ret"));
    let _ = std::fs::remove_dir_all(&tmp);
}
