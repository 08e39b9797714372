// SPDX-License-Identifier: GPL-2.0-only
//! The checker: resolves names to fields and constants, checks types, and
//! turns the syntax tree into an [`Expr`]. Every error a filter can have is
//! found here or in the parser, before any call is evaluated.
//!
//! A constant is resolved against the field on the other side of its
//! comparison (or of its `&`, or of its `in`): `PERF_FLAG_FD_CLOEXEC`
//! means 8 next to `args.flags` and is an error next to `args.cpu`.

mod diagnose;
mod typed;

use std::borrow::Cow;

use self::diagnose::{
    bad_constant, chained, config_op, name_not_condition, no_field, not_a_condition, unknown_field,
};
use self::typed::{compatible, Typed, VKind};
use super::error::{ErrorKind, FilterError, Span};
use super::eval::{CmpOp, Expr, Operand};
use super::fields::{field, ConstValue, Field, Type};
use super::parse::{BinOp, Kind as NK, Node};

type Result<T> = std::result::Result<T, FilterError>;

fn err(kind: ErrorKind, span: Span, msg: impl Into<String>) -> FilterError {
    FilterError::new(kind, span, msg)
}

/// The field a value-producing node is about: a field name, or the field
/// in an `&`.
fn anchor(n: &Node) -> Option<&'static Field> {
    match &n.unparen().kind {
        NK::Name(s) => field(s),
        NK::Bin(BinOp::BitAnd, a, b) => anchor(a).or_else(|| anchor(b)),
        _ => None,
    }
}

fn is_condition(n: &Node) -> bool {
    match &n.unparen().kind {
        NK::Not(_) | NK::In(..) | NK::Exists(_) => true,
        NK::Bin(op, ..) => *op != BinOp::BitAnd,
        _ => false,
    }
}

fn cmp_op(op: BinOp) -> CmpOp {
    match op {
        BinOp::Ne => CmpOp::Ne,
        BinOp::Lt => CmpOp::Lt,
        BinOp::Le => CmpOp::Le,
        BinOp::Gt => CmpOp::Gt,
        BinOp::Ge => CmpOp::Ge,
        _ => CmpOp::Eq,
    }
}

/// Checks a whole filter.
pub(crate) fn check(n: &Node) -> Result<Expr> {
    cond(n)
}

fn cond(n: &Node) -> Result<Expr> {
    let inner = n.unparen();
    let span = inner.span;
    match &inner.kind {
        NK::Bool(b) => Ok(Expr::Const(*b)),
        NK::Not(x) => Ok(Expr::Not(Box::new(cond(x)?))),
        NK::Bin(BinOp::And, a, b) => Ok(Expr::And(Box::new(cond(a)?), Box::new(cond(b)?))),
        NK::Bin(BinOp::Or, a, b) => Ok(Expr::Or(Box::new(cond(a)?), Box::new(cond(b)?))),
        NK::Bin(BinOp::BitAnd, ..) => Ok(Expr::Truth(value(inner, None)?.op)),
        NK::Bin(op, a, b) => compare(*op, a, b),
        NK::In(a, set) => membership(a, set),
        NK::Exists(x) => match &x.kind {
            NK::Name(s) => field(s)
                .map(Expr::Exists)
                .ok_or_else(|| unknown_field(s, x.span)),
            _ => Err(err(ErrorKind::Syntax, x.span, "`exists` takes a field")),
        },
        NK::Name(s) => match field(s) {
            Some(f) if f.ty == Type::Bool => Ok(Expr::Truth(Operand::Field(f))),
            Some(f) => Err(not_a_condition(f, span)),
            None => Err(name_not_condition(s, span)),
        },
        NK::Int(_) | NK::Str(_) | NK::Neg(_) => {
            Err(
                err(ErrorKind::TypeMismatch, span, "a value is not a condition")
                    .help("compare a field with it, e.g. `syscall.errno == EINVAL`"),
            )
        }
        NK::Paren(_) => unreachable!("unparen"),
    }
}

/// `a OP b`.
fn compare(op: BinOp, a: &Node, b: &Node) -> Result<Expr> {
    for side in [a, b] {
        if is_condition(side) {
            return Err(chained(op, side));
        }
    }
    let (fa, fb) = (anchor(a), anchor(b));
    if fa.is_none() && fb.is_none() {
        return Err(no_field(a, b));
    }
    let ta = value(a, fb)?;
    let tb = value(b, fa)?;
    compatible(cmp_op(op), op.symbol(), &ta, &tb)
}

/// A value: a field, a literal, a constant (resolved against `ctx`), or
/// `a & b`.
fn value(n: &Node, ctx: Option<&'static Field>) -> Result<Typed> {
    let inner = n.unparen();
    let span = inner.span;
    let lit = |op, kind, text: String| {
        Ok(Typed {
            op,
            kind,
            span,
            field: None,
            text,
        })
    };
    match &inner.kind {
        NK::Name(s) => match field(s) {
            Some(f) => Ok(Typed::of_field(f, span)),
            None => constant(s, false, ctx, span),
        },
        NK::Neg(x) => match &x.kind {
            NK::Name(s) if field(s).is_some() => Err(err(
                ErrorKind::TypeMismatch,
                span,
                format!("cannot negate the field `{s}`"),
            )
            .help(
                "`-` applies to numbers and to errno names compared with `ret` (`ret == -EINVAL`)",
            )),
            NK::Name(s) => constant(s, true, ctx, span),
            _ => Err(err(
                ErrorKind::Syntax,
                span,
                "`-` applies to numbers and names",
            )),
        },
        NK::Int(v) => lit(Operand::Int(*v), VKind::Int, format!("`{v}`")),
        NK::Str(s) => lit(
            Operand::Str(Cow::Owned(s.clone())),
            VKind::Str,
            format!("{s:?}"),
        ),
        NK::Bool(b) => lit(Operand::Bool(*b), VKind::Bool, format!("`{b}`")),
        NK::Bin(BinOp::BitAnd, a, b) => bit_and(a, b, span),
        NK::Not(x) => {
            let help = if is_condition(x) {
                "comparisons do not chain: join conditions with `&&` or `||`"
            } else {
                "`!` binds tighter than `&` and the comparisons, as in C: put what it negates in parentheses, `!(… & …)`"
            };
            Err(err(
                ErrorKind::TypeMismatch,
                span,
                "`!` applies to a condition, and here it is used as a value",
            )
            .help(help))
        }
        _ => Err(err(
            ErrorKind::TypeMismatch,
            span,
            "a condition is used as a value",
        )
        .help("comparisons do not chain: join conditions with `&&` or `||`")),
    }
}

fn bit_and(a: &Node, b: &Node, span: Span) -> Result<Typed> {
    for side in [a, b] {
        if is_condition(side) {
            return Err(chained(BinOp::BitAnd, side));
        }
    }
    let anc = anchor(a).or_else(|| anchor(b));
    let Some(anc) = anc else {
        return Err(match no_field(a, b) {
            e if e.kind == ErrorKind::TypeMismatch => {
                err(ErrorKind::TypeMismatch, span, "`&` needs a field to test").help_opt(e.help)
            }
            e => e,
        });
    };
    let ta = value(a, Some(anc))?;
    let tb = value(b, Some(anc))?;
    for t in [&ta, &tb] {
        match t.kind {
            VKind::Int => {}
            VKind::Config(_) => return Err(config_op("&", t.span)),
            VKind::Bool => {
                return Err(err(
                    ErrorKind::TypeMismatch,
                    t.span,
                    format!("`&` tests the bits of integers, and {} is a bool", t.text),
                )
                .help("`&&` is the logical and; a bool is a condition by itself"))
            }
            _ => {
                return Err(err(
                    ErrorKind::TypeMismatch,
                    t.span,
                    format!("`&` tests the bits of integers, not {}", t.described()),
                ))
            }
        }
    }
    Ok(Typed {
        op: Operand::BitAnd(Box::new(ta.op), Box::new(tb.op)),
        kind: VKind::Int,
        span,
        field: None,
        text: format!("`{} & …`", anc.key),
    })
}

/// A constant named `name` (with a minus sign: `negated`), for field
/// `ctx`.
fn constant(name: &str, negated: bool, ctx: Option<&'static Field>, span: Span) -> Result<Typed> {
    let shown = if negated {
        format!("-{name}")
    } else {
        name.to_owned()
    };
    let Some(f) = ctx else {
        return Err(name_not_condition(name, span));
    };
    if let Some(v) = f.constants.resolve(name, negated, f.ty) {
        let (op, kind) = match v {
            ConstValue::Int(i) => (Operand::Int(i), VKind::Int),
            ConstValue::Str(s) => (Operand::Str(Cow::Borrowed(s)), VKind::Str),
            ConstValue::Config(c) => (Operand::Int(0), VKind::Config(c)),
        };
        return Ok(Typed {
            op,
            kind,
            span,
            field: None,
            text: format!("`{shown}`"),
        });
    }
    Err(bad_constant(name, negated, f, span))
}

/// `a in { … }`.
fn membership(a: &Node, set: &[Node]) -> Result<Expr> {
    if is_condition(a) {
        return Err(err(
            ErrorKind::TypeMismatch,
            a.span,
            "`in` tests a value, and this is a condition",
        )
        .help("`syscall.errno in {EINVAL, E2BIG}`"));
    }
    let Some(anc) = anchor(a) else {
        let first = set.first().unwrap_or(a);
        return Err(no_field(a, first));
    };
    let ta = value(a, None)?;
    let mut elems = Vec::new();
    let mut alternatives = Vec::new();
    for e in set {
        if anchor(e).is_some() || is_condition(e) {
            return Err(err(
                ErrorKind::TypeMismatch,
                e.span,
                "the elements of a set are numbers, names or strings",
            ));
        }
        let te = value(e, Some(anc))?;
        match compatible(CmpOp::Eq, "in", &ta, &te)? {
            Expr::Cmp(_, _, op) => elems.push(op),
            config => alternatives.push(config),
        }
    }
    if !elems.is_empty() {
        alternatives.push(Expr::In(ta.op, elems));
    }
    let mut it = alternatives.into_iter();
    let first = it.next().expect("a set has an element");
    Ok(it.fold(first, |acc, e| Expr::Or(Box::new(acc), Box::new(e))))
}
