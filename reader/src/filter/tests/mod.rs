// SPDX-License-Identifier: GPL-2.0-only
//! Unit tests: grouping (precedence and associativity) here; the lexer's
//! corners and every error kind with its column and suggestion in
//! `errors.rs`; evaluation on hand-built calls in `eval.rs`.

mod errors;
mod eval;

use super::*;

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
