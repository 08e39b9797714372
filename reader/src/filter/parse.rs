//! The lexer and the Pratt parser: filter text to an untyped syntax tree
//! with spans. Names are not resolved here (the checker does that), so the
//! tree also serves to show how an expression groups
//! ([`Node::canonical`]).
//!
//! Binding powers (higher binds tighter), C's order except that `&` binds
//! tighter than the comparisons:
//!
//! | operators | left, right power | associativity |
//! |---|---|---|
//! | `\|\|` | 1, 2 | left |
//! | `&&` | 3, 4 | left |
//! | `==` `!=` `in` | 5, 6 | left |
//! | `<` `<=` `>` `>=` | 7, 8 | left |
//! | `&` | 9, 10 | left |
//! | prefix `!` `-` | 11 | |

use std::fmt::Write as _;

use super::error::{ErrorKind, FilterError, Span};

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
    fn describe(&self) -> String {
        match self {
            Tok::Name(n) => format!("`{n}`"),
            Tok::Int(v) => format!("the number {v}"),
            Tok::Str(s) => format!("the string {s:?}"),
            Tok::Eof => "the end of the filter".to_owned(),
            other => format!("`{}`", other.symbol()),
        }
    }

    fn symbol(&self) -> &'static str {
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

fn syntax(span: Span, msg: impl Into<String>) -> FilterError {
    FilterError::new(ErrorKind::Syntax, span, msg)
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

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    BitAnd,
}

impl BinOp {
    pub(crate) fn symbol(self) -> &'static str {
        match self {
            BinOp::Or => "||",
            BinOp::And => "&&",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::BitAnd => "&",
        }
    }
}

/// An untyped syntax tree node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Node {
    pub kind: Kind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A field or a constant, resolved by the checker.
    Name(String),
    /// An integer literal (negative ones folded in).
    Int(i128),
    Str(String),
    Bool(bool),
    /// `-NAME` (`-EINVAL`).
    Neg(Box<Node>),
    Not(Box<Node>),
    Bin(BinOp, Box<Node>, Box<Node>),
    /// `x in { … }`.
    In(Box<Node>, Vec<Node>),
    /// `exists(NAME)`.
    Exists(Box<Node>),
    /// `( … )`: kept so that messages can tell `!(a) & b` from `!(a & b)`.
    Paren(Box<Node>),
}

const BP_PREFIX: u8 = 11;

fn infix(tok: &Tok) -> Option<(BinOp, u8, u8)> {
    Some(match tok {
        Tok::OrOr => (BinOp::Or, 1, 2),
        Tok::AndAnd => (BinOp::And, 3, 4),
        Tok::EqEq => (BinOp::Eq, 5, 6),
        Tok::Ne => (BinOp::Ne, 5, 6),
        Tok::Lt => (BinOp::Lt, 7, 8),
        Tok::Le => (BinOp::Le, 7, 8),
        Tok::Gt => (BinOp::Gt, 7, 8),
        Tok::Ge => (BinOp::Ge, 7, 8),
        Tok::Amp => (BinOp::BitAnd, 9, 10),
        _ => return None,
    })
}

/// `in` binds as `==` does.
const BP_IN: u8 = 5;

struct Parser<'s> {
    src: &'s str,
    toks: Vec<Token>,
    pos: usize,
}

/// Parses a whole filter.
pub(crate) fn parse(src: &str) -> Result<Node, FilterError> {
    let mut p = Parser {
        src,
        toks: lex(src)?,
        pos: 0,
    };
    if p.peek().tok == Tok::Eof {
        return Err(syntax(p.peek().span, "the filter is empty")
            .help("a filter is a condition, e.g. `syscall.errno == EINVAL`"));
    }
    let node = p.expr(0)?;
    let t = p.peek();
    if t.tok != Tok::Eof {
        let help = match &t.tok {
            Tok::RParen => Some("this `)` closes no `(`".to_owned()),
            Tok::Name(_) | Tok::Int(_) | Tok::Str(_) | Tok::LParen | Tok::Bang => {
                Some("join conditions with `&&` or `||`".to_owned())
            }
            _ => None,
        };
        return Err(syntax(t.span, format!("unexpected {}", t.tok.describe())).help_opt(help));
    }
    Ok(node)
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        &self.toks[self.pos]
    }

    fn next(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if t.tok != Tok::Eof {
            self.pos += 1;
        }
        t
    }

    fn is_keyword(&self, kw: &str) -> bool {
        matches!(&self.peek().tok, Tok::Name(n) if n == kw)
    }

    fn expect(&mut self, tok: &Tok, what: &str) -> Result<Token, FilterError> {
        if &self.peek().tok == tok {
            return Ok(self.next());
        }
        let t = self.peek();
        Err(syntax(
            t.span,
            format!("expected {what}, found {}", t.tok.describe()),
        ))
    }

    fn expr(&mut self, min_bp: u8) -> Result<Node, FilterError> {
        let mut lhs = self.prefix()?;
        loop {
            if self.is_keyword("in") {
                if BP_IN < min_bp {
                    break;
                }
                self.next();
                let (set, end) = self.set()?;
                let span = lhs.span.to(end);
                lhs = Node {
                    kind: Kind::In(Box::new(lhs), set),
                    span,
                };
                continue;
            }
            let Some((op, lbp, rbp)) = infix(&self.peek().tok) else {
                break;
            };
            if lbp < min_bp {
                break;
            }
            let op_tok = self.next();
            let rhs = self.operand(rbp, &op_tok)?;
            let span = lhs.span.to(rhs.span);
            lhs = Node {
                kind: Kind::Bin(op, Box::new(lhs), Box::new(rhs)),
                span,
            };
        }
        Ok(lhs)
    }

    /// The right operand of `op`: a missing one is reported after `op`.
    fn operand(&mut self, bp: u8, op: &Token) -> Result<Node, FilterError> {
        if matches!(
            self.peek().tok,
            Tok::Eof | Tok::RParen | Tok::RBrace | Tok::Comma
        ) || infix(&self.peek().tok).is_some()
        {
            let t = self.peek();
            return Err(syntax(
                t.span,
                format!(
                    "expected an operand after `{}`, found {}",
                    op.tok.symbol(),
                    t.tok.describe()
                ),
            ));
        }
        self.expr(bp)
    }

    fn prefix(&mut self) -> Result<Node, FilterError> {
        let t = self.next();
        let node = |kind, span| Ok(Node { kind, span });
        match t.tok {
            Tok::Bang => {
                let inner = self.operand(BP_PREFIX, &t)?;
                let span = t.span.to(inner.span);
                node(Kind::Not(Box::new(inner)), span)
            }
            Tok::Minus => self.negative(&t),
            Tok::LParen => {
                let inner = self.expr(0)?;
                let close = self.peek().clone();
                if close.tok != Tok::RParen {
                    return Err(syntax(
                        close.span,
                        format!("expected `)`, found {}", close.tok.describe()),
                    )
                    .help(format!(
                        "the `(` at column {} is not closed",
                        self.src[..t.span.start].chars().count() + 1
                    )));
                }
                self.next();
                node(Kind::Paren(Box::new(inner)), t.span.to(close.span))
            }
            Tok::Int(v) => node(Kind::Int(i128::from(v)), t.span),
            Tok::Str(s) => node(Kind::Str(s), t.span),
            Tok::Name(n) => match n.as_str() {
                "true" => node(Kind::Bool(true), t.span),
                "false" => node(Kind::Bool(false), t.span),
                "exists" => self.exists(t.span),
                "in" => Err(syntax(t.span, "`in` needs a field before it")
                    .help("`syscall.errno in {EINVAL, E2BIG}`")),
                _ => node(Kind::Name(n), t.span),
            },
            Tok::LBrace => Err(syntax(t.span, "a set `{…}` needs `in` before it")
                .help("`syscall.errno in {EINVAL, E2BIG}`")),
            _ => Err(syntax(
                t.span,
                format!(
                    "expected a field, a value, `!` or `(`, found {}",
                    t.tok.describe()
                ),
            )),
        }
    }

    /// `-` followed by a number or a name.
    fn negative(&mut self, minus: &Token) -> Result<Node, FilterError> {
        let t = self.next();
        let span = minus.span.to(t.span);
        match t.tok {
            Tok::Int(v) if v <= 1 << 63 => Ok(Node {
                kind: Kind::Int(-i128::from(v)),
                span,
            }),
            Tok::Int(_) => Err(syntax(span, "a negative number below -2^63")),
            Tok::Name(n) if !matches!(n.as_str(), "true" | "false" | "exists" | "in") => Ok(Node {
                kind: Kind::Neg(Box::new(Node {
                    kind: Kind::Name(n),
                    span: t.span,
                })),
                span,
            }),
            other => Err(syntax(
                t.span,
                format!(
                    "expected a number or an errno name after `-`, found {}",
                    other.describe()
                ),
            )),
        }
    }

    fn exists(&mut self, kw: Span) -> Result<Node, FilterError> {
        self.expect(&Tok::LParen, "`(` after `exists`")?;
        let t = self.next();
        let Tok::Name(n) = t.tok else {
            return Err(syntax(
                t.span,
                format!(
                    "expected a field name in `exists(…)`, found {}",
                    t.tok.describe()
                ),
            ));
        };
        let close = self.expect(&Tok::RParen, "`)` after the field")?;
        Ok(Node {
            kind: Kind::Exists(Box::new(Node {
                kind: Kind::Name(n),
                span: t.span,
            })),
            span: kw.to(close.span),
        })
    }

    /// `{ elem, … }` after `in`; returns the elements and the span of `}`.
    fn set(&mut self) -> Result<(Vec<Node>, Span), FilterError> {
        let open = self.expect(&Tok::LBrace, "`{` after `in`")?;
        let mut elems = Vec::new();
        loop {
            if self.peek().tok == Tok::RBrace {
                let close = self.next();
                if elems.is_empty() {
                    return Err(syntax(
                        open.span.to(close.span),
                        "an empty set matches nothing",
                    ));
                }
                return Ok((elems, close.span));
            }
            // Elements are values: no operator binds inside them.
            elems.push(self.expr(BP_PREFIX)?);
            match self.peek().tok {
                Tok::Comma => {
                    self.next();
                }
                Tok::RBrace => {}
                _ => {
                    let t = self.peek();
                    return Err(syntax(
                        t.span,
                        format!(
                            "expected `,` or `}}` in the set, found {}",
                            t.tok.describe()
                        ),
                    ));
                }
            }
        }
    }
}

impl Node {
    /// The node fully parenthesized, with names as written: how the
    /// filter groups (`a || b && c` is `(a || (b && c))`).
    pub(crate) fn canonical(&self) -> String {
        let mut s = String::new();
        self.write(&mut s);
        s
    }

    fn write(&self, s: &mut String) {
        match &self.kind {
            Kind::Name(n) => s.push_str(n),
            Kind::Int(v) => {
                let _ = write!(s, "{v}");
            }
            Kind::Str(v) => {
                let _ = write!(s, "{v:?}");
            }
            Kind::Bool(b) => {
                let _ = write!(s, "{b}");
            }
            Kind::Neg(n) => {
                s.push('-');
                n.write(s);
            }
            Kind::Not(n) => {
                s.push('!');
                n.write(s);
            }
            Kind::Paren(n) => n.write(s),
            Kind::Bin(op, a, b) => {
                s.push('(');
                a.write(s);
                let _ = write!(s, " {} ", op.symbol());
                b.write(s);
                s.push(')');
            }
            Kind::In(a, set) => {
                s.push('(');
                a.write(s);
                s.push_str(" in {");
                for (i, e) in set.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    e.write(s);
                }
                s.push_str("})");
            }
            Kind::Exists(n) => {
                s.push_str("exists(");
                n.write(s);
                s.push(')');
            }
        }
    }

    /// The node without enclosing parentheses.
    pub(crate) fn unparen(&self) -> &Node {
        match &self.kind {
            Kind::Paren(n) => n.unparen(),
            _ => self,
        }
    }
}
