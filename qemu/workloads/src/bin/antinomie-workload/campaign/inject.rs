// SPDX-License-Identifier: GPL-2.0-only
//! Fault injection's debugfs side: where the kernel injects faults into
//! slab and page allocations too (`CONFIG_FAILSLAB`,
//! `CONFIG_FAIL_PAGE_ALLOC`), the attributes that make a call take the same
//! injection points each time it is made, the two settings of the
//! allocators the epochs draw from, and the restoring of every attribute
//! changed.
//!
//! A task's `fail-nth` counts the points of every kind the kernel has. For
//! the count to repeat, as the differential needs:
//!
//! * the page allocations of a slab cache that refills itself (it does so
//!   when its slabs are full, which depends on what ran before) are not
//!   counted: each kind's stack filter (`stacktrace-depth` 32,
//!   `reject-start`/`reject-end`) rejects the text of `allocate_slab()`
//!   (or of `new_slab()`, where it is inlined);
//! * KASAN's stack depot does not refill its pool at random: the debug
//!   kernel boots with `stack_depot_disable=on` (`scripts/campaign.sh`);
//! * and, so that the console does not drown, no kind dumps a stack per
//!   injected fault (`verbose` 0).

use std::path::Path;

use super::thread::FailNth;

const DEBUGFS: &str = "/sys/kernel/debug";

/// The kinds of fault injection `fail-nth` counts, by their debugfs folder.
const KINDS: [&str; 3] = ["fail_usercopy", "failslab", "fail_page_alloc"];

/// A setting of the allocators' injection, drawn per epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Allocators {
    /// The kernel's defaults: only allocations that cannot sleep, and
    /// pages of order 1 and more.
    Defaults,
    /// syzkaller's: every allocation, pages of any order.
    Syzkaller,
}

impl Allocators {
    pub(super) const ALL: [Allocators; 2] = [Allocators::Defaults, Allocators::Syzkaller];

    /// Its attributes: (kind, attribute, value).
    fn attributes(self) -> [(&'static str, &'static str, &'static str); 3] {
        let (wait, order) = match self {
            Allocators::Defaults => ("Y", "1"),
            Allocators::Syzkaller => ("N", "0"),
        };
        [
            ("failslab", "ignore-gfp-wait", wait),
            ("fail_page_alloc", "ignore-gfp-wait", wait),
            ("fail_page_alloc", "min-order", order),
        ]
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Allocators::Defaults => "the kernel's defaults",
            Allocators::Syzkaller => "syzkaller's",
        }
    }
}

/// The text a stack filter rejects: the function that refills a slab cache.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rejected {
    pub(super) symbol: &'static str,
    pub(super) start: u64,
    pub(super) end: u64,
}

#[derive(Debug)]
struct Attribute {
    path: String,
    saved: String,
}

/// Fault injection as the campaign set it up; dropping it restores every
/// attribute it changed, last changed first.
#[derive(Debug)]
pub(super) struct FaultInjection {
    /// The allocators' injection, set up with its stack filter; or why
    /// only user copies are injection points (none of the allocators' in
    /// debugfs).
    pub(super) allocators: Result<Rejected, String>,
    changed: Vec<Attribute>,
}

fn attribute_path(kind: &str, attribute: &str) -> String {
    format!("{DEBUGFS}/{kind}/{attribute}")
}

fn read_attribute(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_owned())
        .map_err(|e| format!("{path}: {e}"))
}

impl FaultInjection {
    /// Sets `kind/attribute` to `value`, saving what it was the first time.
    fn set(&mut self, kind: &str, attribute: &str, value: &str) -> Result<(), String> {
        let path = attribute_path(kind, attribute);
        if !self.changed.iter().any(|a| a.path == path) {
            let saved = read_attribute(&path)?;
            self.changed.push(Attribute {
                path: path.clone(),
                saved,
            });
        }
        std::fs::write(&path, value).map_err(|e| format!("writing {value} to {path}: {e}"))
    }

    /// Applies `setting` to the allocators (while no call is made). Their
    /// attributes were saved when fault injection was set up.
    pub(super) fn apply(&self, setting: Allocators) -> Result<(), String> {
        for (kind, attribute, value) in setting.attributes() {
            let path = attribute_path(kind, attribute);
            if !self.changed.iter().any(|a| a.path == path) {
                return Err(format!("{path} was not saved, to restore it"));
            }
            std::fs::write(&path, value).map_err(|e| format!("writing {value} to {path}: {e}"))?;
        }
        Ok(())
    }

    /// Restores every attribute changed; says which it could not.
    pub(super) fn restore(&mut self) -> Result<(), String> {
        let mut failed = Vec::new();
        while let Some(a) = self.changed.pop() {
            if let Err(e) = std::fs::write(&a.path, &a.saved) {
                failed.push(format!("{} (to {}): {e}", a.path, a.saved));
            }
        }
        if failed.is_empty() {
            Ok(())
        } else {
            Err(format!("could not restore {}", failed.join(", ")))
        }
    }
}

impl Drop for FaultInjection {
    fn drop(&mut self) {
        if let Err(why) = self.restore() {
            eprintln!("campaign: {why}");
        }
    }
}

/// The text of `symbol` in `kallsyms`: its address and the next higher
/// symbol's.
fn text_range(kallsyms: &str, symbol: &str) -> Option<(u64, u64)> {
    let symbols = kallsyms.lines().filter_map(|l| {
        let mut f = l.split_whitespace();
        let addr = u64::from_str_radix(f.next()?, 16).ok()?;
        Some((addr, f.nth(1)?))
    });
    let start = symbols
        .clone()
        .find(|&(a, name)| name == symbol && a != 0)?
        .0;
    let end = symbols.map(|(a, _)| a).filter(|&a| a > start).min()?;
    Some((start, end))
}

/// Sets fault injection up: `Err` says why calls get none (no `fail-nth`,
/// or allocators that inject without a stack filter, whose points would
/// vary from run to run); `Ok` with `allocators` `Err` injects into user
/// copies only.
pub(super) fn setup() -> Result<FaultInjection, String> {
    if !Path::new(FailNth::PATH).exists() {
        return Err(format!(
            "no {}: the kernel lacks CONFIG_FAULT_INJECTION",
            FailNth::PATH
        ));
    }
    let mut fi = FaultInjection {
        allocators: Err(String::new()),
        changed: Vec::new(),
    };
    let present = |kind: &str| Path::new(&attribute_path(kind, "verbose")).exists();
    if !present("failslab") || !present("fail_page_alloc") {
        if present("fail_usercopy") {
            fi.set("fail_usercopy", "verbose", "0")?;
        }
        fi.allocators = Err(format!(
            "no {DEBUGFS}/failslab and fail_page_alloc (CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC, CONFIG_FAULT_INJECTION_DEBUG_FS, debugfs mounted)"
        ));
        return Ok(fi);
    }
    let kallsyms = std::fs::read_to_string("/proc/kallsyms")
        .map_err(|e| format!("/proc/kallsyms: {e} (needed for the stack filter)"))?;
    // allocate_slab() may be inlined into new_slab().
    let (symbol, (start, end)) = ["allocate_slab", "new_slab"]
        .into_iter()
        .find_map(|s| text_range(&kallsyms, s).map(|r| (s, r)))
        .ok_or("neither allocate_slab nor new_slab in /proc/kallsyms (or its addresses hidden): no stack filter for the allocators' injection")?;
    for kind in KINDS.into_iter().filter(|k| present(k)) {
        fi.set(kind, "verbose", "0")?;
        if !Path::new(&attribute_path(kind, "stacktrace-depth")).exists() {
            return Err(format!(
                "no {DEBUGFS}/{kind}/stacktrace-depth: the allocators inject without a stack filter (CONFIG_FAULT_INJECTION_STACKTRACE_FILTER), and their points would vary from run to run"
            ));
        }
        fi.set(kind, "stacktrace-depth", "32")?;
        fi.set(kind, "reject-start", &format!("{start:#x}"))?;
        fi.set(kind, "reject-end", &format!("{end:#x}"))?;
    }
    // The settings' attributes saved now, before any epoch changes them.
    for (kind, attribute, value) in Allocators::Defaults.attributes() {
        fi.set(kind, attribute, value)?;
    }
    fi.allocators = Ok(Rejected { symbol, start, end });
    Ok(fi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symbol_s_text_ends_at_the_next_higher_symbol() {
        let kallsyms = "\
ffffffff81300000 T new_slab
ffffffff81200000 t allocate_slab
ffffffff81000000 T _text
ffffffff81200400 t shuffle_freelist
ffffffff81200200 t setup_object [somemodule]
";
        assert_eq!(
            text_range(kallsyms, "allocate_slab"),
            Some((0xffff_ffff_8120_0000, 0xffff_ffff_8120_0200))
        );
        assert_eq!(text_range(kallsyms, "nothing"), None);
        // Hidden addresses (kptr_restrict) are no range.
        assert_eq!(
            text_range("0000000000000000 t allocate_slab\n", "allocate_slab"),
            None
        );
    }

    #[test]
    fn the_settings_are_the_defaults_and_syzkaller_s() {
        assert_eq!(
            Allocators::Defaults.attributes().map(|a| a.2),
            ["Y", "Y", "1"]
        );
        assert_eq!(
            Allocators::Syzkaller.attributes().map(|a| a.2),
            ["N", "N", "0"]
        );
    }
}
