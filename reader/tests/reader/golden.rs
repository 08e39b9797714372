//! Golden ring images and their byte-exact output; save → show round
//! trips; the `reader` binary.
//!
//! `tests/data/synthetic/cpu{0,1}.ring` are golden ring images made by the
//! test producer from [`crate::support::scenario`] (the test checks that
//! the producer still makes exactly these bytes); `expected.txt` and
//! `expected.jsonl` are `reader show`'s output for them. Golden images
//! captured in the guest go under `tests/data/guest/` in the same format
//! (`reader dump-rings DIR`), each directory with its `expected.*`: every
//! such directory is checked the same way.

use std::path::Path;
use std::process::Command;

use antinomie_abi as abi;
use antinomie_reader::call::{call_fields, compact_omitted};
use antinomie_reader::decode::{PmuTypes, ATTR_KEY_PREFIX, ATTR_MEMBERS};
use antinomie_reader::filter;
use antinomie_reader::output::{Format, JsonSchema};
use antinomie_reader::syscall::{self, Syscall};
use antinomie_reader::trace::{self, TraceHeader, TraceWriter};

use crate::support::{
    data_dir, golden, run_images, scenario_images, show_images, show_images_json, updating,
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
                } else if k == "arg0.kernel_attr" {
                    let kernel = v.as_object().unwrap();
                    check_compact_attr(&at, kernel, f[k].as_object());
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
        "arg0.double_fetch",
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

fn record_trace(images: &[Vec<u8>], format: Format) -> (Vec<u8>, String) {
    let header = TraceHeader {
        abi_version: abi::ABI_VERSION,
        window_ns: antinomie_reader::pipeline::DEFAULT_WINDOW_NS,
        cpus: vec![0, 1],
        pmus: PmuTypes::from_pairs([(9, "kprobe".to_owned())]),
        realtime_offset_ns: None,
    };
    let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
    let (out, _) = run_images(images, format, &header.pmus, Some(&mut w));
    (w.finish().unwrap(), out)
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
        assert_eq!(summary.calls(), 17);
        // The recorded PMU map names the dynamic type.
        if format == Format::Text {
            assert!(live.contains("type=9 /* kprobe */"), "{live}");
        }
    }
}

fn reader() -> Command {
    Command::new(env!("CARGO_BIN_EXE_reader"))
}

#[test]
fn the_binary_shows_images_and_trace_files() {
    let dir = std::env::temp_dir().join(format!("antinomie-show-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let images = scenario_images();
    let mut paths = Vec::new();
    for (i, img) in images.iter().enumerate() {
        let p = dir.join(format!("cpu{i}.ring"));
        std::fs::write(&p, img).unwrap();
        paths.push(p);
    }
    for (format, flag) in [(Format::Text, "text"), (Format::Json, "json")] {
        let out = reader()
            .arg("show")
            .arg("--format")
            .arg(flag)
            .args(&paths)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (expected, _) = show_images(&images, format, &PmuTypes::none());
        assert_eq!(String::from_utf8(out.stdout).unwrap(), expected);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.contains("summary: 17 calls"), "{stderr}");

        let (file, live) = record_trace(&images, format);
        let tpath = dir.join("trace.antinomie");
        std::fs::write(&tpath, file).unwrap();
        let out = reader()
            .args(["show", "--no-summary", "--format", flag])
            .arg(&tpath)
            .output()
            .unwrap();
        assert!(out.status.success());
        assert_eq!(String::from_utf8(out.stdout).unwrap(), live);
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // A corrupt image: exit status 3, the error names cpu and offset.
    let mut bad = images[0].clone();
    bad[8192] = 3;
    let bpath = dir.join("bad.ring");
    std::fs::write(&bpath, bad).unwrap();
    let out = reader().arg("show").arg(&bpath).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("cpu 0: corrupt record at ring position 0x0"),
        "{stderr}"
    );
    // Not a trace or an image.
    let out = reader().arg("show").arg("/dev/null").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    // A missing device is explained.
    let out = reader()
        .args(["--device", "/nonexistent"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("CONFIG_ANTINOMIE"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A trace file cut short: the calls of every complete frame, a warning
/// with the cut frame's byte offset, exit status 3. The same file on
/// standard input (`show -`) and whole gives the live run's bytes; global
/// options go before or after `show`.
#[test]
fn show_streams_truncated_traces_and_stdin() {
    let dir = std::env::temp_dir().join(format!("antinomie-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let images = scenario_images();
    let (file, live) = record_trace(&images, Format::Json);
    let whole = dir.join("whole.antinomie");
    std::fs::write(&whole, &file).unwrap();

    // stdin, with -v before the subcommand and --format after it.
    let mut child = reader()
        .args(["-v", "show", "--no-summary", "--format", "json", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feed = file.clone();
    let writer = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &feed));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), live);

    // Cut 30 bytes short: inside the last RECORDS frame or the END frame.
    let t = trace::read_trace(&file).unwrap();
    let cut_len = file.len() - 30;
    let cut = trace::read_trace(&file[..cut_len]).unwrap();
    let at = cut.truncated_at.expect("cut inside a frame");
    assert_eq!(cut.msgs[..], t.msgs[..cut.msgs.len()]);
    let path = dir.join("cut.antinomie");
    std::fs::write(&path, &file[..cut_len]).unwrap();
    let out = reader()
        .args(["show", "--format", "json", "--no-summary"])
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&format!("frame at byte {at}")), "{stderr}");
    let shown = String::from_utf8(out.stdout).unwrap();
    // The same calls as replaying the complete frames.
    let mut sink = antinomie_reader::output::WriterSink::new(
        Vec::new(),
        Format::Json,
        cut.header.pmus.clone(),
        false,
    );
    antinomie_reader::pipeline::replay(
        cut.msgs,
        antinomie_reader::pipeline::Assembler::new(
            &cut.header.cpus,
            cut.header.window_ns,
            &mut sink,
        ),
    )
    .unwrap();
    assert_eq!(shown, String::from_utf8(sink.into_inner()).unwrap());
    assert!(!shown.is_empty(), "nothing decoded before the cut");

    // Live-reader options do not go with a subcommand.
    let out = reader()
        .args(["--follow", "show"])
        .arg(&whole)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--follow"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    let dir = std::env::temp_dir().join(format!("antinomie-pipe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("cpu0.ring");
    std::fs::write(&p, &scenario_images()[0]).unwrap();
    let script = format!(
        "{} show {} | head -c 10 >/dev/null",
        env!("CARGO_BIN_EXE_reader"),
        p.display()
    );
    let out = Command::new("bash")
        .args(["-c", &format!("set -o pipefail; {script}")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
