//! Unit tests: grouping (precedence and associativity), the lexer's
//! corners, every error kind with its column and suggestion, and
//! evaluation on hand-built calls.

use antinomie_abi as abi;

use super::*;
use crate::call::{CallState, CALL_FIELDS};
use crate::decode::{member, ATTR_MEMBERS};
use crate::record::{CaptureData, EntryRecord, ExitRecord};

fn tree(src: &str) -> String {
    parse_tree(src).unwrap_or_else(|e| panic!("{src}: {e}"))
}

#[test]
fn precedence_is_cs_except_for_bit_and() {
    for (src, grouped) in [
        ("a || b && c", "(a || (b && c))"),
        ("a && b || c", "((a && b) || c)"),
        ("a || b || c", "((a || b) || c)"),
        ("a && b && c", "((a && b) && c)"),
        // `&` binds tighter than the comparisons (C: `x & (8 == 8)`).
        ("x & 8 == 8", "((x & 8) == 8)"),
        ("x & 8 != 0 && y", "(((x & 8) != 0) && y)"),
        ("x & y & z", "((x & y) & z)"),
        ("x & 1 && y & 2", "((x & 1) && (y & 2))"),
        // Relational binds tighter than equality, as in C.
        ("a == b < c", "(a == (b < c))"),
        ("a < b == c", "((a < b) == c)"),
        ("a < b && c >= d", "((a < b) && (c >= d))"),
        // `!` binds tightest, as in C.
        ("!a && b", "(!a && b)"),
        ("!a == b", "(!a == b)"),
        ("!(a == b)", "!(a == b)"),
        ("!a & b", "(!a & b)"),
        ("!!a", "!!a"),
        // `in` binds as `==`.
        ("x in {1, 2} && y", "((x in {1, 2}) && y)"),
        ("x & 3 in {1, 2,}", "((x & 3) in {1, 2})"),
        ("a || x in {E2BIG}", "(a || (x in {E2BIG}))"),
        // Literals.
        ("ret == -EINVAL", "(ret == -EINVAL)"),
        ("x == -0x10", "(x == -16)"),
        ("x == 1_000", "(x == 1000)"),
        ("x == 18446744073709551615", "(x == 18446744073709551615)"),
        ("x == -9223372036854775808", "(x == -9223372036854775808)"),
        ("s == \"a\\\"b\\\\\"", "(s == \"a\\\"b\\\\\")"),
        ("exists(a.b) || true", "(exists(a.b) || true)"),
        ("args.0 == 1", "(args.0 == 1)"),
        ("  ( ( a ) )  ", "a"),
    ] {
        assert_eq!(tree(src), grouped, "{src}");
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

fn error(src: &str) -> FilterError {
    match Filter::parse(src) {
        Ok(f) => panic!("{src} was accepted as {}", f.canonical()),
        Err(e) => e,
    }
}

#[track_caller]
fn expect_error(src: &str, kind: ErrorKind, column: usize, help: Option<&str>) -> FilterError {
    let e = error(src);
    assert_eq!(e.kind, kind, "{src}: {e}");
    assert_eq!(e.column(), column, "{src}: {e}");
    if let Some(h) = help {
        let got = e.help.as_deref().unwrap_or("");
        assert!(got.contains(h), "{src}: help {got:?} lacks {h:?}\n{e}");
    }
    e
}

#[test]
fn syntax_errors_point_at_the_spot() {
    use ErrorKind::Syntax;
    expect_error("", Syntax, 1, Some("a filter is a condition"));
    expect_error("ret = 3", Syntax, 5, Some("did you mean `==`?"));
    expect_error("ret == 3 |", Syntax, 10, Some("`||`"));
    expect_error("ret == -EINVAL &&", Syntax, 18, None);
    expect_error("(ret == 1", Syntax, 10, Some("the `(` at column 1"));
    expect_error("ret == 1)", Syntax, 9, Some("closes no `(`"));
    expect_error("ret == 1 ret == 2", Syntax, 10, Some("`&&` or `||`"));
    expect_error("ret in {}", Syntax, 8, None);
    expect_error("ret in {1 2}", Syntax, 11, None);
    expect_error("ret in 1", Syntax, 8, None);
    expect_error("{1} == ret", Syntax, 1, Some(" in {"));
    expect_error("ret == 0x", Syntax, 8, None);
    expect_error("ret == 12ab", Syntax, 8, Some("hex"));
    expect_error("ret == 99999999999999999999", Syntax, 8, None);
    expect_error("ret == --1", Syntax, 9, None);
    expect_error("ret == -99999999999999999999", Syntax, 9, None);
    expect_error("args. == 1", Syntax, 1, None);
    expect_error("exists ret", Syntax, 8, None);
    expect_error("exists(1)", Syntax, 8, None);
    expect_error("x == \"abc", Syntax, 6, None);
    expect_error("x == \"a\\n\"", Syntax, 8, None);
    expect_error("ret == $", Syntax, 8, None);
    // Columns count characters, not bytes.
    expect_error("state == \"é\" $", Syntax, 14, None);
}

#[test]
fn unknown_fields_suggest_the_closest() {
    use ErrorKind::UnknownField;
    let e = expect_error(
        "syscall.errnoo == EINVAL",
        UnknownField,
        1,
        Some("did you mean `syscall.errno`?"),
    );
    assert_eq!(
        e.to_string(),
        "unknown field at column 1: no field is named `syscall.errnoo`\n  \
         syscall.errnoo == EINVAL\n  ^^^^^^^^^^^^^^\n  help: did you mean `syscall.errno`?"
    );
    expect_error(
        "args.attr_uptr.sampel_type & PERF_SAMPLE_IP",
        UnknownField,
        1,
        Some("`args.attr_uptr.sample_type`"),
    );
    // A field's last part, or its name without the unit.
    expect_error("errno == EINVAL", UnknownField, 1, Some("`syscall.errno`"));
    expect_error(
        "duration > 5",
        UnknownField,
        1,
        Some("`syscall.duration_ns`"),
    );
    expect_error(
        "sample_type & 1",
        UnknownField,
        1,
        Some("`args.attr_uptr.sample_type`"),
    );
    expect_error(
        "ret == 1 && args.cpu == cpuu",
        UnknownField,
        25,
        Some("`cpu`"),
    );
    expect_error(
        "exists(args.attr_uptr.bp_lne)",
        UnknownField,
        8,
        Some("`args.attr_uptr.bp_len`"),
    );
    expect_error("nothing_like_it", UnknownField, 1, Some("reader fields"));
}

#[test]
fn type_mismatches_say_what_fits() {
    use ErrorKind::TypeMismatch;
    expect_error(
        "syscall.success > 1",
        TypeMismatch,
        19,
        Some("`true` or `false`"),
    );
    expect_error(
        "args.attr_uptr.disabled == 1",
        TypeMismatch,
        28,
        Some("== true"),
    );
    expect_error("args.flags == true", TypeMismatch, 15, Some("a number"));
    expect_error("state < complete", TypeMismatch, 1, Some("`==` or `!=`"));
    expect_error("ret", TypeMismatch, 1, Some("exists(ret)"));
    expect_error(
        "args.flags",
        TypeMismatch,
        1,
        Some("args.flags & PERF_FLAG_FD_NO_GROUP"),
    );
    expect_error(
        "arg0.perf_event_attr == 1",
        TypeMismatch,
        1,
        Some("exists(arg0.perf_event_attr)"),
    );
    expect_error("arg0.perf_event_attr", TypeMismatch, 1, Some("exists("));
    expect_error(
        "PERF_FLAG_FD_CLOEXEC",
        TypeMismatch,
        1,
        Some("args.flags & PERF_FLAG_FD_CLOEXEC"),
    );
    expect_error("EINVAL", TypeMismatch, 1, Some("syscall.errno == EINVAL"));
    expect_error("3 == 3", TypeMismatch, 1, None);
    expect_error(
        "EINVAL == 22",
        TypeMismatch,
        1,
        Some("syscall.errno == EINVAL"),
    );
    expect_error("1 & 3", TypeMismatch, 1, None);
    expect_error("3", TypeMismatch, 1, None);
    expect_error("ret < 0 < 1", TypeMismatch, 1, Some("do not chain"));
    expect_error(
        "!args.flags & PERF_FLAG_FD_CLOEXEC",
        TypeMismatch,
        1,
        Some("`!(… & …)`"),
    );
    expect_error("!ret == 0", TypeMismatch, 1, Some("`!(… == …)`"));
    expect_error(
        "args.flags & syscall.success",
        TypeMismatch,
        14,
        Some("`&&`"),
    );
    expect_error("args.flags == -1", TypeMismatch, 15, None);
    expect_error("args.attr_uptr.precise_ip == 4", TypeMismatch, 30, None);
    expect_error(
        "args.attr_uptr.clockid == 0x80000000",
        TypeMismatch,
        27,
        None,
    );
    expect_error("args.attr_uptr.size == 0x100000000", TypeMismatch, 24, None);
    expect_error("-args.pid == 1", TypeMismatch, 1, Some("errno names"));
    expect_error("ret in {args.pid}", TypeMismatch, 9, None);
    expect_error("syscall.success == ret", TypeMismatch, 1, None);
    expect_error("(ret == 1) in {1}", TypeMismatch, 1, None);
    // In range: accepted.
    for ok in [
        "args.attr_uptr.precise_ip == 3",
        "args.attr_uptr.clockid == -1",
        "args.attr_uptr.size == 0xffffffff",
        "args.pid == -1",
        "ret == -4095",
        "syscall.duration_ns < 18446744073709551615",
        "args.flags < -1",
    ] {
        Filter::parse(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
}

#[test]
fn constants_belong_to_their_fields() {
    use ErrorKind::{MisplacedConstant, UnknownConstant};
    expect_error(
        "args.flags & PERF_FLAG_FD_CLOEXC",
        UnknownConstant,
        14,
        Some("did you mean `PERF_FLAG_FD_CLOEXEC`?"),
    );
    expect_error(
        "args.attr_uptr.type == PERF_TYPE_SOFTWAR",
        UnknownConstant,
        24,
        Some("`PERF_TYPE_SOFTWARE`"),
    );
    expect_error("ret == -EINVALL", UnknownConstant, 8, Some("`-EINVAL`"));
    expect_error(
        "syscall.errno in {EINVAL, E2BIGG}",
        UnknownConstant,
        27,
        Some("`E2BIG`"),
    );
    expect_error(
        "arg0.status == \"faulty\"",
        UnknownConstant,
        16,
        Some("`fault`"),
    );
    expect_error(
        "arg0.status == faulty",
        UnknownConstant,
        16,
        Some("`fault`"),
    );
    expect_error("args.cpu == ANY", UnknownConstant, 13, Some("numbers"));
    let e = expect_error(
        "args.flags & PERF_SAMPLE_IP",
        MisplacedConstant,
        14,
        Some("`args.flags` takes PERF_FLAG_FD_NO_GROUP"),
    );
    assert!(e.message.contains("`args.attr_uptr.sample_type`"), "{e}");
    expect_error("ret == EINVAL", MisplacedConstant, 8, Some("`-EINVAL`"));
    expect_error(
        "syscall.errno == -EINVAL",
        MisplacedConstant,
        18,
        Some("write `EINVAL`"),
    );
    expect_error(
        "args.flags == -PERF_FLAG_FD_CLOEXEC",
        MisplacedConstant,
        15,
        None,
    );
    expect_error(
        "args.cpu == PERF_TYPE_SOFTWARE",
        MisplacedConstant,
        13,
        Some("numbers"),
    );
    expect_error(
        "args.attr_uptr.config > PERF_COUNT_SW_DUMMY",
        MisplacedConstant,
        25,
        Some("`==`, `!=` or `in`"),
    );
    expect_error(
        "args.attr_uptr.config & PERF_COUNT_SW_DUMMY",
        MisplacedConstant,
        25,
        None,
    );
    expect_error(
        "args.attr_uptr.config & 0xff == PERF_COUNT_HW_CACHE_LL",
        MisplacedConstant,
        33,
        None,
    );
}

#[test]
fn every_kind_renders_with_a_caret_under_the_culprit() {
    let e = error("args.flags & PERF_SAMPLE_IP");
    let text = e.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[1], "  args.flags & PERF_SAMPLE_IP");
    assert_eq!(lines[2], "               ^^^^^^^^^^^^^^");
    assert!(lines[0].starts_with("misplaced constant at column 14: "));
    // End of input: one caret past the text.
    let e = error("ret ==");
    assert!(e.to_string().ends_with("\n  ret ==\n        ^"), "{e}");
}

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
            abi::RecordHeader::default(),
            [0x1000, 0, u64::MAX, u64::MAX, flags, 0],
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
            abi::RecordHeader::default(),
            abi::Exit {
                ret,
                duration_ns: 1500,
                ..Default::default()
            },
            &[],
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
    assert_eq!(all.len(), CALL_FIELDS.len() + ATTR_MEMBERS.len());
    for (f, cf) in all.iter().zip(CALL_FIELDS) {
        assert_eq!(f.key, cf.key);
        assert!(std::ptr::eq(field(cf.key).unwrap(), f));
    }
    for (f, m) in all[CALL_FIELDS.len()..].iter().zip(ATTR_MEMBERS) {
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
