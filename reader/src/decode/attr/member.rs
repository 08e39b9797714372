// SPDX-License-Identifier: GPL-2.0-only
//! What the table says about one member: [`AttrMember`], how its value
//! is shown ([`Repr`]), when a union alias applies ([`Applies`]) and
//! whether the text shows it ([`TextRule`]).

use super::names::{self, Names};
use super::{ATTR_KEY_PREFIX, ATTR_SIZE_VERS};

/// How a member's value is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repr {
    /// An unsigned count or size, in decimal.
    Unsigned,
    /// An unsigned address, mask or opaque word, in hex.
    Hex,
    /// A signed integer (`__s32`), sign-extended from its width.
    Signed,
    /// A one-bit flag: 0 or 1 (a JSON bool).
    Bit,
    /// An enumeration: the name, or the value with `/* <comment> */`.
    Enum(Names, &'static str),
    /// A signed enumeration (`clockid`).
    SignedEnum(Names, &'static str),
    /// A bit set: names joined by `|`, unknown bits listed separately.
    Flags(Names, &'static str),
    /// `type`: `PERF_TYPE_*`, or a dynamic PMU's name from sysfs.
    PmuType,
    /// `config`: named by `type` (hardware, software, cache triple).
    Config,
    /// `size`: `PERF_ATTR_SIZE_VER*`.
    AttrSize,
    /// `precise_ip`: 0-3 with the skid meaning.
    PreciseIp,
    /// A reserved field that must be zero; shown in hex.
    Reserved,
}

impl Repr {
    /// Whether the value has a symbolic rendering (a name table or a
    /// decomposition) beyond the plain number.
    #[must_use]
    pub fn is_symbolic(self) -> bool {
        matches!(
            self,
            Repr::Enum(..)
                | Repr::SignedEnum(..)
                | Repr::Flags(..)
                | Repr::PmuType
                | Repr::Config
                | Repr::AttrSize
        )
    }

    /// The names a filter may compare this member with, if any.
    #[must_use]
    pub fn names(self) -> Option<Names> {
        match self {
            Repr::Enum(t, _) | Repr::SignedEnum(t, _) | Repr::Flags(t, _) => Some(t),
            Repr::PmuType => Some(names::PERF_TYPE),
            Repr::AttrSize => Some(names::PERF_ATTR_SIZE),
            _ => None,
        }
    }
}

/// When a union alias is the meaningful reading of its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applies {
    /// Always (plain members, and the generic `config1`, `config2`,
    /// `aux_action`).
    Always,
    /// `freq` is 0 (`sample_period`).
    FreqClear,
    /// `freq` is 1 (`sample_freq`).
    FreqSet,
    /// `watermark` is 0 (`wakeup_events`).
    WatermarkClear,
    /// `watermark` is 1 (`wakeup_watermark`).
    WatermarkSet,
    /// `type == PERF_TYPE_BREAKPOINT` (`bp_addr`, `bp_len`).
    Breakpoint,
    /// `type` is the kprobe PMU's (`kprobe_func`).
    Kprobe,
    /// `type` is the uprobe PMU's (`uprobe_path`).
    Uprobe,
    /// A kprobe with `kprobe_func == 0` (`kprobe_addr`).
    KprobeAddr,
    /// A uprobe, or a kprobe with `kprobe_func != 0` (`probe_offset`).
    ProbeOffset,
}

impl Applies {
    /// When the alias is the meaningful reading of its bytes, in words
    /// (`None` for [`Applies::Always`]); the filter's field list and the
    /// reference page print it.
    #[must_use]
    pub fn condition(self) -> Option<&'static str> {
        Some(match self {
            Applies::Always => return None,
            Applies::FreqClear => "freq is 0",
            Applies::FreqSet => "freq is 1",
            Applies::WatermarkClear => "watermark is 0",
            Applies::WatermarkSet => "watermark is 1",
            Applies::Breakpoint => "type is PERF_TYPE_BREAKPOINT",
            Applies::Kprobe => "type is the kprobe PMU's (named from sysfs)",
            Applies::Uprobe => "type is the uprobe PMU's (named from sysfs)",
            Applies::KprobeAddr => "type is the kprobe PMU's and kprobe_func is 0",
            Applies::ProbeOffset => {
                "type is the uprobe PMU's, or the kprobe PMU's with kprobe_func set"
            }
        })
    }
}

/// Which members the strace-like text shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextRule {
    /// Always, even when zero (`type`, `size`, `config`).
    Always,
    /// Only when non-zero, as strace's abbreviated mode.
    NonZero,
    /// Never: another member shows the same bits (`aux_action`).
    Hidden,
}

/// One member of `struct perf_event_attr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttrMember {
    /// The C name; also the last part of the record key
    /// `args.attr_uptr.<name>`.
    pub name: &'static str,
    /// Byte offset of the storage unit (the whole `__u64` for bit fields).
    pub offset: usize,
    /// Bytes of the storage unit: 2, 4 or 8.
    pub width: usize,
    /// For a bit field: (first bit, number of bits) within the storage
    /// unit, little-endian bit numbering.
    pub bits: Option<(u32, u32)>,
    /// How the value is shown and which names it takes.
    pub repr: Repr,
    /// The `PERF_ATTR_SIZE_VER*` that first covers the member entirely.
    pub since: u32,
    /// The union this member belongs to, named after its generic member
    /// (`config1`, `config2`, `sample_period`, …); `None` outside unions.
    pub union: Option<&'static str>,
    /// When this alias is the meaningful reading of its bytes.
    pub applies: Applies,
    /// Whether the text line shows it.
    pub text: TextRule,
    /// One line saying what it is.
    pub doc: &'static str,
}

/// The smallest `PERF_ATTR_SIZE_VER*` that covers `end` bytes.
const fn since(end: usize) -> u32 {
    let mut i = 0;
    while i < ATTR_SIZE_VERS.len() {
        if ATTR_SIZE_VERS[i] as usize >= end {
            return ATTR_SIZE_VERS[i];
        }
        i += 1;
    }
    panic!("member beyond PERF_ATTR_SIZE_VER8");
}

impl AttrMember {
    pub(super) const fn field(
        name: &'static str,
        offset: usize,
        width: usize,
        repr: Repr,
        doc: &'static str,
    ) -> Self {
        AttrMember {
            name,
            offset,
            width,
            bits: None,
            repr,
            since: since(offset + width),
            union: None,
            applies: Applies::Always,
            text: TextRule::NonZero,
            doc,
        }
    }

    /// A bit field of `len` bits at `shift` in the storage at `offset`.
    pub(super) const fn bitfield(
        name: &'static str,
        offset: usize,
        width: usize,
        shift: u32,
        len: u32,
        repr: Repr,
        doc: &'static str,
    ) -> Self {
        AttrMember {
            bits: Some((shift, len)),
            ..Self::field(name, offset, width, repr, doc)
        }
    }

    /// A one-bit flag of the `__u64` at offset 40.
    pub(super) const fn flag(name: &'static str, shift: u32, doc: &'static str) -> Self {
        Self::bitfield(name, 40, 8, shift, 1, Repr::Bit, doc)
    }

    pub(super) const fn alias(self, union: &'static str, applies: Applies) -> Self {
        AttrMember {
            union: Some(union),
            applies,
            ..self
        }
    }

    pub(super) const fn text(self, text: TextRule) -> Self {
        AttrMember { text, ..self }
    }

    /// The record key (and filter field): `args.attr_uptr.<name>`.
    #[must_use]
    pub fn key(&self) -> String {
        format!("{ATTR_KEY_PREFIX}{}", self.name)
    }

    /// Whether the value is signed.
    #[must_use]
    pub fn is_signed(&self) -> bool {
        matches!(self.repr, Repr::Signed | Repr::SignedEnum(..))
    }

    /// The mask of the member's bits within its storage unit.
    #[must_use]
    pub fn mask(&self) -> u64 {
        let (shift, len) = self
            .bits
            .unwrap_or((0, u32::try_from(self.width * 8).unwrap_or(64)));
        let ones = if len >= 64 {
            u64::MAX
        } else {
            (1u64 << len) - 1
        };
        ones << shift
    }
}
