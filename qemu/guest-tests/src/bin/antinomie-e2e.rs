//! `antinomie-e2e`: the end-to-end test's comparator and device helper,
//! run in the guest next to `reader` and `antinomie-workload`.
//!
//! ```text
//! antinomie-e2e compare --workload W.jsonl [--workload W2.jsonl] --reader R.jsonl
//!                       [--lossy --counters C.json | --subset] [--sysfs /sys]
//! antinomie-e2e device info|enable|disable|counters|ring-size BYTES
//! antinomie-e2e diff-check --workload-a A --workload-b B --diff DIFF.json  # e2e/diffcheck.rs
//! ```
//!
//! `compare` derives, for every call the workload logged (`antinomie-workload
//! e2e`, `burst`, …), every key of the reader's JSON line from what the
//! workload passed and got back — argument words, the attr bytes and how
//! many were readable, thread, pinned CPU, clock, return value, errno, the
//! size read back after `E2BIG` — through its own model of the capture
//! rules and of `struct perf_event_attr` (`e2e/model.rs`, written from the
//! uapi headers, not from the reader), and compares field by field, attr
//! member by member. Each captured call names its workload call by the tag
//! the workload puts in argument word 5. Without `--lossy` every workload
//! call must be captured complete and every reader line must be one of
//! them. With `--lossy` (a reader that was stalled) lines may be LOST
//! records or half calls; then records shown + records lost must equal two
//! per workload call, and the kernel's own counters (`device counters`,
//! read after the reader exited) must agree: produced = shown, lost =
//! reported by LOST records, per CPU. With `--subset` (a ring image that
//! lost records, decoded on the host) the same lines are allowed and each
//! shown call is still compared field by field, without the accounting.
//!
//! `device` drives `/dev/antinomie` directly (the reader has no switch to
//! disable capture or resize the rings): `ring-size` needs capture off and
//! the rings unmapped, and restarts every ring's positions and counters.

#[path = "e2e/diffcheck.rs"]
mod diffcheck;
#[path = "e2e/filters.rs"]
mod filters;
#[path = "e2e/model.rs"]
#[allow(dead_code)]
mod model;

use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use antinomie_abi as abi;
use clap::{Parser, Subcommand};
use serde::Deserialize;
use serde_json::{Map, Value};

use model::{AttrBytes, Outcome, Pmus, E2BIG};

/// The end-to-end comparator and device helper.
#[derive(Debug, Parser)]
#[command(name = "antinomie-e2e")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Compare the reader's JSON Lines with the workload's log.
    Compare {
        /// A workload log (JSON Lines); repeat for several runs.
        #[arg(long, required = true)]
        workload: Vec<PathBuf>,
        /// The reader's `--format json` output.
        #[arg(long)]
        reader: PathBuf,
        /// The reader was stalled: allow LOST records and half calls, and
        /// check the accounting instead.
        #[arg(long)]
        lossy: bool,
        /// With --lossy: `device counters` output read after the reader exited.
        #[arg(long)]
        counters: Option<PathBuf>,
        /// Allow what --lossy allows, without the accounting: the reader's
        /// calls are some of the workload's (golden ring images that lost
        /// records).
        #[arg(long, conflicts_with = "lossy")]
        subset: bool,
        /// With --lossy: require at least one unfinished call (EXIT lost)
        /// and one entry-lost call (ENTRY lost), not only whole calls lost.
        #[arg(long)]
        require_half_calls: bool,
        /// Where sysfs is mounted (dynamic PMU types).
        #[arg(long, default_value = "/sys")]
        sysfs: PathBuf,
        /// Print every field compared.
        #[arg(long, short)]
        verbose: bool,
    },
    /// Check that `reader show FILES --filter …` selects exactly the
    /// expected calls, for every field `reader fields` lists.
    Filters {
        /// The workload's log (JSON Lines); repeat for several runs.
        #[arg(long, required = true)]
        workload: Vec<PathBuf>,
        /// The `reader` binary to run.
        #[arg(long, default_value = "reader")]
        reader: PathBuf,
        /// Name a dynamic PMU type (NAME=TYPE), for `reader show` and the
        /// model alike (instead of sysfs's).
        #[arg(long, value_name = "NAME=TYPE")]
        pmu: Vec<String>,
        /// The output of `reader --follow --format json --filter EXPR`.
        #[arg(long, requires = "live_filter")]
        live: Option<PathBuf>,
        /// The EXPR of --live: one of the issue's cases.
        #[arg(long, requires = "live")]
        live_filter: Option<String>,
        /// The trace is a stalled reader's: LOST records and half calls
        /// are allowed (the issue's cases are not run).
        #[arg(long, conflicts_with = "live")]
        lossy: bool,
        /// Where sysfs is mounted (dynamic PMU types).
        #[arg(long, default_value = "/sys")]
        sysfs: PathBuf,
        /// Print every filter and its count.
        #[arg(long, short)]
        verbose: bool,
        /// What `reader show` reads: a trace file, or ring images.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Check `reader diff --format json` against two workload logs.
    DiffCheck(diffcheck::Args),
    /// Drive /dev/antinomie.
    Device {
        /// info, enable, disable, counters, or ring-size BYTES.
        op: String,
        /// For ring-size: bytes of each ring's data area.
        arg: Option<u64>,
        /// The device.
        #[arg(long, default_value = "/dev/antinomie")]
        device: PathBuf,
    },
}

/// One line of `antinomie-workload`'s end-to-end log.
#[derive(Debug, Clone, Deserialize)]
#[allow(dead_code)]
struct Work {
    script: String,
    case: String,
    thread: u32,
    seq: u32,
    pid: i32,
    tid: i32,
    pinned_cpu: Option<u32>,
    cpu_before: i32,
    cpu_after: i32,
    args: [u64; 6],
    attr: Option<WorkAttr>,
    time_before_ns: u64,
    time_after_ns: u64,
    ret: i64,
    errno: Option<i32>,
    required_size: Option<u32>,
    size_after: Option<u32>,
    cloexec: Option<bool>,
    /// The attr bytes the kernel's copy read, when the workload changed
    /// them during the call (a double fetch on purpose).
    #[serde(default)]
    kernel_attr_hex: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[allow(dead_code)]
struct WorkAttr {
    hex: String,
    readable: usize,
    page_offset: usize,
}

/// The keys of a call line, in order: the schema of `reader/README.md`.
const CALL_KEYS: &[&str] = &[
    "event",
    "state",
    "time_ns",
    "cpu",
    "exit_cpu",
    "pid",
    "tid",
    "call_id",
    "syscall.nr",
    "compat",
    "args.0",
    "args.1",
    "args.2",
    "args.3",
    "args.4",
    "args.5",
    "args.attr_uptr",
    "args.pid",
    "args.cpu",
    "args.group_fd",
    "args.flags",
    "args.flags_names",
    "arg0.status",
    "arg0.capture_flags",
    "arg0.declared_size",
    "arg0.copied_len",
    "arg0.fault_offset",
    "arg0.perf_event_attr",
    "arg0.perf_event_attr_names",
    "arg0.required_size",
    "arg0.size_written",
    "arg0.attr_copied",
    "arg0.double_fetch",
    "arg0.kernel_attr",
    "ret",
    "syscall.errno",
    "syscall.errno_name",
    "syscall.success",
    "syscall.duration_ns",
    "exit_maybe_lost",
];

/// The keys of a LOST line, in order.
const LOST_KEYS: &[&str] = &[
    "event",
    "time_ns",
    "cpu",
    "lost.ring_full",
    "lost.bad_consumer",
    "lost.other",
    "lost.first_time_ns",
    "lost.last_time_ns",
    "lost.min_call_id",
    "lost.max_call_id",
];

/// What one key must hold.
#[derive(Debug, Clone)]
enum Exp {
    Eq(Value),
    /// An unsigned number in this closed range.
    Range(u64, u64),
    /// An object compared member by member.
    Object(Map<String, Value>),
}

fn hex_bytes(s: &str) -> Result<Vec<u8>, String> {
    if s.len() % 2 != 0 {
        return Err("odd hex length".into());
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|e| e.to_string()))
        .collect()
}

#[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
fn low_i32(w: u64) -> i64 {
    i64::from(w as u32 as i32)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Complete,
    Unfinished,
    EntryLost,
}

/// A workload call's expected line, or why the model cannot give one.
struct Derived {
    keys: Vec<(&'static str, Exp)>,
    /// The workload's own result disagrees with the model of the kernel.
    kernel_model_errors: Vec<String>,
}

fn cpu_exp(w: &Work) -> Exp {
    match w.pinned_cpu {
        Some(c) => Exp::Eq(Value::from(c)),
        None => Exp::Range(0, 4095),
    }
}

fn opt<T: Into<Value>>(v: Option<T>) -> Value {
    v.map_or(Value::Null, Into::into)
}

#[allow(clippy::too_many_lines)]
fn derive(w: &Work, state: State, maybe_lost: bool, pmus: &Pmus) -> Result<Derived, String> {
    let (mem, readable) = match &w.attr {
        Some(a) => (hex_bytes(&a.hex)?, a.readable),
        None => (Vec::new(), 0),
    };
    if mem.len() != readable {
        return Err(format!(
            "attr hex holds {} bytes, readable says {readable}",
            mem.len()
        ));
    }
    let cap = model::capture(w.args[4], w.args[0], &mem, readable);
    let outcome = model::outcome(&cap);
    let mut kme = Vec::new();
    let errno = w.errno;
    // The kernel's answer against the model of perf_event_open() up to
    // perf_copy_attr().
    let size_written = match outcome {
        Outcome::Fails(e, written) => {
            if errno != Some(e) {
                kme.push(format!(
                    "capture {} predicts errno {e}, the call got {:?}",
                    cap.status.name(),
                    errno
                ));
            }
            if e == E2BIG && w.required_size != Some(136) {
                kme.push(format!(
                    "E2BIG from perf_copy_attr() writes 136 back, read back {:?}",
                    w.required_size
                ));
            }
            written
        }
        Outcome::Copied => {
            if errno == Some(E2BIG) && w.required_size != Some(cap.declared_size) {
                kme.push(format!(
                    "E2BIG after perf_copy_attr() succeeded (perf_event_validate_size) writes nothing, \
                     but size changed from {} to {:?}",
                    cap.declared_size, w.required_size
                ));
            }
            false
        }
        Outcome::Unknown => {
            return Err("the model cannot decide perf_copy_attr() for this attr".into())
        }
    };
    let copied = outcome == Outcome::Copied;
    let entry = state != State::EntryLost;
    let exit = state != State::Unfinished;
    let ev = |b: bool, v: Value| if b { Exp::Eq(v) } else { Exp::Eq(Value::Null) };
    let mut k: Vec<(&'static str, Exp)> = Vec::new();
    k.push(("event", Exp::Eq("call".into())));
    k.push((
        "state",
        Exp::Eq(
            match state {
                State::Complete => "complete",
                State::Unfinished => "unfinished",
                State::EntryLost => "entry_lost",
            }
            .into(),
        ),
    ));
    k.push(("time_ns", Exp::Range(w.time_before_ns, w.time_after_ns)));
    k.push(("cpu", cpu_exp(w)));
    k.push((
        "exit_cpu",
        if exit {
            cpu_exp(w)
        } else {
            Exp::Eq(Value::Null)
        },
    ));
    k.push(("pid", Exp::Eq(w.pid.into())));
    k.push(("tid", Exp::Eq(w.tid.into())));
    k.push(("call_id", Exp::Range(1, u64::MAX)));
    k.push(("syscall.nr", Exp::Eq(298.into())));
    k.push(("compat", Exp::Eq(false.into())));
    for (i, key) in ["args.0", "args.1", "args.2", "args.3", "args.4", "args.5"]
        .into_iter()
        .enumerate()
    {
        k.push((key, ev(entry, w.args[i].into())));
    }
    k.push(("args.attr_uptr", ev(entry, w.args[0].into())));
    k.push(("args.pid", ev(entry, low_i32(w.args[1]).into())));
    k.push(("args.cpu", ev(entry, low_i32(w.args[2]).into())));
    k.push(("args.group_fd", ev(entry, low_i32(w.args[3]).into())));
    k.push(("args.flags", ev(entry, w.args[4].into())));
    k.push((
        "args.flags_names",
        ev(entry, model::perf_flags_names(w.args[4]).into()),
    ));
    k.push(("arg0.status", ev(entry, cap.status.name().into())));
    k.push(("arg0.capture_flags", ev(entry, cap.flags.clone().into())));
    k.push(("arg0.declared_size", ev(entry, cap.declared_size.into())));
    k.push(("arg0.copied_len", ev(entry, cap.data.len().into())));
    k.push(("arg0.fault_offset", ev(entry, opt(cap.fault_offset))));
    let attr = AttrBytes(&cap.data);
    if entry && !cap.data.is_empty() {
        k.push(("arg0.perf_event_attr", Exp::Object(attr.members_json(pmus))));
        k.push((
            "arg0.perf_event_attr_names",
            Exp::Object(attr.names_json(pmus)),
        ));
    } else {
        k.push(("arg0.perf_event_attr", Exp::Eq(Value::Null)));
        k.push(("arg0.perf_event_attr_names", Exp::Eq(Value::Null)));
    }
    let e2big = w.ret == -i64::from(E2BIG);
    k.push((
        "arg0.required_size",
        ev(exit && e2big, opt(w.required_size)),
    ));
    k.push((
        "arg0.size_written",
        ev(exit, (e2big && size_written).into()),
    ));
    k.push(("arg0.attr_copied", ev(exit, copied.into())));
    // A double fetch: the kernel's copy differs from the capture (the
    // workload keeps the members perf_copy_attr() normalizes non-zero).
    let kernel_attr = match &w.kernel_attr_hex {
        Some(h) => Some(hex_bytes(h)?),
        None => None,
    };
    let kernel_attr = kernel_attr.filter(|k| copied && *k != cap.data);
    k.push(("arg0.double_fetch", ev(exit, kernel_attr.is_some().into())));
    k.push((
        "arg0.kernel_attr",
        match &kernel_attr {
            Some(bytes) if exit => Exp::Object(AttrBytes(bytes).members_json(pmus)),
            _ => Exp::Eq(Value::Null),
        },
    ));
    k.push(("ret", ev(exit, w.ret.into())));
    k.push(("syscall.errno", ev(exit, opt(errno))));
    k.push((
        "syscall.errno_name",
        ev(
            exit,
            opt(errno.map(|e| model::errno_name(u64::from(e.unsigned_abs())))),
        ),
    ));
    k.push(("syscall.success", ev(exit, (w.ret >= 0).into())));
    k.push((
        "syscall.duration_ns",
        if exit {
            Exp::Range(0, w.time_after_ns - w.time_before_ns)
        } else {
            Exp::Eq(Value::Null)
        },
    ));
    k.push(("exit_maybe_lost", Exp::Eq(maybe_lost.into())));
    // The workload's view of the fd flag, against the flags it passed.
    if let Some(cloexec) = w.cloexec {
        if cloexec != (w.args[4] & 8 != 0) {
            kme.push(format!(
                "FD_CLOEXEC is {cloexec} on the new fd, flags were {:#x}",
                w.args[4]
            ));
        }
    }
    Ok(Derived {
        keys: k,
        kernel_model_errors: kme,
    })
}

/// The workload's calls, from one or more logs.
struct Works {
    calls: Vec<Work>,
    /// Each call's index by the tag in its argument word 5.
    by_tag: HashMap<u64, usize>,
}

impl Works {
    fn read(paths: &[PathBuf]) -> Result<Works, String> {
        let mut calls: Vec<Work> = Vec::new();
        let mut by_tag = HashMap::new();
        for path in paths {
            for record in read_jsonl(path)? {
                let work: Work = serde_json::from_value(record)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                if by_tag.insert(work.args[5], calls.len()).is_some() {
                    return Err(format!("two workload calls carry tag {:#x}", work.args[5]));
                }
                calls.push(work);
            }
        }
        Ok(Works { calls, by_tag })
    }

    /// Which workload call a reader line is: by the tag in argument word 5,
    /// or, for an EXIT without ENTRY, the first call not yet `taken` with
    /// the same thread and return value.
    fn index_of(
        calls: &[Work],
        by_tag: &HashMap<u64, usize>,
        line: &Map<String, Value>,
        free: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        if let Some(tag) = line.get("args.5").and_then(Value::as_u64) {
            return by_tag.get(&tag).copied();
        }
        let tid = line.get("tid").and_then(Value::as_i64);
        let ret = line.get("ret").and_then(Value::as_i64);
        calls
            .iter()
            .enumerate()
            .position(|(j, w)| free(j) && Some(i64::from(w.tid)) == tid && Some(w.ret) == ret)
    }
}

/// Counts and failures of a comparison.
#[derive(Debug, Default)]
struct Tally {
    fields: u64,
    members: u64,
    failures: Vec<String>,
    /// Failures by key, for the summary.
    by_key: BTreeMap<String, u64>,
}

impl Tally {
    fn fail(&mut self, what: String) {
        if self.failures.len() < 100 {
            eprintln!("antinomie-e2e: FAIL {what}");
        }
        // "who: key: ..." -> key
        let key = what.split(": ").nth(1).unwrap_or("other").to_owned();
        *self.by_key.entry(key).or_default() += 1;
        self.failures.push(what);
    }
}

fn check_key_order(line: &Map<String, Value>, want: &[&str], who: &str, t: &mut Tally) {
    let got: Vec<&str> = line.keys().map(String::as_str).collect();
    if got != want {
        t.fail(format!("{who}: keys {got:?}, schema says {want:?}"));
    }
}

fn compare_object(
    who: &str,
    key: &str,
    want: &Map<String, Value>,
    got: &Value,
    t: &mut Tally,
    verbose: bool,
) {
    let Some(got) = got.as_object() else {
        t.fail(format!("{who}: {key}: expected an object, got {got}"));
        return;
    };
    let wk: Vec<&String> = want.keys().collect();
    let gk: Vec<&String> = got.keys().collect();
    if wk != gk {
        let missing: Vec<_> = wk
            .iter()
            .filter(|k| !got.contains_key(k.as_str()))
            .collect();
        let extra: Vec<_> = gk
            .iter()
            .filter(|k| !want.contains_key(k.as_str()))
            .collect();
        t.fail(format!(
            "{who}: {key}: members differ: missing {missing:?}, unexpected {extra:?} (or order)"
        ));
    }
    for (m, v) in want {
        t.members += 1;
        match got.get(m) {
            Some(g) if g == v && verbose => println!("  {who}: {key}.{m} = {v}"),
            Some(g) if g == v => {}
            Some(g) => t.fail(format!("{who}: {key}.{m}: expected {v}, got {g}")),
            None => {}
        }
    }
}

fn compare_line(who: &str, d: &Derived, line: &Map<String, Value>, t: &mut Tally, verbose: bool) {
    check_key_order(line, CALL_KEYS, who, t);
    for e in &d.kernel_model_errors {
        t.fail(format!("{who}: kernel vs model: {e}"));
    }
    for (key, exp) in &d.keys {
        t.fields += 1;
        let got = line.get(*key).unwrap_or(&Value::Null);
        match exp {
            Exp::Eq(v) => {
                if got != v {
                    t.fail(format!("{who}: {key}: expected {v}, got {got}"));
                } else if verbose {
                    println!("  {who}: {key} = {v}");
                }
            }
            Exp::Range(lo, hi) => match got.as_u64() {
                Some(g) if (*lo..=*hi).contains(&g) => {
                    if verbose {
                        println!("  {who}: {key} = {g} in [{lo}, {hi}]");
                    }
                }
                _ => t.fail(format!(
                    "{who}: {key}: expected a number in [{lo}, {hi}], got {got}"
                )),
            },
            Exp::Object(want) => compare_object(who, key, want, got, t, verbose),
        }
    }
}

fn read_jsonl(path: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))
        })
        .collect()
}

/// Per-CPU counters as `device counters` prints them.
#[derive(Debug, Deserialize)]
struct CpuCounters {
    cpu: u32,
    produced: u64,
    lost: Vec<u64>,
}

/// What `--lossy` allows and checks.
#[derive(Debug, Clone, Copy)]
struct Lossy<'a> {
    on: bool,
    subset: bool,
    counters: Option<&'a Path>,
    half_calls: bool,
}

#[allow(clippy::too_many_lines)]
fn compare(
    workload: &[PathBuf],
    reader: &Path,
    lossy: Lossy<'_>,
    sysfs: &Path,
    verbose: bool,
) -> Result<bool, String> {
    let counters = lossy.counters;
    let half_calls = lossy.half_calls;
    let subset = lossy.subset;
    // Which lines are allowed.
    let lossy_lines = lossy.on || subset;
    let lossy = lossy.on;
    let pmus = Pmus::read(sysfs);
    let Works {
        calls: works,
        by_tag,
    } = Works::read(workload)?;
    let lines = read_jsonl(reader)?;
    let mut tally = Tally::default();
    // LOST lines first: their call id ranges, with the time of the last
    // record they dropped, say which unfinished calls may have lost their
    // EXIT (an EXIT is not earlier than its ENTRY).
    let mut lost_ranges: Vec<(u64, u64, u64)> = Vec::new();
    let mut lost_by_cpu: BTreeMap<u64, u64> = BTreeMap::new();
    let mut lost_total = 0u64;
    for (i, v) in lines.iter().enumerate() {
        let Some(obj) = v.as_object() else {
            tally.fail(format!("reader line {}: not an object", i + 1));
            continue;
        };
        if obj.get("event").and_then(Value::as_str) == Some("lost") {
            check_key_order(
                obj,
                LOST_KEYS,
                &format!("reader line {} (lost)", i + 1),
                &mut tally,
            );
            let n = |k: &str| obj.get(k).and_then(Value::as_u64).unwrap_or(0);
            let sum = n("lost.ring_full") + n("lost.bad_consumer") + n("lost.other");
            if n("lost.bad_consumer") + n("lost.other") != 0 {
                tally.fail(format!(
                    "reader line {}: losses other than ring_full: {v}",
                    i + 1
                ));
            }
            lost_total += sum;
            *lost_by_cpu.entry(n("cpu")).or_default() += sum;
            lost_ranges.push((
                n("lost.min_call_id"),
                n("lost.max_call_id"),
                n("lost.last_time_ns"),
            ));
            if !lossy_lines {
                tally.fail(format!(
                    "reader line {}: a LOST record where nothing may be lost: {v}",
                    i + 1
                ));
            }
        }
    }
    let mut matched: Vec<Option<(u64, u64)>> = vec![None; works.len()]; // (call_id, time_ns)
    let (mut complete, mut unfinished, mut entry_lost) = (0u64, 0u64, 0u64);
    let mut records_by_cpu: BTreeMap<u64, u64> = BTreeMap::new();
    let mut call_ids: HashMap<u64, usize> = HashMap::new();
    for (i, v) in lines.iter().enumerate() {
        let Some(obj) = v.as_object() else { continue };
        match obj.get("event").and_then(Value::as_str) {
            Some("lost") => continue,
            Some("call") => {}
            _ => {
                tally.fail(format!("reader line {}: unexplained: {v}", i + 1));
                continue;
            }
        }
        let u = |k: &str| obj.get(k).and_then(Value::as_u64);
        let call_id = u("call_id").unwrap_or(0);
        if let Some(prev) = call_ids.insert(call_id, i) {
            tally.fail(format!(
                "reader lines {} and {}: same call_id {call_id}",
                prev + 1,
                i + 1
            ));
        }
        let state = match obj.get("state").and_then(Value::as_str) {
            Some("complete") => State::Complete,
            Some("unfinished") if lossy_lines => State::Unfinished,
            Some("entry_lost") if lossy_lines => State::EntryLost,
            other => {
                tally.fail(format!(
                    "reader line {}: unexplained call state {other:?}: {v}",
                    i + 1
                ));
                continue;
            }
        };
        let idx = Works::index_of(&works, &by_tag, obj, |j| matched[j].is_none());
        let Some(idx) = idx else {
            tally.fail(format!(
                "reader line {}: unexplained: no workload call made it: {v}",
                i + 1
            ));
            continue;
        };
        let w = &works[idx];
        let who = format!(
            "call {} #{} thread {} ({}, tag {:#x})",
            w.case, w.seq, w.thread, w.script, w.args[5]
        );
        if matched[idx].is_some() {
            tally.fail(format!("{who}: captured twice (reader line {})", i + 1));
            continue;
        }
        matched[idx] = Some((call_id, u("time_ns").unwrap_or(0)));
        let time_ns = u("time_ns").unwrap_or(0);
        let maybe_lost = state == State::Unfinished
            && lost_ranges
                .iter()
                .any(|&(lo, hi, last)| (lo..=hi).contains(&call_id) && time_ns <= last);
        match derive(w, state, maybe_lost, &pmus) {
            Ok(d) => compare_line(&who, &d, obj, &mut tally, verbose),
            Err(why) => tally.fail(format!("{who}: cannot derive the expectation: {why}")),
        }
        let cpu = u("cpu").unwrap_or(u64::MAX);
        match state {
            State::Complete => {
                complete += 1;
                *records_by_cpu.entry(cpu).or_default() += 1;
                *records_by_cpu
                    .entry(u("exit_cpu").unwrap_or(u64::MAX))
                    .or_default() += 1;
            }
            State::Unfinished => {
                unfinished += 1;
                *records_by_cpu.entry(cpu).or_default() += 1;
            }
            State::EntryLost => {
                entry_lost += 1;
                *records_by_cpu.entry(cpu).or_default() += 1;
            }
        }
    }
    // Program order per thread = call id order = time order.
    let mut per_tid: BTreeMap<i32, Vec<(u32, u64, u64)>> = BTreeMap::new();
    for (w, m) in works.iter().zip(&matched) {
        if let Some((id, time)) = m {
            per_tid.entry(w.tid).or_default().push((w.seq, *id, *time));
        }
    }
    for (tid, mut calls) in per_tid {
        calls.sort_unstable();
        for p in calls.windows(2) {
            if p[1].1 <= p[0].1 || p[1].2 < p[0].2 {
                tally.fail(format!(
                    "tid {tid}: call #{} (call_id {}, time {}) and #{} (call_id {}, time {}) are out of order",
                    p[0].0, p[0].1, p[0].2, p[1].0, p[1].1, p[1].2
                ));
            }
        }
    }
    let n = works.len() as u64;
    let seen = matched.iter().filter(|m| m.is_some()).count() as u64;
    let shown = 2 * complete + unfinished + entry_lost;
    if lossy {
        println!(
            "antinomie-e2e: losses: the workload made {n} calls = {} records; the reader showed {shown} records \
             ({complete} complete calls, {unfinished} unfinished, {entry_lost} entry lost) and LOST records \
             reported {lost_total}; shown + lost = {}",
            2 * n,
            shown + lost_total
        );
        if shown + lost_total != 2 * n {
            tally.fail(format!(
                "produced {} != shown {shown} + lost {lost_total}",
                2 * n
            ));
        }
        if lost_total == 0 {
            tally.fail("the stalled reader lost nothing: the test did not test losses".into());
        }
        if complete == 0 {
            tally.fail("no complete call was shown".into());
        }
        if half_calls && (unfinished == 0 || entry_lost == 0) {
            tally.fail(format!(
                "expected unfinished and entry-lost calls, got {unfinished} and {entry_lost}"
            ));
        }
        match counters {
            Some(p) => {
                let text =
                    std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
                let cs: Vec<CpuCounters> =
                    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?;
                let (mut kp, mut kl) = (0, 0);
                for c in &cs {
                    let lost: u64 = c.lost.iter().sum();
                    kp += c.produced;
                    kl += lost;
                    let cpu = u64::from(c.cpu);
                    let shown_here = records_by_cpu.get(&cpu).copied().unwrap_or(0);
                    let lost_here = lost_by_cpu.get(&cpu).copied().unwrap_or(0);
                    println!(
                        "antinomie-e2e: losses: cpu {}: kernel produced {} lost {lost}; reader showed {shown_here} \
                         records, LOST records {lost_here}",
                        c.cpu, c.produced
                    );
                    if c.produced != shown_here || lost != lost_here {
                        tally.fail(format!(
                            "cpu {}: kernel produced {} lost {lost}, reader shows {shown_here} and LOST {lost_here}",
                            c.cpu, c.produced
                        ));
                    }
                }
                println!(
                    "antinomie-e2e: losses: kernel counters: produced {kp} + lost {kl} = {} (= 2 x {n} calls: {})",
                    kp + kl,
                    if kp + kl == 2 * n { "exact" } else { "MISMATCH" }
                );
                if kp + kl != 2 * n {
                    tally.fail(format!("kernel produced {kp} + lost {kl} != 2 x {n} calls"));
                }
            }
            None => tally.fail("--lossy needs --counters".into()),
        }
    } else if subset {
        println!(
            "antinomie-e2e: subset: {complete} complete calls, {unfinished} unfinished, {entry_lost} entry lost; \
             LOST records report {lost_total} records"
        );
    } else {
        for (w, m) in works.iter().zip(&matched) {
            if m.is_none() {
                tally.fail(format!(
                    "call {} #{} thread {} ({}, tag {:#x}): not captured",
                    w.case, w.seq, w.thread, w.script, w.args[5]
                ));
            }
        }
    }
    let ok = tally.failures.is_empty();
    for (key, n) in &tally.by_key {
        println!("antinomie-e2e: {n} failures at {key}");
    }
    println!(
        "antinomie-e2e: {}: {n} workload calls, {seen} captured calls compared field by field \
         ({} fields, {} attr members), {} reader lines, {} failures",
        if ok { "ok" } else { "FAILED" },
        tally.fields,
        tally.members,
        lines.len(),
        tally.failures.len()
    );
    Ok(ok)
}

fn device(op: &str, arg: Option<u64>, path: &Path) -> Result<(), String> {
    let f: File = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let fd = f.as_raw_fd();
    let ioctl = |cmd: u32, p: *mut libc::c_void, what: &str| -> Result<(), String> {
        // SAFETY: cmd is one of the device's ioctls and p points to the
        // argument type its _IOC_SIZE names (or is unused for _IO).
        let rc = unsafe { libc::ioctl(fd, libc::Ioctl::from(cmd), p) };
        if rc < 0 {
            Err(format!("{what}: {}", std::io::Error::last_os_error()))
        } else {
            Ok(())
        }
    };
    let mut info = abi::Info::default();
    ioctl(
        abi::IOC_GET_INFO,
        std::ptr::from_mut(&mut info).cast(),
        "ANTINOMIE_IOC_GET_INFO",
    )?;
    match (op, arg) {
        ("info", None) => println!("{info:?}"),
        ("enable", None) => ioctl(
            abi::IOC_ENABLE,
            std::ptr::null_mut(),
            "ANTINOMIE_IOC_ENABLE",
        )?,
        ("disable", None) => ioctl(
            abi::IOC_DISABLE,
            std::ptr::null_mut(),
            "ANTINOMIE_IOC_DISABLE",
        )?,
        ("ring-size", Some(mut size)) => {
            ioctl(
                abi::IOC_SET_RING_SIZE,
                std::ptr::from_mut(&mut size).cast(),
                "ANTINOMIE_IOC_SET_RING_SIZE",
            )?;
        }
        ("counters", None) => {
            let mut out = Vec::new();
            for cpu in 0..info.cpu_id_limit {
                let mut c = abi::Counters {
                    cpu,
                    ..abi::Counters::default()
                };
                // A CPU that is not possible has no ring: ENODEV.
                if ioctl(
                    abi::IOC_GET_COUNTERS,
                    std::ptr::from_mut(&mut c).cast(),
                    "ANTINOMIE_IOC_GET_COUNTERS",
                )
                .is_err()
                {
                    continue;
                }
                out.push(serde_json::json!({
                    "cpu": cpu,
                    "producer_pos": c.producer_pos,
                    "consumer_pos": c.consumer_pos,
                    "produced": c.produced,
                    "lost": c.lost,
                }));
            }
            println!("{}", Value::Array(out));
        }
        _ => return Err(format!("unknown device operation {op} {arg:?}")),
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Compare {
            workload,
            reader,
            lossy,
            counters,
            subset,
            require_half_calls,
            sysfs,
            verbose,
        } => compare(
            &workload,
            &reader,
            Lossy {
                on: lossy,
                subset,
                counters: counters.as_deref(),
                half_calls: require_half_calls,
            },
            &sysfs,
            verbose,
        ),
        Cmd::Filters {
            workload,
            reader,
            pmu,
            live,
            live_filter,
            lossy,
            sysfs,
            verbose,
            files,
        } => filters::run(&filters::Args {
            workload: &workload,
            reader: &reader,
            files: &files,
            pmu: &pmu,
            live: live.as_deref(),
            live_filter: live_filter.as_deref(),
            lossy,
            sysfs: &sysfs,
            verbose,
        }),
        Cmd::DiffCheck(args) => diffcheck::run(&args),
        Cmd::Device { op, arg, device: d } => device(&op, arg, &d).map(|()| true),
    };
    match r {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("antinomie-e2e: error: {e}");
            ExitCode::from(2)
        }
    }
}
