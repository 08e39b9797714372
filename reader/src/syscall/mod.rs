//! The table of capture rules per syscall, and the reference page made
//! from it.
//!
//! [`SYSCALLS`] says, for each syscall Antinomie captures, what each
//! argument is and what the capture records of it: when (ENTRY or EXIT
//! hook), how, under which record keys, on which condition. The keys are
//! those of [`crate::call::CALL_FIELDS`] (a test checks that every rule's
//! keys exist and that every key has a rule), so the record keys, the
//! filter's fields ([`crate::filter::fields`]) and the page cannot drift:
//! [`reference_page`] builds the page from this table, the call and attr
//! tables and the name tables. `reader describe perf_event_open` prints it;
//! `docs/syscalls/perf_event_open.md` is the checked-in copy, and a test
//! fails when it is stale.
//!
//! The table's rows are in their own files (`perf_event_open.rs`), the
//! page's rendering in `page.rs`.

mod page;
mod perf_event_open;

pub use page::reference_page;
pub use perf_event_open::PERF_EVENT_OPEN;

/// One argument of a syscall.
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
    /// What it means.
    pub meaning: &'static str,
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
    use crate::filter::{field, fields};

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
            for f in CALL_FIELDS {
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
        for f in fields() {
            assert!(page.contains(&format!("| `{}` |", f.key)), "{}", f.key);
        }
        assert!(reference_page("open").is_none());
    }
}
