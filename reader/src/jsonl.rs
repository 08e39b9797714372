//! The JSON Lines writer of the hot path: writes a call or LOST line
//! straight into a reused buffer. Keys are written as they are (every key
//! of [`CALL_FIELDS`], [`LOST_FIELDS`] and every attr member name is plain
//! ASCII that JSON does not escape: a unit test checks it), numbers with
//! `itoa`, strings escaped exactly as `serde_json` escapes them, so the
//! bytes are the same as a `serde_json` map of the same values (the golden
//! files check it). `serde_json` stays for everything that is not this line.

use crate::call::{Call, Value, CALL_FIELDS, LOST_FIELDS};
use crate::decode::{AttrView, PmuTypes, Repr, ATTR_MEMBERS};
use crate::record::LostRecord;

/// Appends `s` as a JSON string: `"`, `\` and control characters escaped
/// as `serde_json` does (short forms where JSON has them, else `\u00XX`).
fn string(buf: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    buf.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => &[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xf)],
            ],
            _ => continue,
        };
        buf.extend_from_slice(&bytes[start..i]);
        buf.extend_from_slice(esc);
        start = i + 1;
    }
    buf.extend_from_slice(&bytes[start..]);
    buf.push(b'"');
}

/// Appends `"key":`, after a comma unless it is the object's first key.
fn key(buf: &mut Vec<u8>, first: &mut bool, key: &str) {
    if !std::mem::take(first) {
        buf.push(b',');
    }
    buf.push(b'"');
    buf.extend_from_slice(key.as_bytes());
    buf.extend_from_slice(b"\":");
}

fn u64(buf: &mut Vec<u8>, v: u64) {
    buf.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

fn i64(buf: &mut Vec<u8>, v: i64) {
    buf.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

fn bool(buf: &mut Vec<u8>, v: bool) {
    buf.extend_from_slice(if v { b"true" } else { b"false" });
}

/// The attr object: every present, applicable member's value (a bool for
/// one-bit flags, a signed number for signed members, else an unsigned
/// one), or with `names` the rendering of its symbolic members.
fn attr(buf: &mut Vec<u8>, view: &AttrView<'_>, pmus: &PmuTypes, names: bool) {
    buf.push(b'{');
    let mut first = true;
    for m in ATTR_MEMBERS {
        if names && !m.repr.is_symbolic() {
            continue;
        }
        let Some(raw) = view.raw(m) else { continue };
        if !view.applies(m, pmus) {
            continue;
        }
        if names {
            if let Some(r) = view.render(m, pmus) {
                key(buf, &mut first, m.name);
                string(buf, &r);
            }
        } else if m.is_signed() {
            if let Some(v) = view.signed(m) {
                key(buf, &mut first, m.name);
                i64(buf, v);
            }
        } else {
            key(buf, &mut first, m.name);
            match (m.repr, m.bits) {
                (Repr::Bit, Some((_, 1))) => bool(buf, raw != 0),
                _ => u64(buf, raw),
            }
        }
    }
    buf.push(b'}');
}

fn value(buf: &mut Vec<u8>, v: &Value<'_>, pmus: &PmuTypes) {
    match v {
        Value::Null => buf.extend_from_slice(b"null"),
        Value::U64(v) => u64(buf, *v),
        Value::I64(v) => i64(buf, *v),
        Value::Bool(v) => bool(buf, *v),
        Value::Str(s) => string(buf, s),
        Value::Names(names) => {
            buf.push(b'[');
            for (i, n) in names.iter().enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                string(buf, n);
            }
            buf.push(b']');
        }
        Value::Attr(view) => attr(buf, view, pmus, false),
        Value::AttrNames(view) => attr(buf, view, pmus, true),
    }
}

/// Appends a call as one JSON line, with the newline.
pub(crate) fn call(buf: &mut Vec<u8>, call: &Call, pmus: &PmuTypes) {
    buf.push(b'{');
    let mut first = true;
    for f in CALL_FIELDS {
        key(buf, &mut first, f.key);
        value(buf, &(f.get)(call), pmus);
    }
    buf.extend_from_slice(b"}\n");
}

/// Appends a LOST record as one JSON line, with the newline.
pub(crate) fn lost(buf: &mut Vec<u8>, l: &LostRecord) {
    let pmus = PmuTypes::none();
    buf.push(b'{');
    let mut first = true;
    for f in LOST_FIELDS {
        key(buf, &mut first, f.key);
        value(buf, &(f.get)(l), &pmus);
    }
    buf.extend_from_slice(b"}\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_need_no_escaping() {
        let plain = |k: &str| {
            !k.is_empty()
                && k.bytes()
                    .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\')
        };
        for k in CALL_FIELDS
            .iter()
            .map(|f| f.key)
            .chain(LOST_FIELDS.iter().map(|f| f.key))
            .chain(ATTR_MEMBERS.iter().map(|m| m.name))
        {
            assert!(plain(k), "{k:?} would need escaping");
        }
    }

    #[test]
    fn strings_escape_as_serde_json_does() {
        let mut all = String::new();
        for c in (0u8..0x80)
            .map(char::from)
            .chain(['é', '€', '\u{2028}', '😀'])
        {
            all.push(c);
        }
        for s in [all.as_str(), "", "plain", "a\"b\\c\u{7f}"] {
            let mut buf = Vec::new();
            string(&mut buf, s);
            assert_eq!(
                String::from_utf8(buf).unwrap(),
                serde_json::to_string(s).unwrap()
            );
        }
    }

    #[test]
    fn numbers_print_as_serde_json_does() {
        for v in [0u64, 1, 9, 10, 12_345, u64::MAX] {
            let mut buf = Vec::new();
            u64(&mut buf, v);
            assert_eq!(buf, serde_json::to_vec(&v).unwrap());
        }
        for v in [0i64, -1, i64::MIN, i64::MAX, -22] {
            let mut buf = Vec::new();
            i64(&mut buf, v);
            assert_eq!(buf, serde_json::to_vec(&v).unwrap());
        }
    }
}
