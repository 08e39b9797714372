//! The JSON Lines writer of the hot path: writes a call or LOST line
//! straight into a reused buffer. Keys are pre-quoted once (every key
//! of [`CALL_FIELDS`], [`LOST_FIELDS`] and every attr member name is plain
//! ASCII that JSON does not escape: a unit test checks it), numbers with
//! a two-digit table, strings escaped exactly as `serde_json` escapes them, so the
//! bytes are the same as a `serde_json` map of the same values (the golden
//! files check it). `serde_json` stays for everything that is not this line.
//!
//! Two schemas ([`JsonSchema`]): the full one (every key, `null` where it
//! does not apply) and the compact one, which leaves out what carries no
//! information (see [`call_compact`]).

use std::sync::OnceLock;

use crate::call::{Call, Value, CALL_FIELDS, COMPACT_ATTR_KEY, COMPACT_OMITTED, LOST_FIELDS};
use crate::decode::attr::Slot;
use crate::decode::{names, Applies, AttrView, PmuTypes, Repr, ATTR_KEY_PREFIX, ATTR_MEMBERS};

/// Which keys a call line carries (`--json-schema`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JsonSchema {
    /// Every key of `CALL_FIELDS` on every line, `null` where it does not
    /// apply, every present attr member (zeros included) and the names
    /// object: the default, what `reader diff` reads.
    #[default]
    Full,
    /// No `null`, no key of `COMPACT_OMITTED` (duplicates and names), the
    /// attr as one key `args.attr_uptr.<member>` per non-zero member: every
    /// key is a filter field name.
    Compact,
}
use crate::record::LostRecord;

/// Whether any byte of `bytes` needs escaping in a JSON string: `"`, `\`
/// or a control character (below 0x20). Eight bytes at a time, by the
/// classic word tests (Bit Twiddling Hacks, "hasless" and "haszero"),
/// which are exact for "some byte is": a borrow that crosses into a
/// byte only starts at a byte that is itself below the bound. A byte-by-
/// byte test cost ~15 % of the full JSON line, which escapes every name
/// rendering it writes.
fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    // Some byte of `x` is below `n` (n <= 0x80).
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x & HIGHS != 0;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(w);
        let x = u64::from_le_bytes(eight);
        // A byte equal to `c` is a zero byte of `x ^ (ONES * c)`.
        if below(x, 0x20)
            || below(x ^ (ONES * u64::from(b'"')), 1)
            || below(x ^ (ONES * u64::from(b'\\')), 1)
        {
            return true;
        }
    }
    words
        .remainder()
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// Appends `s` as a JSON string: `"`, `\` and control characters escaped
/// as `serde_json` does (short forms where JSON has them, else `\u00XX`).
fn string(buf: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    buf.push(b'"');
    let bytes = s.as_bytes();
    // Most strings (names, numbers in hex) need no escape: one copy.
    if !needs_escape(bytes) {
        buf.extend_from_slice(bytes);
        buf.push(b'"');
        return;
    }
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

/// Room for one piece of constant text ([`Piece`]): every key with its
/// quotes, comma and colon, and `true`/`false` after a bit member's key,
/// fits (a unit test checks it).
const PIECE_ROOM: usize = 64;

/// A piece of constant text, zero-padded to [`PIECE_ROOM`] bytes, so that
/// it is appended by a copy of constant size (a few vector moves, no
/// `memcpy` call) and a truncation, instead of a copy of its own length.
#[derive(Clone, Copy)]
struct Piece {
    padded: [u8; PIECE_ROOM],
    len: usize,
}

impl Piece {
    /// `text`; text longer than the room (none is, by the unit test)
    /// would be cut, so the test is what keeps the output right.
    fn new(text: &str) -> Self {
        let mut padded = [0u8; PIECE_ROOM];
        let len = text.len().min(PIECE_ROOM);
        padded[..len].copy_from_slice(&text.as_bytes()[..len]);
        Piece { padded, len }
    }

    fn put(&self, buf: &mut Vec<u8>) {
        let at = buf.len();
        buf.extend_from_slice(&self.padded);
        buf.truncate(at + self.len);
    }
}

/// A key as written: `,"key":`, and `"key":` for an object's first key.
struct Key {
    next: Piece,
    first: Piece,
}

impl Key {
    fn new(k: &str) -> Self {
        Self::with_value(k, "")
    }

    /// The key followed by a constant value.
    fn with_value(k: &str, v: &str) -> Self {
        Key {
            next: Piece::new(&format!(",\"{k}\":{v}")),
            first: Piece::new(&format!("\"{k}\":{v}")),
        }
    }
}

/// A one-bit member's key with each of its values: `,"key":false`, …
struct BitKey {
    values: [Key; 2],
}

/// What the compact schema does with a call key.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CompactRole {
    /// Written unless `null`.
    Keep,
    /// Left out: another key holds the same information.
    Omit,
    /// The attr: one key per non-zero member.
    Flatten,
}

/// How the JSON line prints an attr member's value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Print {
    Unsigned,
    /// Sign-extended from its width.
    Signed,
    /// A one-bit flag: `true` or `false`.
    Bit,
}

/// What the JSON attr walks need of one member, made once from its
/// table entry: a few dense words per member instead of the whole entry
/// (names, docs, `Option`s to match) read per member of every attr.
struct MemberOut {
    slot: Slot,
    applies: Applies,
    print: Print,
    symbolic: bool,
}

/// The keys, made once: one constant-size copy per key on the hot path.
struct Keys {
    /// By member: how it is read and printed.
    members: Vec<MemberOut>,
    call: Vec<Key>,
    /// By call key: what the compact schema does with it.
    compact: Vec<CompactRole>,
    lost: Vec<Key>,
    member: Vec<Key>,
    /// By member too; only one-bit members' are used.
    bit: Vec<BitKey>,
    /// By member: `<member>` with `true` (a set one-bit member in the
    /// compact schema's `arg0.kernel_attr`).
    bit_set: Vec<Key>,
    /// By member: `args.attr_uptr.<member>`, the compact schema's keys.
    flat_member: Vec<Key>,
    /// By member: `args.attr_uptr.<member>` with `true`; only one-bit
    /// members' are used.
    flat_bit_set: Vec<Key>,
}

fn keys() -> &'static Keys {
    static KEYS: OnceLock<Keys> = OnceLock::new();
    KEYS.get_or_init(|| Keys {
        members: ATTR_MEMBERS
            .iter()
            .map(|m| MemberOut {
                slot: Slot::of(m),
                applies: m.applies,
                print: if m.is_signed() {
                    Print::Signed
                } else if let (Repr::Bit, Some((_, 1))) = (m.repr, m.bits) {
                    Print::Bit
                } else {
                    Print::Unsigned
                },
                symbolic: m.repr.is_symbolic(),
            })
            .collect(),
        call: CALL_FIELDS.iter().map(|f| Key::new(f.key)).collect(),
        compact: CALL_FIELDS
            .iter()
            .map(|f| {
                if f.key == COMPACT_ATTR_KEY {
                    CompactRole::Flatten
                } else if COMPACT_OMITTED.iter().any(|(k, _)| *k == f.key) {
                    CompactRole::Omit
                } else {
                    CompactRole::Keep
                }
            })
            .collect(),
        bit_set: ATTR_MEMBERS
            .iter()
            .map(|m| Key::with_value(m.name, "true"))
            .collect(),
        flat_member: ATTR_MEMBERS
            .iter()
            .map(|m| Key::new(&format!("{ATTR_KEY_PREFIX}{}", m.name)))
            .collect(),
        flat_bit_set: ATTR_MEMBERS
            .iter()
            .map(|m| Key::with_value(&format!("{ATTR_KEY_PREFIX}{}", m.name), "true"))
            .collect(),
        lost: LOST_FIELDS.iter().map(|f| Key::new(f.key)).collect(),
        member: ATTR_MEMBERS.iter().map(|m| Key::new(m.name)).collect(),
        bit: ATTR_MEMBERS
            .iter()
            .map(|m| BitKey {
                values: [
                    Key::with_value(m.name, "false"),
                    Key::with_value(m.name, "true"),
                ],
            })
            .collect(),
    })
}

/// Appends a key made by [`keys`], without its comma if it is the
/// object's first.
fn key(buf: &mut Vec<u8>, first: &mut bool, key: &Key) {
    if std::mem::take(first) {
        key.first.put(buf);
    } else {
        key.next.put(buf);
    }
}

/// "00" to "99": two digits per division.
const DIGIT_PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// 10^i for i in 0..20: the powers [`decimal_len`] compares with.
const POW10: [u64; 20] = {
    let mut p = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        p[i] = p[i - 1] * 10;
        i += 1;
    }
    p
};

/// How many decimal digits `v` has (1 for 0), without a division: the
/// bit length times log10(2) (as 1233 / 4096) gives the digit count or
/// one less, and one comparison with a power of ten tells which.
fn decimal_len(v: u64) -> usize {
    // `| 1`: 0 has one digit; it changes no other answer, since the
    // powers compared with (10 and up) are even.
    let v = v | 1;
    let bits = 64 - v.leading_zeros();
    // At most 64 * 1233 >> 12 = 19: an index of POW10.
    let t = ((bits * 1233) >> 12) as usize;
    t + usize::from(v >= POW10[t])
}

/// Appends `v` in decimal, as `itoa` and `serde_json` print it. The
/// digits are written straight into `buf`'s spare room, two at a time
/// from a table, back to front: no copy of the digits, no `memcpy` call,
/// no bounds check per pair (a profile of the compact line put ~25 % of
/// its instructions in the safe version of this, ~120 per number).
// Every cast is of a number below 10 000, said where it is made.
#[allow(clippy::cast_possible_truncation)]
fn u64(buf: &mut Vec<u8>, v: u64) {
    let len = decimal_len(v);
    buf.reserve(len);
    let at = buf.len();
    let pairs = DIGIT_PAIRS.as_ptr();
    // SAFETY: `reserve` made room for `len` bytes after `at`, and every
    // write below is to `out + i` with `i < len`: `end` starts at `len`
    // and drops by the digits written, which are exactly `len` in all
    // (`decimal_len`), so it never goes below 0. Every read of `pairs`
    // is of 2 bytes at an even index below 200. After the writes the
    // `len` bytes are initialised, so the length may cover them.
    unsafe {
        let out = buf.as_mut_ptr().add(at);
        let mut end = len;
        let mut rest = v;
        // Four digits per 64-bit division, then two from 32-bit
        // arithmetic.
        while rest >= 10_000 {
            // < 10 000.
            let four = (rest % 10_000) as u32;
            rest /= 10_000;
            let (high, low) = ((four / 100) as usize * 2, (four % 100) as usize * 2);
            std::ptr::copy_nonoverlapping(pairs.add(high), out.add(end - 4), 2);
            std::ptr::copy_nonoverlapping(pairs.add(low), out.add(end - 2), 2);
            end -= 4;
        }
        // < 10 000 from here.
        let mut rest = rest as u32;
        if rest >= 100 {
            let pair = (rest % 100) as usize * 2;
            rest /= 100;
            std::ptr::copy_nonoverlapping(pairs.add(pair), out.add(end - 2), 2);
            end -= 2;
        }
        if rest >= 10 {
            std::ptr::copy_nonoverlapping(pairs.add(rest as usize * 2), out.add(end - 2), 2);
        } else {
            // < 10.
            *out.add(end - 1) = b'0' + rest as u8;
        }
        buf.set_len(at + len);
    }
}

fn i64(buf: &mut Vec<u8>, v: i64) {
    if v < 0 {
        buf.push(b'-');
    }
    u64(buf, v.unsigned_abs());
}

fn bool(buf: &mut Vec<u8>, v: bool) {
    // Two copies of constant length: one of a length chosen at run time
    // is a `memcpy` call.
    if v {
        buf.extend_from_slice(b"true");
    } else {
        buf.extend_from_slice(b"false");
    }
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
    let keys = keys();
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
                i64(buf, out.slot.signed(raw));
            }
            Print::Bit => key(buf, &mut first, &bit.values[usize::from(raw != 0)]),
            Print::Unsigned => {
                key(buf, &mut first, name);
                u64(buf, raw);
            }
        }
    }
    buf.push(b'}');
}

/// The compact schema's attr members, each under `keys[member]`
/// (a one-bit member set: `bit_set[member]`, value included): only those
/// present, applicable and non-zero.
fn attr_nonzero_members(
    buf: &mut Vec<u8>,
    first: &mut bool,
    view: &AttrView<'_>,
    pmus: &PmuTypes,
    keys: &[Key],
    bit_set: &[Key],
) {
    let applicable = view.applicable(pmus);
    for ((out, name), set) in self::keys().members.iter().zip(keys).zip(bit_set) {
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
                i64(buf, out.slot.signed(raw));
            }
            Print::Bit => key(buf, first, set),
            Print::Unsigned => {
                key(buf, first, name);
                u64(buf, raw);
            }
        }
    }
}

/// Appends `v` in hex as `{v:#x}` formats it.
fn hex(buf: &mut Vec<u8>, v: u64) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut digits = [0u8; 16];
    let mut n = 0;
    let mut rest = v;
    loop {
        digits[15 - n] = HEX[(rest & 0xf) as usize];
        n += 1;
        rest >>= 4;
        if rest == 0 {
            break;
        }
    }
    buf.extend_from_slice(b"0x");
    buf.extend_from_slice(&digits[16 - n..]);
}

fn value(buf: &mut Vec<u8>, scratch: &mut String, v: &Value<'_>, pmus: &PmuTypes) {
    match v {
        Value::Null => buf.extend_from_slice(b"null"),
        Value::U64(v) => u64(buf, *v),
        Value::I64(v) => i64(buf, *v),
        Value::Bool(v) => bool(buf, *v),
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
    buf.push(b'{');
    let mut first = true;
    for (f, k) in CALL_FIELDS.iter().zip(&keys().call) {
        key(buf, &mut first, k);
        value(buf, scratch, &(f.get)(call), pmus);
    }
    buf.extend_from_slice(b"}\n");
}

/// Appends a call as one line of the compact schema, with the newline:
/// the full line's keys in the same order, less `null` values, less the
/// keys of [`COMPACT_OMITTED`], and `arg0.perf_event_attr` replaced by its
/// present, applicable, non-zero members, each as the filter field
/// `args.attr_uptr.<member>` (a one-bit member only when set, as `true`).
/// `arg0.kernel_attr` stays an object, of its non-zero members only. So an
/// attr member not on the line is zero, or absent from the full line too
/// (beyond the captured bytes, or a union alias that does not apply).
pub(crate) fn call_compact(buf: &mut Vec<u8>, scratch: &mut String, call: &Call, pmus: &PmuTypes) {
    let keys = keys();
    buf.push(b'{');
    let mut first = true;
    for ((f, k), role) in CALL_FIELDS.iter().zip(&keys.call).zip(&keys.compact) {
        match role {
            CompactRole::Omit => {}
            CompactRole::Flatten => {
                if let Some(view) = call.attr() {
                    attr_nonzero_members(
                        buf,
                        &mut first,
                        &view,
                        pmus,
                        &keys.flat_member,
                        &keys.flat_bit_set,
                    );
                }
            }
            // Matched by reference: a `Value` holding an attr view is
            // large, and binding it by value made a `memcpy` call per
            // field.
            CompactRole::Keep => match &(f.get)(call) {
                Value::Null => {}
                Value::Attr(view) => {
                    key(buf, &mut first, k);
                    buf.push(b'{');
                    let mut first_member = true;
                    attr_nonzero_members(
                        buf,
                        &mut first_member,
                        view,
                        pmus,
                        &keys.member,
                        &keys.bit_set,
                    );
                    buf.push(b'}');
                }
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
    for (f, k) in LOST_FIELDS.iter().zip(&keys().lost) {
        key(buf, &mut first, k);
        value(buf, &mut String::new(), &(f.get)(l), &pmus);
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
    fn every_piece_fits_its_room() {
        let longest = CALL_FIELDS
            .iter()
            .map(|f| f.key)
            .chain(LOST_FIELDS.iter().map(|f| f.key))
            .chain(ATTR_MEMBERS.iter().map(|m| m.name))
            .map(|k| format!(",\"{ATTR_KEY_PREFIX}{k}\":false").len())
            .max()
            .unwrap();
        assert!(longest <= PIECE_ROOM, "{longest} > {PIECE_ROOM}");
        let k = Key::with_value("abc", "true");
        let mut buf = b"{".to_vec();
        k.first.put(&mut buf);
        k.next.put(&mut buf);
        assert_eq!(buf, b"{\"abc\":true,\"abc\":true");
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
    fn the_word_test_finds_what_the_byte_test_does() {
        let byte_test = |b: &[u8]| b.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\');
        // Every byte value at every place of a 17-byte string (two words
        // and a rest), among bytes on either side of the bounds.
        for base in [b'a', 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xff] {
            for at in 0..17 {
                for b in 0..=255u8 {
                    let mut s = vec![base; 17];
                    s[at] = b;
                    assert_eq!(needs_escape(&s), byte_test(&s), "{s:?}");
                }
            }
        }
        assert!(!needs_escape(b""));
    }

    #[test]
    fn hex_prints_as_format_does() {
        for v in [0u64, 1, 0xf, 0x10, 0xdead_beef, u64::MAX] {
            let mut buf = Vec::new();
            hex(&mut buf, v);
            assert_eq!(String::from_utf8(buf).unwrap(), format!("{v:#x}"));
        }
    }

    #[test]
    fn numbers_print_as_serde_json_does() {
        let mut powers: Vec<u64> = (0..20).map(|e| 10u64.pow(e)).collect();
        powers.extend(powers.clone().iter().map(|p| p - 1));
        powers.extend(powers.clone().iter().map(|p| p + 1));
        // Every bit length's ends too: where `decimal_len`'s estimate steps.
        powers.extend((0..64).flat_map(|b| [1u64 << b, (1u64 << b) - 1, (1u64 << b) + 1]));
        powers.push(u64::MAX - 1);
        for v in powers.into_iter().chain([0u64, 1, 9, 10, 12_345, u64::MAX]) {
            let mut buf = Vec::new();
            u64(&mut buf, v);
            assert_eq!(buf, serde_json::to_vec(&v).unwrap());
        }
        for v in [0i64, -1, i64::MIN, i64::MAX, -22, -100, 99, i64::MIN + 1] {
            let mut buf = Vec::new();
            i64(&mut buf, v);
            assert_eq!(buf, serde_json::to_vec(&v).unwrap());
        }
    }
}
