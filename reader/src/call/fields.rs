//! [`CALL_FIELDS`]: every key of a call line, in the JSON output's
//! order, with its type, named constants, meaning and accessor.

use std::borrow::Cow;
use std::sync::LazyLock;

use antinomie_abi as abi;

use super::{Call, CALL_STATES, CAPTURE_FLAGS, CAPTURE_STATUS};
use crate::decode::names::{self, Names};
use crate::decode::AttrView;
use crate::syscall::{ArgDecode, PERF_EVENT_OPEN};

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
    /// A bit set shown as one string, as [`names::format_flags`] renders
    /// it with this comment for unknown bits.
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

/// One record key of a call line.
#[derive(Debug, Clone, Copy)]
pub struct CallField {
    /// The key, e.g. `syscall.errno`.
    pub key: &'static str,
    /// Its type.
    pub ty: FieldType,
    /// Its named constants.
    pub constants: Constants,
    /// What it means.
    pub doc: &'static str,
    /// Its value for a call.
    pub get: for<'a> fn(&'a Call) -> Value<'a>,
}

fn opt_u64(v: Option<u64>) -> Value<'static> {
    v.map_or(Value::Null, Value::U64)
}

fn opt_i64(v: Option<i64>) -> Value<'static> {
    v.map_or(Value::Null, Value::I64)
}

fn opt_bool(v: Option<bool>) -> Value<'static> {
    v.map_or(Value::Null, Value::Bool)
}

fn capture_field(c: &Call, f: impl Fn(&abi::Capture) -> Value<'static>) -> Value<'static> {
    c.attr_capture().map_or(Value::Null, |cap| f(&cap.header))
}

macro_rules! arg_word {
    ($i:literal) => {
        CallField {
            key: concat!("args.", $i),
            ty: FieldType::U64,
            constants: Constants::None,
            doc: concat!("argument word ", $i, " as the syscall received it"),
            get: |c| opt_u64(c.arg($i)),
        }
    };
}

/// The keys before the arguments' fields: the header's and the raw
/// argument words.
static HEAD_FIELDS: &[CallField] = &[
    CallField {
        key: "event",
        ty: FieldType::Str,
        constants: Constants::None,
        doc: "\"call\" for a call line",
        get: |_| Value::Str(Cow::Borrowed("call")),
    },
    CallField {
        key: "state",
        ty: FieldType::Str,
        constants: Constants::Table(CALL_STATES),
        doc: "complete, unfinished (no EXIT), entry_lost (ENTRY dropped) or entry_missing (ENTRY not seen)",
        get: |c| Value::Str(Cow::Borrowed(c.state.as_str())),
    },
    CallField {
        key: "time_ns",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "CLOCK_MONOTONIC time of the ENTRY (of the EXIT without ENTRY)",
        get: |c| Value::U64(c.time_ns()),
    },
    CallField {
        key: "cpu",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "CPU of the ENTRY (of the EXIT without ENTRY)",
        get: |c| Value::U64(u64::from(c.cpu())),
    },
    CallField {
        key: "exit_cpu",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "CPU of the EXIT (the task may migrate)",
        get: |c| opt_u64(c.exit_cpu().map(u64::from)),
    },
    CallField {
        key: "pid",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "thread-group id of the caller (initial pid namespace)",
        get: |c| Value::U64(u64::from(c.header().pid)),
    },
    CallField {
        key: "tid",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "thread id of the caller (initial pid namespace)",
        get: |c| Value::U64(u64::from(c.header().tid)),
    },
    CallField {
        key: "call_id",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "the kernel's per-call id shared by ENTRY and EXIT",
        get: |c| Value::U64(c.call_id),
    },
    CallField {
        key: "syscall.nr",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "the syscall number, unmasked (298 on x86-64, 336 from ia32, 0x4000012a from x32)",
        get: |c| Value::U64(u64::from(c.header().syscall_nr)),
    },
    CallField {
        key: "compat",
        ty: FieldType::Bool,
        constants: Constants::None,
        doc: "the call came through a compat (ia32/x32) entry",
        get: |c| Value::Bool(c.compat()),
    },
    arg_word!(0),
    arg_word!(1),
    arg_word!(2),
    arg_word!(3),
    arg_word!(4),
    arg_word!(5),
];

/// The keys after the arguments' fields: the capture's and the result's.
static TAIL_FIELDS: &[CallField] = &[
    CallField {
        key: "arg0.status",
        ty: FieldType::Str,
        constants: Constants::Table(CAPTURE_STATUS),
        doc: "how the attr capture at entry went: complete, null_ptr, fault, truncated, invalid_size, not_applicable",
        get: |c| {
            capture_field(c, |h| {
                Value::Str(names::lookup(CAPTURE_STATUS, u64::from(h.status)).map_or_else(
                    || Cow::Owned(format!("status_{}", h.status)),
                    Cow::Borrowed,
                ))
            })
        },
    },
    CallField {
        key: "arg0.capture_flags",
        ty: FieldType::Names,
        constants: Constants::Table(CAPTURE_FLAGS),
        doc: "tail_zero / tail_nonzero (bytes beyond 136), size_fault, kernel_copy",
        get: |c| capture_field(c, |h| Value::Bits(CAPTURE_FLAGS, u64::from(h.flags))),
    },
    CallField {
        key: "arg0.declared_size",
        ty: FieldType::U64,
        constants: Constants::Table(names::PERF_ATTR_SIZE),
        doc: "the attr's size field as read at entry (0 means 64)",
        get: |c| capture_field(c, |h| Value::U64(u64::from(h.declared_size))),
    },
    CallField {
        key: "arg0.copied_len",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "bytes of the attr captured",
        get: |c| capture_field(c, |h| Value::U64(u64::from(h.copied_len))),
    },
    CallField {
        key: "arg0.fault_offset",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "with status fault: offset of the first unreadable byte",
        get: |c| {
            capture_field(c, |h| {
                if h.status == abi::STATUS_FAULT {
                    Value::U64(u64::from(h.fault_offset))
                } else {
                    Value::Null
                }
            })
        },
    },
    CallField {
        key: "arg0.perf_event_attr",
        ty: FieldType::Attr,
        constants: Constants::None,
        doc: "the captured attr: its present, applicable members (fields args.attr_uptr.<member>)",
        get: |c| c.attr().map_or(Value::Null, Value::Attr),
    },
    CallField {
        key: "arg0.perf_event_attr_names",
        ty: FieldType::Attr,
        constants: Constants::None,
        doc: "the captured attr's symbolic members by name (as the text output shows them)",
        get: |c| c.attr().map_or(Value::Null, Value::AttrNames),
    },
    CallField {
        key: "arg0.required_size",
        ty: FieldType::U64,
        constants: Constants::Table(names::PERF_ATTR_SIZE),
        doc: "after E2BIG: attr_uptr->size read back (136 when the kernel wrote it)",
        get: |c| opt_u64(c.required_size().map(u64::from)),
    },
    CallField {
        key: "arg0.size_written",
        ty: FieldType::Bool,
        constants: Constants::None,
        doc: "the E2BIG came from perf_copy_attr(), which writes size back",
        get: |c| opt_bool(c.size_written()),
    },
    CallField {
        key: "arg0.attr_copied",
        ty: FieldType::Bool,
        constants: Constants::None,
        doc: "perf_copy_attr() succeeded and its copy was compared with the capture",
        get: |c| opt_bool(c.attr_copied()),
    },
    CallField {
        key: "arg0.double_fetch",
        ty: FieldType::Bool,
        constants: Constants::None,
        doc: "user memory changed between the capture and the kernel's copy",
        get: |c| opt_bool(c.double_fetch()),
    },
    CallField {
        key: "arg0.kernel_attr",
        ty: FieldType::Attr,
        constants: Constants::None,
        doc: "after a double fetch: the attr bytes the kernel read, before perf_copy_attr() rewrites any",
        get: |c| c.kernel_attr().map_or(Value::Null, Value::Attr),
    },
    CallField {
        key: "ret",
        ty: FieldType::I64,
        constants: Constants::NegErrno,
        doc: "the raw return value: a new fd, or a negative errno",
        get: |c| opt_i64(c.ret()),
    },
    CallField {
        key: "syscall.errno",
        ty: FieldType::U64,
        constants: Constants::Errno,
        doc: "the positive errno of a failed call; null on success",
        get: |c| opt_u64(c.errno()),
    },
    CallField {
        key: "syscall.errno_name",
        ty: FieldType::Str,
        constants: Constants::Errno,
        doc: "syscall.errno by name",
        get: |c| {
            c.errno().map_or(Value::Null, |e| {
                let name = u32::try_from(e).ok().and_then(names::errno).map(|e| e.name);
                Value::Str(name.map_or_else(|| Cow::Owned(format!("E{e}")), Cow::Borrowed))
            })
        },
    },
    CallField {
        key: "syscall.success",
        ty: FieldType::Bool,
        constants: Constants::None,
        doc: "the call returned a file descriptor",
        get: |c| opt_bool(c.success()),
    },
    CallField {
        key: "syscall.duration_ns",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "time in the syscall as the kernel measured it: exit time_ns minus entry time_ns",
        get: |c| opt_u64(c.duration_ns()),
    },
    CallField {
        key: "exit_maybe_lost",
        ty: FieldType::Bool,
        constants: Constants::None,
        doc: "unfinished, and a LOST record's call id range holds its id, with records dropped at or after its ENTRY's time",
        get: |c| Value::Bool(c.exit_maybe_lost),
    },
];

/// Every key of a call line, in output order: the header's, the raw
/// argument words, each argument's field as the syscall's rule table
/// ([`crate::syscall`]) decodes it (and a flag argument's names), then
/// the capture's and the result's.
pub static CALL_FIELDS: LazyLock<Vec<CallField>> = LazyLock::new(|| {
    const _: () = assert!(PERF_EVENT_OPEN.args.len() <= ARG_FIELD.len());
    let mut fields = HEAD_FIELDS.to_vec();
    for (i, arg) in PERF_EVENT_OPEN.args.iter().enumerate() {
        fields.push(CallField {
            key: arg.field,
            ty: arg.field_type(),
            constants: arg.constants(),
            doc: arg.field_doc,
            get: ARG_FIELD[i],
        });
        if let ArgDecode::Flags {
            names_field,
            names_doc,
            ..
        } = arg.decode
        {
            fields.push(CallField {
                key: names_field,
                ty: FieldType::Str,
                constants: Constants::None,
                doc: names_doc,
                get: ARG_NAMES[i],
            });
        }
    }
    fields.extend_from_slice(TAIL_FIELDS);
    fields
});

/// Argument `I`'s field, as its rule decodes it (the table the keys
/// were built from).
fn arg_field<const I: usize>(c: &Call) -> Value<'_> {
    PERF_EVENT_OPEN.args[I].value(c.arg(I))
}

/// A flag argument `I`'s bits by name.
fn arg_names<const I: usize>(c: &Call) -> Value<'_> {
    match (PERF_EVENT_OPEN.args[I].decode, c.arg(I)) {
        (ArgDecode::Flags { names, unknown, .. }, Some(w)) => Value::Flags(names, w, unknown),
        _ => Value::Null,
    }
}

type Getter = for<'a> fn(&'a Call) -> Value<'a>;

/// [`arg_field`] and [`arg_names`] for each of the six argument words.
static ARG_FIELD: [Getter; 6] = [
    arg_field::<0>,
    arg_field::<1>,
    arg_field::<2>,
    arg_field::<3>,
    arg_field::<4>,
    arg_field::<5>,
];
static ARG_NAMES: [Getter; 6] = [
    arg_names::<0>,
    arg_names::<1>,
    arg_names::<2>,
    arg_names::<3>,
    arg_names::<4>,
    arg_names::<5>,
];

/// The keys the compact JSON schema (`--json-schema compact`) leaves out
/// because another key of the same line holds the same information, each
/// with that key: the exact duplicates of `perf_event_open`'s argument words
/// and the symbolic renderings of numbers. The compact line also leaves
/// out `null` values and writes `arg0.perf_event_attr` as one key per
/// non-zero member (see [`COMPACT_ATTR_KEY`]).
pub static COMPACT_OMITTED: LazyLock<Vec<(&str, &str)>> = LazyLock::new(|| {
    let args = PERF_EVENT_OPEN.args;
    // A pointer's or a flag word's field is the raw word itself.
    let words = args.iter().enumerate().filter_map(|(i, a)| match a.decode {
        ArgDecode::CapturedPointer | ArgDecode::Flags { .. } => Some((ARG_WORD_KEYS[i], a.field)),
        ArgDecode::Int => None,
    });
    let names = args.iter().filter_map(|a| match a.decode {
        ArgDecode::Flags { names_field, .. } => Some((names_field, a.field)),
        _ => None,
    });
    words
        .chain(names)
        .chain([
            ("arg0.perf_event_attr_names", "arg0.perf_event_attr"),
            ("syscall.errno_name", "syscall.errno"),
        ])
        .collect()
});

/// The raw argument words' keys.
const ARG_WORD_KEYS: [&str; 6] = ["args.0", "args.1", "args.2", "args.3", "args.4", "args.5"];

/// The key whose object the compact JSON schema writes member by member,
/// each as its filter field `args.attr_uptr.<member>`, non-zero members
/// only.
pub const COMPACT_ATTR_KEY: &str = "arg0.perf_event_attr";

/// The call field with this key.
#[must_use]
pub fn call_field(key: &str) -> Option<&'static CallField> {
    CALL_FIELDS.iter().find(|f| f.key == key)
}
