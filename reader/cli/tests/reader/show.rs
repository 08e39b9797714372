// SPDX-License-Identifier: GPL-2.0-only
//! `reader show` on the golden scenario's ring images and on trace files
//! recorded from them: the same bytes as the library's replay, exit
//! status 3 on corrupt records or a truncated trace, standard input, a
//! reader that closes the pipe early, and the BPF contender's records
//! converted by `scripts/bpf-to-trace.py`.

use std::process::Command;

use antinomie_reader::output::{Format, WriterSink};
use antinomie_reader::pipeline::{replay, Assembler};
use antinomie_reader::trace;

use crate::support::{record_trace, scenario_images, show_images};
use antinomie_reader::decode::PmuTypes;

fn reader() -> Command {
    Command::new(env!("CARGO_BIN_EXE_reader"))
}

/// Runs `cmd`, which must succeed (its stderr is the failure message).
fn succeeds(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
        assert!(stderr.contains("summary: 19 calls"), "{stderr}");

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
    assert_eq!(out.status.code(), Some(2));
    // A missing device is explained.
    let out = reader()
        .args(["--device", "/nonexistent"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
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
    let mut sink = WriterSink::new(Vec::new(), Format::Json, cut.header.pmus.clone(), false);
    replay(
        cut.msgs,
        Assembler::new(&cut.header.cpus, cut.header.window_ns, &mut sink),
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
    succeeds(Command::new("bash").args(["-c", &format!("set -o pipefail; {script}")]));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The BPF contender's records file as `antinomie-bpf --out` writes it
/// (`qemu/bpf-contender/contender.h`): one call that opened fd 3 with a
/// 136-byte attr, one whose attr could not be read (EFAULT), one with a
/// NULL attr, one with a size the kernel refuses (30: E2BIG), and the
/// per-CPU counters.
fn contender_records() -> Vec<u8> {
    let mut f = Vec::new();
    f.extend(0x0031_4650_4254_4E41_u64.to_le_bytes());
    f.extend(32u32.to_le_bytes());
    f.extend(136u32.to_le_bytes());
    let header = |f: &mut Vec<u8>, size: u32, kind: u32, time: u64| {
        for w in [size, kind] {
            f.extend(w.to_le_bytes());
        }
        f.extend(time.to_le_bytes());
        for w in [300u32, 300, 0, 0] {
            f.extend(w.to_le_bytes());
        }
    };
    let entry = |f: &mut Vec<u8>, time: u64, status: u32, attr: &[u8; 136]| {
        header(f, 32 + 64 + 136, 1, time);
        let ptr = if status == 2 { 0 } else { 0x7000_0000u64 };
        for w in [ptr, 0, u64::MAX, u64::MAX, 0, 0] {
            f.extend(w.to_le_bytes());
        }
        let declared = u32::from(attr[4]);
        let copied = if status == 1 { declared } else { 0 };
        for w in [declared, copied, status, 0] {
            f.extend(w.to_le_bytes());
        }
        f.extend(attr);
    };
    let exit = |f: &mut Vec<u8>, time: u64, ret: i64| {
        header(f, 32 + 8, 2, time);
        f.extend(ret.to_le_bytes());
    };
    let mut attr = [0u8; 136];
    attr[0] = 1; // PERF_TYPE_SOFTWARE
    attr[4] = 136; // size
    entry(&mut f, 1_000_000, 1, &attr);
    exit(&mut f, 1_002_000, 3);
    let mut unread = [0u8; 136];
    unread[4] = 136;
    entry(&mut f, 2_000_000, 3, &unread);
    exit(&mut f, 2_001_000, -14);
    entry(&mut f, 3_000_000, 2, &[0; 136]);
    exit(&mut f, 3_001_000, -14);
    attr[4] = 30;
    entry(&mut f, 4_000_000, 1, &attr);
    exit(&mut f, 4_001_000, -7);
    header(&mut f, 32 + 16, 3, 5_000_000);
    for w in [8u64, 0] {
        f.extend(w.to_le_bytes());
    }
    f
}

/// `scripts/bpf-to-trace.py` writes a trace file this reader reads: both
/// calls, and a summary that accounts for the contender's 4 records.
#[test]
fn the_contenders_records_convert_to_a_trace_file() {
    let dir = std::env::temp_dir().join(format!("antinomie-bpf-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (records, trace) = (dir.join("bpf.records"), dir.join("bpf.trace"));
    std::fs::write(&records, contender_records()).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/bpf-to-trace.py");
    succeeds(Command::new("python3").arg(script).args([&records, &trace]));
    let out = reader().arg("show").arg(&trace).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let calls: Vec<&str> = stdout.lines().collect();
    assert_eq!(calls.len(), 4, "{stdout}");
    assert!(
        calls[0].contains("PERF_TYPE_SOFTWARE") && calls[0].contains(") = 3 <"),
        "{stdout}"
    );
    assert!(calls[1].contains("EFAULT"), "{stdout}");
    assert!(calls[2].contains("perf_event_open(NULL,"), "{stdout}");
    assert!(
        calls[3].contains("invalid size") && calls[3].contains("E2BIG"),
        "{stdout}"
    );
    assert!(stderr.contains("summary: 4 calls"), "{stderr}");
    assert!(
        stderr.contains("8 records produced = 8 consumed + 0 lost"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A trace of another ABI, older or newer, is refused before anything is
/// printed: exit status 2 and one line naming both versions.
#[test]
fn a_trace_of_another_abi_is_refused_naming_both_versions() {
    let mut file = std::fs::read(crate::support::data_dir().join("synthetic/run.trace")).unwrap();
    let dir = std::env::temp_dir().join(format!("antinomie-show-abi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("other-abi.trace");
    for found in [
        antinomie_abi::ABI_VERSION - 1,
        antinomie_abi::ABI_VERSION + 1,
    ] {
        file[12..16].copy_from_slice(&found.to_le_bytes());
        std::fs::write(&path, &file).unwrap();
        let out = reader().arg("show").arg(&path).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(out.stdout.is_empty());
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(
            stderr,
            format!(
                "reader: error: decoding {}: the trace file's records are of Antinomie ABI \
                 version {found}, this reader's is {}: use a reader of ABI version {found}\n",
                path.display(),
                antinomie_abi::ABI_VERSION
            )
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
