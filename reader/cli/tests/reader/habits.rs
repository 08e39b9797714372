// SPDX-License-Identifier: GPL-2.0-only
//! strace's habits on the golden scenario's ring images and the guest's
//! basic run: `-Z` and `-z` print what `--filter 'ret < 0'` and
//! `'ret >= 0'` print, `-c` the table and `-C` the calls then the table
//! (to -o FILE too, after a filter), `-f` changes nothing, and
//! `--summary json` is one JSON object on stderr.

use std::path::PathBuf;
use std::process::{Command, Output};

use crate::support::{data_dir, guest_rings};

fn reader(args: &[&str], rings: &[PathBuf]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_reader"))
        .args(args)
        .args(rings)
        .output()
        .unwrap()
}

/// `reader ARGS... RINGS...`'s stdout, which must succeed.
fn stdout_of(args: &[&str], rings: &[PathBuf]) -> String {
    let out = reader(args, rings);
    assert!(
        out.status.success(),
        "reader {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn synthetic() -> Vec<PathBuf> {
    let dir = data_dir().join("synthetic");
    vec![dir.join("cpu0.ring"), dir.join("cpu1.ring")]
}

/// The synthetic scenario's table, the one the library's test checks.
fn table() -> String {
    std::fs::read_to_string(data_dir().join("synthetic/counts.txt")).unwrap()
}

#[test]
fn failed_and_successful_only_are_their_filters() {
    for rings in [synthetic(), guest_rings("basic")] {
        for format in ["text", "json"] {
            let show = |args: &[&str]| {
                let mut all = vec!["show", "--no-summary", "--format", format];
                all.extend_from_slice(args);
                stdout_of(&all, &rings)
            };
            let failed = show(&["-Z"]);
            assert_eq!(failed, show(&["--filter", "ret < 0"]));
            assert_eq!(failed, show(&["--failed-only"]));
            let ok = show(&["-z"]);
            assert_eq!(ok, show(&["--filter", "ret >= 0"]));
            assert_eq!(ok, show(&["--successful-only"]));
            // And-ed with --filter, as -p is.
            assert_eq!(
                show(&["-Z", "--filter", "syscall.errno == EFAULT"]),
                show(&["--filter", "ret < 0 && syscall.errno == EFAULT"])
            );
            if format == "text" {
                assert!(failed.contains("= -1 E") && !failed.contains("<unfinished>"));
                assert!(!ok.contains("= -1 E") && !ok.contains("<unfinished>"));
            }
        }
    }
    // Neither shows an unfinished call: on the scenario, -Z and -z
    // leave out its 2 unfinished calls and nothing else.
    let filtered = |arg: &str| {
        let out = reader(&["show", "--summary", "json", arg], &synthetic());
        let v: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
        v["filtered_out"].as_u64().unwrap()
    };
    assert_eq!(filtered("-Z") + filtered("-z"), 19 + 2);
    // They exclude each other.
    let out = reader(&["show", "-Z", "-z"], &synthetic());
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn counts_only_prints_the_table_and_counts_prints_both() {
    let rings = synthetic();
    let out = reader(&["show", "-c"], &rings);
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), table());
    // The summary is on stderr as without -c.
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .starts_with("summary: 19 calls"));

    let calls = stdout_of(&["show", "--no-summary"], &rings);
    let both = stdout_of(&["show", "--no-summary", "-C"], &rings);
    assert_eq!(both, format!("{calls}{}", table()));
    assert_eq!(
        both,
        stdout_of(&["show", "--no-summary", "--counts"], &rings)
    );

    // To -o FILE; a filter's calls only.
    let dir = std::env::temp_dir().join(format!("antinomie-cli-{}-counts", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("table.txt");
    let printed = stdout_of(
        &[
            "show",
            "--no-summary",
            "--counts-only",
            "-Z",
            "-o",
            file.to_str().unwrap(),
        ],
        &rings,
    );
    assert_eq!(printed, "");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "\
% calls     calls     seconds  usecs/call result
------- --------- ----------- ----------- ----------------
  33.33         3    0.000028           9 EFAULT
  33.33         3    0.000027           9 E2BIG
  22.22         2    0.000017           8 EINVAL
  11.11         1    0.000009           9 ENOENT
------- --------- ----------- ----------- ----------------
 100.00         9    0.000083           9 total
"
    );
    let _ = std::fs::remove_dir_all(&dir);

    // The table is text; -c and -C exclude each other.
    for args in [
        &["show", "-c", "--format", "json"][..],
        &["show", "-c", "-C"],
    ] {
        let out = reader(args, &rings);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn dash_f_changes_nothing() {
    let rings = guest_rings("basic");
    assert_eq!(
        stdout_of(&["show", "--no-summary", "-f"], &rings),
        stdout_of(&["show", "--no-summary"], &rings)
    );
    // Before the subcommand too.
    assert!(reader(&["-f", "show", "--no-summary"], &rings)
        .status
        .success());
}

#[test]
fn the_summary_as_json_is_one_object_on_stderr() {
    let rings = synthetic();
    let text = reader(&["show"], &rings);
    let out = reader(&["show", "--summary", "json"], &rings);
    assert!(out.status.success());
    assert_eq!(out.stdout, text.stdout, "the calls do not change");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stderr).unwrap();
    assert_eq!(v["calls"], 19);
    assert_eq!(v["records"]["produced"], 37);
    assert_eq!(v["records"]["lost"], 4);
    assert_eq!(v["cpus"][0]["check"], "ok");
    assert_eq!(v["cpus"][1]["start_pos"], 48128);
    // After a filter, counted as the text's headline counts it.
    let out = reader(&["show", "--summary", "json", "-Z"], &rings);
    let v: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(v["filtered_out"], 19 - 9);
    // --no-summary wins.
    let out = reader(&["show", "--summary", "json", "--no-summary"], &rings);
    assert!(out.status.success() && out.stderr.is_empty());
}
