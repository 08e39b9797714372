// SPDX-License-Identifier: GPL-2.0-only
//! The checker's error messages: what is wrong with a filter, and an
//! example of what to write instead.

use super::{err, value};
use crate::filter::error::{ErrorKind, FilterError, Span};
use crate::filter::fields::{field, fields, owners, ConstSet, Field, Type};
use crate::filter::parse::{BinOp, Kind as NK, Node};
use crate::filter::suggest::closest;

/// An example of testing field `f` with constant `name`.
fn example(f: &Field, name: &str) -> String {
    match (f.ty, f.constants) {
        (Type::Bits, _) => format!("`{} & {name}`", f.key),
        (_, ConstSet::NegErrno) => format!("`{} == -{name}`", f.key),
        _ => format!("`{} == {name}`", f.key),
    }
}

/// The owner to show in an example: one that takes the name unsigned.
fn best_owner(name: &str) -> Option<&'static Field> {
    let own = owners(name);
    own.iter()
        .copied()
        .find(|f| f.constants.resolve(name, false, f.ty).is_some())
        .or_else(|| own.first().copied())
}

fn owner_list(name: &str) -> String {
    let own = owners(name);
    let mut keys: Vec<String> = own.iter().take(3).map(|f| format!("`{}`", f.key)).collect();
    if own.len() > 3 {
        keys.push(format!("{} more", own.len() - 3));
    }
    keys.join(", ")
}

/// Whether a name is spelled like a C constant (`PERF_X`, `EINVAL`).
fn looks_constant(name: &str) -> bool {
    !name.contains('.')
        && name.chars().any(|c| c.is_ascii_uppercase())
        && !name.chars().any(|c| c.is_ascii_lowercase())
}

/// An unknown field, with the closest field name (also when the name is a
/// field's last part: `errno` for `syscall.errno`).
pub(super) fn unknown_field(name: &str, span: Span) -> FilterError {
    let keys = || fields().iter().map(|f| f.key.as_str());
    let by_tail = fields().iter().find(|f| {
        let last = f.key.rsplit('.').next().unwrap_or(&f.key);
        last == name || last.strip_suffix("_ns") == Some(name)
    });
    let guess = by_tail
        .map(|f| f.key.as_str())
        .or_else(|| closest(name, keys()))
        .or_else(|| {
            // A typo in the member part of args.attr_uptr.<member>.
            let tail = name.rsplit('.').next()?;
            fields()
                .iter()
                .filter(|f| f.member().is_some())
                .map(|f| f.key.as_str())
                .find(|k| closest(tail, [k.rsplit('.').next().unwrap_or(k)]).is_some())
        });
    let help = guess.map_or_else(
        || "`reader fields` lists every field".to_owned(),
        |g| format!("did you mean `{g}`?"),
    );
    err(
        ErrorKind::UnknownField,
        span,
        format!("no field is named `{name}`"),
    )
    .help(help)
}

pub(super) fn not_a_condition(f: &Field, span: Span) -> FilterError {
    let help = match f.ty {
        Type::Object => format!(
            "test it with `exists({})`, or compare a member: `args.attr_uptr.<member>`",
            f.key
        ),
        Type::Str => {
            let v = f
                .constants
                .names()
                .first()
                .map_or_else(|| "\"…\"".to_owned(), |n| (*n).to_owned());
            format!("compare it: `{} == {v}`", f.key)
        }
        Type::Bits => {
            let bit = f.constants.names().first().copied().unwrap_or("0x1");
            format!(
                "test a bit (`{} & {bit}`) or compare it (`{} != 0`)",
                f.key, f.key
            )
        }
        _ => format!(
            "compare it (`{} != 0`), or test that it was recorded (`exists({})`)",
            f.key, f.key
        ),
    };
    err(
        ErrorKind::TypeMismatch,
        span,
        format!("`{}` is {}, not a condition", f.key, f.ty.described()),
    )
    .help(help)
}

pub(super) fn name_not_condition(name: &str, span: Span) -> FilterError {
    match best_owner(name) {
        Some(f) => err(
            ErrorKind::TypeMismatch,
            span,
            format!("`{name}` is a constant, not a condition"),
        )
        .help(format!("test a field with it: {}", example(f, name))),
        None => unknown_field(name, span),
    }
}

pub(super) fn chained(op: BinOp, side: &Node) -> FilterError {
    let msg = if let NK::Not(inner) = &side.unparen().kind {
        format!(
            "this `!` negates only `{}`, not the `{}` test",
            inner.canonical(),
            op.symbol()
        )
    } else {
        format!("`{}` compares values, and this is a condition", op.symbol())
    };
    let help = if matches!(side.kind, NK::Not(_)) {
        format!(
            "as in C, `!` binds tighter than `&` and the comparisons: write `!(… {} …)`",
            op.symbol()
        )
    } else {
        "comparisons do not chain: join conditions with `&&` or `||`".to_owned()
    };
    err(ErrorKind::TypeMismatch, side.span, msg).help(help)
}

/// A comparison with no field on either side.
pub(super) fn no_field(a: &Node, b: &Node) -> FilterError {
    for side in [a, b] {
        let n = match &side.unparen().kind {
            NK::Neg(x) => x.as_ref(),
            _ => side.unparen(),
        };
        if let NK::Name(s) = &n.kind {
            if field(s).is_some() {
                // `-field`: say so.
                if let Err(e) = value(side, None) {
                    return e;
                }
            }
            return match best_owner(s) {
                Some(f) => err(
                    ErrorKind::TypeMismatch,
                    a.span.to(b.span),
                    "this comparison has no field",
                )
                .help(format!("compare a field with `{s}`: {}", example(f, s))),
                None => unknown_field(s, n.span),
            };
        }
    }
    err(
        ErrorKind::TypeMismatch,
        a.span.to(b.span),
        "this comparison has no field",
    )
    .help("compare a field, e.g. `ret == 3`; `reader fields` lists them")
}

pub(super) fn config_op(op: &str, span: Span) -> FilterError {
    err(
        ErrorKind::MisplacedConstant,
        span,
        format!("`{op}` cannot take a PERF_COUNT_* name: they select `config` together with its `type`"),
    )
    .help("compare `args.attr_uptr.config` with `==`, `!=` or `in`, e.g. `args.attr_uptr.config == PERF_COUNT_SW_CPU_CLOCK`")
}

pub(super) fn bad_constant(
    name: &str,
    negated: bool,
    f: &'static Field,
    span: Span,
) -> FilterError {
    let misplaced = |msg: String| err(ErrorKind::MisplacedConstant, span, msg);
    if f.constants.takes(name) {
        // The right name with the wrong sign.
        return match f.constants {
            ConstSet::NegErrno => misplaced(format!(
                "`{}` is the raw return value: a failure is a negative errno, so `{name}` never matches",
                f.key
            ))
            .help(format!("write `-{name}` (or `syscall.errno == {name}`)")),
            ConstSet::Errno => misplaced(format!(
                "`{}` is the positive errno: `-{name}` never matches",
                f.key
            ))
            .help(format!("write `{name}` (or `ret == -{name}`)")),
            _ => misplaced(format!("`-{name}` has a minus sign"))
                .help("only errno names compared with `ret` take one (`ret == -EINVAL`)"),
        };
    }
    let takes = if f.constants.is_some() {
        format!("`{}` takes {}", f.key, f.constants.describe())
    } else {
        format!("`{}` takes numbers, not names", f.key)
    };
    let near = closest(name, f.constants.names());
    if !owners(name).is_empty() {
        let help = match near {
            Some(n) => format!(
                "{takes}: did you mean `{}{n}`?",
                if negated { "-" } else { "" }
            ),
            None => takes,
        };
        return misplaced(format!(
            "`{name}` is a constant of {}, not of `{}`",
            owner_list(name),
            f.key
        ))
        .help(help);
    }
    if f.constants.is_some() {
        let help = match near {
            Some(n) => format!("did you mean `{}{n}`?", if negated { "-" } else { "" }),
            None => takes,
        };
        return err(
            ErrorKind::UnknownConstant,
            span,
            format!("`{}` has no constant named `{name}`", f.key),
        )
        .help(help);
    }
    if looks_constant(name) || negated {
        return err(
            ErrorKind::UnknownConstant,
            span,
            format!("no constant is named `{name}`"),
        )
        .help(takes);
    }
    unknown_field(name, span)
}
