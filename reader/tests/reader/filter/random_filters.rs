// SPDX-License-Identifier: GPL-2.0-only
//! Random filters against a straightforward reference evaluator over the
//! JSON line, on random calls; random text and tokens never panic the
//! parser.

use antinomie_reader::decode::{errno_by_name, names};
use antinomie_reader::filter::{self, fields, ConstSet, Field, Filter, Type};
use proptest::prelude::*;
use serde_json::Value;

use super::random_calls::arb_call;
use super::{json, json_get, jv, Jv};

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
                let b = lits[0].2.is_multiple_of(2);
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
            if lits[0].2.is_multiple_of(5) {
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
