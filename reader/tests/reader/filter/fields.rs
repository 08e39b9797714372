// SPDX-License-Identifier: GPL-2.0-only
//! Every field reachable, and seeing what the JSON output shows, on the
//! golden scenario's calls and a few more; members absent from sized-down
//! attrs; the kprobe aliases.

use antinomie_abi as abi;
use antinomie_reader::call::{call_fields, Call, CallState};
use antinomie_reader::decode::{PmuTypes, ATTR_MEMBERS};
use antinomie_reader::filter::{self, fields, Field, Filter, Type};
use serde_json::Value;

use crate::support::scenario_images;
use antinomie_reader::ring::builder::{attr, set, CaptureSpec, EntrySpec, ExitSpec};

use super::{calls_of, entry, exit, json, json_get, jv, pmus, Jv};

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
                    args: antinomie_reader::ring::builder::args(ptr, 0, -1, -1, 8),
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
    // One syscall: its keys, then the attr members.
    let perf_event_open = antinomie_reader::syscall::syscall("perf_event_open").unwrap();
    assert_eq!(
        fields().len(),
        call_fields(perf_event_open).len() + ATTR_MEMBERS.len()
    );
    // The fields the filter documents by name: all there.
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
        "arg0.attr_copied",
        "arg0.fault_offset",
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
    let by_id = |seq| {
        calls
            .iter()
            .find(|c| c.call_id & abi::CALL_ID_SEQ_MASK == seq)
            .unwrap()
    };
    let m = |src: &str, id| Filter::parse(src).unwrap().matches(by_id(id));
    // Call 7: a VER0 breakpoint; call 5: VER7 (config3 cut off); call 9:
    // the kernel's copy faulted, call 19: its read of the size word did;
    // call 14: VER5.
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
    // No offset where the kernel does not report one, and no bytes.
    assert!(m("arg0.status == fault && !exists(arg0.fault_offset) && arg0.declared_size == 136 && arg0.copied_len == 0 && !exists(args.attr_uptr.type)", 9));
    assert!(m("arg0.status == fault && arg0.fault_offset == 4 && arg0.capture_flags & size_fault && arg0.declared_size == 0", 19));
    // A non-zero tail: the kernel copied nothing.
    assert!(m("arg0.status == truncated && arg0.capture_flags & tail_nonzero && arg0.copied_len == 0 && !exists(arg0.perf_event_attr)", 6));
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
    let c = calls
        .iter()
        .find(|c| c.call_id & abi::CALL_ID_SEQ_MASK == 13)
        .unwrap();
    let src = "args.attr_uptr.kprobe_func == 0x7fff00001000 && args.attr_uptr.probe_offset == 0x40";
    let f = Filter::parse(src).unwrap();
    assert!(!f.matches(c));
    let f = f.with_pmus(PmuTypes::from_pairs([(9, "kprobe".to_owned())]));
    assert!(f.matches(c));
    assert!(Filter::parse("args.attr_uptr.config1 == 0x7fff00001000")
        .unwrap()
        .matches(c));
}
