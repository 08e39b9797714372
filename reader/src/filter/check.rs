//! The checker: resolves names to fields and constants, checks types, and
//! turns the syntax tree into an [`Expr`]. Every error a filter can have is
//! found here or in the parser, before any call is evaluated.
//!
//! A constant is resolved against the field on the other side of its
//! comparison (or of its `&`, or of its `in`): `PERF_FLAG_FD_CLOEXEC`
//! means 8 next to `args.flags` and is an error next to `args.cpu`.

use std::borrow::Cow;

use super::error::{ErrorKind, FilterError, Span};
use super::eval::{CmpOp, Expr, Operand};
use super::fields::{field, fields, owners, ConfigConst, ConstSet, ConstValue, Field, Type};
use super::parse::{BinOp, Kind as NK, Node};
use super::suggest::closest;

type Result<T> = std::result::Result<T, FilterError>;

fn err(kind: ErrorKind, span: Span, msg: impl Into<String>) -> FilterError {
    FilterError::new(kind, span, msg)
}

/// The kind of an operand's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum VKind {
    Int,
    Bool,
    Str,
    Object,
    Config(ConfigConst),
}

/// A checked operand.
#[derive(Debug, Clone)]
struct Typed {
    op: Operand,
    kind: VKind,
    span: Span,
    /// The field, when the operand is one.
    field: Option<&'static Field>,
    /// How to name it in messages.
    text: String,
}

impl Typed {
    fn of_field(f: &'static Field, span: Span) -> Self {
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

    fn described(&self) -> String {
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
fn unknown_field(name: &str, span: Span) -> FilterError {
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

fn not_a_condition(f: &Field, span: Span) -> FilterError {
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

fn name_not_condition(name: &str, span: Span) -> FilterError {
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

fn chained(op: BinOp, side: &Node) -> FilterError {
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
fn no_field(a: &Node, b: &Node) -> FilterError {
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

fn config_op(op: &str, span: Span) -> FilterError {
    err(
        ErrorKind::MisplacedConstant,
        span,
        format!("`{op}` cannot take a PERF_COUNT_* name: they select `config` together with its `type`"),
    )
    .help("compare `args.attr_uptr.config` with `==`, `!=` or `in`, e.g. `args.attr_uptr.config == PERF_COUNT_SW_CPU_CLOCK`")
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

fn bad_constant(name: &str, negated: bool, f: &'static Field, span: Span) -> FilterError {
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

/// Checks the operands of a comparison against each other.
fn compatible(op: CmpOp, sym: &str, a: &Typed, b: &Typed) -> Result<Expr> {
    let whole = a.span.to(b.span);
    for t in [a, b] {
        if t.kind == VKind::Object {
            let key = t.field.map_or("arg0.perf_event_attr", |f| f.key.as_str());
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
