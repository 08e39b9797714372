// SPDX-License-Identifier: GPL-2.0-only
//! Evaluation on hand-built calls, and the field list.

use antinomie_abi as abi;

use super::super::*;
use crate::call::{call_fields, CallState};
use crate::decode::{member, ATTR_MEMBERS};
use crate::record::{CaptureData, EntryRecord, ExitRecord};
use crate::syscall::SYSCALLS;

/// A record header of `perf_event_open` (its x86-64 number, 298).
const CALL_HEADER: abi::RecordHeader = abi::RecordHeader {
    size: 0,
    r#type: 0,
    hdr_size: 0,
    flags: 0,
    call_id: 0,
    time_ns: 0,
    pid: 0,
    tid: 0,
    cpu: 0,
    syscall_nr: 298,
};

/// A complete call: a VER8 software attr edited by `edit`, `flags`, `ret`.
fn call(edit: impl Fn(&mut Vec<u8>), flags: u64, ret: i64) -> Call {
    call_captured(edit, 136, flags, ret)
}

/// As [`call`], with only the first `captured` bytes of the attr captured.
fn call_captured(edit: impl Fn(&mut Vec<u8>), captured: usize, flags: u64, ret: i64) -> Call {
    let mut a = vec![0u8; 136];
    a[0] = 1;
    a[4] = 136;
    edit(&mut a);
    a.truncate(captured);
    Call {
        call_id: 1,
        entry: Some(EntryRecord::new(
            CALL_HEADER,
            [0x1000, 0, u64::MAX, u64::MAX, flags, 0],
            CALL_HEADER.time_ns,
            &[CaptureData {
                header: abi::Capture {
                    kind: abi::KIND_PERF_EVENT_ATTR,
                    status: abi::STATUS_COMPLETE,
                    declared_size: 136,
                    copied_len: u32::try_from(a.len()).unwrap(),
                    ..Default::default()
                },
                data: a,
            }],
        )),
        exit: Some(ExitRecord::new(
            CALL_HEADER,
            abi::Exit {
                ret,
                duration_ns: 1500,
                ..Default::default()
            },
        )),
        state: CallState::Complete,
        exit_maybe_lost: false,
    }
}

fn matches(src: &str, c: &Call) -> bool {
    Filter::parse(src)
        .unwrap_or_else(|e| panic!("{src}: {e}"))
        .matches(c)
}

fn set(a: &mut [u8], name: &str, v: u64) {
    let m = member(name).unwrap();
    let mut w = [0u8; 8];
    w[..m.width].copy_from_slice(&a[m.offset..m.offset + m.width]);
    let word = u64::from_le_bytes(w) & !m.mask() | (v << m.bits.map_or(0, |b| b.0)) & m.mask();
    a[m.offset..m.offset + m.width].copy_from_slice(&word.to_le_bytes()[..m.width]);
}

#[test]
fn errno_names_by_sign() {
    let c = call(|_| {}, 0, -22);
    assert!(matches("ret == -EINVAL", &c));
    assert!(matches("ret == -22", &c));
    assert!(matches("syscall.errno == EINVAL", &c));
    assert!(matches("syscall.errno == 22", &c));
    assert!(matches("syscall.errno_name == EINVAL", &c));
    assert!(matches("syscall.errno_name == \"EINVAL\"", &c));
    assert!(matches("syscall.errno in {E2BIG, EINVAL}", &c));
    assert!(matches("ret in {-E2BIG, -EINVAL}", &c));
    assert!(matches("!syscall.success && syscall.success == false", &c));
    let ok = call(|_| {}, 0, 22);
    assert!(!matches("syscall.errno == EINVAL", &ok));
    assert!(!matches("exists(syscall.errno)", &ok));
    assert!(!matches("syscall.errno != EINVAL", &ok));
    assert!(matches("ret == 22 && syscall.success", &ok));
    // Aliases resolve to the canonical errno.
    let again = call(|_| {}, 0, -11);
    assert!(matches(
        "syscall.errno == EWOULDBLOCK && syscall.errno == EAGAIN",
        &again
    ));
    assert!(matches("syscall.errno_name == EWOULDBLOCK", &again));
}

#[test]
fn bit_tests_and_named_bits() {
    let c = call(
        |a| {
            set(a, "sample_type", 0x7 | 1 << 30);
            set(a, "disabled", 1);
            set(a, "precise_ip", 2);
        },
        0x2 | 0x8 | 0x40,
        3,
    );
    assert!(matches("args.flags & PERF_FLAG_FD_CLOEXEC", &c));
    assert!(matches(
        "args.flags & PERF_FLAG_FD_OUTPUT && !(args.flags & PERF_FLAG_FD_NO_GROUP)",
        &c
    ));
    assert!(matches("args.flags & 0x40", &c));
    assert!(matches("args.flags == 0x4a", &c));
    assert!(matches("args.attr_uptr.sample_type & PERF_SAMPLE_IP", &c));
    assert!(!matches("args.attr_uptr.sample_type & PERF_SAMPLE_CPU", &c));
    assert!(matches("args.attr_uptr.sample_type & 0x40000000", &c));
    assert!(matches(
        "args.attr_uptr.disabled && !args.attr_uptr.inherit",
        &c
    ));
    assert!(matches("args.attr_uptr.disabled == true", &c));
    assert!(matches("args.attr_uptr.precise_ip == 2", &c));
    assert!(matches("args.attr_uptr.type == PERF_TYPE_SOFTWARE", &c));
    assert!(matches("args.attr_uptr.size == PERF_ATTR_SIZE_VER8", &c));
    assert!(matches(
        "args.pid == 0 && args.cpu == -1 && args.group_fd < 0",
        &c
    ));
    assert!(matches("args.2 == 0xffffffffffffffff", &c));
    assert!(matches(
        "args.pid & 0xff == 0 && args.cpu & 0xff == 0xff",
        &c
    ));
}

#[test]
fn config_names_imply_their_type() {
    let sw = call(|_| {}, 0, 3);
    assert!(matches(
        "args.attr_uptr.config == PERF_COUNT_SW_CPU_CLOCK",
        &sw
    ));
    assert!(!matches(
        "args.attr_uptr.config == PERF_COUNT_HW_CPU_CYCLES",
        &sw
    ));
    assert!(matches(
        "args.attr_uptr.config != PERF_COUNT_HW_CPU_CYCLES",
        &sw
    ));
    assert!(matches("args.attr_uptr.config == 0", &sw));
    let hw = call(|a| set(a, "type", 0), 0, 3);
    assert!(matches(
        "args.attr_uptr.config == PERF_COUNT_HW_CPU_CYCLES",
        &hw
    ));
    // A hardware name matches the low 32 bits (the high ones name a PMU).
    let hybrid = call(
        |a| {
            set(a, "type", 0);
            set(a, "config", 0x8_0000_0001);
        },
        0,
        3,
    );
    assert!(matches(
        "args.attr_uptr.config == PERF_COUNT_HW_INSTRUCTIONS",
        &hybrid
    ));
    assert!(!matches("args.attr_uptr.config == 1", &hybrid));
    let cache = call(
        |a| {
            set(a, "type", 3);
            set(a, "config", 0x1_0002);
        },
        0,
        3,
    );
    for yes in [
        "args.attr_uptr.config == PERF_COUNT_HW_CACHE_LL",
        "args.attr_uptr.config == PERF_COUNT_HW_CACHE_OP_READ",
        "args.attr_uptr.config == PERF_COUNT_HW_CACHE_RESULT_MISS",
        "args.attr_uptr.config in {PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_LL}",
        "args.attr_uptr.config in {7, PERF_COUNT_HW_CACHE_LL}",
        "args.attr_uptr.config in {0x10002}",
        "args.attr_uptr.config != PERF_COUNT_HW_CACHE_L1D",
    ] {
        assert!(matches(yes, &cache), "{yes}");
    }
    for no in [
        "args.attr_uptr.config == PERF_COUNT_HW_CACHE_L1D",
        "args.attr_uptr.config == PERF_COUNT_HW_CACHE_RESULT_ACCESS",
        "args.attr_uptr.config == PERF_COUNT_SW_CPU_CLOCK",
        "args.attr_uptr.config in {7, PERF_COUNT_HW_CACHE_L1D}",
    ] {
        assert!(!matches(no, &cache), "{no}");
    }
}

#[test]
fn absent_values_make_every_comparison_false() {
    // A VER0 breakpoint, cut at 64 bytes: bp_len (offset 64) is absent.
    let c = call_captured(
        |a| {
            set(a, "type", 5);
            set(a, "size", 64);
            set(a, "bp_addr", 0x1000);
        },
        64,
        0,
        3,
    );
    for no in [
        "args.attr_uptr.bp_len == 0",
        "args.attr_uptr.bp_len != 0",
        "args.attr_uptr.bp_len < 1",
        "args.attr_uptr.bp_len >= 0",
        "args.attr_uptr.bp_len & 0xff",
        "args.attr_uptr.bp_len in {0, 1, 4}",
        "args.attr_uptr.bp_len == HW_BREAKPOINT_LEN_4",
        "args.attr_uptr.config3 == 0",
        "exists(args.attr_uptr.bp_len)",
    ] {
        assert!(!matches(no, &c), "{no}");
    }
    for yes in [
        "!(args.attr_uptr.bp_len == 0)",
        "!(args.attr_uptr.bp_len != 0)",
        "!exists(args.attr_uptr.bp_len)",
        "args.attr_uptr.bp_addr == 0x1000",
        "!exists(args.attr_uptr.kprobe_func)",
        // config1 is the generic alias: it always applies.
        "args.attr_uptr.config1 == 0x1000",
    ] {
        assert!(matches(yes, &c), "{yes}");
    }
    // The union alias that does not apply is absent.
    let freq = call(
        |a| {
            set(a, "freq", 1);
            set(a, "sample_freq", 4000);
        },
        0,
        3,
    );
    assert!(matches("args.attr_uptr.sample_freq == 4000", &freq));
    assert!(!matches("exists(args.attr_uptr.sample_period)", &freq));
    assert!(!matches("args.attr_uptr.sample_period != 1", &freq));
    // No EXIT: the result is absent.
    let mut unfinished = call(|_| {}, 0, 0);
    unfinished.exit = None;
    unfinished.state = CallState::Unfinished;
    for no in [
        "ret == 0",
        "ret != 0",
        "syscall.success",
        "syscall.success == false",
        "syscall.success != true",
        "syscall.duration_ns >= 0",
        "exists(syscall.errno)",
    ] {
        assert!(!matches(no, &unfinished), "{no}");
    }
    assert!(matches(
        "!syscall.success && state == unfinished",
        &unfinished
    ));
    assert!(matches("!exists(ret) && exists(args.flags)", &unfinished));
    // No ENTRY: arguments and the attr are absent.
    let mut exit_only = call(|_| {}, 8, 3);
    exit_only.entry = None;
    exit_only.state = CallState::EntryMissing;
    assert!(!matches("args.flags & PERF_FLAG_FD_CLOEXEC", &exit_only));
    assert!(!matches(
        "args.attr_uptr.type == PERF_TYPE_SOFTWARE",
        &exit_only
    ));
    assert!(!matches(
        "exists(arg0.perf_event_attr) || exists(arg0.status)",
        &exit_only
    ));
    assert!(matches("ret == 3 && state == entry_missing", &exit_only));
}

#[test]
fn the_field_list_is_the_tables() {
    let all = fields();
    // Each syscall's keys (the first one's in its order), then the attr
    // members.
    let mut keys: Vec<&str> = Vec::new();
    for sc in SYSCALLS {
        for cf in call_fields(sc) {
            if !keys.contains(&cf.key) {
                keys.push(cf.key);
            }
        }
    }
    assert_eq!(all.len(), keys.len() + ATTR_MEMBERS.len());
    for (f, key) in all.iter().zip(&keys) {
        assert_eq!(f.key, *key);
        assert!(std::ptr::eq(field(key).unwrap(), f));
    }
    for (f, m) in all[keys.len()..].iter().zip(ATTR_MEMBERS) {
        assert_eq!(f.key, format!("args.attr_uptr.{}", m.name));
        assert!(std::ptr::eq(field(&f.key).unwrap(), f));
        assert!(f.presence().is_some());
    }
    assert!(field("args.attr_uptr").is_some_and(|f| f.member().is_none()));
    assert!(field("args.attr_uptr.nope").is_none());
    let text = fields_text();
    for f in all {
        assert!(
            text.contains(&format!("\n{} ", f.key)),
            "{} not listed",
            f.key
        );
    }
}

#[test]
fn precedence_changes_the_result() {
    // C would read `args.flags & (8 == 8)`, i.e. `args.flags & 1`.
    let c = call(|_| {}, 8, 3);
    assert!(matches("args.flags & 0xf == 8", &c));
    assert!(!matches("args.flags & 0xf == 1", &c));
    assert!(matches("ret == 1 || ret == 3 && args.flags == 8", &c));
    assert!(!matches("(ret == 1 || ret == 3) && args.flags == 9", &c));
    assert!(matches("ret == 3 || ret == 1 && args.flags == 9", &c));
}
