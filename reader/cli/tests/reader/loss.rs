// SPDX-License-Identifier: GPL-2.0-only
//! Loss is never hidden: the first line of `reader show`'s summary and of
//! `reader diff`'s counts the kernel's final loss; `reader diff` of a
//! lossy run exits 3 (inconclusive) and names the rings and call ids,
//! unless `--allow-loss`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use antinomie_abi as abi;
use antinomie_reader::output::Format;
use antinomie_reader::ring::builder::{args, EntrySpec, ExitSpec, RingBuilder};
use serde_json::Value;

use crate::support::{data_dir, guest_rings, guest_trace, record_trace};

/// The headline clause of the guest's lossy capture (from its meta pages:
/// 9, 7, 11 and 11 records lost on CPUs 0 to 3, one LOST record).
const LOSSY: &str =
    "128 records produced = 90 consumed + 38 lost (1 reported by LOST records, 37 not)";

/// The first call id CPU 1 names.
const CPU1: u64 = 1 << abi::CALL_ID_SEQ_BITS;

/// A scratch directory for one test.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("antinomie-loss-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn reader(args: &[&str], files: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_reader"))
        .args(args)
        .args(files)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn first_line(s: &[u8]) -> String {
    String::from_utf8_lossy(s)
        .lines()
        .next()
        .unwrap_or("")
        .to_owned()
}

fn entry(id: u64, t: u64) -> EntrySpec {
    EntrySpec {
        call_id: id,
        time_ns: t,
        pid: 9,
        tid: 9,
        args: args(0, 0, -1, -1, 0),
        ..Default::default()
    }
}

fn exit(id: u64, t: u64) -> ExitSpec {
    ExitSpec {
        call_id: id,
        time_ns: t,
        pid: 9,
        tid: 9,
        ret: 3,
        duration_ns: 5,
        ..Default::default()
    }
}

/// One thread makes three calls, on CPU 0, 1, then 0: a trace of them
/// all, and one where the third call's ENTRY and EXIT were dropped on a
/// full ring, with nothing written after them, so that no LOST record
/// reports them (only the final counters do).
fn same_program_one_run_lossy() -> (Vec<u8>, Vec<u8>) {
    let run = |lossy: bool| {
        let mut b0 = RingBuilder::new(0, 4096);
        b0.entry(&entry(1, 10));
        b0.exit(&exit(1, 20));
        let mut b1 = RingBuilder::new(1, 4096);
        b1.entry(&entry(CPU1 | 1, 30));
        b1.exit(&exit(CPU1 | 1, 40));
        if lossy {
            b0.drop_record(abi::LOST_RING_FULL, 2, 50);
            b0.drop_record(abi::LOST_RING_FULL, 2, 60);
        } else {
            b0.entry(&entry(2, 50));
            b0.exit(&exit(2, 60));
        }
        record_trace(&[b0.image(), b1.image()], Format::Json).0
    };
    (run(false), run(true))
}

#[test]
fn show_counts_the_final_loss_in_its_first_line() {
    let rings = guest_rings("lossy");
    let files: Vec<&Path> = rings.iter().map(PathBuf::as_path).collect();
    let out = reader(&["show"], &files);
    assert_eq!(out.status.code(), Some(0));
    let headline = first_line(&out.stderr);
    assert!(headline.starts_with("summary: 47 calls"), "{headline}");
    assert!(headline.ends_with(&format!("; {LOSSY}")), "{headline}");
}

#[test]
fn diff_of_a_lossy_run_is_inconclusive_and_names_the_rings() {
    let tmp = Scratch::new("inconclusive");
    let lossy = tmp.file("lossy.trace", &guest_trace("lossy", None));
    let out = reader(&["diff"], &[&lossy, &lossy]);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        format!(
            "summary: inconclusive, not compared: A and B lost records; A: {LOSSY}; B: {LOSSY}"
        )
    );
    // The drops no LOST record reported came after the ring's last
    // record; CPU 1's LOST record names call 17 of that CPU.
    assert_eq!(
        lines[1],
        "  A cpu 0: 9 lost (ring_full 9): 9 not reported by any LOST record, \
         dropped after its last record (call id 59, time_ns 3743512856)"
    );
    assert_eq!(
        lines[2],
        format!(
            "  A cpu 1: 7 lost (ring_full 7): 1 reported by 1 LOST records, call ids {}; \
             6 not reported by any LOST record, dropped after its last record \
             (call id {}, time_ns 3747659032)",
            CPU1 + 17,
            CPU1 + 17
        )
    );
    assert!(lines[3].starts_with("  A cpu 2: 11 lost"), "{text}");
    assert!(lines[4].starts_with("  A cpu 3: 11 lost"), "{text}");
    assert!(lines[5].starts_with("  B cpu 0: 9 lost"), "{text}");
    assert_eq!(lines.len(), 10, "{text}");
    assert!(lines[9].contains("--allow-loss"), "{text}");

    let out = reader(&["diff", "--format", "json"], &[&lossy, &lossy]);
    assert_eq!(out.status.code(), Some(3));
    let v: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(v["event"], "inconclusive");
    assert_eq!(v["loss"]["a"]["lost"], 38);
    assert_eq!(v["loss"]["a"]["headline"], LOSSY);
    let cpu1 = &v["loss"]["b"]["rings"][1];
    assert_eq!(
        (&cpu1["cpu"], &cpu1["lost"], &cpu1["unreported"]),
        (&Value::from(1), &Value::from(7), &Value::from(6))
    );
    assert_eq!(cpu1["reported_call_ids"][0]["min_call_id"], CPU1 + 17);

    // With --allow-loss it compares what the runs hold: the same calls.
    let out = reader(&["diff", "--allow-loss"], &[&lossy, &lossy]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(
        text.lines()
            .next()
            .unwrap()
            .ends_with(&format!("; A: {LOSSY}; B: {LOSSY}")),
        "{text}"
    );
    assert_eq!(text.lines().last(), Some("equal"));
}

#[test]
fn a_loss_no_lost_record_reported_is_not_a_regression() {
    let tmp = Scratch::new("unreported");
    let (all, lossy) = same_program_one_run_lossy();
    let all = tmp.file("all.trace", &all);
    let lossy = tmp.file("lossy.trace", &lossy);

    let out = reader(&["diff"], &[&all, &lossy]);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let text = stdout(&out);
    assert_eq!(
        text.lines().next().unwrap(),
        "summary: inconclusive, not compared: B lost records; \
         A: 6 records produced = 6 consumed + 0 lost; \
         B: 6 records produced = 4 consumed + 2 lost (0 reported by LOST records, 2 not)"
    );
    assert_eq!(
        text.lines().nth(1).unwrap(),
        "  B cpu 0: 2 lost (ring_full 2): 2 not reported by any LOST record, \
         dropped after its last record (call id 1, time_ns 20)"
    );

    // Compared anyway, the missing call is a difference: exit 1.
    let out = reader(
        &["diff", "--allow-loss", "--format", "json"],
        &[&all, &lossy],
    );
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["kinds"], serde_json::json!(["only_in_a"]));
    assert_eq!(lines[1]["loss"]["b"]["lost"], 2);
    assert_eq!(lines[1]["loss"]["a"]["lost"], 0);
    // The in-band count, which alone would have said nothing was lost.
    assert_eq!(lines[1]["lost_records"]["b"], 0);
}

/// `trace` cut short as a recorder killed before its last ring finished
/// leaves it: every frame but CPU `cpu`'s DONE frame and the END frame.
/// (The fixture was recorded by per-ring drain threads, whose frames
/// interleave, so the test picks one rather than cutting after the last
/// RECORDS frame.)
fn without_done_of(trace: &[u8], cpu: u32) -> Vec<u8> {
    const DONE: u32 = 4;
    const END: u32 = 5;
    let word = |at: usize| u32::from_le_bytes(trace[at..at + 4].try_into().unwrap());
    let mut at = word(16) as usize;
    let mut cut = trace[..at].to_vec();
    while at < trace.len() {
        let len = u64::from_le_bytes(trace[at + 8..at + 16].try_into().unwrap());
        let next = at + 16 + usize::try_from(len).unwrap();
        let (kind, frame_cpu) = (word(at), word(at + 4));
        if kind != END && !(kind == DONE && frame_cpu == cpu) {
            cut.extend_from_slice(&trace[at..next]);
        }
        at = next;
    }
    cut
}

#[test]
fn a_partly_known_loss_says_at_least() {
    let tmp = Scratch::new("partial");
    let trace = guest_trace("lossy", None);
    let cut = tmp.file("cut.trace", &without_done_of(&trace, 3));
    // CPUs 0 to 2 finished before the cut: their 9, 7 and 11 count.
    let partial = "90 records consumed, at least 27 records lost (final counters unknown \
                   for cpu 3: there only LOST records count)";

    let out = reader(&["show"], &[&cut]);
    // After the warning that the file has no END frame.
    let stderr = String::from_utf8(out.stderr).unwrap();
    let headline = stderr.lines().find(|l| l.starts_with("summary:")).unwrap();
    assert!(headline.ends_with(&format!("; {partial}")), "{headline}");

    let out = reader(&["diff"], &[&cut, &cut]);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        first_line(&out.stdout).ends_with(&format!("; A: {partial}; B: {partial}")),
        "{}",
        stdout(&out)
    );

    // JSON Lines carry the LOST lines only.
    let lossy_json = data_dir().join("guest/lossy/expected.jsonl");
    let out = reader(&["diff"], &[&lossy_json, &lossy_json]);
    assert_eq!(out.status.code(), Some(3));
    let json_partial = "at least 1 records lost (final counters unknown: only LOST records count)";
    assert!(
        first_line(&out.stdout).ends_with(&format!("; A: {json_partial}; B: {json_partial}")),
        "{}",
        stdout(&out)
    );
    // Without a LOST line the runs are compared, and the headline still
    // says the loss is unknown, not 0.
    let basic_json = data_dir().join("guest/basic/expected.jsonl");
    let out = reader(&["diff"], &[&basic_json, &basic_json]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out)
            .lines()
            .next()
            .unwrap()
            .ends_with("; A: at least 0 records lost (final counters unknown: only LOST records count); B: at least 0 records lost (final counters unknown: only LOST records count)"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn the_help_documents_the_inconclusive_status() {
    for args in [&["--help"][..], &["diff", "--help"]] {
        let out = reader(args, &[]);
        let help = stdout(&out);
        assert!(
            help.contains("run lost records (not compared without --allow-loss)"),
            "{help}"
        );
    }
    let help = stdout(&reader(&["diff", "--help"], &[]));
    assert!(help.contains("--allow-loss"), "{help}");
}
