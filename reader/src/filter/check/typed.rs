// SPDX-License-Identifier: GPL-2.0-only
//! Checked operands and their types: whether two operands can be
//! compared, and the `config == PERF_COUNT_*` rewrite.

use super::diagnose::config_op;
use super::{err, Result};
use crate::filter::error::{ErrorKind, Span};
use crate::filter::eval::{CmpOp, Expr, Operand};
use crate::filter::fields::{field, ConfigConst, ConstSet, Field, Type};
use crate::filter::suggest::closest;

/// The kind of an operand's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum VKind {
    Int,
    Bool,
    Str,
    Object,
    Config(ConfigConst),
}

/// A checked operand.
#[derive(Debug, Clone)]
pub(super) struct Typed {
    pub(super) op: Operand,
    pub(super) kind: VKind,
    pub(super) span: Span,
    /// The field, when the operand is one.
    pub(super) field: Option<&'static Field>,
    /// How to name it in messages.
    pub(super) text: String,
}

impl Typed {
    pub(super) fn of_field(f: &'static Field, span: Span) -> Self {
        let kind = match f.ty {
            Type::Unsigned | Type::Signed | Type::Bits => VKind::Int,
            Type::Bool => VKind::Bool,
            Type::Str => VKind::Str,
            Type::Object => VKind::Object,
        };
        Typed {
            op: Operand::Field(f),
            kind,
            span,
            field: Some(f),
            text: format!("`{}`", f.key),
        }
    }

    pub(super) fn described(&self) -> String {
        let what = match self.kind {
            VKind::Int => "a number",
            VKind::Bool => "a bool",
            VKind::Str => "a string",
            VKind::Object => "an object",
            VKind::Config(_) => "a config selector",
        };
        match self.field {
            Some(f) => format!("{} ({})", self.text, f.ty.described()),
            None => format!("{} ({what})", self.text),
        }
    }
}

/// Checks the operands of a comparison against each other.
pub(super) fn compatible(op: CmpOp, sym: &str, a: &Typed, b: &Typed) -> Result<Expr> {
    let whole = a.span.to(b.span);
    for t in [a, b] {
        if t.kind == VKind::Object {
            let key = t.field.map_or(t.text.as_str(), |f| f.key.as_str());
            return Err(err(
                ErrorKind::TypeMismatch,
                t.span,
                format!("`{key}` is an object: `{sym}` cannot compare it"),
            )
            .help(format!(
                "test it with `exists({key})`, or compare a member: `args.attr_uptr.<member>`"
            )));
        }
    }
    // PERF_COUNT_* next to config: rewrite to type and bits.
    for (c, other) in [(a, b), (b, a)] {
        if let VKind::Config(cc) = c.kind {
            let Some(cfg) = other
                .field
                .filter(|f| matches!(f.constants, ConstSet::Config))
            else {
                return Err(config_op(sym, c.span));
            };
            return match op {
                CmpOp::Eq => Ok(config_eq(cfg, cc)),
                CmpOp::Ne => Ok(Expr::And(
                    Box::new(Expr::Exists(cfg)),
                    Box::new(Expr::Not(Box::new(config_eq(cfg, cc)))),
                )),
                _ => Err(config_op(sym, c.span)),
            };
        }
    }
    if a.kind != b.kind {
        // Blame the side that is not a field.
        let (fld, other) = if a.field.is_some() { (a, b) } else { (b, a) };
        let help = match fld.field {
            Some(f) if f.ty == Type::Bool => format!(
                "compare it with `true` or `false` (`{} == true`), or use it as a condition by itself",
                f.key
            ),
            Some(f) if f.ty == Type::Str => match f.constants.names().first() {
                Some(n) => format!("compare it with a name or a string: `{} == {n}`", f.key),
                None => format!("compare it with a string: `{} == \"…\"`", f.key),
            },
            Some(f) => format!("compare it with a number: `{} == 0`", f.key),
            None => "compare values of one type".to_owned(),
        };
        let blame = if other.field.is_some() {
            whole
        } else {
            other.span
        };
        return Err(err(
            ErrorKind::TypeMismatch,
            blame,
            format!(
                "cannot compare {} with {}",
                fld.described(),
                other.described()
            ),
        )
        .help(help));
    }
    if a.kind != VKind::Int && !matches!(op, CmpOp::Eq | CmpOp::Ne) {
        let t = if a.field.is_some() { a } else { b };
        return Err(err(
            ErrorKind::TypeMismatch,
            whole,
            format!("`{sym}` orders numbers, and {} is not one", t.described()),
        )
        .help("compare it with `==` or `!=`"));
    }
    for (fld, other) in [(a, b), (b, a)] {
        if let (Some(f), None) = (fld.field, other.field) {
            check_literal(op, f, other)?;
        }
    }
    Ok(Expr::Cmp(op, a.op.clone(), b.op.clone()))
}

/// A literal or constant that field `f` can never equal is an error: a
/// negative number for an unsigned field, a number beyond a member's bits,
/// a string that is none of the field's names.
fn check_literal(op: CmpOp, f: &'static Field, lit: &Typed) -> Result<()> {
    let eq = matches!(op, CmpOp::Eq | CmpOp::Ne);
    match &lit.op {
        Operand::Int(v) if eq => {
            let (lo, hi) = match f.ty {
                Type::Signed => f
                    .signed_range()
                    .unwrap_or((i128::from(i64::MIN), i128::from(i64::MAX))),
                _ => (0, i128::from(f.max.unwrap_or(u64::MAX))),
            };
            if *v < lo || *v > hi {
                let why = if *v < 0 && lo == 0 {
                    format!("`{}` is unsigned", f.key)
                } else {
                    format!("`{}` holds {lo}..={hi}", f.key)
                };
                return Err(err(
                    ErrorKind::TypeMismatch,
                    lit.span,
                    format!("{why}: {} never matches", lit.text),
                ));
            }
        }
        Operand::Str(s) => {
            if let ConstSet::Table(t) = f.constants {
                if !t.iter().any(|(_, n)| n == s) {
                    let help = closest(s, f.constants.names()).map_or_else(
                        || format!("`{}` is one of {}", f.key, f.constants.describe()),
                        |n| format!("did you mean `{n}`?"),
                    );
                    return Err(err(
                        ErrorKind::UnknownConstant,
                        lit.span,
                        format!("`{}` is never {s:?}", f.key),
                    )
                    .help(help));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// `config == NAME`: `type == NAME's type && config & mask == value`.
fn config_eq(cfg: &'static Field, c: ConfigConst) -> Expr {
    let ty = field("args.attr_uptr.type").expect("the attr table has `type`");
    Expr::And(
        Box::new(Expr::Cmp(
            CmpOp::Eq,
            Operand::Field(ty),
            Operand::Int(i128::from(c.ty)),
        )),
        Box::new(Expr::Cmp(
            CmpOp::Eq,
            Operand::BitAnd(
                Box::new(Operand::Field(cfg)),
                Box::new(Operand::Int(i128::from(c.mask))),
            ),
            Operand::Int(i128::from(c.value)),
        )),
    )
}
