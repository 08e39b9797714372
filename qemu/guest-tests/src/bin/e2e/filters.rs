//! `antinomie-e2e filters`: the Syscall Trace filter, end to end.
//!
//! Runs `reader show FILES --filter EXPR` (the real CLI, on the trace the
//! guest's `reader --follow -w` saved, or on ring images) for many
//! filters and checks that each prints exactly the calls it must:
//!
//! * the calls' ground truth is the comparator's model (`derive()`): every
//!   value the model can predict exactly comes from the workload's log
//!   through the model, never from the reader; only times, durations,
//!   unpinned CPUs and call ids come from the reader's unfiltered output,
//!   after `derive()` checked each against the workload's own bounds;
//! * every field `reader fields` lists (which must be exactly the
//!   comparator's own list: the JSON keys and `args.attr_uptr.<member>` for
//!   every member of its model of the attr) gets `exists()`, its negation
//!   and, by type, comparisons around a value the run holds, `in`, bit tests
//!   per set bit, bool tests, string equality, and its named constants
//!   (taken from the model's rendering of the same values);
//! * the cases — by errno, by flag bit, by attr member on sized-down
//!   attrs, by duration, precedence, by double fetch — take their expected subsets straight
//!   from the workload's log (errno, flags, attr bytes, case names) and must
//!   select a non-empty proper subset, both ways round (`F` and `!(F)`);
//! * a live filter (`reader --follow --filter`, its output given with
//!   `--live`) must have printed exactly its subset;
//! * each kind of bad filter exits with status 2, names its kind and prints
//!   no call;
//! * with `--lossy` (a stalled reader's trace: LOST records, unfinished
//!   and entry-lost calls), the same for every field — so that `state`,
//!   `exit_maybe_lost` and the absent EXIT fields split the calls — and
//!   every filtered output keeps the LOST lines; the cases, written
//!   for the `e2e` scripts, are not run.
//!
//! Calls are identified by their `call_id` (the reader's unfiltered output
//! gives it; the workload call behind each is found by the tag it puts in
//! argument word 5, or for an entry-lost call by thread and result).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::{Map, Value};

use super::model::{self, Pmus};
use crate::compare::{compare_line, Tally};
use crate::expect::{derive, Derived, Exp, State, CALL_KEYS};
use crate::worklog::{Work, Works};

/// Where the calls come from and what else to check.
#[derive(Debug)]
pub struct Args<'a> {
    pub workload: &'a [PathBuf],
    /// The `reader` binary to run.
    pub reader: &'a Path,
    /// What `reader show` reads: a trace file, or ring images.
    pub files: &'a [PathBuf],
    /// `--pmu NAME=TYPE` for `reader show`, and the model's PMU names.
    pub pmu: &'a [String],
    /// The output of `reader --follow --format json --filter LIVE_FILTER`.
    pub live: Option<&'a Path>,
    pub live_filter: Option<&'a str>,
    /// LOST records and half calls are allowed (a stalled reader).
    pub lossy: bool,
    pub sysfs: &'a Path,
    pub verbose: bool,
}

/// One call: the workload's record and the line the model expects.
struct Call {
    /// The kernel's call id, as the reader's unfiltered output shows it.
    id: u64,
    work: Work,
    /// The expected JSON line: the model's values, and the reader's for
    /// the keys the model bounds (times, durations, unpinned CPUs, ids).
    line: Map<String, Value>,
}

/// A set of calls, by call id.
type Ids = BTreeSet<u64>;

/// One filter and the calls it must select.
struct Case {
    /// The field (or the category) it exercises.
    about: String,
    filter: String,
    expect: Ids,
}

/// A field as `reader fields` lists it.
struct Field {
    name: String,
    ty: String,
}

const ATTR: &str = "args.attr_uptr.";

/// Fields whose string values are also constants of the field (written
/// bare: `state == complete`).
const BARE_STRINGS: &[&str] = &["state", "arg0.status", "syscall.errno_name"];

/// The value of `field` in `line`, `None` when absent (null or missing).
fn value<'a>(line: &'a Map<String, Value>, field: &str) -> Option<&'a Value> {
    let v = match field.strip_prefix(ATTR) {
        Some(member) => line.get("arg0.perf_event_attr")?.as_object()?.get(member)?,
        None => line.get(field)?,
    };
    (!v.is_null()).then_some(v)
}

/// The model's symbolic rendering of `field`, split into its `|` parts.
fn name_parts(line: &Map<String, Value>, field: &str) -> Option<Vec<String>> {
    let rendered = match field.strip_prefix(ATTR) {
        Some(member) => line
            .get("arg0.perf_event_attr_names")?
            .as_object()?
            .get(member)?,
        None => match field {
            "args.flags" => line.get("args.flags_names")?,
            "syscall.errno" | "ret" => line.get("syscall.errno_name")?,
            "arg0.capture_flags" => {
                let parts = line.get(field)?.as_array()?;
                return Some(
                    parts
                        .iter()
                        .filter_map(|p| p.as_str().map(str::to_owned))
                        .collect(),
                );
            }
            _ => return None,
        },
    };
    Some(rendered.as_str()?.split('|').map(str::to_owned).collect())
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A JSON number as i128 (u64 and i64 both fit).
fn number(v: &Value) -> Option<i128> {
    v.as_u64()
        .map(i128::from)
        .or_else(|| v.as_i64().map(i128::from))
}

/// Numbers as the filter writes them: negative with a sign, some in hex
/// so that both notations are exercised.
fn literal(n: i128, hex: bool) -> String {
    if n < 0 {
        format!("-{}", -n)
    } else if hex {
        format!("{n:#x}")
    } else {
        n.to_string()
    }
}

fn select(calls: &[Call], pred: impl Fn(&Call) -> bool) -> Ids {
    calls.iter().filter(|c| pred(c)).map(|c| c.id).collect()
}

/// The cases of every field: presence, then by type, then named constants.
fn field_cases(calls: &[Call], fields: &[Field], size_names: &BTreeMap<i128, String>) -> Vec<Case> {
    let mut cases = Vec::new();
    for f in fields {
        let mut field = typed_cases(calls, f);
        field.extend(named_cases(calls, &f.name, &f.ty, size_names));
        cases.extend(field.into_iter().map(|(filter, expect)| Case {
            about: f.name.clone(),
            filter,
            expect,
        }));
    }
    cases
}

/// `exists()` both ways, then by the field's type: comparisons around a
/// value the run holds and `in` (numbers), a test per set bit (bits),
/// truth tests (bools), equality (strings).
fn typed_cases(calls: &[Call], f: &Field) -> Vec<(String, Ids)> {
    let name = f.name.as_str();
    let mut cases = Vec::new();
    let mut push = |filter: String, expect: Ids| cases.push((filter, expect));
    let present = |c: &Call| value(&c.line, name).is_some();
    push(format!("exists({name})"), select(calls, present));
    push(format!("!exists({name})"), select(calls, |c| !present(c)));
    match f.ty.as_str() {
        "unsigned" | "signed" | "bits" => {
            let num = |c: &Call| value(&c.line, name).and_then(number);
            let distinct: BTreeSet<i128> = calls.iter().filter_map(num).collect();
            let distinct: Vec<i128> = distinct.into_iter().collect();
            if let Some(&pivot) = distinct.get(distinct.len() / 2) {
                let cmp = |op: &str, hex: bool, test: fn(i128, i128) -> bool| {
                    (
                        format!("{name} {op} {}", literal(pivot, hex)),
                        select(calls, |c| num(c).is_some_and(|v| test(v, pivot))),
                    )
                };
                for (filter, expect) in [
                    cmp("==", true, |v, p| v == p),
                    cmp("!=", false, |v, p| v != p),
                    cmp("<", false, |v, p| v < p),
                    cmp("<=", true, |v, p| v <= p),
                    cmp(">", false, |v, p| v > p),
                    cmp(">=", false, |v, p| v >= p),
                ] {
                    push(filter, expect);
                }
                if let (Some(&lo), Some(&hi)) = (distinct.first(), distinct.last()) {
                    push(
                        format!(
                            "{name} in {{{}, {}}}",
                            literal(lo, false),
                            literal(hi, true)
                        ),
                        select(calls, |c| num(c).is_some_and(|v| v == lo || v == hi)),
                    );
                }
            }
            if f.ty == "bits" {
                let all = calls
                    .iter()
                    .filter_map(num)
                    .fold(0u64, |acc, v| acc | u64::try_from(v).unwrap_or(0));
                for bit in (0..64).map(|b| 1u64 << b).filter(|b| all & b != 0) {
                    push(
                        format!("{name} & {bit:#x}"),
                        select(calls, |c| {
                            num(c).is_some_and(|v| u64::try_from(v).unwrap_or(0) & bit != 0)
                        }),
                    );
                }
            }
        }
        "bool" => {
            let truth = |c: &Call| value(&c.line, name).and_then(Value::as_bool);
            push(name.to_owned(), select(calls, |c| truth(c) == Some(true)));
            push(
                format!("!{name}"),
                select(calls, |c| truth(c) != Some(true)),
            );
            push(
                format!("{name} == false"),
                select(calls, |c| truth(c) == Some(false)),
            );
            push(
                format!("{name} != true"),
                select(calls, |c| truth(c) == Some(false)),
            );
        }
        "string" => {
            fn text<'c>(c: &'c Call, name: &str) -> Option<&'c str> {
                value(&c.line, name).and_then(Value::as_str)
            }
            let distinct: BTreeSet<&str> = calls.iter().filter_map(|c| text(c, name)).collect();
            for s in distinct {
                push(
                    format!("{name} == {}", Value::from(s)),
                    select(calls, |c| text(c, name) == Some(s)),
                );
                push(
                    format!("{name} != {}", Value::from(s)),
                    select(calls, |c| text(c, name).is_some_and(|t| t != s)),
                );
                if BARE_STRINGS.contains(&name) && is_identifier(s) {
                    push(
                        format!("{name} == {s}"),
                        select(calls, |c| text(c, name) == Some(s)),
                    );
                }
            }
        }
        // Objects are only tested for presence.
        _ => {}
    }
    cases
}

/// The field's named constants, from the model's rendering of the same
/// values (`args.flags_names`, `syscall.errno_name`, the attr's `_names`).
fn named_cases(
    calls: &[Call],
    name: &str,
    ty: &str,
    size_names: &BTreeMap<i128, String>,
) -> Vec<(String, Ids)> {
    let mut cases = Vec::new();
    let mut push = |filter: String, expect: Ids| cases.push((filter, expect));
    let parts = |c: &Call| name_parts(&c.line, name);
    let mut names: BTreeSet<String> = BTreeSet::new();
    for c in calls {
        names.extend(
            parts(c)
                .unwrap_or_default()
                .into_iter()
                .filter(|n| is_identifier(n)),
        );
    }
    let has = |c: &Call, n: &str| parts(c).is_some_and(|p| p.iter().any(|x| x == n));
    let whole = |c: &Call, n: &str| parts(c).is_some_and(|p| p.len() == 1 && p[0] == n);
    match name {
        "args.flags" | "arg0.capture_flags" => {
            for n in &names {
                push(format!("{name} & {n}"), select(calls, |c| has(c, n)));
            }
        }
        "syscall.errno" | "ret" => {
            let sign = if name == "ret" { "-" } else { "" };
            for n in &names {
                push(
                    format!("{name} == {sign}{n}"),
                    select(calls, |c| whole(c, n)),
                );
            }
            if let (Some(a), Some(b)) = (names.first(), names.last()) {
                push(
                    format!("{name} in {{{sign}{a}, {sign}{b}}}"),
                    select(calls, |c| whole(c, a) || whole(c, b)),
                );
            }
        }
        "arg0.declared_size" | "arg0.required_size" => {
            for (v, n) in size_names {
                push(
                    format!("{name} == {n}"),
                    select(calls, |c| value(&c.line, name).and_then(number) == Some(*v)),
                );
            }
        }
        _ if name.starts_with(ATTR) && ty == "bits" => {
            for n in &names {
                push(format!("{name} & {n}"), select(calls, |c| has(c, n)));
            }
        }
        _ if name.starts_with(ATTR) => {
            for n in &names {
                push(format!("{name} == {n}"), select(calls, |c| whole(c, n)));
            }
            if let (Some(a), Some(b)) = (names.first(), names.last()) {
                push(
                    format!("{name} in {{{a}, {b}}}"),
                    select(calls, |c| whole(c, a) || whole(c, b)),
                );
            }
        }
        _ => {}
    }
    cases
}

/// The cases, expected subsets from the workload's log (and, for
/// what was captured of the attr, the model's reading of it).
fn scenario_cases(calls: &[Call]) -> Vec<Case> {
    let errno = |c: &Call| c.work.errno;
    let flags = |c: &Call| c.work.args[4];
    let copied = |c: &Call| {
        value(&c.line, "arg0.copied_len")
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let attr_size = |c: &Call| value(&c.line, "args.attr_uptr.size").and_then(Value::as_u64);
    let mut durations: Vec<u64> = calls
        .iter()
        .filter_map(|c| value(&c.line, "syscall.duration_ns").and_then(Value::as_u64))
        .collect();
    durations.sort_unstable();
    let median = durations.get(durations.len() / 2).copied().unwrap_or(0);
    let slowest = durations.last().copied().unwrap_or(0);
    let duration = |c: &Call| value(&c.line, "syscall.duration_ns").and_then(Value::as_u64);
    let case = |about: &str, filter: &str, pred: &dyn Fn(&Call) -> bool| {
        case_of(calls, about, filter, pred)
    };
    let mut cases = vec![
        case("by errno", "syscall.errno == E2BIG", &|c| {
            errno(c) == Some(model::E2BIG)
        }),
        case("by errno", "ret in {-EINVAL, -EFAULT}", &|c| {
            c.work.ret == -i64::from(model::EINVAL) || c.work.ret == -i64::from(model::EFAULT)
        }),
        case("by flag bit", "args.flags & PERF_FLAG_FD_CLOEXEC", &|c| {
            flags(c) & 8 != 0
        }),
        case("by flag bit", "args.flags & PERF_FLAG_FD_CLOEXEC == 0", &|c| {
            flags(c) & 8 == 0
        }),
        case("by flag bit", "args.flags & 0x100000", &|c| {
            flags(c) & 0x10_0000 != 0
        }),
        case(
            "by attr member, sized down",
            "exists(args.attr_uptr.config1) && !exists(args.attr_uptr.config2)",
            &|c| (57..=64).contains(&copied(c)),
        ),
        case(
            "by attr member, sized down",
            "exists(args.attr_uptr.sample_max_stack) && !exists(args.attr_uptr.__reserved_2)",
            &|c| (109..=110).contains(&copied(c)),
        ),
        case(
            "by attr member, sized down",
            "args.attr_uptr.size == PERF_ATTR_SIZE_VER3 && !exists(args.attr_uptr.sample_regs_intr)",
            &|c| attr_size(c) == Some(96) && copied(c) <= 96,
        ),
        // A non-zero tail fails the call before the kernel reads the head,
        // so the capture holds only the size word: arg0.declared_size.
        case(
            "by capture, sized down",
            "syscall.errno == E2BIG && arg0.declared_size > 136 && !exists(args.attr_uptr.type)",
            &|c| {
                errno(c) == Some(model::E2BIG)
                    && value(&c.line, "arg0.declared_size")
                        .and_then(Value::as_u64)
                        .is_some_and(|s| s > 136)
                    && copied(c) == 0
            },
        ),
        case(
            "by attr member",
            "args.attr_uptr.type == PERF_TYPE_BREAKPOINT && args.attr_uptr.bp_len == HW_BREAKPOINT_LEN_8",
            &|c| c.work.case == "breakpoint-w8",
        ),
        case(
            "by duration",
            &format!("syscall.duration_ns > {median}"),
            &|c| duration(c).is_some_and(|d| d > median),
        ),
        case(
            "by duration",
            &format!("syscall.duration_ns >= {slowest}"),
            &|c| duration(c) == Some(slowest),
        ),
        case(
            "precedence",
            "syscall.success || syscall.errno == EINVAL && args.flags & PERF_FLAG_FD_CLOEXEC",
            &|c| c.work.ret >= 0 || (errno(c) == Some(model::EINVAL) && flags(c) & 8 != 0),
        ),
        case(
            "live",
            "ret in {-EINVAL, -E2BIG} && !(args.flags & PERF_FLAG_FD_CLOEXEC)",
            &|c| {
                (c.work.ret == -i64::from(model::EINVAL) || c.work.ret == -i64::from(model::E2BIG))
                    && flags(c) & 8 == 0
            },
        ),
    ];
    cases.extend(e2e_only_cases(calls));
    cases
}

fn case_of(calls: &[Call], about: &str, filter: &str, pred: &dyn Fn(&Call) -> bool) -> Case {
    Case {
        about: about.to_owned(),
        filter: filter.to_owned(),
        expect: select(calls, pred),
    }
}

/// The cases only the `e2e` script's calls make non-empty: (workload case,
/// about, filter). Each selects exactly its workload case, and is said to
/// be skipped when the workload has no such call.
const E2E_ONLY_CASES: &[(&str, &str, &str)] = &[
    // The big group's E2BIG comes after perf_copy_attr() succeeded.
    (
        BIG_GROUP_E2BIG,
        "by errno",
        "syscall.errno == E2BIG && !arg0.size_written",
    ),
    // The attr changed between the capture and the kernel's copy.
    (
        DOUBLE_FETCH,
        "by double fetch",
        "arg0.double_fetch && args.attr_uptr.config == PERF_COUNT_SW_CPU_CLOCK && exists(arg0.kernel_attr)",
    ),
];

fn e2e_only_cases(calls: &[Call]) -> Vec<Case> {
    let mut cases = Vec::new();
    for &(workload_case, about, filter) in E2E_ONLY_CASES {
        if calls.iter().any(|c| c.work.case == workload_case) {
            cases.push(case_of(calls, about, filter, &|c| {
                c.work.case == workload_case
            }));
        } else {
            println!(
                "antinomie-e2e: filters: no `{workload_case}` call in this workload: `{filter}` is not checked"
            );
        }
    }
    cases
}

/// The workload case that gets E2BIG from `perf_event_validate_size()`.
const BIG_GROUP_E2BIG: &str = "big-group-e2big-sibling";
/// The workload case whose attr changes between the capture and the copy.
const DOUBLE_FETCH: &str = "double-fetch-uffd";

/// One bad filter of each kind, and the kind its message must name.
const BAD_FILTERS: &[(&str, &str)] = &[
    ("ret = -EINVAL", "syntax error"),
    (
        "args.attr_uptr.sampel_type & PERF_SAMPLE_IP",
        "unknown field",
    ),
    ("syscall.success == 1", "type mismatch"),
    ("args.flags & PERF_FLAG_FD_CLOEXC", "unknown constant"),
    ("args.flags & PERF_SAMPLE_IP", "misplaced constant"),
];

/// The call ids of the call lines of JSON Lines `text`, and how many
/// LOST lines it has.
fn ids_of(text: &str) -> Result<(Ids, usize), String> {
    let (mut ids, mut lost) = (Ids::new(), 0);
    for (i, l) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let v: Value = serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1))?;
        match v.get("event").and_then(Value::as_str) {
            Some("lost") => lost += 1,
            Some("call") => {
                let id = v
                    .get("call_id")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| format!("line {}: a call without call_id: {v}", i + 1))?;
                if !ids.insert(id) {
                    return Err(format!("line {}: call {id} printed twice", i + 1));
                }
            }
            _ => return Err(format!("line {}: unexplained: {v}", i + 1)),
        }
    }
    Ok((ids, lost))
}

struct Reader<'a> {
    args: &'a Args<'a>,
    runs: u64,
}

impl Reader<'_> {
    /// `reader show FILES --format json [--filter F]`: (exit code, stdout, stderr).
    fn show(&mut self, filter: Option<&str>) -> Result<(i32, String, String), String> {
        let mut cmd = Command::new(self.args.reader);
        cmd.args(["show", "--format", "json", "--no-summary"]);
        for p in self.args.pmu {
            cmd.args(["--pmu", p]);
        }
        if let Some(f) = filter {
            cmd.args(["--filter", f]);
        }
        cmd.args(self.args.files);
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.args.reader.display()))?;
        self.runs += 1;
        Ok((
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ))
    }
}

/// The field list of `reader fields`.
fn reader_fields(reader: &Path) -> Result<Vec<Field>, String> {
    let out = Command::new(reader)
        .arg("fields")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", reader.display()))?;
    if !out.status.success() {
        return Err(format!("reader fields exited with {}", out.status));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("FIELD "))
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            Some(Field {
                name: words.next()?.to_owned(),
                ty: words.next()?.to_owned(),
            })
        })
        .collect())
}

fn describe(calls: &[Call], ids: &Ids) -> String {
    let by_id: HashMap<u64, &Call> = calls.iter().map(|c| (c.id, c)).collect();
    let mut names: Vec<String> = ids
        .iter()
        .take(8)
        .map(|id| match by_id.get(id) {
            Some(c) => format!("{} #{} (call {id})", c.work.case, c.work.seq),
            None => format!("call {id} (not in the unfiltered output)"),
        })
        .collect();
    if ids.len() > 8 {
        names.push(format!("… {} more", ids.len() - 8));
    }
    names.join(", ")
}

/// Checks one case's output: exactly the expected calls, and every LOST
/// line of the unfiltered output. Returns whether the case selected a
/// non-empty proper subset.
fn check_case(
    trace: &Trace,
    case: &Case,
    got: Result<(i32, String, String), String>,
    tally: &mut Tally,
) -> bool {
    let who = format!("filter `{}` ({})", case.filter, case.about);
    let (code, stdout, stderr) = match got {
        Ok(r) => r,
        Err(e) => {
            tally.fail(format!("{who}: {e}"));
            return false;
        }
    };
    if code != 0 {
        tally.fail(format!(
            "{who}: reader exited with {code}: {}",
            stderr.trim()
        ));
        return false;
    }
    match ids_of(&stdout) {
        Ok((ids, lost)) => {
            if ids != case.expect {
                let missing: Ids = case.expect.difference(&ids).copied().collect();
                let extra: Ids = ids.difference(&case.expect).copied().collect();
                tally.fail(format!(
                    "{who}: selected {} calls, expected {}; missing: [{}]; unexpected: [{}]",
                    ids.len(),
                    case.expect.len(),
                    describe(&trace.calls, &missing),
                    describe(&trace.calls, &extra)
                ));
            }
            if lost != trace.lost_lines {
                tally.fail(format!(
                    "{who}: {lost} LOST lines, the unfiltered output has {}",
                    trace.lost_lines
                ));
            }
        }
        Err(e) => tally.fail(format!("{who}: {e}")),
    }
    !case.expect.is_empty() && case.expect.len() < trace.calls.len()
}

/// The calls of the trace and its LOST lines.
struct Trace {
    calls: Vec<Call>,
    lost_lines: usize,
}

/// The PMU names the model uses: `--pmu`'s, as `reader show` is told, or
/// sysfs's.
fn model_pmus(args: &Args<'_>) -> Result<Pmus, String> {
    if args.pmu.is_empty() {
        return Ok(Pmus::read(args.sysfs));
    }
    let mut named = Vec::new();
    for spec in args.pmu {
        let (name, ty) = spec
            .split_once('=')
            .and_then(|(n, t)| Some((n.to_owned(), t.parse::<u32>().ok()?)))
            .ok_or_else(|| format!("--pmu {spec}: expected NAME=TYPE"))?;
        named.push((ty, name));
    }
    Ok(Pmus(named))
}

/// The line the model expects, with the reader's values for the keys the
/// model only bounds (`compare_line` checked them against the bounds).
fn expected_line(derived: Derived, shown: &Map<String, Value>) -> Map<String, Value> {
    let mut line = Map::new();
    for (key, exp) in derived.keys {
        let expected = match exp {
            Exp::Eq(v) => v,
            Exp::Object(members) => Value::Object(members),
            Exp::Range(..) => shown.get(key).cloned().unwrap_or(Value::Null),
        };
        line.insert(key.to_owned(), expected);
    }
    line
}

/// The model's view of every call of the trace, checked field by field
/// against the unfiltered output (as `compare` does).
fn ground_truth(
    args: &Args<'_>,
    reader: &mut Reader<'_>,
    tally: &mut Tally,
) -> Result<Trace, String> {
    let pmus = model_pmus(args)?;
    let Works {
        calls: works,
        by_tag,
    } = Works::read(args.workload)?;
    let mut taken = vec![false; works.len()];
    let (code, stdout, stderr) = reader.show(None)?;
    if code != 0 {
        return Err(format!("reader show exited with {code}: {}", stderr.trim()));
    }
    let mut lines = Vec::new();
    for (i, text) in stdout.lines().enumerate() {
        let parsed: Value =
            serde_json::from_str(text).map_err(|e| format!("reader line {}: {e}", i + 1))?;
        match parsed {
            Value::Object(line) => lines.push(line),
            other => return Err(format!("reader line {}: not an object: {other}", i + 1)),
        }
    }
    // LOST lines first: their call id ranges say which unfinished calls
    // may have lost their EXIT.
    let lost: Vec<(u64, u64)> = lines
        .iter()
        .filter(|l| l.get("event").and_then(Value::as_str) == Some("lost"))
        .map(|l| {
            let id = |k: &str| l.get(k).and_then(Value::as_u64).unwrap_or(0);
            (id("lost.min_call_id"), id("lost.max_call_id"))
        })
        .collect();
    if !args.lossy && !lost.is_empty() {
        return Err(format!(
            "{} LOST records where nothing may be lost (not --lossy)",
            lost.len()
        ));
    }
    let mut calls = Vec::new();
    for (i, shown) in lines.iter().enumerate() {
        let text = |k: &str| shown.get(k).and_then(Value::as_str);
        let state = match (text("event"), text("state")) {
            (Some("lost"), _) => continue,
            (Some("call"), Some("complete")) => State::Complete,
            (Some("call"), Some("unfinished")) if args.lossy => State::Unfinished,
            (Some("call"), Some("entry_lost")) if args.lossy => State::EntryLost,
            _ => {
                return Err(format!(
                    "reader line {}: unexpected here: {}",
                    i + 1,
                    Value::Object(shown.clone())
                ))
            }
        };
        let id = shown
            .get("call_id")
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("reader line {}: no call_id", i + 1))?;
        let index = Works::index_of(&works, &by_tag, shown, |j| !taken[j])
            .filter(|&j| !taken[j])
            .ok_or_else(|| format!("reader line {}: no workload call (left) made it", i + 1))?;
        taken[index] = true;
        let work = works[index].clone();
        let who = format!(
            "call {} #{} thread {} (call {id})",
            work.case, work.seq, work.thread
        );
        let maybe_lost =
            state == State::Unfinished && lost.iter().any(|&(lo, hi)| (lo..=hi).contains(&id));
        let derived = derive(&work, state, maybe_lost, &pmus).map_err(|e| format!("{who}: {e}"))?;
        compare_line(&who, &derived, shown, tally, false);
        let line = expected_line(derived, shown);
        calls.push(Call { id, work, line });
    }
    let left: Vec<&str> = works
        .iter()
        .zip(&taken)
        .filter(|(_, t)| !**t)
        .map(|(w, _)| w.case.as_str())
        .collect();
    if !args.lossy && !left.is_empty() {
        return Err(format!(
            "{} workload calls are not in the trace: {left:?}",
            left.len()
        ));
    }
    Ok(Trace {
        calls,
        lost_lines: lost.len(),
    })
}

/// `reader fields` must list exactly the comparator's own fields: the JSON
/// keys and `args.attr_uptr.<member>` for every member of its model.
fn check_field_list(fields: &[Field], tally: &mut Tally) {
    let listed: BTreeSet<String> = fields.iter().map(|f| f.name.clone()).collect();
    let own: BTreeSet<String> = CALL_KEYS
        .iter()
        .map(|k| (*k).to_owned())
        .chain(model::member_names().map(|m| format!("{ATTR}{m}")))
        .collect();
    for missing in own.difference(&listed) {
        tally.fail(format!("reader fields: {missing}: not listed"));
    }
    for extra in listed.difference(&own) {
        tally.fail(format!("reader fields: {extra}: unknown to the comparator"));
    }
    if listed.len() != fields.len() {
        tally.fail("reader fields: a field is listed twice".into());
    }
}

/// `PERF_ATTR_SIZE_VER*` by value, as the model names the attrs' sizes.
fn size_names(calls: &[Call]) -> BTreeMap<i128, String> {
    let mut names = BTreeMap::new();
    for c in calls {
        if let (Some(v), Some(n)) = (
            value(&c.line, "args.attr_uptr.size").and_then(number),
            name_parts(&c.line, "args.attr_uptr.size"),
        ) {
            if n.len() == 1 && is_identifier(&n[0]) {
                names.insert(v, n[0].clone());
            }
        }
    }
    names
}

/// Every field's cases; each field must have been exercised.
fn check_fields(trace: &Trace, fields: &[Field], reader: &mut Reader<'_>, tally: &mut Tally) {
    let calls = &trace.calls;
    let cases = field_cases(calls, fields, &size_names(calls));
    let mut split: BTreeMap<&str, bool> = BTreeMap::new();
    for case in &cases {
        let got = reader.show(Some(&case.filter));
        let proper = check_case(trace, case, got, tally);
        *split.entry(case.about.as_str()).or_default() |= proper;
        if reader.args.verbose {
            println!("  {} -> {} calls", case.filter, case.expect.len());
        }
    }
    let uniform: Vec<&str> = split
        .iter()
        .filter(|(_, s)| !**s)
        .map(|(f, _)| *f)
        .collect();
    println!(
        "antinomie-e2e: filters: {} fields, {} filters; {} fields split the calls, {} hold one value \
         (or none) on every call of this workload: {}",
        split.len(),
        cases.len(),
        split.len() - uniform.len(),
        uniform.len(),
        uniform.join(" ")
    );
    for f in fields {
        if !split.contains_key(f.name.as_str()) {
            tally.fail(format!("field {}: no filter exercised it", f.name));
        }
    }
}

/// The cases, both ways round, each a non-empty proper subset.
fn check_scenarios(trace: &Trace, scenarios: &[Case], reader: &mut Reader<'_>, tally: &mut Tally) {
    let calls = &trace.calls;
    for case in scenarios {
        let inverse = Case {
            about: case.about.clone(),
            filter: format!("!({})", case.filter),
            expect: calls
                .iter()
                .map(|c| c.id)
                .filter(|id| !case.expect.contains(id))
                .collect(),
        };
        for c in [case, &inverse] {
            let got = reader.show(Some(&c.filter));
            if !check_case(trace, c, got, tally) {
                tally.fail(format!(
                    "filter `{}` ({}): expected a non-empty proper subset, the workload gives {} of {} calls",
                    c.filter,
                    c.about,
                    c.expect.len(),
                    calls.len()
                ));
            }
        }
        println!(
            "antinomie-e2e: filters: {:<28} {:>4} of {} calls: {}",
            case.about,
            case.expect.len(),
            calls.len(),
            case.filter
        );
    }
}

/// What `reader --follow --filter FILTER` printed, against its case.
fn check_live(
    trace: &Trace,
    scenarios: &[Case],
    live: &Path,
    filter: &str,
    tally: &mut Tally,
) -> Result<(), String> {
    let Some(case) = scenarios.iter().find(|c| c.filter == filter) else {
        tally.fail(format!(
            "--live-filter `{filter}` is none of the issue's cases"
        ));
        return Ok(());
    };
    let text = std::fs::read_to_string(live).map_err(|e| format!("{}: {e}", live.display()))?;
    let printed = ids_of(&text).map_or(0, |(ids, _)| ids.len());
    check_case(trace, case, Ok((0, text, String::new())), tally);
    println!(
        "antinomie-e2e: filters: live `reader --follow --filter` printed {printed} calls, expected {}",
        case.expect.len()
    );
    Ok(())
}

/// Each kind of bad filter: status 2, the kind named, nothing printed.
fn check_bad_filters(reader: &mut Reader<'_>, tally: &mut Tally) {
    for (filter, kind) in BAD_FILTERS {
        let who = format!("bad filter `{filter}`");
        match reader.show(Some(filter)) {
            Ok((2, stdout, stderr)) if stdout.is_empty() && stderr.contains(kind) => {
                println!(
                    "antinomie-e2e: filters: {kind}: {}",
                    stderr.lines().next().unwrap_or_default()
                );
            }
            Ok((code, stdout, stderr)) => tally.fail(format!(
                "{who}: expected exit 2, `{kind}` and no output; got {code}, {} bytes out, {}",
                stdout.len(),
                stderr.trim()
            )),
            Err(e) => tally.fail(format!("{who}: {e}")),
        }
    }
}

/// Runs every check; `Ok(false)` when any failed.
pub fn run(args: &Args<'_>) -> Result<bool, String> {
    let started = Instant::now();
    let mut reader = Reader { args, runs: 0 };
    let mut tally = Tally::default();
    let trace = ground_truth(args, &mut reader, &mut tally)?;
    println!(
        "antinomie-e2e: filters: {} calls and {} LOST records in the trace, the unfiltered output \
         matches the model: {}",
        trace.calls.len(),
        trace.lost_lines,
        if tally.failures.is_empty() {
            "yes"
        } else {
            "NO"
        }
    );
    let fields = reader_fields(args.reader)?;
    check_field_list(&fields, &mut tally);
    check_fields(&trace, &fields, &mut reader, &mut tally);
    if args.lossy {
        println!(
            "antinomie-e2e: filters: --lossy: the issue's cases (written for the e2e scripts) are not run"
        );
    } else {
        let scenarios = scenario_cases(&trace.calls);
        check_scenarios(&trace, &scenarios, &mut reader, &mut tally);
        if let (Some(live), Some(filter)) = (args.live, args.live_filter) {
            check_live(&trace, &scenarios, live, filter, &mut tally)?;
        }
    }
    check_bad_filters(&mut reader, &mut tally);
    let ok = tally.failures.is_empty();
    println!(
        "antinomie-e2e: filters: {}: {} filters checked over {} calls ({} reader runs, {:.1} s), {} failures",
        if ok { "ok" } else { "FAILED" },
        reader.runs - 1 + u64::from(args.live.is_some() && !args.lossy),
        trace.calls.len(),
        reader.runs,
        started.elapsed().as_secs_f64(),
        tally.failures.len()
    );
    Ok(ok)
}
