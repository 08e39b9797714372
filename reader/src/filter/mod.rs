// SPDX-License-Identifier: GPL-2.0-only
//! The Syscall Trace filter: selects calls by any recorded field.
//!
//! ```text
//! reader --follow --filter 'syscall.errno == E2BIG && args.attr_uptr.size > 136'
//! ```
//!
//! # Grammar
//!
//! ```text
//! filter  = expr
//! expr    = expr "||" expr | expr "&&" expr | "!" expr
//!         | value ( "==" | "!=" | "<" | "<=" | ">" | ">=" ) value
//!         | value "in" "{" value { "," value } [ "," ] "}"
//!         | value "&" value                 (a bit test: true when non-zero)
//!         | "exists" "(" FIELD ")" | FIELD  (a bool field) | "true" | "false"
//!         | "(" expr ")"
//! value   = FIELD | NAME | "-" NAME | INT | "-" INT | STRING | "true" | "false"
//!         | value "&" value | "(" value ")"
//! FIELD   = a name `reader fields` lists: ret, syscall.errno, args.flags,
//!           args.attr_uptr.sample_type, …
//! NAME    = a constant of the field on the other side: EINVAL, PERF_FLAG_*, …
//! INT     = decimal or 0x hex, `_` allowed between digits: 136, 0x88, 1_000_000
//! STRING  = "…" with \" and \\ escapes
//! ```
//!
//! # Precedence
//!
//! C's, except that `&` binds tighter than the comparisons (in C,
//! `a & b == c` is `a & (b == c)`; here it is `(a & b) == c`). From
//! loosest to tightest: `||`; `&&`; `==` `!=` `in`; `<` `<=` `>` `>=`; `&`;
//! prefix `!` and `-`. Binary operators associate to the left. As in C,
//! `!` binds tighter than everything else: write `!(args.flags &
//! PERF_FLAG_FD_CLOEXEC)`, not `!args.flags & …` (which is rejected).
//! Comparisons do not chain (`a < b < c` is rejected).
//!
//! # Meaning
//!
//! * Fields are the JSON output's keys ([`fields()`]): every key of a call
//!   line ([`crate::call::call_fields`], for each syscall of the table) and
//!   `args.attr_uptr.<member>` for every member of
//!   [`crate::decode::ATTR_MEMBERS`]. A key the call's syscall does not
//!   have is absent from it.
//! * A field that is absent (null in JSON: no EXIT yet, nothing captured, a
//!   member beyond the captured size, a union alias that does not apply)
//!   makes every comparison and bit test on it false, `!=` included;
//!   `exists(field)` tests presence; `!` negates the whole test, so
//!   `!(args.attr_uptr.bp_len == 4)` matches calls without `bp_len`.
//! * Names are resolved against the field they are compared with. Errno
//!   names are positive: `syscall.errno == EINVAL`; the raw return is
//!   negative, so `ret == -EINVAL` (and `ret == EINVAL` is rejected, as is
//!   `syscall.errno == -EINVAL`). `config` names (`PERF_COUNT_SW_CPU_CLOCK`)
//!   imply their `type`.
//! * Errors are found before any call is read: syntax, unknown field, type
//!   mismatch, unknown constant, misplaced constant ([`ErrorKind`]), each
//!   with a column and a suggestion.

mod check;
mod error;
mod eval;
mod fields;
mod parse;
mod suggest;
#[cfg(test)]
mod tests;

use std::fmt::Write as _;

use crate::call::Call;
use crate::decode::PmuTypes;
use crate::pipeline::CallFilter;

pub use error::{ErrorKind, FilterError, Span};
pub use fields::{
    field, fields, fields_of, is_bit_table, ConfigConst, ConstSet, Field, Source, Type,
};

/// A checked filter, ready to evaluate.
#[derive(Debug, Clone)]
pub struct Filter {
    source: String,
    canonical: String,
    expr: eval::Expr,
    pmus: PmuTypes,
}

impl Filter {
    /// Parses and checks `src`.
    ///
    /// # Errors
    /// A [`FilterError`] (whose `Display` shows the column and a
    /// suggestion) for any syntax, name or type error.
    pub fn parse(src: &str) -> Result<Filter, FilterError> {
        let node = parse::parse(src).map_err(|e| e.with_source(src))?;
        let expr = check::check(&node).map_err(|e| e.with_source(src))?;
        Ok(Filter {
            source: src.to_owned(),
            canonical: node.canonical(),
            expr,
            pmus: PmuTypes::none(),
        })
    }

    /// Names dynamic PMU types (for the kprobe/uprobe aliases of `config1`
    /// and `config2`), as the output does.
    #[must_use]
    pub fn with_pmus(mut self, pmus: PmuTypes) -> Self {
        self.pmus = pmus;
        self
    }

    /// Whether `call` matches.
    #[must_use]
    pub fn matches(&self, call: &Call) -> bool {
        self.expr.eval(call, &self.pmus)
    }

    /// The filter as given.
    #[must_use]
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The filter fully parenthesized: how it groups.
    #[must_use]
    pub fn canonical(&self) -> &str {
        &self.canonical
    }
}

impl CallFilter for Filter {
    fn matches(&self, call: &Call) -> bool {
        Filter::matches(self, call)
    }
}

/// How `src` groups, fully parenthesized, without checking names or types
/// (`a || b && c` gives `(a || (b && c))`).
///
/// # Errors
/// A syntax error.
pub fn parse_tree(src: &str) -> Result<String, FilterError> {
    parse::parse(src)
        .map(|n| n.canonical())
        .map_err(|e| e.with_source(src))
}

/// The value of a field for a call as the filter sees it, as text: `None`
/// when absent (for tests and diagnostics).
#[must_use]
pub fn field_text(f: &Field, call: &Call, pmus: &PmuTypes) -> Option<String> {
    match eval::field_value(f, call, pmus) {
        eval::Val::Absent => None,
        eval::Val::Int(v) => Some(v.to_string()),
        eval::Val::Bool(b) => Some(b.to_string()),
        eval::Val::Str(s) => Some(s.into_owned()),
        eval::Val::Object => Some("{…}".to_owned()),
    }
}

/// `reader fields`: every field with its type and meaning, generated from
/// the tables.
#[must_use]
pub fn fields_text() -> String {
    let all = fields();
    let width = all.iter().map(|f| f.key.len()).max().unwrap_or(0);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# {} filter fields: {} call fields and {} members of the captured perf_event_attr.",
        all.len(),
        all.iter().filter(|f| f.member().is_none()).count(),
        all.iter().filter(|f| f.member().is_some()).count(),
    );
    s.push_str(
        "# A field that is absent (null in JSON) makes every comparison on it false; exists(FIELD) tests presence.\n",
    );
    let _ = writeln!(s, "{:<width$}  {:<8}  MEANING", "FIELD", "TYPE");
    for f in all {
        let _ = write!(s, "{:<width$}  {:<8}  {}", f.key, f.ty.name(), f.doc);
        if let Some(p) = f.presence() {
            let _ = write!(s, "; present: {p}");
        }
        if f.constants.is_some() {
            let _ = write!(s, " [{}]", f.constants.describe());
        }
        s.push('\n');
    }
    s
}
