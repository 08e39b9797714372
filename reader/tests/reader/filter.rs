//! The Syscall Trace filter end to end: every field reachable and seeing
//! what the JSON output shows, evaluation agreeing with a straightforward
//! reference evaluator (over the JSON line) on random calls and random
//! filters, `--filter` on the `reader` binary, `reader fields`, and the
//! checked-in reference page.

use std::path::PathBuf;
use std::process::Command;

use antinomie_abi as abi;
use antinomie_reader::call::{Call, CallState, CALL_FIELDS, CAPTURE_FLAGS};
use antinomie_reader::decode::{errno_by_name, names, PmuTypes, ATTR_MEMBERS, ERRNO};
use antinomie_reader::filter::{self, fields, ConstSet, Field, Filter, Type};
use antinomie_reader::output::{call_json, Format};
use antinomie_reader::pipeline::{self, Assembler, Sink};
use antinomie_reader::record::{self, LostRecord, Record};
use antinomie_reader::ring::ImageRing;
use antinomie_reader::syscall;
use proptest::prelude::*;
use serde_json::Value;

use crate::support::producer::{
    attr, entry_record, exit_record, set, CaptureSpec, EntrySpec, ExitSpec,
};
use crate::support::{data_dir, scenario_images, show_images, updating};

/// Keeps the calls.
#[derive(Default)]
struct Calls(Vec<Call>);

impl Sink for Calls {
    fn call(&mut self, c: &Call) -> std::io::Result<()> {
        self.0.push(c.clone());
        Ok(())
    }
    fn lost(&mut self, _: &LostRecord) -> std::io::Result<()> {
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The calls of ring images, in output order.
fn calls_of(images: &[Vec<u8>]) -> Vec<Call> {
    let rings: Vec<ImageRing> = images
        .iter()
        .map(|i| ImageRing::from_bytes(i.clone()).unwrap())
        .collect();
    let mut cpus: Vec<u32> = rings.iter().map(|r| r.meta().cpu).collect();
    cpus.sort_unstable();
    let mut sink = Calls::default();
    pipeline::replay(
        pipeline::drain_once(rings),
        Assembler::new(&cpus, 0, &mut sink),
    )
    .unwrap();
    sink.0
}

fn entry(spec: &EntrySpec) -> record::EntryRecord {
    let bytes = entry_record(0, spec);
    match Record::from(record::parse(&bytes).unwrap()) {
        Record::Entry(e) => e,
        other => panic!("{other:?}"),
    }
}

fn exit(spec: &ExitSpec) -> record::ExitRecord {
    let bytes = exit_record(1, spec);
    match Record::from(record::parse(&bytes).unwrap()) {
        Record::Exit(x) => x,
        other => panic!("{other:?}"),
    }
}

fn complete(e: &EntrySpec, x: &ExitSpec) -> Call {
    Call {
        call_id: e.call_id,
        entry: Some(entry(e)),
        exit: Some(exit(x)),
        state: CallState::Complete,
        exit_maybe_lost: false,
    }
}

/// Calls the golden scenario lacks, so that every field has a value in
/// some call: the uprobe and kprobe aliases, a VER1 breakpoint.
fn extra_calls() -> Vec<Call> {
    let ptr = 0x7ffd_0000_1000;
    let mut up = attr(136);
    set(&mut up, "type", 8);
    set(&mut up, "config1", 0x5000);
    set(&mut up, "config2", 0x40);
    let mut kp = attr(72);
    set(&mut kp, "type", 9);
    set(&mut kp, "config2", 0xffff_ffff_8100_0000);
    let mut bp = attr(72);
    set(&mut bp, "type", 5);
    set(&mut bp, "bp_type", 2);
    set(&mut bp, "bp_addr", 0x1000);
    set(&mut bp, "bp_len", 8);
    [up, kp[..72].to_vec(), bp[..72].to_vec()]
        .into_iter()
        .enumerate()
        .map(|(i, a)| {
            complete(
                &EntrySpec {
                    call_id: 100 + i as u64,
                    args: crate::support::producer::args(ptr, 0, -1, -1, 8),
                    items: vec![CaptureSpec::complete(&a)],
                    ..Default::default()
                },
                &ExitSpec {
                    call_id: 100 + i as u64,
                    ret: -2,
                    ..Default::default()
                },
            )
        })
        .collect()
}

fn pmus() -> PmuTypes {
    PmuTypes::from_pairs([(8, "uprobe".to_owned()), (9, "kprobe".to_owned())])
}

fn json(c: &Call, pmus: &PmuTypes) -> Value {
    let mut out = Vec::new();
    call_json(c, pmus, &mut out).unwrap();
    serde_json::from_slice(&out).unwrap()
}

/// A field's value in a JSON line, `None` when null or missing.
fn json_get<'a>(line: &'a Value, key: &str) -> Option<&'a Value> {
    let v = match key.strip_prefix("args.attr_uptr.") {
        Some(member) => line.get("arg0.perf_event_attr")?.get(member)?,
        None => line.get(key)?,
    };
    (!v.is_null()).then_some(v)
}

/// A JSON value as the reference evaluator sees it.
#[derive(Debug, Clone, PartialEq)]
enum Jv {
    Int(i128),
    Bool(bool),
    Str(String),
    Obj,
}

fn jv(v: &Value) -> Jv {
    match v {
        Value::Number(n) => Jv::Int(
            n.as_i64()
                .map(i128::from)
                .or_else(|| n.as_u64().map(i128::from))
                .unwrap(),
        ),
        Value::Bool(b) => Jv::Bool(*b),
        Value::String(s) => Jv::Str(s.clone()),
        // arg0.capture_flags: names, unknown bits in hex.
        Value::Array(list) => Jv::Int(i128::from(list.iter().fold(0u64, |acc, n| {
            let n = n.as_str().unwrap();
            acc | names::value_of(CAPTURE_FLAGS, n)
                .or_else(|| u64::from_str_radix(n.trim_start_matches("0x"), 16).ok())
                .unwrap()
        }))),
        Value::Object(_) => Jv::Obj,
        Value::Null => unreachable!(),
    }
}

/// A filter that is true exactly when `f` equals `v`.
fn equality(f: &Field, v: &Jv) -> String {
    match v {
        Jv::Int(i) if f.ty == Type::Bits => format!("{} == {i:#x}", f.key),
        Jv::Int(i) => format!("{} == {i}", f.key),
        Jv::Bool(b) => format!("{} == {b}", f.key),
        Jv::Str(s) => format!("{} == {s:?}", f.key),
        Jv::Obj => format!("exists({})", f.key),
    }
}

#[test]
fn every_field_is_reachable_and_sees_what_json_shows() {
    assert_eq!(fields().len(), CALL_FIELDS.len() + ATTR_MEMBERS.len());
    // The list, by name: all there.
    for key in [
        "ret",
        "syscall.errno",
        "syscall.success",
        "syscall.duration_ns",
        "time_ns",
        "cpu",
        "pid",
        "tid",
        "args.attr_uptr",
        "args.pid",
        "args.cpu",
        "args.group_fd",
        "args.flags",
        "args.0",
        "args.5",
        "arg0.status",
        "arg0.double_fetch",
        "arg0.required_size",
        "args.attr_uptr.sample_period",
        "args.attr_uptr.sample_freq",
        "args.attr_uptr.wakeup_events",
        "args.attr_uptr.wakeup_watermark",
        "args.attr_uptr.bp_addr",
        "args.attr_uptr.config1",
        "args.attr_uptr.bp_len",
        "args.attr_uptr.config2",
        "args.attr_uptr.kprobe_func",
        "args.attr_uptr.uprobe_path",
        "args.attr_uptr.kprobe_addr",
        "args.attr_uptr.probe_offset",
        "args.attr_uptr.aux_action",
        "args.attr_uptr.aux_start_paused",
        "args.attr_uptr.aux_pause",
        "args.attr_uptr.aux_resume",
        "args.attr_uptr.__reserved_1",
        "args.attr_uptr.__reserved_2",
        "args.attr_uptr.__reserved_3",
    ] {
        assert!(filter::field(key).is_some(), "{key}");
    }
    let mut calls = calls_of(&scenario_images());
    calls.extend(extra_calls());
    for pmus in [PmuTypes::none(), pmus()] {
        let lines: Vec<Value> = calls.iter().map(|c| json(c, &pmus)).collect();
        let mut present = vec![0usize; fields().len()];
        for (i, f) in fields().iter().enumerate() {
            let exists = Filter::parse(&format!("exists({})", f.key))
                .unwrap()
                .with_pmus(pmus.clone());
            for (c, line) in calls.iter().zip(&lines) {
                let value = json_get(line, &f.key);
                assert_eq!(
                    exists.matches(c),
                    value.is_some(),
                    "exists({}) on call {}",
                    f.key,
                    c.call_id
                );
                let Some(value) = value else { continue };
                present[i] += 1;
                let src = equality(f, &jv(value));
                let eq = Filter::parse(&src)
                    .unwrap_or_else(|e| panic!("{src}: {e}"))
                    .with_pmus(pmus.clone());
                assert!(eq.matches(c), "{src} on call {}", c.call_id);
                // What the filter sees is what JSON shows.
                assert_eq!(
                    filter::field_text(f, c, &pmus),
                    Some(match jv(value) {
                        Jv::Int(v) => v.to_string(),
                        Jv::Bool(b) => b.to_string(),
                        Jv::Str(s) => s,
                        Jv::Obj => "{…}".to_owned(),
                    }),
                    "{}",
                    f.key
                );
            }
        }
        if pmus != PmuTypes::none() {
            for (f, n) in fields().iter().zip(&present) {
                assert!(*n > 0, "no call has {}", f.key);
            }
        }
    }
}

#[test]
fn absent_members_of_sized_down_attrs() {
    let calls = calls_of(&scenario_images());
    let by_id = |id| calls.iter().find(|c| c.call_id == id).unwrap();
    let m = |src: &str, id| Filter::parse(src).unwrap().matches(by_id(id));
    // Call 7: a VER0 breakpoint; call 5: VER7 (config3 cut off); call 9:
    // 72 bytes before a fault; call 14: VER5.
    assert!(m("args.attr_uptr.bp_addr == 0x55af5005703c", 7));
    for absent in [
        "args.attr_uptr.bp_len == 0",
        "args.attr_uptr.bp_len != 0",
        "args.attr_uptr.branch_sample_type & PERF_SAMPLE_BRANCH_USER",
        "args.attr_uptr.config3 in {0, 0x55}",
    ] {
        assert!(!m(absent, 7), "{absent}");
        assert!(m(&format!("!({absent})"), 7), "!({absent})");
    }
    assert!(m(
        "exists(args.attr_uptr.sig_data) && !exists(args.attr_uptr.config3)",
        5
    ));
    assert!(m(
        "args.attr_uptr.config3 != 1 || args.attr_uptr.sig_data == 0xdead",
        5
    ));
    assert!(m("arg0.status == fault && arg0.fault_offset == 72 && exists(args.attr_uptr.config2) && !exists(args.attr_uptr.branch_sample_type)", 9));
    // A NULL attr, an attr not read, an invalid size: nothing captured.
    for id in [2, 3, 4] {
        assert!(m(
            "!exists(arg0.perf_event_attr) && !exists(args.attr_uptr.type) && exists(arg0.status)",
            id
        ));
    }
}

#[test]
fn the_kprobe_aliases_need_the_pmu_names() {
    let calls = calls_of(&scenario_images());
    let c = calls.iter().find(|c| c.call_id == 13).unwrap();
    let src = "args.attr_uptr.kprobe_func == 0x7fff00001000 && args.attr_uptr.probe_offset == 0x40";
    let f = Filter::parse(src).unwrap();
    assert!(!f.matches(c));
    let f = f.with_pmus(PmuTypes::from_pairs([(9, "kprobe".to_owned())]));
    assert!(f.matches(c));
    assert!(Filter::parse("args.attr_uptr.config1 == 0x7fff00001000")
        .unwrap()
        .matches(c));
}

// ---- Random calls, random filters, and a reference evaluator ----------

/// `CallGen::switches` bits.
const COMPAT: u8 = 1;
const KERNEL_COPY: u8 = 2;
const MAYBE_LOST: u8 = 4;
const WITH_PMUS: u8 = 8;

/// A random call, as producer specs.
#[derive(Debug, Clone)]
struct CallGen {
    /// 0 ENTRY and EXIT, 1 ENTRY only, 2 EXIT only.
    records: u8,
    /// `COMPAT`, `KERNEL_COPY`, `MAYBE_LOST`, `WITH_PMUS`.
    switches: u8,
    declared: u32,
    /// 0 none, 1 complete/truncated (by size), 2 null, 3 not applicable,
    /// 4 invalid size, 5 fault.
    capture: u8,
    fault_at: usize,
    members: Vec<(usize, u64)>,
    ty: u64,
    args: (u64, i32, i32, i32, u64),
    ret: i64,
    duration: u64,
    exit_flags: u32,
    required: u32,
}

fn arb_call() -> impl Strategy<Value = CallGen> {
    let sizes = prop::sample::select(vec![
        0u32, 1, 32, 64, 72, 80, 96, 104, 109, 112, 117, 120, 128, 136, 200, 5000,
    ]);
    let members = prop::collection::vec(
        (
            0..ATTR_MEMBERS.len(),
            prop_oneof![Just(0u64), Just(1), 0..20u64, any::<u64>()],
        ),
        0..10,
    );
    let args = (
        prop_oneof![Just(0u64), Just(0x7ffd_1234_5000)],
        prop::sample::select(vec![-1, 0, 1, 4242]),
        prop::sample::select(vec![-1, 0, 3]),
        prop::sample::select(vec![-1, 3]),
        prop_oneof![Just(0u64), Just(8), Just(0x4a), Just(1 << 20), any::<u64>()],
    );
    let rets = prop::sample::select(vec![0i64, 3, 7, -1, -2, -7, -14, -22, -95, -600, -5000]);
    (
        (
            prop::sample::select(vec![0u8, 0, 0, 0, 1, 2]),
            0u8..16,
            sizes,
            0u8..6,
            0usize..137,
        ),
        (
            members,
            prop::sample::select(vec![0u64, 1, 2, 3, 4, 5, 8, 9, 0x1234]),
            args,
        ),
        (
            rets,
            0u64..3_000_000,
            0u32..32,
            prop::sample::select(vec![0u32, 1, 136, 200]),
        ),
    )
        .prop_map(
            |(
                (records, switches, declared, capture, fault_at),
                (members, ty, args),
                (ret, duration, exit_flags, required),
            )| CallGen {
                records,
                switches,
                declared,
                capture,
                fault_at,
                members,
                ty,
                args,
                ret,
                duration,
                exit_flags,
                required,
            },
        )
}

impl CallGen {
    fn on(&self, switch: u8) -> bool {
        self.switches & switch != 0
    }

    fn attr_bytes(&self, tweak: u64) -> Vec<u8> {
        let mut a = attr(self.declared);
        set(&mut a, "type", self.ty);
        for &(i, v) in &self.members {
            let name = ATTR_MEMBERS[i].name;
            if name != "size" && name != "type" {
                set(&mut a, name, v ^ tweak);
            }
        }
        a
    }

    fn build(&self) -> Call {
        let (ptr, pid, cpu, group_fd, flags) = self.args;
        let eff = if self.declared == 0 {
            64
        } else {
            self.declared as usize
        };
        let a = self.attr_bytes(0);
        let item = match self.capture {
            0 => None,
            1 if (64..=136).contains(&eff) => Some(CaptureSpec::complete(&a[..eff])),
            1 if (137..=4096).contains(&eff) => {
                let mut c = CaptureSpec::complete(&a);
                c.status = abi::STATUS_TRUNCATED;
                c.flags = if self.on(KERNEL_COPY) {
                    abi::CAPTURE_F_TAIL_NONZERO
                } else {
                    abi::CAPTURE_F_TAIL_ZERO | 0x40
                };
                c.declared_size = self.declared;
                Some(c)
            }
            1 | 4 => Some(CaptureSpec::empty(abi::STATUS_INVALID_SIZE, self.declared)),
            2 => Some(CaptureSpec::empty(abi::STATUS_NULL_PTR, 0)),
            3 => Some(CaptureSpec::empty(abi::STATUS_NOT_APPLICABLE, 0)),
            _ => {
                let len = self.fault_at.min(eff.min(136));
                Some(CaptureSpec {
                    arg: 0,
                    kind: abi::KIND_PERF_EVENT_ATTR,
                    status: abi::STATUS_FAULT,
                    flags: if len == 0 {
                        abi::CAPTURE_F_SIZE_FAULT
                    } else {
                        0
                    },
                    declared_size: self.declared,
                    fault_offset: u32::try_from(len).unwrap(),
                    data: a[..len].to_vec(),
                })
            }
        };
        let e = EntrySpec {
            call_id: 1,
            time_ns: 1_000,
            pid: 100,
            tid: 101,
            flags: if self.on(COMPAT) {
                abi::RECORD_F_COMPAT
            } else {
                0
            },
            args: crate::support::producer::args(ptr, pid, cpu, group_fd, flags),
            items: item.into_iter().collect(),
        };
        let mut exit_items = Vec::new();
        if self.on(KERNEL_COPY) && self.exit_flags & abi::EXIT_F_ATTR_MISMATCH != 0 {
            let mut k = CaptureSpec::complete(&self.attr_bytes(0x5a)[..eff.clamp(64, 136)]);
            k.flags = abi::CAPTURE_F_KERNEL_COPY;
            exit_items.push(k);
        }
        let x = ExitSpec {
            call_id: 1,
            time_ns: 2_000,
            pid: 100,
            tid: 101,
            ret: self.ret,
            duration_ns: self.duration,
            flags: self.exit_flags,
            required_size: self.required,
            items: exit_items,
        };
        let (has_entry, has_exit) = (self.records != 2, self.records != 1);
        let state = match (has_entry, has_exit) {
            (true, true) => CallState::Complete,
            (true, false) => CallState::Unfinished,
            _ if self.exit_flags & abi::EXIT_F_ENTRY_LOST != 0 => CallState::EntryLost,
            _ => CallState::EntryMissing,
        };
        Call {
            call_id: 1,
            entry: has_entry.then(|| entry(&e)),
            exit: has_exit.then(|| exit(&x)),
            state,
            exit_maybe_lost: state == CallState::Unfinished && self.on(MAYBE_LOST),
        }
    }

    fn pmus(&self) -> PmuTypes {
        if self.on(WITH_PMUS) {
            pmus()
        } else {
            PmuTypes::none()
        }
    }
}

/// A random filter: leaves are about a field (by index), their operands
/// chosen from the call's own values (so that equalities hit) or from the
/// field's constants.
#[derive(Debug, Clone)]
enum Spec {
    Leaf {
        field: usize,
        kind: u8,
        op: u8,
        lits: Vec<(u8, i8, u64)>,
        hex: bool,
    },
    Not(Box<Spec>),
    And(Box<Spec>, Box<Spec>),
    Or(Box<Spec>, Box<Spec>),
    Paren(Box<Spec>),
}

fn arb_spec() -> impl Strategy<Value = Spec> {
    let leaf = (
        0..fields().len(),
        0u8..4,
        0u8..6,
        prop::collection::vec((0u8..8, -1i8..=1, any::<u64>()), 1..4),
        any::<bool>(),
    )
        .prop_map(|(field, kind, op, lits, hex)| Spec::Leaf {
            field,
            kind,
            op,
            lits,
            hex,
        });
    leaf.prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|s| Spec::Not(Box::new(s))),
            inner.clone().prop_map(|s| Spec::Paren(Box::new(s))),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Spec::And(Box::new(a), Box::new(b))),
            (inner.clone(), inner).prop_map(|(a, b)| Spec::Or(Box::new(a), Box::new(b))),
        ]
    })
}

/// The reference: a tree evaluated over the JSON line.
#[derive(Debug, Clone)]
enum Ref {
    Not(Box<Ref>),
    And(Box<Ref>, Box<Ref>),
    Or(Box<Ref>, Box<Ref>),
    Exists(String),
    Truth(String),
    Cmp(String, &'static str, Jv),
    Bit(String, u64),
    In(String, Vec<Jv>),
    Config(String, bool, (u64, u64, u64)),
}

#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn low64(v: i128) -> u64 {
    v as u64
}

impl Ref {
    fn eval(&self, line: &Value) -> bool {
        let get = |k: &str| json_get(line, k).map(jv);
        match self {
            Ref::Not(r) => !r.eval(line),
            Ref::And(a, b) => a.eval(line) && b.eval(line),
            Ref::Or(a, b) => a.eval(line) || b.eval(line),
            Ref::Exists(k) => get(k).is_some(),
            Ref::Truth(k) => get(k) == Some(Jv::Bool(true)),
            Ref::Cmp(k, op, lit) => match (get(k), lit) {
                (Some(Jv::Int(a)), Jv::Int(b)) => match *op {
                    "==" => a == *b,
                    "!=" => a != *b,
                    "<" => a < *b,
                    "<=" => a <= *b,
                    ">" => a > *b,
                    _ => a >= *b,
                },
                (Some(a @ (Jv::Bool(_) | Jv::Str(_))), b) => match *op {
                    "==" => a == *b,
                    _ => a != *b,
                },
                _ => false,
            },
            Ref::Bit(k, mask) => matches!(get(k), Some(Jv::Int(v)) if low64(v) & mask != 0),
            Ref::In(k, set) => get(k).is_some_and(|v| set.contains(&v)),
            Ref::Config(k, ne, (ty, mask, value)) => {
                let cfg = get(k);
                let eq = matches!(
                    (get("args.attr_uptr.type"), &cfg),
                    (Some(Jv::Int(t)), Some(Jv::Int(c))) if low64(t) == *ty && low64(*c) & mask == *value
                );
                if *ne {
                    cfg.is_some() && !eq
                } else {
                    eq
                }
            }
        }
    }
}

const OPS: [&str; 6] = ["==", "!=", "<", "<=", ">", ">="];

/// The config names with (type, mask, value), independently of the
/// library's resolution.
fn config_names() -> Vec<(&'static str, (u64, u64, u64))> {
    let mut out = Vec::new();
    for (t, ty, mask, shift) in [
        (names::PERF_HW_ID, 0, 0xffff_ffff, 0),
        (names::PERF_SW_ID, 1, u64::MAX, 0),
        (names::PERF_HW_CACHE_ID, 3, 0xff, 0),
        (names::PERF_HW_CACHE_OP, 3, 0xff00, 8),
        (names::PERF_HW_CACHE_RESULT, 3, 0xff_0000, 16),
    ] {
        out.extend(t.iter().map(|&(v, n)| (n, (ty, mask, v << shift))));
    }
    out
}

fn int_text(v: i128, hex: bool) -> String {
    if v < 0 {
        format!("-{}", v.unsigned_abs())
    } else if hex {
        format!("{v:#x}")
    } else {
        v.to_string()
    }
}

/// An integer operand for field `f`: text and value. Names come from the
/// field's constants; numbers from the call's own value (plus -1, 0 or 1)
/// or from `rnd`, kept in the field's range for equalities (the checker
/// refuses those that can never hold).
fn int_lit(
    f: &Field,
    actual: Option<i128>,
    (choice, delta, rnd): (u8, i8, u64),
    hex: bool,
    eq: bool,
) -> (String, i128) {
    let pick = |n: usize| usize::try_from(rnd % n as u64).unwrap();
    match (choice, f.constants) {
        (4 | 5, ConstSet::Table(t)) => {
            let (v, n) = t[pick(t.len())];
            return (n.to_owned(), i128::from(v));
        }
        (4 | 5, c @ (ConstSet::Errno | ConstSet::NegErrno)) => {
            let all = c.names();
            let n = all[pick(all.len())];
            let v = i128::from(errno_by_name(n).unwrap().value);
            return if matches!(c, ConstSet::NegErrno) {
                (format!("-{n}"), -v)
            } else {
                (n.to_owned(), v)
            };
        }
        _ => {}
    }
    let v = match actual {
        Some(a) if choice <= 3 => a + i128::from(delta),
        _ => match rnd % 4 {
            0 => i128::from(rnd % 300),
            1 => -i128::from(rnd % 100),
            2 => i128::from(rnd),
            _ => i128::from(i64::from_ne_bytes(rnd.to_ne_bytes())),
        },
    };
    let (lo, hi) = if eq {
        match f.ty {
            Type::Signed => match f.member() {
                Some(m) if m.width < 8 => {
                    let half = 1i128 << (m.width * 8 - 1);
                    (-half, half - 1)
                }
                _ => (i128::from(i64::MIN), i128::from(i64::MAX)),
            },
            _ => (0, i128::from(f.max.unwrap_or(u64::MAX))),
        }
    } else {
        (i128::from(i64::MIN), i128::from(u64::MAX))
    };
    let v = v.clamp(lo, hi);
    (int_text(v, hex), v)
}

/// Renders a leaf: the filter text and the reference.
fn leaf(
    f: &Field,
    kind: u8,
    op: u8,
    lits: &[(u8, i8, u64)],
    hex: bool,
    line: &Value,
) -> (String, Ref) {
    let key = f.key.clone();
    let actual = json_get(line, &key).map(jv);
    match f.ty {
        Type::Object => (format!("exists({key})"), Ref::Exists(key)),
        Type::Bool => match kind {
            0 => (key.clone(), Ref::Truth(key)),
            1 => {
                let b = lits[0].2 % 2 == 0;
                let op = OPS[usize::from(op % 2)];
                (format!("{key} {op} {b}"), Ref::Cmp(key, op, Jv::Bool(b)))
            }
            _ => (format!("exists({key})"), Ref::Exists(key)),
        },
        Type::Str => str_leaf(f, actual.as_ref(), kind, op, lits),
        Type::Unsigned | Type::Signed | Type::Bits => {
            let actual = match actual {
                Some(Jv::Int(v)) => Some(v),
                _ => None,
            };
            int_leaf(f, actual, kind, op, lits, hex)
        }
    }
}

fn str_leaf(
    f: &Field,
    actual: Option<&Jv>,
    kind: u8,
    op: u8,
    lits: &[(u8, i8, u64)],
) -> (String, Ref) {
    let key = f.key.clone();
    let lit = |(choice, _, rnd): (u8, i8, u64)| -> (String, Jv) {
        match (choice % 3, f.constants, actual) {
            (0, _, Some(Jv::Str(s))) => (format!("{s:?}"), Jv::Str(s.clone())),
            (_, c @ (ConstSet::Table(_) | ConstSet::Errno), _) => {
                let all = c.names();
                let n = all[usize::try_from(rnd % all.len() as u64).unwrap()];
                let canonical = errno_by_name(n)
                    .filter(|_| matches!(c, ConstSet::Errno))
                    .map_or(n, |e| e.name);
                if rnd % 2 == 0 {
                    (n.to_owned(), Jv::Str(canonical.to_owned()))
                } else {
                    (format!("{canonical:?}"), Jv::Str(canonical.to_owned()))
                }
            }
            _ => ("\"x\"".to_owned(), Jv::Str("x".to_owned())),
        }
    };
    match kind {
        0 | 1 => {
            let op = OPS[usize::from(op % 2)];
            let (t, v) = lit(lits[0]);
            (format!("{key} {op} {t}"), Ref::Cmp(key, op, v))
        }
        2 => {
            let (ts, vs): (Vec<String>, Vec<Jv>) = lits.iter().map(|l| lit(*l)).unzip();
            (format!("{key} in {{{}}}", ts.join(", ")), Ref::In(key, vs))
        }
        _ => (format!("exists({key})"), Ref::Exists(key)),
    }
}

fn int_leaf(
    f: &Field,
    actual: Option<i128>,
    kind: u8,
    op: u8,
    lits: &[(u8, i8, u64)],
    hex: bool,
) -> (String, Ref) {
    let key = f.key.clone();
    match kind {
        0 => {
            let op_s = OPS[usize::from(op)];
            if matches!(f.constants, ConstSet::Config) && lits[0].0 >= 4 {
                let all = config_names();
                let (n, sel) = all[usize::try_from(lits[0].2 % all.len() as u64).unwrap()];
                let ne = op % 2 == 1;
                let op_s = if ne { "!=" } else { "==" };
                return (format!("{key} {op_s} {n}"), Ref::Config(key, ne, sel));
            }
            let (t, v) = int_lit(f, actual, lits[0], hex, op < 2);
            // A constant on the left now and then.
            if lits[0].2 % 5 == 0 {
                let flipped = match op_s {
                    "<" => ">",
                    "<=" => ">=",
                    ">" => "<",
                    ">=" => "<=",
                    same => same,
                };
                return (
                    format!("{t} {flipped} {key}"),
                    Ref::Cmp(key, op_s, Jv::Int(v)),
                );
            }
            (format!("{key} {op_s} {t}"), Ref::Cmp(key, op_s, Jv::Int(v)))
        }
        1 => {
            let (choice, _, rnd) = lits[0];
            let (t, mask) = match (choice % 2, f.constants) {
                (0, ConstSet::Table(t)) if filter::is_bit_table(t) => {
                    let (v, n) = t[usize::try_from(rnd % t.len() as u64).unwrap()];
                    (n.to_owned(), v)
                }
                _ => {
                    let mask = match actual {
                        Some(v) if rnd % 3 == 0 => low64(v),
                        _ => 1u64 << (rnd % 64),
                    };
                    (int_text(i128::from(mask), hex), mask)
                }
            };
            // `x & m`, or `x & m != 0` / `== 0` (`&` binds tighter).
            match rnd % 3 {
                0 => (format!("{key} & {t}"), Ref::Bit(key, mask)),
                1 => (format!("{key} & {t} != 0"), Ref::Bit(key, mask)),
                _ => (
                    format!("{key} & {t} == 0"),
                    Ref::And(
                        Box::new(Ref::Exists(key.clone())),
                        Box::new(Ref::Not(Box::new(Ref::Bit(key, mask)))),
                    ),
                ),
            }
        }
        2 => {
            let (ts, vs): (Vec<String>, Vec<Jv>) = lits
                .iter()
                .map(|l| {
                    let (t, v) = int_lit(f, actual, (l.0 % 6, l.1, l.2), hex, true);
                    (t, Jv::Int(v))
                })
                .unzip();
            (format!("{key} in {{{}}}", ts.join(", ")), Ref::In(key, vs))
        }
        _ => (format!("exists({key})"), Ref::Exists(key)),
    }
}

/// Binding level of rendered text: 1 `||`, 2 `&&`, 3 a comparison or
/// bit test, 4 an atom or `!`.
fn render(spec: &Spec, line: &Value) -> (String, Ref, u8) {
    match spec {
        Spec::Leaf {
            field,
            kind,
            op,
            lits,
            hex,
        } => {
            let (t, r) = leaf(&fields()[*field], *kind, *op, lits, *hex, line);
            let level = if t.contains(' ') && !t.starts_with("exists(") {
                3
            } else {
                4
            };
            (t, r, level)
        }
        Spec::Paren(s) => {
            let (t, r, _) = render(s, line);
            (format!("({t})"), r, 4)
        }
        Spec::Not(s) => {
            let (t, r, level) = render(s, line);
            let t = if level < 4 {
                format!("!({t})")
            } else {
                format!("!{t}")
            };
            (t, Ref::Not(Box::new(r)), 4)
        }
        Spec::And(a, b) => {
            let (ta, ra, la) = render(a, line);
            let (tb, rb, lb) = render(b, line);
            let ta = if la < 2 { format!("({ta})") } else { ta };
            let tb = if lb <= 2 { format!("({tb})") } else { tb };
            (
                format!("{ta} && {tb}"),
                Ref::And(Box::new(ra), Box::new(rb)),
                2,
            )
        }
        Spec::Or(a, b) => {
            let (ta, ra, _) = render(a, line);
            let (tb, rb, lb) = render(b, line);
            let tb = if lb <= 1 { format!("({tb})") } else { tb };
            (
                format!("{ta} || {tb}"),
                Ref::Or(Box::new(ra), Box::new(rb)),
                1,
            )
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 768, ..ProptestConfig::default() })]

    #[test]
    fn evaluation_agrees_with_the_reference(gen in arb_call(), spec in arb_spec()) {
        let call = gen.build();
        let pmus = gen.pmus();
        let line = json(&call, &pmus);
        let (src, reference, _) = render(&spec, &line);
        let f = Filter::parse(&src)
            .unwrap_or_else(|e| panic!("{e}"))
            .with_pmus(pmus);
        prop_assert_eq!(f.matches(&call), reference.eval(&line), "{} on {}", src, line);
    }

    #[test]
    fn every_field_agrees_on_random_calls(gen in arb_call()) {
        let call = gen.build();
        let pmus = gen.pmus();
        let line = json(&call, &pmus);
        for f in fields() {
            let shown = json_get(&line, &f.key).map(jv).map(|v| match v {
                Jv::Int(v) => v.to_string(),
                Jv::Bool(b) => b.to_string(),
                Jv::Str(s) => s,
                Jv::Obj => "{…}".to_owned(),
            });
            prop_assert_eq!(filter::field_text(f, &call, &pmus), shown, "{}", f.key);
        }
    }

    #[test]
    fn random_text_never_panics_the_parser(src in "[ -~]{0,40}") {
        let _ = Filter::parse(&src);
    }

    #[test]
    fn random_tokens_never_panic_the_parser(toks in prop::collection::vec(prop::sample::select(vec![
        "ret", "args.flags", "syscall.success", "EINVAL", "-", "!", "(", ")", "{", "}", ",",
        "&&", "||", "&", "==", "!=", "<", ">=", "in", "exists", "1", "0x10", "\"s\"", "true",
        "PERF_FLAG_FD_CLOEXEC", "arg0.status", "fault", "args.attr_uptr.config",
        "PERF_COUNT_SW_DUMMY", "arg0.perf_event_attr",
    ]), 0..12)) {
        let src = toks.join(" ");
        if let Err(e) = Filter::parse(&src) {
            // Every error points inside the text (or just past it).
            prop_assert!(e.span.start <= src.len() && e.span.end <= src.len(), "{}", e);
            prop_assert!(e.to_string().contains('^'));
        }
    }
}

// ---- The binary ----------------------------------------------------------

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
        ("syscall.duration_ns >= 9600", vec![12, 13, 14, 15, 18]),
        ("state == unfinished", vec![16, 17]),
    ] {
        let f = Filter::parse(src).unwrap();
        let ids: Vec<u64> = calls
            .iter()
            .filter(|c| f.matches(c))
            .map(|c| c.call_id)
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
    assert_eq!(
        out.status.code(),
        Some(1),
        "a good filter, then the missing file"
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
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/syscalls/perf_event_open.md")
}

#[test]
fn the_checked_in_reference_page_is_current() {
    let page = syscall::reference_page("perf_event_open").unwrap();
    let path = page_path();
    if updating() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &page).unwrap();
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        checked_in == page,
        "docs/syscalls/perf_event_open.md is stale: run `reader describe perf_event_open > docs/syscalls/perf_event_open.md` \
         (or ANTINOMIE_UPDATE_GOLDEN=1 cargo test -p antinomie-reader) and review the diff"
    );
    let out = reader()
        .args(["describe", "perf_event_open"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), page);
    let out = reader().args(["describe", "open"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
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
