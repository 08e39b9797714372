// SPDX-License-Identifier: GPL-2.0-only
//! The filter's fields, derived from the reader's tables: every record
//! key of a call line of any syscall of [`SYSCALLS`] ([`call_fields`]) and
//! `args.attr_uptr.<member>` for every entry of [`ATTR_MEMBERS`]. Nothing
//! here lists a field by hand: a key added to either table is a filter
//! field, with the type, constants and meaning the table gives it. A key
//! that a call's syscall does not have is absent from that call.

use std::sync::OnceLock;

use crate::call::{call_fields, Call, CallField};
use crate::decode::names::{self, Names};
use crate::decode::{errno_by_name, AttrMember, Repr, ATTR_KEY_PREFIX, ATTR_MEMBERS, ERRNO};
use crate::field::{Constants, FieldType};
use crate::syscall::{Syscall, SYSCALLS};

/// The type of a field's values, as the filter sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    /// An unsigned integer.
    Unsigned,
    /// A signed integer.
    Signed,
    /// An unsigned integer holding named bits (`PERF_SAMPLE_*`, the
    /// capture flags): test them with `&`.
    Bits,
    /// `true` or `false`.
    Bool,
    /// A string.
    Str,
    /// An object (the captured attr as a whole): only `exists()` applies;
    /// its members are fields of their own.
    Object,
}

impl Type {
    /// The type's name in docs and messages.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Type::Unsigned => "unsigned",
            Type::Signed => "signed",
            Type::Bits => "bits",
            Type::Bool => "bool",
            Type::Str => "string",
            Type::Object => "object",
        }
    }

    /// The type with an article, for messages.
    pub(crate) fn described(self) -> &'static str {
        match self {
            Type::Unsigned => "an unsigned integer",
            Type::Signed => "a signed integer",
            Type::Bits => "a bit set",
            Type::Bool => "a bool",
            Type::Str => "a string",
            Type::Object => "an object",
        }
    }
}

/// The named constants a field's values take.
#[derive(Debug, Clone, Copy)]
pub enum ConstSet {
    /// None: numbers (or strings) only.
    None,
    /// Errno names as the positive errno (`syscall.errno == EINVAL`), or as
    /// the name for a string field.
    Errno,
    /// Errno names negated, as the raw return holds them
    /// (`ret == -EINVAL`).
    NegErrno,
    /// The names of a table: their values for an integer field, the names
    /// themselves for a string field.
    Table(Names),
    /// `PERF_COUNT_HW_*`, `PERF_COUNT_SW_*` and the `PERF_COUNT_HW_CACHE_*`
    /// parts, for `config`: each also requires its `type`.
    Config,
}

/// What a `config` constant selects: `type == ty && config & mask == value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigConst {
    /// The `PERF_TYPE_*` the name belongs to.
    pub ty: u64,
    /// The bits of `config` it constrains.
    pub mask: u64,
    /// Their value.
    pub value: u64,
}

/// A constant's value for a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConstValue {
    /// A number.
    Int(i128),
    /// A string (for string fields).
    Str(&'static str),
    /// A `config` selector.
    Config(ConfigConst),
}

/// The config tables: (table, type, mask, shift).
const CONFIG_TABLES: [(Names, u64, u64, u32); 5] = [
    (names::PERF_HW_ID, names::TYPE_HARDWARE, 0xffff_ffff, 0),
    (names::PERF_SW_ID, names::TYPE_SOFTWARE, u64::MAX, 0),
    (names::PERF_HW_CACHE_ID, names::TYPE_HW_CACHE, 0xff, 0),
    (names::PERF_HW_CACHE_OP, names::TYPE_HW_CACHE, 0xff00, 8),
    (
        names::PERF_HW_CACHE_RESULT,
        names::TYPE_HW_CACHE,
        0xff_0000,
        16,
    ),
];

/// Errno aliases that [`errno_by_name`] accepts besides the table's names.
const ERRNO_ALIASES: [&str; 3] = ["EWOULDBLOCK", "EDEADLOCK", "ENOTSUP"];

impl ConstSet {
    /// Whether the field takes any named constant.
    #[must_use]
    pub fn is_some(self) -> bool {
        !matches!(self, ConstSet::None)
    }

    /// Every name it takes (errno names without the minus sign).
    #[must_use]
    pub fn names(self) -> Vec<&'static str> {
        match self {
            ConstSet::None => Vec::new(),
            ConstSet::Errno | ConstSet::NegErrno => {
                ERRNO.iter().map(|e| e.name).chain(ERRNO_ALIASES).collect()
            }
            ConstSet::Table(t) => t.iter().map(|(_, n)| *n).collect(),
            ConstSet::Config => CONFIG_TABLES
                .iter()
                .flat_map(|(t, ..)| t.iter().map(|(_, n)| *n))
                .collect(),
        }
    }

    /// The value of `name` for a field of type `ty`, written with a minus
    /// sign or not; `None` when the field does not take the name (with or
    /// without the sign: see [`ConstSet::takes`]).
    pub(crate) fn resolve(self, name: &str, negated: bool, ty: Type) -> Option<ConstValue> {
        match self {
            ConstSet::None => None,
            ConstSet::Errno | ConstSet::NegErrno => {
                let e = errno_by_name(name)?;
                let neg = matches!(self, ConstSet::NegErrno);
                if neg != negated {
                    return None;
                }
                Some(if ty == Type::Str {
                    ConstValue::Str(e.name)
                } else if neg {
                    ConstValue::Int(-i128::from(e.value))
                } else {
                    ConstValue::Int(i128::from(e.value))
                })
            }
            ConstSet::Table(t) => {
                if negated {
                    return None;
                }
                let &(value, name) = t.iter().find(|(_, n)| *n == name)?;
                Some(if ty == Type::Str {
                    ConstValue::Str(name)
                } else {
                    ConstValue::Int(i128::from(value))
                })
            }
            ConstSet::Config => {
                if negated {
                    return None;
                }
                CONFIG_TABLES.iter().find_map(|&(t, ty, mask, shift)| {
                    names::value_of(t, name).map(|v| {
                        ConstValue::Config(ConfigConst {
                            ty,
                            mask,
                            value: v << shift,
                        })
                    })
                })
            }
        }
    }

    /// Whether the field takes `name`, signed or not.
    pub(crate) fn takes(self, name: &str) -> bool {
        match self {
            ConstSet::None => false,
            ConstSet::Errno | ConstSet::NegErrno => errno_by_name(name).is_some(),
            ConstSet::Table(t) => names::value_of(t, name).is_some(),
            ConstSet::Config => CONFIG_TABLES
                .iter()
                .any(|(t, ..)| names::value_of(t, name).is_some()),
        }
    }

    /// A short description: `PERF_FLAG_*`, `-E* (errno names, negated)`,
    /// or the names themselves when there are few.
    #[must_use]
    pub fn describe(self) -> String {
        match self {
            ConstSet::None => String::new(),
            ConstSet::Errno => "errno names: EINVAL, E2BIG, …".to_owned(),
            ConstSet::NegErrno => "negated errno names: -EINVAL, -E2BIG, …".to_owned(),
            ConstSet::Table(t) => family(t),
            ConstSet::Config => "PERF_COUNT_HW_* (with PERF_TYPE_HARDWARE), PERF_COUNT_SW_* (with PERF_TYPE_SOFTWARE), PERF_COUNT_HW_CACHE_{<cache>,OP_*,RESULT_*} (with PERF_TYPE_HW_CACHE)".to_owned(),
        }
    }
}

/// `PREFIX_*` for a table whose names share a prefix, else the names.
fn family(t: Names) -> String {
    let names: Vec<&str> = t.iter().map(|(_, n)| *n).collect();
    let Some(first) = names.first() else {
        return String::new();
    };
    let mut prefix = *first;
    for n in &names[1..] {
        let common = prefix
            .char_indices()
            .zip(n.chars())
            .take_while(|((_, a), b)| a == b)
            .count();
        prefix = &prefix[..common];
    }
    // Stop at a word boundary: PERF_ATTR_SIZE_VER0..8 is PERF_ATTR_SIZE_VER*.
    if names.len() > 4 && prefix.len() >= 3 {
        format!("{prefix}*")
    } else {
        names.join(", ")
    }
}

/// Whether every name of `t` is one distinct bit.
#[must_use]
pub fn is_bit_table(t: Names) -> bool {
    t.len() > 1
        && t.iter().all(|(v, _)| v.is_power_of_two())
        && t.iter().fold(0u64, |acc, (v, _)| acc | v).count_ones() as usize == t.len()
}

/// Where a field's value comes from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A call-level key: for each syscall whose call line has it, its
    /// field there ([`call_fields`]).
    Call(Vec<(&'static Syscall, &'static CallField)>),
    /// A member of the captured attr.
    Attr(&'static AttrMember),
}

impl Source {
    /// The call-level field of `call`'s syscall, `None` when its line has
    /// no such key (or the field is an attr member).
    #[must_use]
    pub fn call_field(&self, call: &Call) -> Option<&'static CallField> {
        let Source::Call(by_syscall) = self else {
            return None;
        };
        let syscall = call.syscall();
        by_syscall
            .iter()
            .find(|(s, _)| std::ptr::eq(*s, syscall))
            .map(|(_, f)| *f)
    }
}

/// One filter field.
#[derive(Debug, Clone)]
pub struct Field {
    /// The name, as in the JSON output: `syscall.errno`,
    /// `args.attr_uptr.sample_type`.
    pub key: String,
    /// The type of its values.
    pub ty: Type,
    /// The named constants it takes.
    pub constants: ConstSet,
    /// What it means.
    pub doc: String,
    /// Where its value comes from.
    pub source: Source,
    /// The largest value it holds, for members narrower than 64 bits.
    pub max: Option<u64>,
}

impl Field {
    /// The filter field of key `f.key`, typed and documented as `f`, held
    /// by the lines of the syscalls of `by_syscall`.
    fn call(
        f: &'static CallField,
        by_syscall: Vec<(&'static Syscall, &'static CallField)>,
    ) -> Self {
        let ty = match f.ty {
            // An unsigned word whose names are single bits is a bit set.
            FieldType::U64 if matches!(f.constants, Constants::Table(t) if is_bit_table(t)) => {
                Type::Bits
            }
            FieldType::U64 => Type::Unsigned,
            FieldType::I64 => Type::Signed,
            FieldType::Bool => Type::Bool,
            FieldType::Str => Type::Str,
            FieldType::Names => Type::Bits,
            FieldType::Attr => Type::Object,
        };
        let constants = match f.constants {
            Constants::None => ConstSet::None,
            Constants::Errno => ConstSet::Errno,
            Constants::NegErrno => ConstSet::NegErrno,
            Constants::Table(t) => ConstSet::Table(t),
        };
        Field {
            key: f.key.to_owned(),
            ty,
            constants,
            doc: f.doc.to_owned(),
            source: Source::Call(by_syscall),
            max: None,
        }
    }

    fn attr(m: &'static AttrMember) -> Self {
        let ty = match m.repr {
            Repr::Bit if m.bits.is_some_and(|(_, len)| len == 1) => Type::Bool,
            Repr::Signed | Repr::SignedEnum(..) => Type::Signed,
            Repr::Flags(..) => Type::Bits,
            _ => Type::Unsigned,
        };
        let constants = match m.repr {
            Repr::Config => ConstSet::Config,
            r => r.names().map_or(ConstSet::None, ConstSet::Table),
        };
        let doc = m.doc.to_owned();
        let max = m.mask() >> m.bits.map_or(0, |(shift, _)| shift);
        let signed_max = if ty == Type::Signed { None } else { Some(max) };
        Field {
            key: m.key(),
            ty,
            constants,
            doc,
            source: Source::Attr(m),
            max: signed_max.filter(|&m| m != u64::MAX),
        }
    }

    /// The attr member behind an `args.attr_uptr.<member>` field.
    #[must_use]
    pub fn member(&self) -> Option<&'static AttrMember> {
        match self.source {
            Source::Attr(m) => Some(m),
            Source::Call(_) => None,
        }
    }

    /// For an attr member: when it is present, in words (its first byte
    /// must have been captured; whole from its `PERF_ATTR_SIZE_VER*`).
    #[must_use]
    pub fn presence(&self) -> Option<String> {
        let m = self.member()?;
        let ver = names::lookup(names::PERF_ATTR_SIZE, u64::from(m.since)).unwrap_or("?");
        let mut s = if m.offset == 0 {
            format!("whenever an attr was captured ({ver})")
        } else {
            format!("captured size > {} (whole from {ver})", m.offset)
        };
        if let Some(cond) = m.applies.condition() {
            s.push_str(", and ");
            s.push_str(cond);
        }
        Some(s)
    }

    /// The range of values a signed member holds, for members narrower
    /// than 64 bits.
    pub(crate) fn signed_range(&self) -> Option<(i128, i128)> {
        let m = self.member()?;
        if self.ty != Type::Signed || m.width >= 8 {
            return None;
        }
        let bits = u32::try_from(m.width * 8).unwrap_or(64);
        let half = 1i128 << (bits - 1);
        Some((-half, half - 1))
    }
}

/// The filter's fields, and how many of them are call-level keys (the
/// attr members follow them).
struct AllFields {
    list: Vec<Field>,
    calls: usize,
}

fn all() -> &'static AllFields {
    static FIELDS: OnceLock<AllFields> = OnceLock::new();
    FIELDS.get_or_init(|| {
        let mut list: Vec<Field> = Vec::new();
        for &sc in SYSCALLS {
            for f in call_fields(sc) {
                if list.iter().any(|g| g.key == f.key) {
                    continue;
                }
                let by_syscall = SYSCALLS
                    .iter()
                    .filter_map(|&s| {
                        call_fields(s)
                            .iter()
                            .find(|g| g.key == f.key)
                            .map(|g| (s, g))
                    })
                    .collect();
                list.push(Field::call(f, by_syscall));
            }
        }
        let calls = list.len();
        if SYSCALLS.iter().any(|sc| sc.capture_keys().is_some()) {
            list.extend(ATTR_MEMBERS.iter().map(Field::attr));
        }
        AllFields { list, calls }
    })
}

/// Every filter field: the keys of every syscall's call line
/// ([`call_fields`]), in the output order of the first syscall that has
/// each, then `args.attr_uptr.<member>` for every member of
/// [`ATTR_MEMBERS`] in declaration order.
#[must_use]
pub fn fields() -> &'static [Field] {
    &all().list
}

/// The filter fields of a call line of `sc`: its keys in output order,
/// then the attr members when it captures an attr.
#[must_use]
pub fn fields_of(sc: &'static Syscall) -> Vec<&'static Field> {
    let all = all();
    let calls = call_fields(sc)
        .iter()
        .filter_map(|f| all.list[..all.calls].iter().find(|g| g.key == f.key));
    let members = all.list[all.calls..]
        .iter()
        .filter(|_| sc.capture_keys().is_some());
    calls.chain(members).collect()
}

/// The field with this name.
#[must_use]
pub fn field(key: &str) -> Option<&'static Field> {
    let all = all();
    if key.starts_with(ATTR_KEY_PREFIX) {
        return crate::decode::member_by_key(key).and_then(|m| {
            ATTR_MEMBERS
                .iter()
                .position(|x| std::ptr::eq(x, m))
                .and_then(|i| all.list.get(all.calls + i))
        });
    }
    all.list[..all.calls].iter().find(|f| f.key == key)
}

/// The fields that take `name` as a constant (with or without a minus
/// sign).
pub(crate) fn owners(name: &str) -> Vec<&'static Field> {
    fields()
        .iter()
        .filter(|f| f.constants.takes(name))
        .collect()
}
