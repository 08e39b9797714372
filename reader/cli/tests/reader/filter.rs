// SPDX-License-Identifier: GPL-2.0-only
//! The `reader` binary: `show --filter` prints exactly the matching calls,
//! a bad filter is rejected before anything is opened, `reader fields`
//! lists the tables, and the checked-in reference page is current.

use std::path::PathBuf;
use std::process::Command;

use antinomie_abi as abi;
use antinomie_reader::decode::{PmuTypes, ERRNO};
use antinomie_reader::filter::{self, fields, Filter};
use antinomie_reader::output::Format;

use crate::support::{calls_of, data_dir, scenario_images, show_images, updating};

fn reader() -> Command {
    Command::new(env!("CARGO_BIN_EXE_reader"))
}

fn image_paths(tag: &str) -> (PathBuf, Vec<PathBuf>) {
    let dir = std::env::temp_dir().join(format!("antinomie-filter-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut paths = Vec::new();
    for (i, img) in scenario_images().iter().enumerate() {
        let p = dir.join(format!("cpu{i}.ring"));
        std::fs::write(&p, img).unwrap();
        paths.push(p);
    }
    (dir, paths)
}

#[test]
fn show_filter_prints_the_matching_calls() {
    let (dir, paths) = image_paths("show");
    let images = scenario_images();
    let calls = calls_of(&images);
    let (all_text, _) = show_images(&images, Format::Text, &PmuTypes::none());
    // The text lines of calls, in the same order as the calls (LOST lines
    // aside, which a filter never hides).
    let call_lines: Vec<&str> = all_text
        .lines()
        .filter(|l| !l.contains(" --- lost "))
        .collect();
    assert_eq!(call_lines.len(), calls.len());
    for (src, expected_ids) in [
        ("syscall.errno == E2BIG", vec![4u64, 6, 10]),
        ("ret in {-EINVAL, -E2BIG}", vec![2, 4, 5, 6, 10]),
        (
            "args.flags & PERF_FLAG_FD_CLOEXEC",
            vec![1, 5, 7, 8, 13, 14, 18],
        ),
        (
            "args.attr_uptr.size == PERF_ATTR_SIZE_VER0 && !exists(args.attr_uptr.bp_len)",
            vec![7],
        ),
        (
            "syscall.duration_ns >= 9600",
            vec![12, 13, 14, 15, 18, 19, 20],
        ),
        ("state == unfinished", vec![17, 16]),
        ("state == entry_read_earlier", vec![20]),
        (
            "arg0.status == fault && !exists(arg0.fault_offset)",
            vec![9],
        ),
    ] {
        let f = Filter::parse(src).unwrap();
        // By sequence number: the scenario's ids carry their CPU.
        let ids: Vec<u64> = calls
            .iter()
            .filter(|c| f.matches(c))
            .map(|c| c.call_id & abi::CALL_ID_SEQ_MASK)
            .collect();
        assert_eq!(ids, expected_ids, "{src}");
        let out = reader()
            .args(["show", "--filter", src])
            .args(&paths)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        let shown: Vec<&str> = stdout
            .lines()
            .filter(|l| !l.contains(" --- lost "))
            .collect();
        let want: Vec<&str> = calls
            .iter()
            .zip(&call_lines)
            .filter(|(c, _)| f.matches(c))
            .map(|(_, l)| *l)
            .collect();
        assert_eq!(shown, want, "{src}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            stderr.contains(&format!("{} filtered out", calls.len() - want.len())),
            "{stderr}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_filter_is_rejected_before_anything_is_opened() {
    let (dir, paths) = image_paths("bad");
    // Live: the device does not exist, but the filter is what fails.
    let out = reader()
        .args([
            "--device",
            "/nonexistent",
            "--filter",
            "syscall.errnoo == EINVAL",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr,
        "reader: bad filter: unknown field at column 1: no field is named `syscall.errnoo`\n  \
         syscall.errnoo == EINVAL\n  ^^^^^^^^^^^^^^\n  help: did you mean `syscall.errno`?\n"
    );
    assert!(!stderr.contains("CONFIG_ANTINOMIE"));
    // Saved traces and images: likewise, nothing printed.
    let out = reader()
        .args(["show", "--filter", "args.flags & PERF_SAMPLE_IP"])
        .args(&paths)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("misplaced constant at column 14"));
    let out = reader()
        .args(["show", "--filter", "ret == 1", "/nonexistent.ring"])
        .output()
        .unwrap();
    // A good filter, then the missing file: the same status as a bad
    // filter, which stderr tells apart.
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("/nonexistent.ring") && !stderr.contains("bad filter"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn reader_fields_lists_the_tables() {
    let out = reader().arg("fields").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text, filter::fields_text());
    for f in fields() {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(f.key.as_str()))
            .unwrap_or_else(|| panic!("{} not listed", f.key));
        assert_eq!(line.split_whitespace().nth(1), Some(f.ty.name()), "{line}");
    }
}

fn page_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/syscalls/perf_event_open.md")
}

#[test]
fn the_checked_in_reference_page_is_current() {
    let out = reader()
        .args(["describe", "perf_event_open"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    let path = page_path();
    if updating() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &page).unwrap();
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == page,
        "docs/syscalls/perf_event_open.md is stale: run `reader describe perf_event_open > docs/syscalls/perf_event_open.md` \
         (or ANTINOMIE_UPDATE_GOLDEN=1 cargo test -p antinomie-reader-cli) and review the diff"
    );
    let out = reader().args(["describe", "open"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("perf_event_open"));
    // The data directory is not where the page lives.
    assert!(!data_dir().join("perf_event_open.md").exists());
    // Errno values in the page come from the errno table.
    for e in ERRNO
        .iter()
        .filter(|e| page.contains(&format!("| `{}` (", e.name)))
    {
        assert!(page.contains(&format!("| `{}` ({}) | -{} |", e.name, e.value, e.value)));
    }
}
