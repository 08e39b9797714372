// SPDX-License-Identifier: GPL-2.0-only
//! Filter errors: what went wrong, where (a byte span of the source, shown
//! as a column with carets), and a suggestion.

use std::fmt;

/// A byte range of the filter's source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte (`start` for an empty span, e.g. the end of
    /// the input).
    pub end: usize,
}

impl Span {
    pub(crate) fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }

    /// The span covering both.
    pub(crate) fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }
}

/// The kinds of bad filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The text does not parse: a stray character, a missing operand or
    /// parenthesis, a bad number.
    Syntax,
    /// A name that is no field (`syscall.errnoo`).
    UnknownField,
    /// Operand types that do not fit the operator (`syscall.success > 1`,
    /// `args.flags == true`, an integer used as a condition).
    TypeMismatch,
    /// A name that is no constant of the field it is compared with
    /// (`args.flags & PERF_FLAG_FD_CLOEXC`).
    UnknownConstant,
    /// A constant of another field (`args.flags & PERF_SAMPLE_IP`), or an
    /// errno name with the wrong sign (`ret == EINVAL`).
    MisplacedConstant,
}

impl ErrorKind {
    /// The kind as the message names it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Syntax => "syntax error",
            ErrorKind::UnknownField => "unknown field",
            ErrorKind::TypeMismatch => "type mismatch",
            ErrorKind::UnknownConstant => "unknown constant",
            ErrorKind::MisplacedConstant => "misplaced constant",
        }
    }
}

/// A rejected filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError {
    /// What kind of error.
    pub kind: ErrorKind,
    /// What is wrong.
    pub message: String,
    /// Where, in bytes of the source.
    pub span: Span,
    /// A suggestion (`did you mean …?`).
    pub help: Option<String>,
    source: String,
}

impl FilterError {
    pub(crate) fn new(kind: ErrorKind, span: Span, message: impl Into<String>) -> Self {
        FilterError {
            kind,
            message: message.into(),
            span,
            help: None,
            source: String::new(),
        }
    }

    pub(crate) fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub(crate) fn help_opt(mut self, help: Option<String>) -> Self {
        self.help = help;
        self
    }

    pub(crate) fn with_source(mut self, source: &str) -> Self {
        source.clone_into(&mut self.source);
        self
    }

    /// The 1-based column (in characters) where the error starts.
    #[must_use]
    pub fn column(&self) -> usize {
        self.source
            .get(..self.span.start)
            .map_or(self.span.start, |s| s.chars().count())
            + 1
    }
}

impl fmt::Display for FilterError {
    /// ```text
    /// unknown field at column 1: no field is named `syscall.errnoo`
    ///   syscall.errnoo == EINVAL
    ///   ^^^^^^^^^^^^^^
    ///   help: did you mean `syscall.errno`?
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at column {}: {}",
            self.kind.as_str(),
            self.column(),
            self.message
        )?;
        // One line of source: control characters would shift the carets.
        let shown: String = self
            .source
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let width = self
            .source
            .get(self.span.start..self.span.end)
            .map_or(1, |s| s.chars().count())
            .max(1);
        write!(
            f,
            "\n  {shown}\n  {}{}",
            " ".repeat(self.column() - 1),
            "^".repeat(width)
        )?;
        if let Some(h) = &self.help {
            write!(f, "\n  help: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for FilterError {}
