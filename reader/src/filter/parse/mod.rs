// SPDX-License-Identifier: GPL-2.0-only
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

mod lex;

use self::lex::{lex, Tok, Token};
use super::error::{ErrorKind, FilterError, Span};

fn syntax(span: Span, msg: impl Into<String>) -> FilterError {
    FilterError::new(ErrorKind::Syntax, span, msg)
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
