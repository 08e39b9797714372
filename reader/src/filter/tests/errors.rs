// SPDX-License-Identifier: GPL-2.0-only
//! Every error kind with its column and suggestion, and the lexer's
//! corners.

use super::super::*;

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
