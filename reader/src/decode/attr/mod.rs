// SPDX-License-Identifier: GPL-2.0-only
//! The table of `struct perf_event_attr` members of the pinned 6.12.94
//! uapi, and the views that decode captured attr bytes with it.
//!
//! [`ATTR_MEMBERS`] is the single source of what the reader knows about the
//! struct: the text and JSON output walk it, and the filter's
//! `args.attr_uptr.<member>` fields and the generated reference page are to
//! be built from it. Every named field, every bit of the flag
//! word at offset 40, every union alias and the reserved fields are listed,
//! in declaration order, each with its offset, storage width, bit position,
//! representation and the `PERF_ATTR_SIZE_VER*` at which it appears.
//!
//! Presence: a member is *absent* when its first byte lies at or beyond the
//! captured length (the attr's effective size, or what was read before a
//! fault); an absent member has no value at all, not zero. A member that
//! starts inside the captured bytes but ends beyond them (sizes need not be
//! a multiple of 8: a size of 109 is accepted by the kernel) is
//! [`Presence::Partial`]: its value is what the kernel itself uses, the
//! captured bytes with the rest zero, as `copy_struct_from_user()` fills
//! them.

mod member;
mod pmu;
mod render;
mod table;
#[cfg(test)]
mod tests;
mod view;

use super::names;

pub use member::{Applies, AttrMember, Repr, TextRule};
pub use pmu::PmuTypes;
pub(crate) use render::size_into;
pub use table::{member, member_by_key, ATTR_MEMBERS};
pub use view::{Applicable, AttrView, Presence, Slot};

/// `sizeof(struct perf_event_attr)` in the pinned uapi
/// (`PERF_ATTR_SIZE_VER8`).
pub const ATTR_SIZE_MAX: usize = 136;
/// `PERF_ATTR_SIZE_VER0`: the smallest size, and what a size of 0 means.
pub const ATTR_SIZE_VER0: u32 = 64;
/// `PERF_ATTR_SIZE_VER0` … `PERF_ATTR_SIZE_VER8`.
pub const ATTR_SIZE_VERS: [u32; 9] = [64, 72, 80, 96, 104, 112, 120, 128, 136];
/// The prefix of the record key (and filter field) of every member:
/// `args.attr_uptr.<member>`.
pub const ATTR_KEY_PREFIX: &str = "args.attr_uptr.";
