// SPDX-License-Identifier: GPL-2.0-only
//! Golden ring images and their byte-exact output; save → show round
//! trips. (The `reader` binary on them is the binary crate's test.)
//!
//! `tests/data/synthetic/cpu{0,1}.ring` are golden ring images made by the
//! library's ring builder from [`crate::support::scenario`] (the test checks
//! that the builder still makes exactly these bytes); `expected.txt` and
//! `expected.jsonl` are `reader show`'s output for them. Golden images
//! captured in the guest go under `tests/data/guest/` in the same format
//! (`reader dump-rings DIR`), each directory with its `expected.*`: every
//! such directory is checked the same way. `run.trace` is the synthetic
//! images saved as a trace file, which the `replay_trace` example replays.

use std::path::Path;

use antinomie_abi as abi;
use antinomie_reader::call::{call_fields, compact_omitted};
use antinomie_reader::decode::{PmuTypes, ATTR_KEY_PREFIX, ATTR_MEMBERS};
use antinomie_reader::filter;
use antinomie_reader::output::{Format, JsonSchema};
use antinomie_reader::pipeline::{self, Recorder};
use antinomie_reader::ring::ImageRing;
use antinomie_reader::syscall::{self, Syscall};
use antinomie_reader::trace::{self, TraceHeader, TraceWriter};

use crate::support::{
    data_dir, golden, record_trace, run_images, scenario_images, show_images, show_images_json,
    updating,
};

fn read_images(dir: &Path) -> Vec<Vec<u8>> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ring"))
        .collect();
    paths.sort();
    paths.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

#[test]
fn the_producer_makes_the_golden_images() {
    for (cpu, img) in scenario_images().iter().enumerate() {
        golden(&format!("synthetic/cpu{cpu}.ring"), img);
    }
}

/// `synthetic/run.trace`: the golden images saved as `reader -w` saves a
/// run (drained one ring after the other, so that the frames' order does
/// not depend on threads). The `replay_trace` example's test replays it
/// and compares with `synthetic/expected.txt`.
#[test]
fn the_trace_writer_makes_the_golden_trace() {
    let rings = scenario_images()
        .into_iter()
        .map(|i| ImageRing::from_bytes(i).unwrap())
        .collect();
    let header = TraceHeader {
        abi_version: abi::ABI_VERSION,
        window_ns: pipeline::DEFAULT_WINDOW_NS,
        cpus: vec![0, 1],
        pmus: PmuTypes::none(),
        realtime_offset_ns: None,
    };
    let mut writer = TraceWriter::new(Vec::new(), &header).unwrap();
    for msg in pipeline::drain_once(rings) {
        writer.record(&msg).unwrap();
    }
    golden("synthetic/run.trace", &writer.finish().unwrap());
}

#[test]
fn golden_images_decode_to_the_golden_output() {
    let mut dirs = vec![data_dir().join("synthetic")];
    if let Ok(guest) = std::fs::read_dir(data_dir().join("guest")) {
        dirs.extend(guest.map(|e| e.unwrap().path()).filter(|p| p.is_dir()));
    }
    for dir in dirs {
        let images = if dir.ends_with("synthetic") && updating() {
            scenario_images()
        } else {
            read_images(&dir)
        };
        let rel = dir.strip_prefix(data_dir()).unwrap().display().to_string();
        for (format, name) in [
            (Format::Text, "expected.txt"),
            (Format::Json, "expected.jsonl"),
        ] {
            let (out, _) = show_images(&images, format, &PmuTypes::none());
            golden(&format!("{rel}/{name}"), out.as_bytes());
            // The threaded live pipeline prints the same bytes.
            let (live, _) = run_images(&images, format, &PmuTypes::none(), None);
            assert_eq!(live, out, "{rel}: live and show differ");
        }
    }
}

/// Whether a JSON value carries no information in the compact schema:
/// zero, `false`, or (in the full line) `null`.
fn is_zero(v: &serde_json::Value) -> bool {
    v.is_null() || v.as_u64() == Some(0) || v.as_i64() == Some(0) || v == false
}

/// The compact line's attr object checked against the full line's: every
/// member it has, with the same value; every member it lacks, zero or
/// absent in the full one.
fn check_compact_attr(
    at: &str,
    compact: &serde_json::Map<String, serde_json::Value>,
    full: Option<&serde_json::Map<String, serde_json::Value>>,
) {
    let empty = serde_json::Map::new();
    let full = full.unwrap_or(&empty);
    for (k, v) in compact {
        assert!(
            ATTR_MEMBERS.iter().any(|m| m.name == k),
            "{at}: {k} is no attr member"
        );
        assert!(!is_zero(v), "{at}: {k} = {v} is zero");
        assert_eq!(full.get(k), Some(v), "{at}: {k} differs from the full line");
    }
    for (k, v) in full {
        if !compact.contains_key(k) {
            assert!(is_zero(v), "{at}: {k} = {v} left out but not zero");
        }
    }
}

/// The row of the golden inputs' calls.
fn perf_event_open() -> &'static Syscall {
    syscall::syscall("perf_event_open").unwrap()
}

/// The compact schema against the full one, call by call, on every golden
/// input: each key of a compact line is a filter field name with the full
/// line's value; each full key left out is null, one of
/// `compact_omitted` (whose source key is there when it is non-null), or
/// an attr member that is zero.
#[test]
fn compact_json_leaves_out_only_what_is_null_zero_or_duplicated() {
    let mut dirs = vec![data_dir().join("synthetic")];
    if let Ok(guest) = std::fs::read_dir(data_dir().join("guest")) {
        dirs.extend(guest.map(|e| e.unwrap().path()).filter(|p| p.is_dir()));
    }
    let mut attr_members_left_out = 0;
    let attr_key = perf_event_open().capture_keys().unwrap().decoded;
    for dir in dirs {
        let images = read_images(&dir);
        let full = show_images_json(&images, JsonSchema::Full, &PmuTypes::none());
        let compact = show_images_json(&images, JsonSchema::Compact, &PmuTypes::none());
        assert_eq!(full.lines().count(), compact.lines().count());
        assert!(compact.len() < full.len());
        for (n, (f, c)) in full.lines().zip(compact.lines()).enumerate() {
            let at = format!("{}:{}", dir.display(), n + 1);
            let f: serde_json::Value = serde_json::from_str(f).unwrap();
            let c: serde_json::Value = serde_json::from_str(c).unwrap();
            if f["event"] == "lost" {
                assert_eq!(f, c, "{at}: LOST lines are the same in both schemas");
                continue;
            }
            let (f, c) = (f.as_object().unwrap(), c.as_object().unwrap());
            let full_attr = f[attr_key].as_object();
            let mut flat_attr = serde_json::Map::new();
            for (k, v) in c {
                assert!(filter::field(k).is_some(), "{at}: {k} is no filter field");
                if let Some(member) = k.strip_prefix(ATTR_KEY_PREFIX) {
                    flat_attr.insert(member.to_owned(), v.clone());
                } else {
                    assert!(!v.is_null(), "{at}: {k} is null");
                    assert_eq!(f.get(k), Some(v), "{at}: {k} differs");
                }
            }
            check_compact_attr(&at, &flat_attr, full_attr);
            attr_members_left_out += full_attr.map_or(0, |a| a.len() - flat_attr.len());
            for (k, v) in f {
                if c.contains_key(k) || v.is_null() || k == attr_key {
                    continue;
                }
                let (_, source) = compact_omitted(perf_event_open())
                    .iter()
                    .find(|(omitted, _)| omitted == k)
                    .unwrap_or_else(|| panic!("{at}: {k} = {v} left out"));
                assert!(
                    c.contains_key(*source) || *source == attr_key,
                    "{at}: {k} left out, and {source} too"
                );
            }
        }
    }
    // The golden input has attrs with zero members: the check above ran.
    assert!(attr_members_left_out > 0);
}

#[test]
fn json_keys_are_stable_and_in_order() {
    let (out, _) = show_images(&scenario_images(), Format::Json, &PmuTypes::none());
    let call_keys: Vec<&str> = call_fields(perf_event_open())
        .iter()
        .map(|f| f.key)
        .collect();
    for line in out.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let obj = v.as_object().unwrap();
        // serde_json's map sorts keys; read the order from the text.
        let mut order: Vec<(usize, &str)> = obj
            .keys()
            .map(|k| (line.find(&format!("\"{k}\":")).unwrap(), k.as_str()))
            .collect();
        order.sort_unstable();
        let keys: Vec<&str> = order.into_iter().map(|(_, k)| k).collect();
        match obj["event"].as_str().unwrap() {
            "call" => assert_eq!(
                keys.iter()
                    .filter(|k| !k.contains("perf_event_attr."))
                    .count(),
                call_keys.len()
            ),
            "lost" => assert!(keys.contains(&"lost.ring_full")),
            other => panic!("event {other}"),
        }
    }
    // The first call: every key the documented schema promises by name.
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    for key in [
        "args.0",
        "args.5",
        "args.attr_uptr",
        "args.pid",
        "args.cpu",
        "args.group_fd",
        "args.flags",
        "arg0.perf_event_attr",
        "arg0.required_size",
        "ret",
        "syscall.errno",
        "syscall.success",
        "syscall.duration_ns",
        "arg0.status",
        "arg0.attr_copied",
        "arg0.fault_offset",
        "time_ns",
        "cpu",
        "pid",
        "tid",
        "call_id",
    ] {
        assert!(first.get(key).is_some(), "{key} missing");
    }
    assert_eq!(first["arg0.perf_event_attr"]["type"], 1);
    assert_eq!(first["arg0.perf_event_attr"]["disabled"], true);
    assert_eq!(
        first["arg0.perf_event_attr_names"]["config"],
        "PERF_COUNT_SW_CPU_CLOCK"
    );
    assert_eq!(first["args.pid"], 0);
    assert_eq!(first["args.cpu"], -1);
    assert!(first["syscall.errno"].is_null());
}

#[test]
fn save_then_show_prints_the_same_bytes() {
    let images = scenario_images();
    for format in [Format::Text, Format::Json] {
        let (file, live) = record_trace(&images, format);
        let t = trace::read_trace(&file).unwrap();
        assert!(t.complete);
        let mut sink = antinomie_reader::output::WriterSink::new(
            Vec::new(),
            format,
            t.header.pmus.clone(),
            false,
        );
        let summary = antinomie_reader::pipeline::replay(
            t.msgs,
            antinomie_reader::pipeline::Assembler::new(
                &t.header.cpus,
                t.header.window_ns,
                &mut sink,
            ),
        )
        .unwrap();
        assert_eq!(String::from_utf8(sink.into_inner()).unwrap(), live);
        assert_eq!(summary.calls(), 19);
        // The EXIT whose ENTRY an earlier reader read is one in the
        // replay too: the trace carries where the run began each ring.
        assert_eq!(summary.entry_read_earlier, 1);
        // The recorded PMU map names the dynamic type.
        if format == Format::Text {
            assert!(live.contains("type=9 /* kprobe */"), "{live}");
        }
    }
}

/// The checked-in reference page is what the library builds from the
/// table; `ANTINOMIE_UPDATE_GOLDEN=1` rewrites it, as its header says. (The
/// binary's tests check that `reader describe` prints the same bytes.)
#[test]
fn the_checked_in_reference_page_is_the_tables_page() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/syscalls/perf_event_open.md");
    let page = syscall::reference_page("perf_event_open").unwrap();
    if updating() {
        std::fs::write(&path, &page).unwrap();
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == page,
        "docs/syscalls/perf_event_open.md is stale: ANTINOMIE_UPDATE_GOLDEN=1 cargo test -p antinomie-reader rewrites it; review the diff"
    );
}
