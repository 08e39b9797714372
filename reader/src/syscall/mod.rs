// SPDX-License-Identifier: GPL-2.0-only
//! The table of capture rules per syscall.
//!
//! [`SYSCALLS`] says, for each syscall Antinomie captures, what each
//! argument is, how the reader decodes it ([`ArgDecode`]: the text line,
//! the JSON line's keys and the filter's fields are built from it), and
//! what the capture records of it: when (ENTRY or EXIT hook), how, under
//! which record keys, on which condition. A call's syscall is the row
//! whose number its records carry ([`by_nr`]); a record with a number no
//! row has is rejected when it is parsed. The record keys of a call line
//! ([`crate::call::call_fields`]) are built from its row: the arguments'
//! fields, and for a captured pointer the keys `arg<N>.*` of
//! [`CaptureKeys`]. A test checks that every rule's keys exist and that
//! every key has a rule, so the record keys, the filter's fields
//! ([`crate::filter::fields`]) and the page cannot drift: [`reference_page`]
//! builds the page from this table, the call and attr tables and the name
//! tables. `reader describe perf_event_open` prints it;
//! `docs/syscalls/perf_event_open.md` is the checked-in copy, and a test
//! fails when it is stale.
//!
//! The table's rows are in their own files (`perf_event_open.rs`; for
//! tests, `toy.rs`), the page's rendering in `page.rs`.

use std::fmt::Write as _;
use std::sync::OnceLock;

use crate::decode::names::{self, Names};
use crate::field::{Constants, FieldType, Value};

mod page;
mod perf_event_open;
#[cfg(test)]
mod toy;

pub use page::reference_page;
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
    /// How `reader diff` matches it across two runs of a workload.
    pub compare: Compare,
}

/// How `reader diff` matches an argument across two runs of the same
/// workload: what legitimately varies between runs is left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compare {
    /// By value.
    Value,
    /// By value, except that the caller's own pid or tid (which differ
    /// between runs) count as one value.
    OwnPid,
    /// Only whether it is a file descriptor (>= 0): fd numbers differ
    /// between runs.
    IsFd,
    /// Not at all: an address differs between runs (a captured pointer
    /// is matched by its pointee instead).
    Ignored,
}

/// How the reader decodes an argument word.
#[derive(Debug, Clone, Copy)]
pub enum ArgDecode {
    /// A user pointer to a `struct perf_event_attr` (the one struct the
    /// reader decodes) whose pointee the capture records: the field holds
    /// the pointer; the text line shows the pointee instead, decoded from
    /// the capture item (the keys of [`CaptureKeys`]). A syscall has one
    /// at most.
    CapturedPointer {
        /// What the EXIT hook checks of the pointee.
        exit_checks: &'static [ExitCheck],
    },
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
            ArgDecode::CapturedPointer { .. } | ArgDecode::Flags { .. } => Value::U64(w),
            ArgDecode::Int => Value::I64(low_i32(w)),
        }
    }

    /// The field's type.
    #[must_use]
    pub fn field_type(&self) -> FieldType {
        match self.decode {
            ArgDecode::CapturedPointer { .. } | ArgDecode::Flags { .. } => FieldType::U64,
            ArgDecode::Int => FieldType::I64,
        }
    }

    /// The field's named constants.
    #[must_use]
    pub fn constants(&self) -> Constants {
        match self.decode {
            ArgDecode::Flags { names, .. } => Constants::Table(names),
            ArgDecode::CapturedPointer { .. } | ArgDecode::Int => Constants::None,
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
            ArgDecode::CapturedPointer { .. } if w == 0 => out.push_str("NULL"),
            ArgDecode::CapturedPointer { .. } => {
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
            ArgDecode::CapturedPointer { .. } => {
                format!("pointer; its pointee decoded from the capture (`arg{index}.*`)")
            }
            ArgDecode::Int => "C `int`: the low 32 bits, sign-extended".to_owned(),
            ArgDecode::Flags { names_field, .. } => {
                format!("bit set; by name in `{names_field}`")
            }
        }
    }
}

/// What the EXIT hook checks of a captured struct, besides the return
/// value: each check adds its record keys to the call line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCheck {
    /// After E2BIG, the `size` the kernel stored into the struct (as the
    /// kernel knew it), and whether the store landed (`required_size`,
    /// `size_written`).
    SizeWriteBack,
    /// Whether the kernel's copy of the struct succeeded, its own checks
    /// of it included (`attr_copied`).
    AttrCopied,
}

/// The record keys of a captured pointer's pointee, `arg<N>.<name>` for
/// argument N: the capture's (status, sizes), the decoded struct's and
/// those of the EXIT's checks ([`ExitCheck`]).
#[derive(Debug)]
pub struct CaptureKeys {
    /// The argument's index (its capture item's `arg`).
    pub index: usize,
    /// How the capture went (`ANTINOMIE_STATUS_*` by name).
    pub status: &'static str,
    /// The capture flags by name.
    pub capture_flags: &'static str,
    /// The struct's size as the kernel used it.
    pub declared_size: &'static str,
    /// Bytes captured.
    pub copied_len: &'static str,
    /// Where a read faulted.
    pub fault_offset: &'static str,
    /// The decoded struct: an object of its members.
    pub decoded: &'static str,
    /// Its symbolic members by name.
    pub decoded_names: &'static str,
    /// [`ExitCheck::SizeWriteBack`]: the `size` the kernel stored.
    pub required_size: &'static str,
    /// [`ExitCheck::SizeWriteBack`]: whether the kernel wrote it.
    pub size_written: &'static str,
    /// [`ExitCheck::AttrCopied`]: whether the kernel's copy succeeded.
    pub attr_copied: &'static str,
}

impl CaptureKeys {
    fn of(index: usize) -> Self {
        // Made once per syscall (a [`PerSyscall`]), and kept for the
        // program's life like the table they come from.
        let key = |name: &str| -> &'static str {
            Box::leak(format!("arg{index}.{name}").into_boxed_str())
        };
        CaptureKeys {
            index,
            status: key("status"),
            capture_flags: key("capture_flags"),
            declared_size: key("declared_size"),
            copied_len: key("copied_len"),
            fault_offset: key("fault_offset"),
            decoded: key("perf_event_attr"),
            decoded_names: key("perf_event_attr_names"),
            required_size: key("required_size"),
            size_written: key("size_written"),
            attr_copied: key("attr_copied"),
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

impl Syscall {
    /// Whether a record's `syscall_nr` is this syscall's: its x86-64
    /// number, its ia32 number or its x32 one (the x86-64 number with
    /// [`X32_SYSCALL_BIT`]), as `syscall_get_nr()` reports them unmasked.
    /// The number alone tells: a test checks that no number belongs to two
    /// rows.
    #[must_use]
    pub fn has_nr(&self, nr: u32) -> bool {
        nr == self.nr || nr == self.compat_nr || nr == self.nr | X32_SYSCALL_BIT
    }

    /// Its captured pointer argument: the index and keys of the one
    /// argument decoded as [`ArgDecode::CapturedPointer`], if any.
    #[must_use]
    pub fn capture_keys(&'static self) -> Option<&'static CaptureKeys> {
        static KEYS: PerSyscall<Option<CaptureKeys>> = PerSyscall::new(|sc| {
            sc.args
                .iter()
                .position(|a| matches!(a.decode, ArgDecode::CapturedPointer { .. }))
                .map(CaptureKeys::of)
        });
        KEYS.get(self).as_ref()
    }

    /// What the EXIT hook checks of its captured pointer's pointee (none
    /// without one).
    #[must_use]
    pub fn exit_checks(&self) -> &'static [ExitCheck] {
        self.args
            .iter()
            .find_map(|a| match a.decode {
                ArgDecode::CapturedPointer { exit_checks } => Some(exit_checks),
                _ => None,
            })
            .unwrap_or(&[])
    }
}

/// `__X32_SYSCALL_BIT`: set in the number of a call through the x32
/// entry.
pub const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Every syscall with a capture table.
#[cfg(not(test))]
pub static SYSCALLS: &[&Syscall] = &[&PERF_EVENT_OPEN];

/// Every syscall with a capture table, and the toy one whose test proves
/// that a row is all the reader needs to show a syscall.
#[cfg(test)]
pub static SYSCALLS: &[&Syscall] = &[&PERF_EVENT_OPEN, &toy::TOY];

/// The syscall with this name.
#[must_use]
pub fn syscall(name: &str) -> Option<&'static Syscall> {
    SYSCALLS.iter().copied().find(|s| s.name == name)
}

/// The syscall a record's `syscall_nr` names ([`Syscall::has_nr`]).
#[must_use]
pub fn by_nr(nr: u32) -> Option<&'static Syscall> {
    SYSCALLS.iter().copied().find(|s| s.has_nr(nr))
}

/// Something made once for each syscall of [`SYSCALLS`], on first use:
/// what the reader derives from a row (its record keys, the JSON
/// writer's pre-quoted keys).
pub struct PerSyscall<T> {
    make: fn(&'static Syscall) -> T,
    made: OnceLock<Vec<T>>,
}

impl<T> PerSyscall<T> {
    /// Made by `make` from each row.
    pub const fn new(make: fn(&'static Syscall) -> T) -> Self {
        PerSyscall {
            make,
            made: OnceLock::new(),
        }
    }

    /// What was made of `sc`.
    ///
    /// # Panics
    /// When `sc` is not a row of [`SYSCALLS`]: every [`Syscall`] the
    /// reader hands out is one ([`by_nr`], [`syscall`]).
    pub fn get(&self, sc: &Syscall) -> &T {
        let at = SYSCALLS
            .iter()
            .position(|s| std::ptr::eq(*s, sc))
            .unwrap_or_else(|| panic!("{} is not a row of SYSCALLS", sc.name));
        &self
            .made
            .get_or_init(|| SYSCALLS.iter().map(|s| (self.make)(s)).collect())[at]
    }
}

impl<T> std::fmt::Debug for PerSyscall<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PerSyscall").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::decode::errno_by_name;

    #[test]
    fn every_number_names_one_row() {
        let mut seen = HashSet::new();
        for sc in SYSCALLS {
            for nr in [sc.nr, sc.compat_nr, sc.nr | X32_SYSCALL_BIT] {
                assert!(seen.insert(nr), "{}: {nr} is another row's", sc.name);
                assert!(std::ptr::eq(by_nr(nr).unwrap(), *sc), "{nr}");
            }
        }
        assert!(by_nr(0).is_none());
        assert_eq!(by_nr(298).unwrap().name, "perf_event_open");
        assert_eq!(by_nr(0x4000_012a).unwrap().name, "perf_event_open");
    }

    #[test]
    fn a_row_has_one_captured_pointer_at_most_and_real_errnos() {
        for sc in SYSCALLS {
            let pointers = sc
                .args
                .iter()
                .filter(|a| matches!(a.decode, ArgDecode::CapturedPointer { .. }))
                .count();
            assert!(pointers <= 1, "{}", sc.name);
            assert_eq!(sc.capture_keys().is_some(), pointers == 1, "{}", sc.name);
            assert!(sc.args.len() <= 6, "{}", sc.name);
            for e in sc.errors {
                assert!(errno_by_name(e.errno).is_some(), "{}", e.errno);
            }
        }
        let keys = PERF_EVENT_OPEN.capture_keys().unwrap();
        assert_eq!((keys.index, keys.status), (0, "arg0.status"));
        assert_eq!(keys.decoded, "arg0.perf_event_attr");
    }

    #[test]
    fn the_page_has_every_section_and_field() {
        let page = reference_page("perf_event_open").unwrap();
        for section in [
            "## Synopsis",
            "## Arguments",
            "## Return value",
            "## Common errors",
            "## What Antinomie captures",
            "## Capture statuses",
            "## Filter fields",
            "## Constants",
            "## Known gaps",
        ] {
            assert!(page.contains(section), "{section}");
        }
        assert!(page.contains("| number | 298 on x86-64"));
        assert!(page.contains("`__x64_sys_perf_event_open`"));
        assert!(page.contains("| `E2BIG` (7) | -7 |"));
        for f in crate::filter::fields_of(&PERF_EVENT_OPEN) {
            assert!(page.contains(&format!("| `{}` |", f.key)), "{}", f.key);
        }
        assert!(reference_page("open").is_none());
    }
}
