//! The vocabulary of a record key, shared by the syscall table
//! ([`crate::syscall`], which says how each argument is decoded) and the
//! call ([`crate::call`], which holds the values): a key's value, its type
//! and its named constants. It sits below both, so that neither needs the
//! other's internals to speak of a field.

use std::borrow::Cow;

use crate::decode::names::Names;
use crate::decode::AttrView;

/// A field's value, as the JSON output prints it.
#[derive(Debug, Clone)]
pub enum Value<'a> {
    /// Absent: JSON `null`.
    Null,
    /// An unsigned number.
    U64(u64),
    /// A signed number.
    I64(i64),
    /// A boolean.
    Bool(bool),
    /// A string.
    Str(Cow<'a, str>),
    /// A bit set shown as a list of names: the names of its known bits
    /// in table order, then the unknown bits in hex (if any).
    Bits(Names, u64),
    /// A bit set shown as one string, as
    /// [`crate::decode::names::format_flags`] renders it with this comment
    /// for unknown bits.
    Flags(Names, u64, &'static str),
    /// A decoded attr: an object of its present, applicable members'
    /// values.
    Attr(AttrView<'a>),
    /// A decoded attr: an object of its symbolic members' names.
    AttrNames(AttrView<'a>),
}

/// The type of a field, for docs and the filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// Unsigned integer.
    U64,
    /// Signed integer.
    I64,
    /// Boolean.
    Bool,
    /// String.
    Str,
    /// List of names.
    Names,
    /// The attr object (members are fields `args.attr_uptr.<member>`).
    Attr,
}

/// Which symbolic constants a field's values take (for the filter).
#[derive(Debug, Clone, Copy)]
pub enum Constants {
    /// None.
    None,
    /// Errno names (`E2BIG`, …) of [`crate::decode::ERRNO`], as the
    /// positive errno (or, for a string field, the name itself).
    Errno,
    /// Errno names negated (`-E2BIG`), as the raw return value holds them.
    NegErrno,
    /// Names of this table.
    Table(Names),
}
