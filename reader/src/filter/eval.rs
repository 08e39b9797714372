// SPDX-License-Identifier: GPL-2.0-only
//! The checked filter and its evaluation on a [`Call`].
//!
//! Every comparison with an absent value (a member beyond the captured
//! size, an alias that does not apply, a result of a call without EXIT, a
//! capture that did not happen) is false, whatever the operator; `exists()`
//! tests presence, and `!` negates the whole test it applies to.

use std::borrow::Cow;

use crate::call::Call;
use crate::decode::attr::Slot;
use crate::decode::names;
use crate::decode::{Applies, PmuTypes};
use crate::field::Value;

use super::fields::{Field, Source, Type};

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// A value in a comparison.
#[derive(Debug, Clone)]
pub(crate) enum Operand {
    Field(&'static Field),
    Int(i128),
    Bool(bool),
    Str(Cow<'static, str>),
    /// `a & b`: the bits both have (absent if either is).
    BitAnd(Box<Operand>, Box<Operand>),
}

/// A checked filter.
#[derive(Debug, Clone)]
pub(crate) enum Expr {
    Const(bool),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Exists(&'static Field),
    /// A bool field, or a bit test (`x & MASK`: present and non-zero).
    Truth(Operand),
    Cmp(CmpOp, Operand, Operand),
    /// Equal to one of the set.
    In(Operand, Vec<Operand>),
}

/// A value during evaluation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Val<'a> {
    Absent,
    Int(i128),
    Bool(bool),
    Str(Cow<'a, str>),
    /// Present, but only `exists()` looks at it.
    Object,
}

/// The low 64 bits, two's complement: what `&` works on.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn bits(v: i128) -> u64 {
    v as u64
}

/// The value of field `f` for call `c`.
pub(crate) fn field_value<'a>(f: &Field, c: &'a Call, pmus: &PmuTypes) -> Val<'a> {
    match &f.source {
        Source::Call(_) => match f.source.call_field(c).map_or(Value::Null, |cf| (cf.get)(c)) {
            Value::Null => Val::Absent,
            Value::U64(v) => Val::Int(i128::from(v)),
            Value::I64(v) => Val::Int(i128::from(v)),
            Value::Bool(b) => Val::Bool(b),
            Value::Str(s) => Val::Str(s),
            Value::Bits(_, bits) => Val::Int(i128::from(bits)),
            Value::Flags(table, bits, unknown) => {
                Val::Str(Cow::Owned(names::format_flags(table, bits, unknown)))
            }
            Value::Attr(_) | Value::AttrNames(_) => Val::Object,
        },
        &Source::Attr(m) => {
            let slot = Slot::of(m);
            let raw = if m.applies == Applies::Always {
                // Read straight from the captured bytes: one member needs
                // no view (a padded copy of the whole attr).
                c.attr_capture().and_then(|cap| slot.read(cap.data))
            } else {
                // A union alias: whether it applies takes the view's
                // controls (and `type` looked up by name).
                c.attr()
                    .filter(|view| view.applies(m, pmus))
                    .and_then(|view| view.raw_at(&slot))
            };
            let Some(raw) = raw else {
                return Val::Absent;
            };
            match f.ty {
                Type::Bool => Val::Bool(raw != 0),
                Type::Signed => Val::Int(i128::from(slot.signed(raw))),
                _ => Val::Int(i128::from(raw)),
            }
        }
    }
}

impl Operand {
    fn eval<'a>(&'a self, c: &'a Call, pmus: &PmuTypes) -> Val<'a> {
        match self {
            Operand::Field(f) => field_value(f, c, pmus),
            Operand::Int(v) => Val::Int(*v),
            Operand::Bool(b) => Val::Bool(*b),
            Operand::Str(s) => Val::Str(Cow::Borrowed(s)),
            Operand::BitAnd(lhs, rhs) => match (lhs.eval(c, pmus), rhs.eval(c, pmus)) {
                (Val::Int(x), Val::Int(y)) => Val::Int(i128::from(bits(x) & bits(y))),
                _ => Val::Absent,
            },
        }
    }
}

fn compare(op: CmpOp, a: &Val<'_>, b: &Val<'_>) -> bool {
    match (a, b) {
        (Val::Int(x), Val::Int(y)) => match op {
            CmpOp::Eq => x == y,
            CmpOp::Ne => x != y,
            CmpOp::Lt => x < y,
            CmpOp::Le => x <= y,
            CmpOp::Gt => x > y,
            CmpOp::Ge => x >= y,
        },
        (Val::Bool(x), Val::Bool(y)) => match op {
            CmpOp::Eq => x == y,
            CmpOp::Ne => x != y,
            _ => false,
        },
        (Val::Str(x), Val::Str(y)) => match op {
            CmpOp::Eq => x == y,
            CmpOp::Ne => x != y,
            _ => false,
        },
        // Absent (or, never after checking, mixed types).
        _ => false,
    }
}

impl Expr {
    /// Whether call `c` matches; `pmus` names dynamic PMU types, for the
    /// kprobe/uprobe aliases.
    pub(crate) fn eval(&self, c: &Call, pmus: &PmuTypes) -> bool {
        match self {
            Expr::Const(b) => *b,
            Expr::Not(e) => !e.eval(c, pmus),
            Expr::And(a, b) => a.eval(c, pmus) && b.eval(c, pmus),
            Expr::Or(a, b) => a.eval(c, pmus) || b.eval(c, pmus),
            Expr::Exists(f) => field_value(f, c, pmus) != Val::Absent,
            Expr::Truth(o) => match o.eval(c, pmus) {
                Val::Bool(b) => b,
                Val::Int(v) => v != 0,
                _ => false,
            },
            Expr::Cmp(op, a, b) => compare(*op, &a.eval(c, pmus), &b.eval(c, pmus)),
            Expr::In(a, set) => {
                let v = a.eval(c, pmus);
                v != Val::Absent && set.iter().any(|s| compare(CmpOp::Eq, &v, &s.eval(c, pmus)))
            }
        }
    }
}
