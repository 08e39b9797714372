// SPDX-License-Identifier: GPL-2.0-only
//! `reader diff`: the binary on synthetic JSON runs (built from a real
//! call line of `tests/data/guest/basic`), and on a real trace file made
//! from that directory's golden ring images.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::support::{data_dir, guest_rings, guest_trace};

/// A scratch directory for one test.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("antinomie-diff-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn write(&self, name: &str, lines: &[Value]) -> PathBuf {
        let p = self.0.join(name);
        let mut text = String::new();
        for v in lines {
            text.push_str(&v.to_string());
            text.push('\n');
        }
        std::fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn basic_lines() -> Vec<Value> {
    std::fs::read_to_string(data_dir().join("guest/basic/expected.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A call of thread (pid, tid) whose attr has `config`, returning `ret`
/// (`-errno` for a failure), from the first call of the basic run (a
/// complete software event that succeeded).
fn call(pid: i64, tid: i64, config: u64, ret: i64) -> Value {
    let mut v = basic_lines().swap_remove(0);
    assert_eq!(v["state"], "complete");
    v["pid"] = json!(pid);
    v["tid"] = json!(tid);
    v["arg0.perf_event_attr"]["config"] = json!(config);
    // Shown by number.
    v["arg0.perf_event_attr_names"]
        .as_object_mut()
        .unwrap()
        .remove("config");
    set_ret(&mut v, ret);
    v
}

fn set_ret(v: &mut Value, ret: i64) {
    v["ret"] = json!(ret);
    let (errno, name) = match ret {
        0.. => (Value::Null, Value::Null),
        -7 => (json!(7), json!("E2BIG")),
        -22 => (json!(22), json!("EINVAL")),
        other => panic!("no name for {other}"),
    };
    v["syscall.success"] = json!(ret >= 0);
    v["syscall.errno"] = errno;
    v["syscall.errno_name"] = name;
}

/// Thread 100 of process 100 makes 10 calls, thread 101 six; every third
/// fails with EINVAL, the others return fds numbered from `fd0`.
fn run(pid: i64, tids: &[i64], fd0: i64) -> Vec<Value> {
    let mut out = Vec::new();
    let mut fd = fd0;
    for (t, &tid) in tids.iter().enumerate() {
        for k in 0..if t == 0 { 10 } else { 6 } {
            let ret = if k % 3 == 2 {
                -22
            } else {
                fd += 1;
                fd
            };
            out.push(call(pid, tid, k, ret));
        }
    }
    out
}

struct DiffOut {
    code: Option<i32>,
    differences: Vec<Value>,
    summary: Value,
    stderr: String,
}

fn diff(a: &Path, b: &Path, extra: &[&str]) -> DiffOut {
    let out = Command::new(env!("CARGO_BIN_EXE_reader"))
        .args(["diff", "--format", "json"])
        .args(extra)
        .arg(a)
        .arg(b)
        .output()
        .unwrap();
    let mut lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary = lines.pop().unwrap_or(Value::Null);
    DiffOut {
        code: out.status.code(),
        differences: lines,
        summary,
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

#[test]
fn equal_runs_exit_0() {
    let tmp = Scratch::new("equal");
    let a = tmp.write("a.jsonl", &run(100, &[100, 101], 2));
    let d = diff(&a, &a, &[]);
    assert_eq!(d.code, Some(0), "{}", d.stderr);
    assert!(d.differences.is_empty());
    assert_eq!(d.summary["event"], "summary");
    assert_eq!(d.summary["equal"], true);
    assert_eq!(d.summary["matched_by"], "tid");
    assert_eq!(d.summary["calls"]["compared"], 16);
    assert_eq!(d.summary["calls"]["differing"], 0);
    // -o FILE: the same report in FILE, nothing on stdout.
    let report = tmp.0.join("report.json");
    let out = Command::new(env!("CARGO_BIN_EXE_reader"))
        .args(["diff", "--format", "json", "-o"])
        .arg(&report)
        .arg(&a)
        .arg(&a)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let saved: Value =
        serde_json::from_str(std::fs::read_to_string(&report).unwrap().trim()).unwrap();
    assert_eq!(saved, d.summary);
    // Options that cannot apply to two runs are refused.
    assert_eq!(diff(&a, &a, &["-p", "100"]).code, Some(2));
}

#[test]
fn fd_numbers_of_successes_do_not_count() {
    let tmp = Scratch::new("fds");
    let a = tmp.write("a.jsonl", &run(100, &[100, 101], 2));
    let b = tmp.write("b.jsonl", &run(100, &[100, 101], 40));
    let d = diff(&a, &b, &[]);
    assert_eq!(d.code, Some(0), "{:?}", d.differences);
    assert_eq!(d.summary["calls"]["compared"], 16);
}

#[test]
fn a_changed_result_is_that_call_only() {
    let tmp = Scratch::new("ret");
    let a = tmp.write("a.jsonl", &run(100, &[100, 101], 2));
    let mut rb = run(100, &[100, 101], 2);
    // Thread 101's call #3 (line 13): E2BIG, the size written back.
    let changed = &mut rb[13];
    set_ret(changed, -7);
    changed["arg0.required_size"] = json!(136);
    changed["arg0.size_written"] = json!(true);
    let b = tmp.write("b.jsonl", &rb);
    let d = diff(&a, &b, &[]);
    assert_eq!(d.code, Some(1));
    assert_eq!(d.differences.len(), 1, "{:?}", d.differences);
    let x = &d.differences[0];
    assert_eq!(x["kinds"], json!(["ret", "required_size", "size_written"]));
    assert_eq!(x["input_differs"], false);
    assert_eq!(x["a"]["tid"], 101);
    assert_eq!(x["a"]["index"], 3);
    assert_eq!(x["b"]["index"], 3);
    assert_eq!(x["a"]["syscall.errno_name"], Value::Null);
    assert_eq!(x["b"]["syscall.errno_name"], "E2BIG");
    // The captured attr's keys, as the table names them.
    assert_eq!(x["a"]["arg0.required_size"], Value::Null);
    assert_eq!(x["b"]["arg0.required_size"], 136);
    assert_eq!(x["b"]["arg0.size_written"], true);
    assert_eq!(x["b"]["arg0.status"], x["a"]["arg0.status"]);
    assert!(x["b"]["arg0.status"].is_string());
    let kinds = &d.summary["differences"];
    assert_eq!(kinds["ret"], 1);
    assert_eq!(kinds["required_size"], 1);
    assert_eq!(kinds["status"], 0);
    assert_eq!(d.summary["calls"]["compared"], 16);

    // The text form: one line with both outcomes, then the summary.
    let out = Command::new(env!("CARGO_BIN_EXE_reader"))
        .args(["diff"])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("tid 101 #3 perf_event_open({type=PERF_TYPE_SOFTWARE, size=PERF_ATTR_SIZE_VER8, config=3, disabled=1, exclude_kernel=1, exclude_hv=1}, pid=0, cpu=-1, group_fd=-1, flags=0): A = "),
        "{first}"
    );
    assert!(
        first.ends_with(
            " | B = -1 E2BIG (required_size=136, written) [ret, required_size, size_written]"
        ),
        "{first}"
    );
    assert!(text.contains("\n  ret               1\n"), "{text}");
    assert!(text.ends_with("the runs differ\n"), "{text}");
}

#[test]
fn calls_in_one_run_only_are_reported() {
    let tmp = Scratch::new("only");
    let ra = run(100, &[100, 101], 2);
    let a = tmp.write("a.jsonl", &ra);
    let mut rb = ra.clone();
    rb.remove(4); // thread 100's call #4
    rb.insert(12, call(100, 101, 77, 9)); // a new call #3 of thread 101
    let b = tmp.write("b.jsonl", &rb);
    let d = diff(&a, &b, &[]);
    assert_eq!(d.code, Some(1));
    assert_eq!(d.differences.len(), 2, "{:?}", d.differences);
    let (gone, new) = (&d.differences[0], &d.differences[1]);
    assert_eq!(gone["kinds"], json!(["only_in_a"]));
    assert_eq!(gone["a"]["index"], 4);
    assert_eq!(gone["a"]["tid"], 100);
    assert!(gone["b"].is_null());
    assert_eq!(new["kinds"], json!(["only_in_b"]));
    assert_eq!(new["b"]["index"], 3);
    assert_eq!(new["b"]["tid"], 101);
    assert!(new["a"].is_null());
    assert_eq!(d.summary["calls"]["compared"], 15);
    assert_eq!(d.summary["differences"]["only_in_a"], 1);
    assert_eq!(d.summary["differences"]["only_in_b"], 1);
}

#[test]
fn a_replaced_call_is_compared_and_flagged() {
    let tmp = Scratch::new("replace");
    let ra = run(100, &[100], 2);
    let a = tmp.write("a.jsonl", &ra);
    let mut rb = ra.clone();
    rb[5] = call(100, 100, 99, rb[5]["ret"].as_i64().unwrap());
    let b = tmp.write("b.jsonl", &rb);
    let d = diff(&a, &b, &[]);
    assert_eq!(d.code, Some(1));
    assert_eq!(d.differences.len(), 1, "{:?}", d.differences);
    assert_eq!(d.differences[0]["kinds"], json!(["input"]));
    assert_eq!(d.differences[0]["input_differs"], true);
    assert!(d.differences[0]["b_call"]
        .as_str()
        .unwrap()
        .contains("config=99"));
    assert_eq!(d.summary["calls"]["compared"], 10);
}

#[test]
fn unequal_thread_counts() {
    let tmp = Scratch::new("threads");
    let a = tmp.write("a.jsonl", &run(100, &[100, 101], 2));
    let b = tmp.write("b.jsonl", &run(100, &[100], 2));
    let d = diff(&a, &b, &[]);
    assert_eq!(d.code, Some(1));
    // Thread 100 pairs with its own tid, but 101 has none in B: by order.
    assert_eq!(d.summary["matched_by"], "order");
    assert_eq!(d.summary["threads"]["matched"], 1);
    assert_eq!(d.summary["threads"]["only_in_a"], 1);
    assert_eq!(d.summary["threads"]["only_in_b"], 0);
    assert_eq!(d.differences.len(), 6);
    for (i, x) in d.differences.iter().enumerate() {
        assert_eq!(x["kinds"], json!(["only_in_a"]));
        assert_eq!(x["a"]["tid"], 101);
        assert_eq!(x["a"]["index"], i);
        // The thread's first call is the cause, the others follow it.
        if i == 0 {
            assert_eq!(x["role"], "cause");
            assert!(x["cause"].is_null());
        } else {
            assert_eq!(x["role"], "consequence");
            assert_eq!(x["cause"], json!({"a": 0, "b": null}));
        }
    }
    assert_eq!(d.summary["calls"]["causes"], 1);
    assert_eq!(d.summary["calls"]["consequences"], 5);
    assert_eq!(d.summary["calls"]["compared"], 10);
    // And the other way round.
    let d = diff(&b, &a, &[]);
    assert_eq!(d.summary["threads"]["only_in_b"], 1);
    assert_eq!(d.summary["differences"]["only_in_b"], 6);
}

#[test]
fn other_tids_are_matched_by_spawn_order() {
    let tmp = Scratch::new("order");
    let a = tmp.write("a.jsonl", &run(100, &[100, 101], 2));
    // Another run: other pid and tids, the same threads in the same order.
    let b = tmp.write("b.jsonl", &run(300, &[300, 305], 2));
    let d = diff(&a, &b, &[]);
    assert_eq!(d.code, Some(0), "{:?}", d.differences);
    assert_eq!(d.summary["matched_by"], "order");
    assert_eq!(d.summary["threads"]["matched"], 2);
    assert_eq!(d.summary["calls"]["compared"], 16);
    // By tid nothing matches: every call is in one run only.
    let d = diff(&a, &b, &["--match", "tid"]);
    assert_eq!(d.code, Some(1));
    assert_eq!(d.summary["threads"]["only_in_a"], 2);
    assert_eq!(d.summary["threads"]["only_in_b"], 2);
    assert_eq!(d.summary["differences"]["only_in_a"], 16);
    assert_eq!(d.summary["differences"]["only_in_b"], 16);
    assert_eq!(d.summary["calls"]["compared"], 0);
}

#[test]
fn durations_count_only_beyond_the_ratio() {
    let tmp = Scratch::new("duration");
    let ra = run(100, &[100], 2);
    let a = tmp.write("a.jsonl", &ra);
    let mut rb = ra.clone();
    let d0 = ra[1]["syscall.duration_ns"].as_u64().unwrap();
    rb[1]["syscall.duration_ns"] = json!(d0 * 3);
    let b = tmp.write("b.jsonl", &rb);
    assert_eq!(diff(&a, &b, &[]).code, Some(0));
    assert_eq!(diff(&a, &b, &["--duration-ratio", "4"]).code, Some(0));
    let d = diff(&a, &b, &["--duration-ratio", "2"]);
    assert_eq!(d.code, Some(1));
    assert_eq!(d.differences.len(), 1);
    assert_eq!(d.differences[0]["kinds"], json!(["duration"]));
    assert_eq!(diff(&a, &b, &["--duration-ratio", "0.5"]).code, Some(2));
}

#[test]
fn bad_input_exits_2() {
    let tmp = Scratch::new("bad");
    let a = tmp.write("a.jsonl", &run(100, &[100], 2));
    let missing = tmp.0.join("missing.jsonl");
    let d = diff(&a, &missing, &[]);
    assert_eq!(d.code, Some(2));
    assert!(d.stderr.contains("missing.jsonl"), "{}", d.stderr);
    let garbage = tmp.0.join("garbage");
    std::fs::write(&garbage, "{\"event\":\"call\"}\nnot json\n").unwrap();
    let d = diff(&a, &garbage, &[]);
    assert_eq!(d.code, Some(2));
    assert!(d.stderr.contains("garbage:1"), "{}", d.stderr);
    // A call of a syscall the table has no row for (1, write).
    let mut other = run(100, &[100], 2);
    other[1]["syscall.nr"] = json!(1);
    let other = tmp.write("other.jsonl", &other);
    let d = diff(&a, &other, &[]);
    assert_eq!(d.code, Some(2));
    assert!(
        d.stderr.contains(
            "other.jsonl:2: a call line of syscall number 1, which this reader has no capture table for"
        ),
        "{}",
        d.stderr
    );
}

/// `reader diff` reads the full schema: a compact run (`reader show
/// --json-schema compact`) is refused with a message that says so, and
/// the same run in the full schema is equal to its golden JSON.
#[test]
fn compact_json_is_refused_with_a_clear_error() {
    let tmp = Scratch::new("compact");
    let expected = data_dir().join("guest/basic/expected.jsonl");
    for schema in ["compact", "full"] {
        let out = Command::new(env!("CARGO_BIN_EXE_reader"))
            .args([
                "show",
                "--no-summary",
                "--format",
                "json",
                "--json-schema",
                schema,
            ])
            .args(guest_rings("basic"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let path = tmp.0.join(format!("{schema}.jsonl"));
        std::fs::write(&path, &out.stdout).unwrap();
        let d = diff(&expected, &path, &[]);
        if schema == "full" {
            assert_eq!(d.code, Some(0), "{}", d.stderr);
        } else {
            assert_eq!(d.code, Some(2));
            assert!(
                d.stderr.contains("compact.jsonl:1")
                    && d.stderr.contains("reads the full JSON schema"),
                "{}",
                d.stderr
            );
        }
    }
}

/// A trace file of the guest's `basic` run, against that run's JSON.
#[test]
fn a_real_trace_against_its_json() {
    let tmp = Scratch::new("trace");
    let dir = data_dir().join("guest/basic");
    let trace = tmp.0.join("basic.trace");
    std::fs::write(&trace, guest_trace("basic", None)).unwrap();
    let json = dir.join("expected.jsonl");

    let d = diff(&trace, &json, &[]);
    assert_eq!(d.code, Some(0), "{:?} {}", d.differences, d.stderr);
    let calls = basic_lines()
        .iter()
        .filter(|v| v["event"] == "call")
        .count();
    assert!(calls > 50, "the basic run holds {calls} calls");
    assert_eq!(d.summary["calls"]["compared"], calls);
    assert_eq!(d.summary["threads"]["matched"], 5);

    // One E2BIG turned into a success in B: exactly that call differs.
    let mut lines = basic_lines();
    let k = lines
        .iter()
        .position(|v| v["syscall.errno_name"] == "E2BIG" && v["arg0.size_written"] == true)
        .unwrap();
    set_ret(&mut lines[k], 5);
    lines[k]["arg0.required_size"] = Value::Null;
    lines[k]["arg0.size_written"] = json!(false);
    let b = tmp.write("b.jsonl", &lines);
    let d = diff(&trace, &b, &[]);
    assert_eq!(d.code, Some(1));
    assert_eq!(d.differences.len(), 1, "{:?}", d.differences);
    let x = &d.differences[0];
    assert_eq!(x["kinds"], json!(["ret", "required_size", "size_written"]));
    assert_eq!(x["a"]["call_id"], lines[k]["call_id"]);
    assert_eq!(x["a"]["tid"], lines[k]["tid"]);
    // The call's text, made from the decoded call (the trace is A) and
    // from its JSON line (swapped, the JSON is A), is one text.
    let swapped = diff(&b, &trace, &[]);
    assert_eq!(swapped.differences.len(), 1, "{:?}", swapped.differences);
    assert!(x["call"].as_str().unwrap().starts_with("perf_event_open({"));
    assert_eq!(swapped.differences[0]["call"], x["call"]);
}

#[test]
fn a_tid_reused_in_another_process_is_another_thread() {
    let tmp = Scratch::new("reuse");
    let mut ra = run(100, &[100, 101], 2);
    // Process 100 exited; process 200 got thread id 101 again.
    ra.extend(run(200, &[200, 101], 30));
    let a = tmp.write("a.jsonl", &ra);
    let d = diff(&a, &a, &[]);
    assert_eq!(d.code, Some(0), "{:?}", d.differences);
    assert_eq!(d.summary["threads"]["a"], 4);
    assert_eq!(d.summary["threads"]["matched"], 4);
    assert_eq!(d.summary["calls"]["compared"], 32);
}

/// A program that reacts to results: thread 101 of B gets E2BIG at its
/// call #3 and falls back, making two other calls before it goes on as
/// in A; thread 100 is the same in both. The changed result is named the
/// one cause, everything after it in that thread is grouped under it.
#[test]
fn a_changed_result_is_the_cause_of_what_follows() {
    let tmp = Scratch::new("diverge");
    let ra = run(100, &[100, 101], 2);
    let a = tmp.write("a.jsonl", &ra);
    let mut rb = ra.clone();
    // Thread 101's calls are lines 10 to 15; its call #3 is line 13.
    set_ret(&mut rb[13], -7);
    rb[13]["arg0.required_size"] = json!(136);
    rb[13]["arg0.size_written"] = json!(true);
    // The fallback: two calls A never made, then #4 and #5 as in A but
    // #4 fails (its group leader is gone).
    rb.insert(14, call(100, 101, 50, 60));
    rb.insert(15, call(100, 101, 51, 61));
    set_ret(&mut rb[16], -22);
    let b = tmp.write("b.jsonl", &rb);
    let d = diff(&a, &b, &[]);
    assert_eq!(d.code, Some(1));
    let roles: Vec<(&str, Vec<&str>)> = d
        .differences
        .iter()
        .map(|x| {
            (
                x["role"].as_str().unwrap(),
                x["kinds"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|k| k.as_str().unwrap())
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        roles,
        [
            ("cause", vec!["ret", "required_size", "size_written"]),
            ("consequence", vec!["only_in_b"]),
            ("consequence", vec!["only_in_b"]),
            ("consequence", vec!["ret"]),
        ],
        "{:?}",
        d.differences
    );
    for x in &d.differences {
        assert_eq!(x["b"]["tid"], 101);
    }
    assert_eq!(d.differences[0]["a"]["index"], 3);
    assert_eq!(d.differences[1]["b"]["index"], 4);
    assert_eq!(d.differences[3]["a"]["index"], 4);
    assert_eq!(d.differences[3]["b"]["index"], 6);
    for x in &d.differences[1..] {
        assert_eq!(x["cause"], json!({"a": 3, "b": 3}));
    }
    assert_eq!(d.summary["calls"]["causes"], 1);
    assert_eq!(d.summary["calls"]["consequences"], 3);
    assert_eq!(d.summary["calls"]["compared"], 16);

    // The text form: the cause, its consequences indented under it.
    let out = Command::new(env!("CARGO_BIN_EXE_reader"))
        .args(["diff"])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("tid 101 #3 "), "{text}");
    assert!(lines[1].starts_with("  then tid 101 -/#4 "), "{text}");
    assert!(lines[2].starts_with("  then tid 101 -/#5 "), "{text}");
    assert!(lines[3].starts_with("  then tid 101 #4/#6 "), "{text}");
    assert!(lines[4].starts_with("summary: 4 calls differ"), "{text}");
    assert!(
        text.contains("\n  causes            1\n  consequences      3\n"),
        "{text}"
    );
}
