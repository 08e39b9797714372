// SPDX-License-Identifier: GPL-2.0-only
//! The `reader` binary's strace-like options on the guest's golden images
//! and on a trace recorded from them: `-o FILE`, `-p PID` / `--tid TID`
//! (the same calls as the filter they stand for), and the time styles
//! `-t`, `-tt`, `-ttt`, `-r`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::{guest_rings, guest_trace};

fn reader(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_reader"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout_of(args: &[&str]) -> String {
    let out = reader(args);
    assert!(
        out.status.success(),
        "reader {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn basic_rings() -> Vec<PathBuf> {
    guest_rings("basic")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("antinomie-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `reader show ARGS... RINGS...`.
fn show(args: &[&str], rings: &[PathBuf]) -> String {
    let mut all = vec!["show", "--no-summary"];
    all.extend_from_slice(args);
    all.extend(rings.iter().map(|p| p.to_str().unwrap()));
    stdout_of(&all)
}

/// A trace of the basic images whose header says the wall clock was
/// `offset` ns ahead of `CLOCK_MONOTONIC`.
fn trace_with_offset(dir: &Path, offset: Option<i64>) -> PathBuf {
    let path = dir.join("basic.trace");
    std::fs::write(&path, guest_trace("basic", offset)).unwrap();
    path
}

#[test]
fn dash_o_writes_the_lines_to_a_file() {
    let rings = basic_rings();
    let dir = scratch("o");
    let file = dir.join("calls.jsonl");
    let printed = show(&["--format", "json", "-o", file.to_str().unwrap()], &rings);
    assert_eq!(printed, "", "-o must leave stdout empty");
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(written, show(&["--format", "json"], &rings));
    assert!(written.lines().count() > 10);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn pid_and_tid_select_what_their_filters_select() {
    let rings = basic_rings();
    let all = show(&["--format", "json"], &rings);
    let lines: Vec<Value> = all
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let tids: Vec<u64> = {
        let mut t: Vec<u64> = lines.iter().filter_map(|l| l["tid"].as_u64()).collect();
        t.sort_unstable();
        t.dedup();
        t
    };
    assert!(tids.len() >= 2, "the basic images hold several threads");
    let pid = lines[0]["pid"].as_u64().unwrap().to_string();
    let (t1, t2) = (tids[0].to_string(), tids[1].to_string());

    let by_p = show(&["--format", "json", "--pid", &pid], &rings);
    assert_eq!(
        by_p,
        show(
            &["--format", "json", "--filter", &format!("pid == {pid}")],
            &rings
        )
    );
    assert!(!by_p.is_empty());
    assert_eq!(show(&["--format", "json", "--pid", "999999"], &rings), "");

    let by_tid = show(&["--format", "json", "--tid", &t1, "--tid", &t2], &rings);
    let expected = show(
        &[
            "--format",
            "json",
            "--filter",
            &format!("tid == {t1} || tid == {t2}"),
        ],
        &rings,
    );
    assert_eq!(by_tid, expected);
    assert!(
        by_tid.lines().count() < lines.len(),
        "two threads are a proper subset"
    );

    // And-ed with --filter.
    let both = show(
        &[
            "--format",
            "json",
            "--tid",
            &t1,
            "--filter",
            "syscall.success",
        ],
        &rings,
    );
    let expected = show(
        &[
            "--format",
            "json",
            "--filter",
            &format!("syscall.success && tid == {t1}"),
        ],
        &rings,
    );
    assert_eq!(both, expected);

    // A bad --filter still points into the user's own expression.
    let out = reader(&[
        "show",
        "--tid",
        &t1,
        "--filter",
        "ret ==",
        rings[0].to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ret =="), "{err}");
    assert!(!err.contains("tid in"), "{err}");
}

/// The time column of text lines.
fn times(text: &str) -> Vec<&str> {
    text.lines().map(|l| l.split_once(' ').unwrap().0).collect()
}

#[test]
fn time_styles_follow_strace() {
    let dir = scratch("t");
    // Any offset: wall clock = monotonic + offset (here, late 2025).
    let offset: i64 = 1_764_504_000_000_000_000;
    let trace = trace_with_offset(&dir, Some(offset));
    let t = trace.to_str().unwrap();
    let mono = show(&[], std::slice::from_ref(&trace));
    let mono_ns: Vec<u64> = times(&mono)
        .iter()
        .map(|s| {
            let (sec, frac) = s.split_once('.').unwrap();
            sec.parse::<u64>().unwrap() * 1_000_000_000 + frac.parse::<u64>().unwrap()
        })
        .collect();
    assert!(mono_ns.len() > 10);

    // -ttt: epoch seconds with microseconds.
    let epoch = stdout_of(&["show", "--no-summary", "-ttt", t]);
    for (s, ns) in times(&epoch).iter().zip(&mono_ns) {
        let wall = i128::from(*ns) + i128::from(offset);
        let want = format!(
            "{}.{:06}",
            wall / 1_000_000_000,
            (wall % 1_000_000_000) / 1000
        );
        assert_eq!(*s, want);
    }
    // -tt and -t: time of day, with and without microseconds (TZ=UTC).
    let run_tz = |flag: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_reader"))
            .args(["show", "--no-summary", flag, t])
            .env("TZ", "UTC")
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let tt = run_tz("-tt");
    let t1 = run_tz("-t");
    for ((a, b), ns) in times(&tt).iter().zip(times(&t1)).zip(&mono_ns) {
        let wall = i128::from(*ns) + i128::from(offset);
        let secs = wall / 1_000_000_000;
        let day = secs % 86_400;
        let hms = format!("{:02}:{:02}:{:02}", day / 3600, day / 60 % 60, day % 60);
        assert_eq!(b, hms);
        assert_eq!(*a, format!("{hms}.{:06}", (wall % 1_000_000_000) / 1000));
    }
    // -r: the time since the previous line, 0 for the first.
    let rel = stdout_of(&["show", "--no-summary", "-r", t]);
    let rel_times = times(&rel);
    assert_eq!(rel_times[0], "0.000000");
    for (i, s) in rel_times.iter().enumerate().skip(1) {
        let d = i128::from(mono_ns[i]) - i128::from(mono_ns[i - 1]);
        let sign = if d < 0 { "-" } else { "" };
        let us = d.unsigned_abs() / 1000;
        assert_eq!(
            *s,
            format!("{sign}{}.{:06}", us / 1_000_000, us % 1_000_000)
        );
    }
    // Everything after the time column is unchanged.
    for (a, b) in mono.lines().zip(epoch.lines()) {
        assert_eq!(a.split_once(' ').unwrap().1, b.split_once(' ').unwrap().1);
    }

    // Without a wall-clock reference (ring images, older traces) -t is
    // refused with a reason; -r still works.
    let rings = basic_rings();
    let mut args = vec!["show", "-tt"];
    args.extend(rings.iter().map(|p| p.to_str().unwrap()));
    let out = reader(&args);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("wall clock"));
    let old = trace_with_offset(&dir, None);
    let out = reader(&["show", "-t", old.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!show(&["-r"], &rings).is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A stderr (or stdout) that cannot be written, as on a full disk, ends
/// the run with its usual exit status, never a panic (101): the error
/// message, the summary and the output each fail there.
#[test]
fn a_full_disk_is_not_a_panic() {
    let full = || {
        std::fs::File::options()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let status = |args: &[&str], stdout_full: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_reader"));
        cmd.args(args).stderr(full());
        if stdout_full {
            cmd.stdout(full());
        } else {
            cmd.stdout(std::process::Stdio::null());
        }
        cmd.status().unwrap().code()
    };
    // The error message.
    assert_eq!(status(&["show", "/nonexistent/trace"], false), Some(2));
    // The summary after a good run.
    let mut args = vec!["show"];
    let rings = basic_rings();
    args.extend(rings.iter().map(|p| p.to_str().unwrap()));
    assert_eq!(status(&args, false), Some(0));
    // The output itself, then the error message about it.
    assert_eq!(status(&args, true), Some(2));
}
