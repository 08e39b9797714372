// SPDX-License-Identifier: GPL-2.0-only
//! The record keys of a call line, made from its syscall's row of the
//! table ([`crate::syscall::SYSCALLS`]): in the JSON output's order, each
//! with its type, named constants, meaning and accessor.

use std::borrow::Cow;

use antinomie_abi as abi;

use super::{Call, CALL_STATES};
use crate::decode::names;
use crate::field::{fault_offset, Constants, FieldType, Value, CAPTURE_FLAGS, CAPTURE_STATUS};
use crate::syscall::{ArgDecode, CaptureKeys, ExitCheck, PerSyscall, Syscall};

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
        doc: "complete, unfinished (no EXIT), entry_lost (ENTRY dropped), entry_missing (ENTRY not seen), entry_gone (ENTRY in rings replaced or freed during the call) or entry_read_earlier (ENTRY read by a reader before this one)",
        get: |c| Value::Str(Cow::Borrowed(c.state.as_str())),
    },
    CallField {
        key: "time_ns",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "CLOCK_MONOTONIC time the call began, the ENTRY's start_ns (without ENTRY: the EXIT's time minus the duration, the same instant)",
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

/// The capture's keys of a captured pointer (`keys`), in output order.
fn capture_fields(keys: &'static CaptureKeys) -> [CallField; 7] {
    [
        CallField {
            key: keys.status,
            ty: FieldType::Str,
            constants: Constants::Table(CAPTURE_STATUS),
            doc: "how the kernel's read of the attr went: complete, null_ptr, fault, truncated, invalid_size, not_applicable",
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
            key: keys.capture_flags,
            ty: FieldType::Names,
            constants: Constants::Table(CAPTURE_FLAGS),
            doc: "tail_zero / tail_nonzero (bytes beyond 136), size_fault (the size word could not be read)",
            get: |c| capture_field(c, |h| Value::Bits(CAPTURE_FLAGS, u64::from(h.flags))),
        },
        CallField {
            key: keys.declared_size,
            ty: FieldType::U64,
            constants: Constants::Table(names::PERF_ATTR_SIZE),
            doc: "the size the kernel used: the attr's size field, 0 taken as 64 (0 when the field could not be read)",
            get: |c| capture_field(c, |h| Value::U64(u64::from(h.declared_size))),
        },
        CallField {
            key: keys.copied_len,
            ty: FieldType::U64,
            constants: Constants::None,
            doc: "bytes of the kernel's copy of the attr captured",
            get: |c| capture_field(c, |h| Value::U64(u64::from(h.copied_len))),
        },
        CallField {
            key: keys.fault_offset,
            ty: FieldType::U64,
            constants: Constants::None,
            doc: "with status fault: offset of the first unreadable byte where the kernel reports it (4 with size_fault); null where it does not (a fault of copy_struct_from_user())",
            get: |c| capture_field(c, |h| opt_u64(fault_offset(h).map(u64::from))),
        },
        CallField {
            key: keys.decoded,
            ty: FieldType::Attr,
            constants: Constants::None,
            doc: "the captured attr: its present, applicable members (fields args.attr_uptr.<member>)",
            get: |c| c.attr().map_or(Value::Null, Value::Attr),
        },
        CallField {
            key: keys.decoded_names,
            ty: FieldType::Attr,
            constants: Constants::None,
            doc: "the captured attr's symbolic members by name (as the text output shows them)",
            get: |c| c.attr().map_or(Value::Null, Value::AttrNames),
        },
    ]
}

/// The keys of [`ExitCheck::SizeWriteBack`] of a captured pointer.
fn size_write_back_fields(keys: &'static CaptureKeys) -> [CallField; 2] {
    [
        CallField {
            key: keys.required_size,
            ty: FieldType::U64,
            constants: Constants::Table(names::PERF_ATTR_SIZE),
            doc: "after E2BIG from perf_copy_attr()'s size checks: the size the kernel stored (or tried to) into attr_uptr->size",
            get: |c| opt_u64(c.required_size().map(u64::from)),
        },
        CallField {
            key: keys.size_written,
            ty: FieldType::Bool,
            constants: Constants::None,
            doc: "the kernel wrote size back: an E2BIG from perf_copy_attr()'s size checks whose store did not fault (required_size set and this false: the store faulted)",
            get: |c| opt_bool(c.size_written()),
        },
    ]
}

/// The key of [`ExitCheck::AttrCopied`] of a captured pointer.
fn attr_copied_field(keys: &'static CaptureKeys) -> CallField {
    CallField {
        key: keys.attr_copied,
        ty: FieldType::Bool,
        constants: Constants::None,
        doc: "perf_copy_attr() succeeded: it read the attr and passed its own checks",
        get: |c| opt_bool(c.attr_copied()),
    }
}

/// The keys after the capture's: the result's.
static RESULT_FIELDS: &[CallField] = &[
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
        doc: "time in the syscall as the kernel measured it: the EXIT's time_ns minus the ENTRY's start_ns",
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

/// Every key of a call line of syscall `sc`, in output order: the
/// header's, the raw argument words, each argument's field as its row
/// decodes it (and a flag argument's names), the keys of its captured
/// pointer ([`crate::syscall::CaptureKeys`]) and of the EXIT's checks of
/// it, then the result's.
#[must_use]
pub fn call_fields(sc: &'static Syscall) -> &'static [CallField] {
    static FIELDS: PerSyscall<Vec<CallField>> = PerSyscall::new(|sc| {
        let mut fields = HEAD_FIELDS.to_vec();
        for (i, arg) in sc.args.iter().enumerate() {
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
        if let Some(keys) = sc.capture_keys() {
            fields.extend(capture_fields(keys));
            // In this order, whatever the row's.
            let checks = sc.exit_checks();
            if checks.contains(&ExitCheck::SizeWriteBack) {
                fields.extend(size_write_back_fields(keys));
            }
            if checks.contains(&ExitCheck::AttrCopied) {
                fields.push(attr_copied_field(keys));
            }
        }
        fields.extend_from_slice(RESULT_FIELDS);
        fields
    });
    FIELDS.get(sc)
}

/// Argument `I`'s field, as its call's row decodes it (the row the keys
/// were built from).
fn arg_field<const I: usize>(c: &Call) -> Value<'_> {
    c.syscall()
        .args
        .get(I)
        .map_or(Value::Null, |a| a.value(c.arg(I)))
}

/// A flag argument `I`'s bits by name.
fn arg_names<const I: usize>(c: &Call) -> Value<'_> {
    match (c.syscall().args.get(I).map(|a| a.decode), c.arg(I)) {
        (Some(ArgDecode::Flags { names, unknown, .. }), Some(w)) => Value::Flags(names, w, unknown),
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
/// of a call line of `sc` because another key of the same line holds the
/// same information, each with that key: the exact duplicates of the
/// argument words (a pointer's or a flag word's field) and the symbolic
/// renderings of numbers. The compact line also leaves out `null` values
/// and writes the decoded struct of the captured pointer
/// ([`CaptureKeys::decoded`]) as one key per non-zero member.
#[must_use]
pub fn compact_omitted(sc: &'static Syscall) -> &'static [(&'static str, &'static str)] {
    static OMITTED: PerSyscall<Vec<(&'static str, &'static str)>> = PerSyscall::new(|sc| {
        // A pointer's or a flag word's field is the raw word itself.
        let words = sc
            .args
            .iter()
            .enumerate()
            .filter_map(|(i, a)| match a.decode {
                ArgDecode::CapturedPointer { .. } | ArgDecode::Flags { .. } => {
                    Some((ARG_WORD_KEYS[i], a.field))
                }
                ArgDecode::Int => None,
            });
        let names = sc.args.iter().filter_map(|a| match a.decode {
            ArgDecode::Flags { names_field, .. } => Some((names_field, a.field)),
            _ => None,
        });
        let decoded = sc.capture_keys().map(|k| (k.decoded_names, k.decoded));
        words
            .chain(names)
            .chain(decoded)
            .chain([("syscall.errno_name", "syscall.errno")])
            .collect()
    });
    OMITTED.get(sc)
}

/// The raw argument words' keys.
const ARG_WORD_KEYS: [&str; 6] = ["args.0", "args.1", "args.2", "args.3", "args.4", "args.5"];

/// The field of a call line of `sc` with this key.
#[must_use]
pub fn call_field(sc: &'static Syscall, key: &str) -> Option<&'static CallField> {
    call_fields(sc).iter().find(|f| f.key == key)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::filter::field;
    use crate::syscall::SYSCALLS;

    #[test]
    fn the_call_keys_of_the_arguments_come_from_the_table() {
        for sc in SYSCALLS {
            let fields = call_fields(sc);
            for (i, a) in sc.args.iter().enumerate() {
                let at = fields.iter().position(|f| f.key == a.field).unwrap();
                let f = &fields[at];
                assert_eq!(f.ty, a.field_type(), "{}", a.field);
                assert_eq!(f.doc, a.field_doc);
                if let ArgDecode::Flags { names_field, .. } = a.decode {
                    assert_eq!(fields[at + 1].key, names_field);
                    assert!(matches!(f.constants, Constants::Table(_)));
                }
                // The field decodes the word as the rule says.
                let word = 0xffff_ffff_8000_0001u64;
                match (a.decode, a.value(Some(word))) {
                    (ArgDecode::Int, Value::I64(v)) => assert_eq!(v, -0x7fff_ffff, "{i}"),
                    (
                        ArgDecode::CapturedPointer { .. } | ArgDecode::Flags { .. },
                        Value::U64(v),
                    ) => {
                        assert_eq!(v, word);
                    }
                    (d, v) => panic!("{}: {d:?} gave {v:?}", a.field),
                }
            }
        }
    }

    /// The filter types a key by the first row that has it: every row
    /// must agree.
    #[test]
    fn a_key_rows_share_has_one_type_and_one_set_of_constants() {
        for a in SYSCALLS {
            for f in call_fields(a) {
                for b in SYSCALLS {
                    if let Some(g) = call_field(b, f.key) {
                        assert_eq!(f.ty, g.ty, "{}: {} and {}", f.key, a.name, b.name);
                        assert_eq!(
                            format!("{:?}", f.constants),
                            format!("{:?}", g.constants),
                            "{}: {} and {}",
                            f.key,
                            a.name,
                            b.name
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn every_rule_names_real_keys_and_every_key_has_a_rule() {
        for sc in SYSCALLS {
            let mut covered = HashSet::new();
            for c in sc.captures {
                for &k in c.keys {
                    if k == "args.attr_uptr.<member>" {
                        continue;
                    }
                    assert!(
                        call_field(sc, k).is_some(),
                        "{}: no record key {k}",
                        sc.name
                    );
                    assert!(covered.insert(k), "{}: {k} has two rules", sc.name);
                }
            }
            for f in call_fields(sc) {
                assert!(
                    covered.contains(f.key),
                    "{}: no capture rule for {}",
                    sc.name,
                    f.key
                );
            }
            for (i, a) in sc.args.iter().enumerate() {
                assert!(field(a.field).is_some(), "{}", a.field);
                assert!(field(&format!("args.{i}")).is_some());
            }
            for (f, _) in sc.examples {
                crate::filter::Filter::parse(f).unwrap_or_else(|e| panic!("{f}: {e}"));
            }
        }
    }
}
