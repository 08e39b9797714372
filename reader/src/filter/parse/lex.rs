// SPDX-License-Identifier: GPL-2.0-only
//! The lexer: filter text to tokens with spans.

use super::syntax;
use crate::filter::error::{FilterError, Span};

/// A token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tok {
    /// A name: a field (`args.attr_uptr.size`), a constant, or a keyword
    /// (`in`, `exists`, `true`, `false`).
    Name(String),
    /// An unsigned integer literal.
    Int(u64),
    /// A string literal.
    Str(String),
    LParen,
    RParen,
    LBrace,
    RBrace,
    Comma,
    Bang,
    Minus,
    AndAnd,
    OrOr,
    Amp,
    EqEq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Eof,
}

impl Tok {
    pub(super) fn describe(&self) -> String {
        match self {
            Tok::Name(n) => format!("`{n}`"),
            Tok::Int(v) => format!("the number {v}"),
            Tok::Str(s) => format!("the string {s:?}"),
            Tok::Eof => "the end of the filter".to_owned(),
            other => format!("`{}`", other.symbol()),
        }
    }

    pub(super) fn symbol(&self) -> &'static str {
        match self {
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::Comma => ",",
            Tok::Bang => "!",
            Tok::Minus => "-",
            Tok::AndAnd => "&&",
            Tok::OrOr => "||",
            Tok::Amp => "&",
            Tok::EqEq => "==",
            Tok::Ne => "!=",
            Tok::Lt => "<",
            Tok::Le => "<=",
            Tok::Gt => ">",
            Tok::Ge => ">=",
            Tok::Name(_) | Tok::Int(_) | Tok::Str(_) | Tok::Eof => "",
        }
    }
}

/// A token and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token {
    pub tok: Tok,
    pub span: Span,
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Splits the source into tokens, the last one [`Tok::Eof`].
pub(crate) fn lex(src: &str) -> Result<Vec<Token>, FilterError> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let at = |i: usize| src[i..].chars().next();
    while let Some(c) = at(i) {
        let start = i;
        if c.is_whitespace() {
            i += c.len_utf8();
            continue;
        }
        let two = bytes.get(i + 1).copied().map(char::from);
        let (tok, len) = match (c, two) {
            ('(', _) => (Tok::LParen, 1),
            (')', _) => (Tok::RParen, 1),
            ('{', _) => (Tok::LBrace, 1),
            ('}', _) => (Tok::RBrace, 1),
            (',', _) => (Tok::Comma, 1),
            ('-', _) => (Tok::Minus, 1),
            ('!', Some('=')) => (Tok::Ne, 2),
            ('!', _) => (Tok::Bang, 1),
            ('&', Some('&')) => (Tok::AndAnd, 2),
            ('&', _) => (Tok::Amp, 1),
            ('|', Some('|')) => (Tok::OrOr, 2),
            ('|', _) => {
                return Err(syntax(Span::new(i, i + 1), "`|` is not an operator").help(
                    "`||` is the logical or; bits are tested with `&` (`args.flags & PERF_FLAG_FD_CLOEXEC`)",
                ))
            }
            ('=', Some('=')) => (Tok::EqEq, 2),
            ('=', _) => {
                return Err(syntax(Span::new(i, i + 1), "`=` is not an operator")
                    .help("did you mean `==`?"))
            }
            ('<', Some('=')) => (Tok::Le, 2),
            ('<', _) => (Tok::Lt, 1),
            ('>', Some('=')) => (Tok::Ge, 2),
            ('>', _) => (Tok::Gt, 1),
            ('"', _) => {
                let (s, len) = lex_string(src, i)?;
                (Tok::Str(s), len)
            }
            (c, _) if c.is_ascii_digit() => {
                let (v, len) = lex_number(src, i)?;
                (Tok::Int(v), len)
            }
            (c, _) if is_name_start(c) => (Tok::Name(String::new()), lex_name(src, i)?),
            (c, _) => {
                return Err(syntax(
                    Span::new(i, i + c.len_utf8()),
                    format!("unexpected character `{c}`"),
                ))
            }
        };
        i += len;
        let tok = match tok {
            Tok::Name(_) => Tok::Name(src[start..i].to_owned()),
            t => t,
        };
        out.push(Token {
            tok,
            span: Span::new(start, i),
        });
    }
    out.push(Token {
        tok: Tok::Eof,
        span: Span::new(src.len(), src.len()),
    });
    Ok(out)
}

/// A name: `[A-Za-z_][A-Za-z0-9_]*` segments joined by dots; segments
/// after the first may start with a digit (`args.0`).
fn lex_name(src: &str, start: usize) -> Result<usize, FilterError> {
    let b = src.as_bytes();
    let mut i = start;
    loop {
        while i < b.len() && is_name_char(char::from(b[i])) {
            i += 1;
        }
        if i < b.len() && b[i] == b'.' {
            if i + 1 < b.len() && is_name_char(char::from(b[i + 1])) {
                i += 1;
                continue;
            }
            return Err(syntax(
                Span::new(start, i + 1),
                format!("`{}` ends with a dot", &src[start..=i]),
            ));
        }
        return Ok(i - start);
    }
}

fn lex_number(src: &str, start: usize) -> Result<(u64, usize), FilterError> {
    let b = src.as_bytes();
    let mut end = start;
    while end < b.len() && (is_name_char(char::from(b[end]))) {
        end += 1;
    }
    let text = &src[start..end];
    let span = Span::new(start, end);
    let digits = text.replace('_', "");
    let parsed = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        if hex.is_empty() {
            return Err(syntax(span, format!("`{text}` has no hex digits")));
        }
        u64::from_str_radix(hex, 16)
    } else {
        digits.parse::<u64>()
    };
    match parsed {
        Ok(v) => Ok((v, end - start)),
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => {
            Err(syntax(span, format!("`{text}` does not fit in 64 bits")))
        }
        Err(_) => Err(syntax(span, format!("`{text}` is not a number"))
            .help("numbers are decimal (`136`) or hex (`0x88`), optionally negative (`-1`)")),
    }
}

fn lex_string(src: &str, start: usize) -> Result<(String, usize), FilterError> {
    let mut out = String::new();
    let mut chars = src[start + 1..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((out, i + 2)),
            '\\' => match chars.next() {
                Some((_, c @ ('"' | '\\'))) => out.push(c),
                Some((j, c)) => {
                    let at = start + 1 + j;
                    return Err(syntax(
                        Span::new(at - 1, at + c.len_utf8()),
                        format!("unknown escape `\\{c}`"),
                    )
                    .help("strings know `\\\"` and `\\\\` only"));
                }
                None => break,
            },
            c => out.push(c),
        }
    }
    Err(syntax(Span::new(start, src.len()), "unterminated string"))
}
