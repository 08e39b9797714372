// SPDX-License-Identifier: GPL-2.0-only
//! The keys of a JSON line, made once: pre-quoted, zero-padded pieces
//! of constant text appended by a copy of constant size.

use std::sync::OnceLock;

use crate::call::{call_fields, compact_omitted, LOST_FIELDS};
use crate::decode::attr::Slot;
use crate::decode::{Applies, Repr, ATTR_KEY_PREFIX, ATTR_MEMBERS};
use crate::syscall::{PerSyscall, Syscall};

/// Room for one piece of constant text ([`Piece`]): every key with its
/// quotes, comma and colon, and `true`/`false` after a bit member's key,
/// fits (a unit test checks it).
pub(super) const PIECE_ROOM: usize = 64;

/// A piece of constant text, zero-padded to [`PIECE_ROOM`] bytes, so that
/// it is appended by a copy of constant size (a few vector moves, no
/// `memcpy` call) and a truncation, instead of a copy of its own length.
#[derive(Clone, Copy)]
pub(super) struct Piece {
    pub(super) padded: [u8; PIECE_ROOM],
    pub(super) len: usize,
}

impl Piece {
    /// `text`; text longer than the room (none is, by the unit test)
    /// would be cut, so the test is what keeps the output right.
    pub(super) fn new(text: &str) -> Self {
        let mut padded = [0u8; PIECE_ROOM];
        let len = text.len().min(PIECE_ROOM);
        padded[..len].copy_from_slice(&text.as_bytes()[..len]);
        Piece { padded, len }
    }

    pub(super) fn put(&self, buf: &mut Vec<u8>) {
        let at = buf.len();
        buf.extend_from_slice(&self.padded);
        buf.truncate(at + self.len);
    }
}

/// A key as written: `,"key":`, and `"key":` for an object's first key.
pub(super) struct Key {
    pub(super) next: Piece,
    pub(super) first: Piece,
}

impl Key {
    pub(super) fn new(k: &str) -> Self {
        Self::with_value(k, "")
    }

    /// The key followed by a constant value.
    pub(super) fn with_value(k: &str, v: &str) -> Self {
        Key {
            next: Piece::new(&format!(",\"{k}\":{v}")),
            first: Piece::new(&format!("\"{k}\":{v}")),
        }
    }
}

/// A one-bit member's key with each of its values: `,"key":false`, …
pub(super) struct BitKey {
    pub(super) values: [Key; 2],
}

/// What the compact schema does with a call key.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum CompactRole {
    /// Written unless `null`.
    Keep,
    /// Left out: another key holds the same information.
    Omit,
    /// The attr: one key per non-zero member.
    Flatten,
}

/// How the JSON line prints an attr member's value.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Print {
    Unsigned,
    /// Sign-extended from its width.
    Signed,
    /// A one-bit flag: `true` or `false`.
    Bit,
}

/// What the JSON attr walks need of one member, made once from its
/// table entry: a few dense words per member instead of the whole entry
/// (names, docs, `Option`s to match) read per member of every attr.
pub(super) struct MemberOut {
    pub(super) slot: Slot,
    pub(super) applies: Applies,
    pub(super) print: Print,
    pub(super) symbolic: bool,
}

/// The keys of a call line of one syscall, made once from its row: by
/// key of [`call_fields`], the key as written and what the compact schema
/// does with it.
pub(super) struct CallKeys {
    pub(super) call: Vec<Key>,
    pub(super) compact: Vec<CompactRole>,
}

/// The call line keys of syscall `sc`.
pub(super) fn call(sc: &'static Syscall) -> &'static CallKeys {
    static KEYS: PerSyscall<CallKeys> = PerSyscall::new(|sc| {
        let fields = call_fields(sc);
        let flattened = sc.capture_keys().map(|k| k.decoded);
        let omitted = compact_omitted(sc);
        CallKeys {
            call: fields.iter().map(|f| Key::new(f.key)).collect(),
            compact: fields
                .iter()
                .map(|f| {
                    if Some(f.key) == flattened {
                        CompactRole::Flatten
                    } else if omitted.iter().any(|(k, _)| *k == f.key) {
                        CompactRole::Omit
                    } else {
                        CompactRole::Keep
                    }
                })
                .collect(),
        }
    });
    KEYS.get(sc)
}

/// The keys, made once: one constant-size copy per key on the hot path.
pub(super) struct Keys {
    /// By member: how it is read and printed.
    pub(super) members: Vec<MemberOut>,
    pub(super) lost: Vec<Key>,
    pub(super) member: Vec<Key>,
    /// By member too; only one-bit members' are used.
    pub(super) bit: Vec<BitKey>,
    /// By member: `args.attr_uptr.<member>`, the compact schema's keys.
    pub(super) flat_member: Vec<Key>,
    /// By member: `args.attr_uptr.<member>` with `true`; only one-bit
    /// members' are used.
    pub(super) flat_bit_set: Vec<Key>,
}

pub(super) fn all() -> &'static Keys {
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

/// Appends a key made by [`all`], without its comma if it is the
/// object's first.
pub(super) fn key(buf: &mut Vec<u8>, first: &mut bool, key: &Key) {
    if std::mem::take(first) {
        key.first.put(buf);
    } else {
        key.next.put(buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syscall::SYSCALLS;

    #[test]
    fn keys_need_no_escaping() {
        let plain = |k: &str| {
            !k.is_empty()
                && k.bytes()
                    .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\')
        };
        for k in SYSCALLS
            .iter()
            .flat_map(|sc| call_fields(sc))
            .map(|f| f.key)
            .chain(LOST_FIELDS.iter().map(|f| f.key))
            .chain(ATTR_MEMBERS.iter().map(|m| m.name))
        {
            assert!(plain(k), "{k:?} would need escaping");
        }
    }

    #[test]
    fn every_piece_fits_its_room() {
        let longest = SYSCALLS
            .iter()
            .flat_map(|sc| call_fields(sc))
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
}
