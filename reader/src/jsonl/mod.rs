// SPDX-License-Identifier: GPL-2.0-only
//! The JSON Lines writer of the hot path: writes a call or LOST line
//! straight into a reused buffer. Keys are pre-quoted once (every key
//! of [`call_fields`], [`LOST_FIELDS`] and every attr member name is plain
//! ASCII that JSON does not escape: a unit test checks it), numbers with
//! a two-digit table, strings escaped exactly as `serde_json` escapes them, so the
//! bytes are the same as a `serde_json` map of the same values (the golden
//! files check it). `serde_json` stays for everything that is not this line.
//!
//! Two schemas ([`JsonSchema`]): the full one (every key, `null` where it
//! does not apply) and the compact one, which leaves out what carries no
//! information (see [`call_compact`]). Its pieces: `scalar` (strings,
//! numbers, booleans, hex) and `keys` (the keys, made once).

mod keys;
mod scalar;

use crate::call::{call_fields, Call, LOST_FIELDS};
use crate::decode::{names, AttrView, PmuTypes, ATTR_MEMBERS};
use crate::field::Value;
use crate::record::LostRecord;
use keys::{key, CompactRole, Print};
use scalar::{hex, string};

/// Which keys a call line carries (`--json-schema`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JsonSchema {
    /// Every key of `call_fields` on every line, `null` where it does not
    /// apply, every present attr member (zeros included) and the names
    /// object: the default, what `reader diff` reads.
    #[default]
    Full,
    /// No `null`, no key of `compact_omitted` (duplicates and names), the
    /// attr as one key `args.attr_uptr.<member>` per non-zero member: every
    /// key is a filter field name.
    Compact,
}

/// The attr object: every present, applicable member's value (a bool for
/// one-bit flags, a signed number for signed members, else an unsigned
/// one), or with `names` the rendering of its symbolic members (rendered
/// into `scratch`, reused across members and lines).
fn attr(
    buf: &mut Vec<u8>,
    scratch: &mut String,
    view: &AttrView<'_>,
    pmus: &PmuTypes,
    names: bool,
) {
    let keys = keys::all();
    buf.push(b'{');
    let mut first = true;
    let applicable = view.applicable(pmus);
    let members = keys.members.iter().zip(ATTR_MEMBERS);
    for (((out, m), name), bit) in members.zip(&keys.member).zip(&keys.bit) {
        if names && !out.symbolic {
            continue;
        }
        let Some(raw) = view.raw_at(&out.slot) else {
            continue;
        };
        if !applicable.allows(out.applies) {
            continue;
        }
        if names {
            scratch.clear();
            if view.render_into(scratch, m, pmus) {
                key(buf, &mut first, name);
                string(buf, scratch);
            }
            continue;
        }
        match out.print {
            Print::Signed => {
                key(buf, &mut first, name);
                scalar::i64(buf, out.slot.signed(raw));
            }
            Print::Bit => key(buf, &mut first, &bit.values[usize::from(raw != 0)]),
            Print::Unsigned => {
                key(buf, &mut first, name);
                scalar::u64(buf, raw);
            }
        }
    }
    buf.push(b'}');
}

/// The compact schema's attr members, each as `args.attr_uptr.<member>`
/// (a one-bit member set: with its value, `true`): only those present,
/// applicable and non-zero.
fn attr_nonzero_members(buf: &mut Vec<u8>, first: &mut bool, view: &AttrView<'_>, pmus: &PmuTypes) {
    let keys = keys::all();
    let applicable = view.applicable(pmus);
    let members = keys.members.iter().zip(&keys.flat_member);
    for ((out, name), set) in members.zip(&keys.flat_bit_set) {
        let Some(raw) = view.raw_at(&out.slot) else {
            continue;
        };
        // A zero word is zero whatever the member's sign or width.
        if raw == 0 || !applicable.allows(out.applies) {
            continue;
        }
        match out.print {
            Print::Signed => {
                key(buf, first, name);
                scalar::i64(buf, out.slot.signed(raw));
            }
            Print::Bit => key(buf, first, set),
            Print::Unsigned => {
                key(buf, first, name);
                scalar::u64(buf, raw);
            }
        }
    }
}

pub(crate) fn value(buf: &mut Vec<u8>, scratch: &mut String, v: &Value<'_>, pmus: &PmuTypes) {
    match v {
        Value::Null => buf.extend_from_slice(b"null"),
        Value::U64(v) => scalar::u64(buf, *v),
        Value::I64(v) => scalar::i64(buf, *v),
        Value::Bool(v) => scalar::bool(buf, *v),
        Value::Str(s) => string(buf, s),
        Value::Bits(table, bits) => {
            buf.push(b'[');
            let rest = names::known_flags(table, *bits, |name| {
                if buf.last() != Some(&b'[') {
                    buf.push(b',');
                }
                string(buf, name);
            });
            if rest != 0 {
                if buf.last() != Some(&b'[') {
                    buf.push(b',');
                }
                buf.push(b'"');
                hex(buf, rest);
                buf.push(b'"');
            }
            buf.push(b']');
        }
        Value::Flags(table, bits, unknown) => {
            scratch.clear();
            names::flags_into(scratch, table, *bits, unknown);
            string(buf, scratch);
        }
        Value::Attr(view) => attr(buf, scratch, view, pmus, false),
        Value::AttrNames(view) => attr(buf, scratch, view, pmus, true),
    }
}

/// Appends a call as one JSON line, with the newline; `scratch` is room
/// for renderings, reused from line to line.
pub(crate) fn call(buf: &mut Vec<u8>, scratch: &mut String, call: &Call, pmus: &PmuTypes) {
    let syscall = call.syscall();
    buf.push(b'{');
    let mut first = true;
    for (f, k) in call_fields(syscall).iter().zip(&keys::call(syscall).call) {
        key(buf, &mut first, k);
        value(buf, scratch, &(f.get)(call), pmus);
    }
    buf.extend_from_slice(b"}\n");
}

/// Appends a call as one line of the compact schema, with the newline:
/// the full line's keys in the same order, less `null` values, less the
/// keys of [`crate::call::compact_omitted`], and the captured pointer's decoded struct
/// ([`crate::syscall::CaptureKeys::decoded`]) replaced by its present,
/// applicable, non-zero members, each as the filter field
/// `args.attr_uptr.<member>` (a one-bit member only when set, as `true`).
/// So an attr member not on the line is zero, or absent from the full
/// line too (beyond the captured bytes, or a union alias that does not
/// apply).
pub(crate) fn call_compact(buf: &mut Vec<u8>, scratch: &mut String, call: &Call, pmus: &PmuTypes) {
    let syscall = call.syscall();
    let call_keys = keys::call(syscall);
    buf.push(b'{');
    let mut first = true;
    let fields = call_fields(syscall).iter().zip(&call_keys.call);
    for ((f, k), role) in fields.zip(&call_keys.compact) {
        match role {
            CompactRole::Omit => {}
            CompactRole::Flatten => {
                if let Some(view) = call.attr() {
                    attr_nonzero_members(buf, &mut first, &view, pmus);
                }
            }
            // Matched by reference: a `Value` holding an attr view is
            // large, and binding it by value made a `memcpy` call per
            // field.
            CompactRole::Keep => match &(f.get)(call) {
                Value::Null => {}
                v => {
                    key(buf, &mut first, k);
                    value(buf, scratch, v, pmus);
                }
            },
        }
    }
    buf.extend_from_slice(b"}\n");
}

/// Appends a LOST record as one JSON line, with the newline.
pub(crate) fn lost(buf: &mut Vec<u8>, l: &LostRecord) {
    let pmus = PmuTypes::none();
    buf.push(b'{');
    let mut first = true;
    for (f, k) in LOST_FIELDS.iter().zip(&keys::all().lost) {
        key(buf, &mut first, k);
        value(buf, &mut String::new(), &(f.get)(l), &pmus);
    }
    buf.extend_from_slice(b"}\n");
}
