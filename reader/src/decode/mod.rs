// SPDX-License-Identifier: GPL-2.0-only
//! Decoding of what the records carry: the `struct perf_event_attr` member
//! table ([`attr::ATTR_MEMBERS`]) and its views, and the name tables
//! (enumerations, bit sets, errno).

pub mod attr;
pub mod names;

pub use attr::{
    member, member_by_key, Applies, AttrMember, AttrView, PmuTypes, Presence, Repr, TextRule,
    ATTR_KEY_PREFIX, ATTR_MEMBERS, ATTR_SIZE_MAX, ATTR_SIZE_VER0, ATTR_SIZE_VERS,
};
pub use names::{errno, errno_by_name, Errno, Names, ERRNO};
