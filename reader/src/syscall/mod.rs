//! The table of capture rules per syscall.
//!
//! [`SYSCALLS`] says, for each syscall Antinomie captures, what each
//! argument is, how the reader decodes it ([`ArgDecode`]: the text line,
//! the JSON line's keys and the filter's fields are built from it), and
//! what the capture records of it: when (ENTRY or EXIT hook), how, under
//! which record keys, on which condition. The keys are
//! those of [`crate::call::CALL_FIELDS`] (a test checks that every rule's
//! keys exist and that every key has a rule), so the record keys, the
//! filter's fields ([`crate::filter::fields`]) and the reference page that
//! `reader describe perf_event_open` builds from this table cannot drift.
//!
//! The table's rows are in their own files (`perf_event_open.rs`).

use std::fmt::Write as _;

use crate::call::{Constants, FieldType, Value};
use crate::decode::names::{self, Names};

mod perf_event_open;

pub use perf_event_open::PERF_EVENT_OPEN;

/// One argument of a syscall, in register order (the row's position is
/// the argument's index in the ENTRY's six words).
#[derive(Debug, Clone, Copy)]
pub struct Arg {
    /// Its name in the kernel's definition.
    pub name: &'static str,
    /// Its C type there.
    pub c_type: &'static str,
    /// The x86-64 register that carries it.
    pub register: &'static str,
    /// The record key (and filter field) of its value.
    pub field: &'static str,
    /// The one-line description of [`Arg::field`] (the key lists' doc).
    pub field_doc: &'static str,
    /// How the reader decodes the word: the text line, the JSON line's
    /// keys, the filter's fields and the reference page all go by it.
    pub decode: ArgDecode,
    /// What it means.
    pub meaning: &'static str,
}

/// How the reader decodes an argument word.
#[derive(Debug, Clone, Copy)]
pub enum ArgDecode {
    /// A user pointer whose pointee the capture records: the field holds
    /// the pointer; the text line shows the pointee instead, decoded from
    /// the capture item (`arg<N>.*` keys).
    CapturedPointer,
    /// A C `int` (`int`, `pid_t`): the word's low 32 bits, sign-extended,
    /// as the syscall sees them.
    Int,
    /// A bit set: the field holds the word; `names_field` holds it by
    /// name, as the text line shows it, unknown bits in hex after
    /// `unknown`.
    Flags {
        /// The bits' names.
        names: Names,
        /// The comment unknown bits are shown after.
        unknown: &'static str,
        /// The key of the rendering by name.
        names_field: &'static str,
        /// The one-line description of `names_field`.
        names_doc: &'static str,
    },
}

impl Arg {
    /// The field's value for the argument word `word` (`None`: no ENTRY).
    #[must_use]
    pub fn value(&self, word: Option<u64>) -> Value<'static> {
        let Some(w) = word else {
            return Value::Null;
        };
        match self.decode {
            ArgDecode::CapturedPointer | ArgDecode::Flags { .. } => Value::U64(w),
            ArgDecode::Int => Value::I64(low_i32(w)),
        }
    }

    /// The field's type.
    #[must_use]
    pub fn field_type(&self) -> FieldType {
        match self.decode {
            ArgDecode::CapturedPointer | ArgDecode::Flags { .. } => FieldType::U64,
            ArgDecode::Int => FieldType::I64,
        }
    }

    /// The field's named constants.
    #[must_use]
    pub fn constants(&self) -> Constants {
        match self.decode {
            ArgDecode::Flags { names, .. } => Constants::Table(names),
            ArgDecode::CapturedPointer | ArgDecode::Int => Constants::None,
        }
    }

    /// Appends the word as the text line shows it (`?`: no ENTRY); a
    /// captured pointer as `NULL` or in hex, for when its pointee cannot
    /// be shown.
    pub fn text_into(&self, out: &mut String, word: Option<u64>) {
        let Some(w) = word else {
            out.push('?');
            return;
        };
        match self.decode {
            ArgDecode::CapturedPointer if w == 0 => out.push_str("NULL"),
            ArgDecode::CapturedPointer => {
                let _ = write!(out, "{w:#x}");
            }
            ArgDecode::Int => {
                let _ = write!(out, "{}", low_i32(w));
            }
            ArgDecode::Flags { names, unknown, .. } => names::flags_into(out, names, w, unknown),
        }
    }

    /// How the reference page says argument `index` (this one) is
    /// decoded.
    #[must_use]
    pub fn decode_doc(&self, index: usize) -> String {
        match self.decode {
            ArgDecode::CapturedPointer => {
                format!("pointer; its pointee decoded from the capture (`arg{index}.*`)")
            }
            ArgDecode::Int => "C `int`: the low 32 bits, sign-extended".to_owned(),
            ArgDecode::Flags { names_field, .. } => {
                format!("bit set; by name in `{names_field}`")
            }
        }
    }
}

/// A C `int` argument as the syscall sees it: the word's low 32 bits,
/// sign-extended.
#[must_use]
// Truncating and reinterpreting the bits is the point.
#[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
fn low_i32(word: u64) -> i64 {
    i64::from(word as u32 as i32)
}

/// When a value is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// By the hook at the start of the syscall (the ENTRY record).
    Entry,
    /// By the hook at its end (the EXIT record).
    Exit,
    /// In both records' headers.
    Both,
    /// Derived by the reader (pairing).
    Reader,
}

impl When {
    /// As the page prints it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            When::Entry => "Entry",
            When::Exit => "Exit",
            When::Both => "Entry and Exit",
            When::Reader => "reader",
        }
    }
}

/// One capture rule: what is recorded, when, how, under which keys.
#[derive(Debug, Clone, Copy)]
pub struct Capture {
    /// What is recorded.
    pub what: &'static str,
    /// When.
    pub when: When,
    /// How.
    pub how: &'static str,
    /// The record keys (filter fields) that hold it; `args.attr_uptr.<member>`
    /// stands for every attr member.
    pub keys: &'static [&'static str],
    /// On which condition it is recorded.
    pub condition: &'static str,
}

/// An errno the syscall commonly returns, and why.
#[derive(Debug, Clone, Copy)]
pub struct ErrorCase {
    /// The errno's name (its value comes from [`crate::decode::ERRNO`]).
    pub errno: &'static str,
    /// When the kernel returns it.
    pub when: &'static str,
}

/// A syscall Antinomie captures.
#[derive(Debug, Clone, Copy)]
pub struct Syscall {
    /// Its name.
    pub name: &'static str,
    /// What it does, in a sentence.
    pub summary: &'static str,
    /// Its number on x86-64.
    pub nr: u32,
    /// Its number from the ia32 compat entry.
    pub compat_nr: u32,
    /// The kernel's prototype (`include/linux/syscalls.h`).
    pub prototype: &'static str,
    /// The x86-64 entry point.
    pub entry_point: &'static str,
    /// The ia32 compat entry point.
    pub compat_entry_point: &'static str,
    /// The definition that generates them, and its file.
    pub definition: &'static str,
    /// How user space calls it.
    pub libc: &'static str,
    /// Its arguments.
    pub args: &'static [Arg],
    /// Its return value.
    pub returns: &'static str,
    /// Its common errors.
    pub errors: &'static [ErrorCase],
    /// What Antinomie records of it.
    pub captures: &'static [Capture],
    /// What Antinomie never records of it.
    pub gaps: &'static [&'static str],
    /// Filter examples: (filter, what it selects).
    pub examples: &'static [(&'static str, &'static str)],
}

/// Every syscall with a capture table.
pub static SYSCALLS: &[&Syscall] = &[&PERF_EVENT_OPEN];

/// The syscall with this name.
#[must_use]
pub fn syscall(name: &str) -> Option<&'static Syscall> {
    SYSCALLS.iter().copied().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::call::{call_field, CALL_FIELDS};
    use crate::decode::errno_by_name;
    use crate::filter::field;

    #[test]
    fn the_call_keys_of_the_arguments_come_from_the_table() {
        for (i, a) in PERF_EVENT_OPEN.args.iter().enumerate() {
            let at = CALL_FIELDS.iter().position(|f| f.key == a.field).unwrap();
            let f = &CALL_FIELDS[at];
            assert_eq!(f.ty, a.field_type(), "{}", a.field);
            assert_eq!(f.doc, a.field_doc);
            if let ArgDecode::Flags { names_field, .. } = a.decode {
                assert_eq!(CALL_FIELDS[at + 1].key, names_field);
                assert!(matches!(f.constants, crate::call::Constants::Table(_)));
            }
            // The field decodes the word as the rule says.
            let word = 0xffff_ffff_8000_0001u64;
            match (a.decode, a.value(Some(word))) {
                (ArgDecode::Int, Value::I64(v)) => assert_eq!(v, -0x7fff_ffff, "{i}"),
                (ArgDecode::CapturedPointer | ArgDecode::Flags { .. }, Value::U64(v)) => {
                    assert_eq!(v, word);
                }
                (d, v) => panic!("{}: {d:?} gave {v:?}", a.field),
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
                    assert!(call_field(k).is_some(), "{}: no record key {k}", sc.name);
                    assert!(covered.insert(k), "{}: {k} has two rules", sc.name);
                }
            }
            for f in CALL_FIELDS.iter() {
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
            for e in sc.errors {
                assert!(errno_by_name(e.errno).is_some(), "{}", e.errno);
            }
            for (f, _) in sc.examples {
                crate::filter::Filter::parse(f).unwrap_or_else(|e| panic!("{f}: {e}"));
            }
        }
    }
}
