// SPDX-License-Identifier: GPL-2.0-only
//! [`AttrView`]: captured attr bytes decoded through the table.

use std::fmt::Write as _;

use super::names;
use super::render::{config_into, enum_into, hex_into, size_into, type_into};
use super::{member, Applies, AttrMember, PmuTypes, Repr, TextRule, ATTR_MEMBERS, ATTR_SIZE_MAX};

/// Whether a member starts within the captured bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// Its first byte is at or beyond the captured length: no value.
    Absent,
    /// It starts within the captured bytes and ends beyond them; this many
    /// of its bytes were captured, the others count as zero.
    Partial(usize),
    /// Entirely captured.
    Full,
}

/// Captured `struct perf_event_attr` bytes, decoded through
/// [`ATTR_MEMBERS`]. Bytes beyond [`ATTR_SIZE_MAX`] are ignored.
///
/// The members that decide which union alias applies (`type`, `freq`,
/// `watermark`, `config1`) are read once, when the view is made.
#[derive(Debug, Clone, Copy)]
pub struct AttrView<'a> {
    bytes: &'a [u8],
    /// The bytes again, zero-padded: every member's word is read by a
    /// copy of constant size (no `memcpy` call per member), and the
    /// padding is the zero that uncaptured bytes count as.
    padded: [u8; PADDED],
    controls: Controls,
}

/// Which union aliases apply to one attr ([`AttrView::applicable`]): the
/// answer of [`AttrView::applies`] for every [`Applies`] at once (a bit
/// per variant), so that a walk over every member looks the dynamic PMU
/// types up once per attr, not once per member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Applicable(u16);

impl Applicable {
    /// Whether a member with this condition applies.
    #[must_use]
    pub fn allows(self, a: Applies) -> bool {
        (self.0 >> (a as u16)) & 1 != 0
    }
}

/// Where and how one member's value is read ([`Slot::of`]): its word's
/// offset, the shift and mask that take the member out of the word, and
/// the width it is sign-extended from (0: unsigned). [`AttrView::raw`]
/// reads through it; a walk over every member of many attrs makes each
/// member's slot once instead of working it out from the table per read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    offset: usize,
    shift: u32,
    mask: u64,
    sign_bits: u32,
}

impl Slot {
    /// The slot of `m`.
    #[must_use]
    pub fn of(m: &AttrMember) -> Self {
        let width_bits = u32::try_from(m.width * 8).unwrap_or(64);
        let ones = |bits: u32| {
            if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            }
        };
        let (shift, len) = m.bits.unwrap_or((0, width_bits));
        Slot {
            offset: m.offset,
            shift,
            // The member's bits, within its storage unit's.
            mask: ones(len) & (ones(width_bits) >> shift.min(63)),
            sign_bits: if m.is_signed() { width_bits } else { 0 },
        }
    }

    /// The member's raw value in `bytes`, a captured prefix of the attr
    /// ([`AttrView::raw`] of a view of `bytes`), read without making a
    /// view: one member needs no zero-padded copy of the whole attr.
    #[must_use]
    pub fn read(&self, bytes: &[u8]) -> Option<u64> {
        let bytes = &bytes[..bytes.len().min(ATTR_SIZE_MAX)];
        if self.offset >= bytes.len() {
            return None;
        }
        Some((word(bytes, (self.offset, 8)) >> self.shift) & self.mask)
    }

    /// `raw`, a value read through this slot, as a signed number:
    /// sign-extended from the member's width for signed members.
    #[must_use]
    pub fn signed(&self, raw: u64) -> i64 {
        let bits = self.sign_bits;
        #[allow(clippy::cast_possible_wrap)]
        if bits > 0 && bits < 64 {
            ((raw << (64 - bits)) as i64) >> (64 - bits)
        } else {
            raw as i64
        }
    }
}

/// More than the unions of `struct perf_event_attr` (a unit test checks
/// it): [`AttrView::each_text_member`] tracks them in an array this long.
const MAX_UNIONS: usize = 16;

/// Room for the captured bytes and a whole word after the last one.
const PADDED: usize = ATTR_SIZE_MAX + 8;

/// The controlling members of an attr, absent ones as 0.
#[derive(Debug, Clone, Copy)]
struct Controls {
    ty: u64,
    freq: bool,
    watermark: bool,
    config1: bool,
}

/// Where the controlling members are: `type` (offset 0, 4 bytes),
/// `config1` (offset 56, 8 bytes), and bits 10 (`freq`) and 14
/// (`watermark`) of the flag word at offset 40; a unit test checks them
/// against [`ATTR_MEMBERS`].
const TYPE_AT: (usize, usize) = (0, 4);
const CONFIG1_AT: (usize, usize) = (56, 8);
const FLAGS_AT: (usize, usize) = (40, 8);
const FREQ_BIT: u32 = 10;
const WATERMARK_BIT: u32 = 14;

/// The little-endian value of `width` bytes at `offset`, zero-extended
/// past the end of `bytes`.
fn word(bytes: &[u8], (offset, width): (usize, usize)) -> u64 {
    let mut buf = [0u8; 8];
    if offset < bytes.len() {
        let end = (offset + width).min(bytes.len());
        buf[..end - offset].copy_from_slice(&bytes[offset..end]);
    }
    u64::from_le_bytes(buf)
}

/// `raw`, the raw value of `m`, as a signed number: sign-extended from
/// its width for signed members.
fn signed_value(m: &AttrMember, raw: u64) -> i64 {
    Slot::of(m).signed(raw)
}

impl<'a> AttrView<'a> {
    /// A view of `bytes`, the captured prefix of the attr.
    #[must_use]
    pub fn new(bytes: &'a [u8]) -> Self {
        let bytes = &bytes[..bytes.len().min(ATTR_SIZE_MAX)];
        let flags = word(bytes, FLAGS_AT);
        let mut padded = [0u8; PADDED];
        padded[..bytes.len()].copy_from_slice(bytes);
        AttrView {
            bytes,
            padded,
            controls: Controls {
                ty: word(bytes, TYPE_AT),
                freq: (flags >> FREQ_BIT) & 1 != 0,
                watermark: (flags >> WATERMARK_BIT) & 1 != 0,
                config1: word(bytes, CONFIG1_AT) != 0,
            },
        }
    }

    /// The bytes viewed.
    #[must_use]
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// How many bytes were captured (at most [`ATTR_SIZE_MAX`]).
    #[must_use]
    pub fn captured_len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether `m` is present in the captured bytes.
    #[must_use]
    pub fn presence(&self, m: &AttrMember) -> Presence {
        let len = self.bytes.len();
        if m.offset >= len {
            Presence::Absent
        } else if m.offset + m.width > len {
            Presence::Partial(len - m.offset)
        } else {
            Presence::Full
        }
    }

    /// The raw value of `m`, zero-extended (bit fields shifted down), or
    /// `None` when absent.
    #[must_use]
    pub fn raw(&self, m: &AttrMember) -> Option<u64> {
        self.raw_at(&Slot::of(m))
    }

    /// The raw value of the member at `slot` ([`AttrView::raw`]).
    #[must_use]
    pub fn raw_at(&self, slot: &Slot) -> Option<u64> {
        if slot.offset >= self.bytes.len() {
            return None;
        }
        // Members end within ATTR_SIZE_MAX, so the 8 bytes at the offset
        // are in `padded`; `get` keeps it panic-free all the same.
        let eight: [u8; 8] = self
            .padded
            .get(slot.offset..slot.offset + 8)?
            .try_into()
            .ok()?;
        Some((u64::from_le_bytes(eight) >> slot.shift) & slot.mask)
    }

    /// The value of `m` as a signed number (sign-extended from its width
    /// for signed members), or `None` when absent.
    #[must_use]
    pub fn signed(&self, m: &AttrMember) -> Option<i64> {
        self.raw(m).map(|raw| signed_value(m, raw))
    }

    /// The raw value of the member with this C name.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<u64> {
        member(name).and_then(|m| self.raw(m))
    }

    /// Whether `m` is the meaningful reading of its bytes for this attr
    /// (always true outside unions). A controlling member that is absent
    /// counts as 0.
    #[must_use]
    pub fn applies(&self, m: &AttrMember, pmus: &PmuTypes) -> bool {
        self.applicable(pmus).allows(m.applies)
    }

    /// [`AttrView::applies`] for every condition at once.
    #[must_use]
    pub fn applicable(&self, pmus: &PmuTypes) -> Applicable {
        let c = &self.controls;
        let kprobe = pmus.is(c.ty, "kprobe");
        let uprobe = pmus.is(c.ty, "uprobe");
        let bit = |a: Applies, holds: bool| u16::from(holds) << (a as u16);
        Applicable(
            bit(Applies::Always, true)
                | bit(Applies::FreqClear, !c.freq)
                | bit(Applies::FreqSet, c.freq)
                | bit(Applies::WatermarkClear, !c.watermark)
                | bit(Applies::WatermarkSet, c.watermark)
                | bit(Applies::Breakpoint, c.ty == names::TYPE_BREAKPOINT)
                | bit(Applies::Kprobe, kprobe)
                | bit(Applies::Uprobe, uprobe)
                | bit(Applies::KprobeAddr, kprobe && !c.config1)
                | bit(Applies::ProbeOffset, uprobe || (kprobe && c.config1)),
        )
    }

    /// The member's value as the text output shows it (names for
    /// symbolic members), or `None` when absent.
    #[must_use]
    pub fn render(&self, member: &AttrMember, pmus: &PmuTypes) -> Option<String> {
        let mut s = String::new();
        self.render_into(&mut s, member, pmus).then_some(s)
    }

    /// [`AttrView::render`], appended to `out`; false (and nothing
    /// appended) when the member is absent.
    pub fn render_into(&self, out: &mut String, member: &AttrMember, pmus: &PmuTypes) -> bool {
        let Some(value) = self.raw(member) else {
            return false;
        };
        // `write!` into a `String` cannot fail.
        match member.repr {
            Repr::Unsigned | Repr::Bit => {
                let _ = write!(out, "{value}");
            }
            Repr::Hex | Repr::Reserved => hex_into(out, value),
            Repr::Signed => {
                let _ = write!(out, "{}", signed_value(member, value));
            }
            Repr::Enum(table, unknown) => enum_into(out, table, value, unknown),
            Repr::SignedEnum(table, unknown) => {
                let signed = signed_value(member, value);
                match u64::try_from(signed)
                    .ok()
                    .and_then(|u| names::lookup(table, u))
                {
                    Some(name) => out.push_str(name),
                    None => {
                        let _ = write!(out, "{signed} /* {unknown} */");
                    }
                }
            }
            Repr::Flags(table, unknown) => names::flags_into(out, table, value, unknown),
            Repr::PmuType => type_into(out, value, pmus),
            Repr::Config => config_into(out, self.controls.ty, value),
            Repr::AttrSize => size_into(out, value),
            Repr::PreciseIp => {
                let what = match value {
                    0 => "arbitrary skid",
                    1 => "constant skid",
                    2 => "requested to have 0 skid",
                    _ => "must have 0 skid",
                };
                let _ = write!(out, "{value} /* {what} */");
            }
        }
        true
    }

    /// The members the text shows for this attr, in order, with their
    /// rendering: present, applicable, first applicable alias of a union,
    /// non-zero unless [`TextRule::Always`].
    #[must_use]
    pub fn text_members(&self, pmus: &PmuTypes) -> Vec<(&'static AttrMember, String)> {
        let mut out = Vec::new();
        self.each_text_member(pmus, &mut String::new(), |m, s| out.push((m, s.to_owned())));
        out
    }

    /// Calls `each` with every member [`AttrView::text_members`] lists and
    /// its rendering, rendered into `scratch` (no allocation once it has
    /// grown).
    pub fn each_text_member(
        &self,
        pmus: &PmuTypes,
        scratch: &mut String,
        mut each: impl FnMut(&'static AttrMember, &str),
    ) {
        // The unions whose first applicable alias was shown: at most a
        // few, so a small array, not a Vec.
        let mut unions_done: [&str; MAX_UNIONS] = [""; MAX_UNIONS];
        let mut unions = 0;
        let applicable = self.applicable(pmus);
        for m in ATTR_MEMBERS {
            if m.text == TextRule::Hidden || !applicable.allows(m.applies) {
                continue;
            }
            let Some(v) = self.raw(m) else { continue };
            if let Some(u) = m.union {
                // The bit members of aux_action are separate readings of
                // one word, not alternatives.
                if m.bits.is_none() {
                    if unions_done[..unions].contains(&u) {
                        continue;
                    }
                    if unions < unions_done.len() {
                        unions_done[unions] = u;
                        unions += 1;
                    }
                }
            }
            if v == 0 && m.text != TextRule::Always {
                continue;
            }
            scratch.clear();
            if !self.render_into(scratch, m, pmus) {
                continue;
            }
            if let Presence::Partial(n) = self.presence(m) {
                let _ = write!(scratch, " /* {n} of {} bytes captured */", m.width);
            }
            each(m, scratch);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(len: usize) -> Vec<u8> {
        vec![0u8; len]
    }

    #[test]
    fn slots_read_as_the_table_says() {
        // Random bytes at every captured length: every member's value
        // through its slot is its bits as the table places them.
        let mut x = 0x5eed_u64;
        let bytes: Vec<u8> = (0..ATTR_SIZE_MAX)
            .map(|_| {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                x.to_le_bytes()[7]
            })
            .collect();
        for len in 0..=ATTR_SIZE_MAX {
            let v = AttrView::new(&bytes[..len]);
            for m in ATTR_MEMBERS {
                let expected = (m.offset < len).then(|| {
                    let mut w = [0u8; 8];
                    let end = (m.offset + m.width).min(len);
                    w[..end - m.offset].copy_from_slice(&bytes[m.offset..end]);
                    let word = u64::from_le_bytes(w);
                    match m.bits {
                        Some((shift, n)) => (word >> shift) & ((1u64 << n) - 1),
                        None => word,
                    }
                });
                assert_eq!(v.raw(m), expected, "{} at {len}", m.name);
                assert_eq!(Slot::of(m).read(&bytes[..len]), expected, "{}", m.name);
                let signed = expected.map(|e| {
                    let bits = 64 - 8 * u32::try_from(m.width).unwrap();
                    #[allow(clippy::cast_possible_wrap)]
                    if m.is_signed() {
                        ((e << bits) as i64) >> bits
                    } else {
                        e as i64
                    }
                });
                assert_eq!(v.signed(m), signed, "{} at {len}", m.name);
            }
        }
    }

    #[test]
    fn every_condition_has_a_bit() {
        for m in ATTR_MEMBERS {
            assert!(u32::from(m.applies as u16) < u16::BITS, "{}", m.name);
        }
    }

    #[test]
    fn the_unions_fit_the_text_walk() {
        let mut unions: Vec<&str> = ATTR_MEMBERS.iter().filter_map(|m| m.union).collect();
        unions.sort_unstable();
        unions.dedup();
        assert!(unions.len() <= MAX_UNIONS, "{unions:?}");
    }

    #[test]
    fn controls_are_where_the_table_says() {
        let at = |name| {
            let m = member(name).unwrap();
            (m.offset, m.width, m.bits)
        };
        assert_eq!(at("type"), (TYPE_AT.0, TYPE_AT.1, None));
        assert_eq!(at("config1"), (CONFIG1_AT.0, CONFIG1_AT.1, None));
        assert_eq!(at("freq"), (FLAGS_AT.0, FLAGS_AT.1, Some((FREQ_BIT, 1))));
        assert_eq!(
            at("watermark"),
            (FLAGS_AT.0, FLAGS_AT.1, Some((WATERMARK_BIT, 1)))
        );
        // And the view reads them as the table does, partial bytes too.
        let mut bytes = attr(136);
        bytes[0] = 6;
        bytes[40 + 1] = 0x44; // bits 10 and 14
        bytes[56] = 1;
        for len in [0, 2, 41, 42, 57, 64, 136] {
            let v = AttrView::new(&bytes[..len]);
            let get = |n| v.get(n).unwrap_or(0);
            assert_eq!(v.controls.ty, get("type"), "{len}");
            assert_eq!(v.controls.freq, get("freq") != 0, "{len}");
            assert_eq!(v.controls.watermark, get("watermark") != 0, "{len}");
            assert_eq!(v.controls.config1, get("config1") != 0, "{len}");
        }
    }
}
