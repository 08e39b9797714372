//! The table of `struct perf_event_attr` members of the pinned 6.12.94
//! uapi, and the views that decode captured attr bytes with it.
//!
//! [`ATTR_MEMBERS`] is the single source of what the reader knows about the
//! struct: the text and JSON output walk it, and the filter's
//! `args.attr_uptr.<member>` fields and the generated reference page are to
//! be built from it (issue 5). Every named field, every bit of the flag
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

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::names::{self, Names};

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
    const fn field(
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
    const fn bitfield(
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
    const fn flag(name: &'static str, shift: u32, doc: &'static str) -> Self {
        Self::bitfield(name, 40, 8, shift, 1, Repr::Bit, doc)
    }

    const fn alias(self, union: &'static str, applies: Applies) -> Self {
        AttrMember {
            union: Some(union),
            applies,
            ..self
        }
    }

    const fn text(self, text: TextRule) -> Self {
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

const HEX: Repr = Repr::Hex;
const U: Repr = Repr::Unsigned;

/// Every member of `struct perf_event_attr` (6.12.94 uapi, 136 bytes), in
/// declaration order; union aliases follow each other, the generic member
/// last so that text shows the first alias that applies.
pub static ATTR_MEMBERS: &[AttrMember] = &[
    AttrMember::field(
        "type",
        0,
        4,
        Repr::PmuType,
        "major type: PERF_TYPE_* or a dynamic PMU type",
    )
    .text(TextRule::Always),
    AttrMember::field(
        "size",
        4,
        4,
        Repr::AttrSize,
        "size of the struct as the caller declared it (0 means PERF_ATTR_SIZE_VER0)",
    )
    .text(TextRule::Always),
    AttrMember::field("config", 8, 8, Repr::Config, "type-specific event selector")
        .text(TextRule::Always),
    AttrMember::field(
        "sample_period",
        16,
        8,
        U,
        "sample every N events (when freq is 0)",
    )
    .alias("sample_period", Applies::FreqClear),
    AttrMember::field(
        "sample_freq",
        16,
        8,
        U,
        "samples per second (when freq is 1)",
    )
    .alias("sample_period", Applies::FreqSet),
    AttrMember::field(
        "sample_type",
        24,
        8,
        Repr::Flags(names::PERF_SAMPLE, "PERF_SAMPLE_???"),
        "what samples contain: PERF_SAMPLE_* bits",
    ),
    AttrMember::field(
        "read_format",
        32,
        8,
        Repr::Flags(names::PERF_FORMAT, "PERF_FORMAT_???"),
        "what read() returns: PERF_FORMAT_* bits",
    ),
    AttrMember::flag("disabled", 0, "off by default"),
    AttrMember::flag("inherit", 1, "children inherit it"),
    AttrMember::flag("pinned", 2, "must always be on the PMU"),
    AttrMember::flag("exclusive", 3, "only group on the PMU"),
    AttrMember::flag("exclude_user", 4, "don't count user"),
    AttrMember::flag("exclude_kernel", 5, "don't count kernel"),
    AttrMember::flag("exclude_hv", 6, "don't count hypervisor"),
    AttrMember::flag("exclude_idle", 7, "don't count when idle"),
    AttrMember::flag("mmap", 8, "include mmap data"),
    AttrMember::flag("comm", 9, "include comm data"),
    AttrMember::flag("freq", 10, "use sample_freq, not sample_period"),
    AttrMember::flag("inherit_stat", 11, "per task counts"),
    AttrMember::flag("enable_on_exec", 12, "next exec enables"),
    AttrMember::flag("task", 13, "trace fork/exit"),
    AttrMember::flag("watermark", 14, "use wakeup_watermark, not wakeup_events"),
    AttrMember::bitfield(
        "precise_ip",
        40,
        8,
        15,
        2,
        Repr::PreciseIp,
        "skid constraint, 0-3",
    ),
    AttrMember::flag("mmap_data", 17, "non-exec mmap data"),
    AttrMember::flag("sample_id_all", 18, "sample_type on all events"),
    AttrMember::flag("exclude_host", 19, "don't count in host"),
    AttrMember::flag("exclude_guest", 20, "don't count in guest"),
    AttrMember::flag("exclude_callchain_kernel", 21, "exclude kernel callchains"),
    AttrMember::flag("exclude_callchain_user", 22, "exclude user callchains"),
    AttrMember::flag("mmap2", 23, "include mmap with inode data"),
    AttrMember::flag("comm_exec", 24, "flag comm events that are due to an exec"),
    AttrMember::flag("use_clockid", 25, "use clockid for time fields"),
    AttrMember::flag("context_switch", 26, "context switch data"),
    AttrMember::flag(
        "write_backward",
        27,
        "write ring buffer from end to beginning",
    ),
    AttrMember::flag("namespaces", 28, "include namespaces data"),
    AttrMember::flag("ksymbol", 29, "include ksymbol events"),
    AttrMember::flag("bpf_event", 30, "include bpf events"),
    AttrMember::flag("aux_output", 31, "generate AUX records instead of events"),
    AttrMember::flag("cgroup", 32, "include cgroup events"),
    AttrMember::flag("text_poke", 33, "include text poke events"),
    AttrMember::flag("build_id", 34, "use build id in mmap2 events"),
    AttrMember::flag(
        "inherit_thread",
        35,
        "children only inherit if cloned with CLONE_THREAD",
    ),
    AttrMember::flag("remove_on_exec", 36, "event is removed from task on exec"),
    AttrMember::flag("sigtrap", 37, "send synchronous SIGTRAP on event"),
    AttrMember::bitfield(
        "__reserved_1",
        40,
        8,
        38,
        26,
        Repr::Reserved,
        "bits 38-63 of the flag word; must be 0",
    ),
    AttrMember::field(
        "wakeup_events",
        48,
        4,
        U,
        "wake up every N events (when watermark is 0)",
    )
    .alias("wakeup_events", Applies::WatermarkClear),
    AttrMember::field(
        "wakeup_watermark",
        48,
        4,
        U,
        "bytes before wakeup (when watermark is 1)",
    )
    .alias("wakeup_events", Applies::WatermarkSet),
    AttrMember::field(
        "bp_type",
        52,
        4,
        Repr::Enum(names::HW_BREAKPOINT_TYPE, "HW_BREAKPOINT_???"),
        "breakpoint type: HW_BREAKPOINT_*",
    ),
    AttrMember::field(
        "bp_addr",
        56,
        8,
        HEX,
        "breakpoint address (PERF_TYPE_BREAKPOINT)",
    )
    .alias("config1", Applies::Breakpoint),
    AttrMember::field(
        "kprobe_func",
        56,
        8,
        HEX,
        "user pointer to the probed function's name (kprobe PMU)",
    )
    .alias("config1", Applies::Kprobe),
    AttrMember::field(
        "uprobe_path",
        56,
        8,
        HEX,
        "user pointer to the probed file's path (uprobe PMU)",
    )
    .alias("config1", Applies::Uprobe),
    AttrMember::field("config1", 56, 8, HEX, "extension of config")
        .alias("config1", Applies::Always),
    AttrMember::field(
        "bp_len",
        64,
        8,
        Repr::Enum(names::HW_BREAKPOINT_LEN, "HW_BREAKPOINT_LEN_???"),
        "breakpoint length (PERF_TYPE_BREAKPOINT)",
    )
    .alias("config2", Applies::Breakpoint),
    AttrMember::field(
        "kprobe_addr",
        64,
        8,
        HEX,
        "probed kernel address when kprobe_func is 0 (kprobe PMU)",
    )
    .alias("config2", Applies::KprobeAddr),
    AttrMember::field(
        "probe_offset",
        64,
        8,
        HEX,
        "offset from kprobe_func or into uprobe_path (kprobe/uprobe PMU)",
    )
    .alias("config2", Applies::ProbeOffset),
    AttrMember::field("config2", 64, 8, HEX, "extension of config1")
        .alias("config2", Applies::Always),
    AttrMember::field(
        "branch_sample_type",
        72,
        8,
        Repr::Flags(names::PERF_SAMPLE_BRANCH, "PERF_SAMPLE_BRANCH_???"),
        "branches to sample: PERF_SAMPLE_BRANCH_* bits",
    ),
    AttrMember::field(
        "sample_regs_user",
        80,
        8,
        HEX,
        "user registers to dump on samples",
    ),
    AttrMember::field(
        "sample_stack_user",
        88,
        4,
        U,
        "bytes of user stack to dump on samples",
    ),
    AttrMember::field(
        "clockid",
        92,
        4,
        Repr::SignedEnum(names::CLOCK, "CLOCK_???"),
        "clock for time fields (with use_clockid)",
    ),
    AttrMember::field(
        "sample_regs_intr",
        96,
        8,
        HEX,
        "registers to dump at the sampled instruction or interrupt",
    ),
    AttrMember::field(
        "aux_watermark",
        104,
        4,
        U,
        "wakeup watermark of the AUX area",
    ),
    AttrMember::field(
        "sample_max_stack",
        108,
        2,
        U,
        "maximum callchain depth (0: the sysctl's)",
    ),
    AttrMember::field("__reserved_2", 110, 2, Repr::Reserved, "must be 0"),
    AttrMember::field("aux_sample_size", 112, 4, U, "bytes of AUX data in samples"),
    AttrMember::field(
        "aux_action",
        116,
        4,
        HEX,
        "the AUX action word (aux_start_paused, aux_pause, aux_resume)",
    )
    .alias("aux_action", Applies::Always)
    .text(TextRule::Hidden),
    AttrMember::bitfield(
        "aux_start_paused",
        116,
        4,
        0,
        1,
        Repr::Bit,
        "start AUX area tracing paused",
    )
    .alias("aux_action", Applies::Always),
    AttrMember::bitfield(
        "aux_pause",
        116,
        4,
        1,
        1,
        Repr::Bit,
        "on overflow, pause AUX area tracing",
    )
    .alias("aux_action", Applies::Always),
    AttrMember::bitfield(
        "aux_resume",
        116,
        4,
        2,
        1,
        Repr::Bit,
        "on overflow, resume AUX area tracing",
    )
    .alias("aux_action", Applies::Always),
    AttrMember::bitfield(
        "__reserved_3",
        116,
        4,
        3,
        29,
        Repr::Reserved,
        "bits 3-31 of aux_action; must be 0",
    )
    .alias("aux_action", Applies::Always),
    AttrMember::field(
        "sig_data",
        120,
        8,
        HEX,
        "user data for SIGTRAP's si_perf_data (with sigtrap)",
    ),
    AttrMember::field("config3", 128, 8, HEX, "extension of config2"),
];

/// The member with this C name.
#[must_use]
pub fn member(name: &str) -> Option<&'static AttrMember> {
    ATTR_MEMBERS.iter().find(|m| m.name == name)
}

/// The member behind a record key or filter field
/// `args.attr_uptr.<name>`.
#[must_use]
pub fn member_by_key(key: &str) -> Option<&'static AttrMember> {
    key.strip_prefix(ATTR_KEY_PREFIX).and_then(member)
}

/// Types of dynamic PMUs (`/sys/bus/event_source/devices/*/type`), so that
/// `type` and the kprobe/uprobe aliases of `config1`/`config2` can be
/// named. Empty means: no names for dynamic types.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PmuTypes {
    by_type: BTreeMap<u32, String>,
}

impl PmuTypes {
    /// No dynamic PMU known.
    #[must_use]
    pub fn none() -> Self {
        Self::default()
    }

    /// Reads `<root>/bus/event_source/devices/*/type` (`root` is normally
    /// `/sys`). A missing or unreadable directory gives an empty map.
    #[must_use]
    pub fn from_sysfs(root: &std::path::Path) -> Self {
        let mut by_type = BTreeMap::new();
        let dir = root.join("bus/event_source/devices");
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if let Ok(text) = std::fs::read_to_string(entry.path().join("type")) {
                    if let Ok(t) = text.trim().parse::<u32>() {
                        by_type.insert(t, name);
                    }
                }
            }
        }
        PmuTypes { by_type }
    }

    /// Builds a map from `(type, name)` pairs.
    pub fn from_pairs<I: IntoIterator<Item = (u32, String)>>(pairs: I) -> Self {
        PmuTypes {
            by_type: pairs.into_iter().collect(),
        }
    }

    /// The `(type, name)` pairs, by type.
    pub fn pairs(&self) -> impl Iterator<Item = (u32, &str)> {
        self.by_type.iter().map(|(t, n)| (*t, n.as_str()))
    }

    /// The name of the PMU with this type.
    #[must_use]
    pub fn name(&self, ty: u32) -> Option<&str> {
        self.by_type.get(&ty).map(String::as_str)
    }

    fn is(&self, ty: u64, pmu: &str) -> bool {
        u32::try_from(ty).ok().and_then(|t| self.name(t)) == Some(pmu)
    }
}

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
    controls: Controls,
}

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

impl<'a> AttrView<'a> {
    /// A view of `bytes`, the captured prefix of the attr.
    #[must_use]
    pub fn new(bytes: &'a [u8]) -> Self {
        let bytes = &bytes[..bytes.len().min(ATTR_SIZE_MAX)];
        let flags = word(bytes, FLAGS_AT);
        AttrView {
            bytes,
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
        if m.offset >= self.bytes.len() {
            return None;
        }
        let end = (m.offset + m.width).min(self.bytes.len());
        let mut buf = [0u8; 8];
        buf[..end - m.offset].copy_from_slice(&self.bytes[m.offset..end]);
        let word = u64::from_le_bytes(buf);
        Some(match m.bits {
            Some((shift, len)) => {
                (word >> shift) & (if len >= 64 { u64::MAX } else { (1 << len) - 1 })
            }
            None => word,
        })
    }

    /// The value of `m` as a signed number (sign-extended from its width
    /// for signed members), or `None` when absent.
    #[must_use]
    pub fn signed(&self, m: &AttrMember) -> Option<i64> {
        let raw = self.raw(m)?;
        let bits = u32::try_from(m.width * 8).unwrap_or(64);
        #[allow(clippy::cast_possible_wrap)]
        Some(if m.is_signed() && bits < 64 {
            ((raw << (64 - bits)) as i64) >> (64 - bits)
        } else {
            raw as i64
        })
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
        let c = &self.controls;
        match m.applies {
            Applies::Always => true,
            Applies::FreqClear => !c.freq,
            Applies::FreqSet => c.freq,
            Applies::WatermarkClear => !c.watermark,
            Applies::WatermarkSet => c.watermark,
            Applies::Breakpoint => c.ty == names::TYPE_BREAKPOINT,
            Applies::Kprobe => pmus.is(c.ty, "kprobe"),
            Applies::Uprobe => pmus.is(c.ty, "uprobe"),
            Applies::KprobeAddr => pmus.is(c.ty, "kprobe") && !c.config1,
            Applies::ProbeOffset => {
                pmus.is(c.ty, "uprobe") || (pmus.is(c.ty, "kprobe") && c.config1)
            }
        }
    }

    /// The member's value as the text output shows it (names for
    /// symbolic members), or `None` when absent.
    #[must_use]
    pub fn render(&self, member: &AttrMember, pmus: &PmuTypes) -> Option<String> {
        let value = self.raw(member)?;
        Some(match member.repr {
            Repr::Unsigned | Repr::Bit => value.to_string(),
            Repr::Hex | Repr::Reserved => hex(value),
            Repr::Signed => self.signed(member)?.to_string(),
            Repr::Enum(table, unknown) => render_enum(table, value, unknown),
            Repr::SignedEnum(table, unknown) => {
                let signed = self.signed(member)?;
                match u64::try_from(signed)
                    .ok()
                    .and_then(|u| names::lookup(table, u))
                {
                    Some(name) => name.to_owned(),
                    None => format!("{signed} /* {unknown} */"),
                }
            }
            Repr::Flags(table, unknown) => names::format_flags(table, value, unknown),
            Repr::PmuType => render_type(value, pmus),
            Repr::Config => render_config(self.controls.ty, value),
            Repr::AttrSize => render_size(value),
            Repr::PreciseIp => {
                let what = match value {
                    0 => "arbitrary skid",
                    1 => "constant skid",
                    2 => "requested to have 0 skid",
                    _ => "must have 0 skid",
                };
                format!("{value} /* {what} */")
            }
        })
    }

    /// The members the text shows for this attr, in order, with their
    /// rendering: present, applicable, first applicable alias of a union,
    /// non-zero unless [`TextRule::Always`].
    #[must_use]
    pub fn text_members(&self, pmus: &PmuTypes) -> Vec<(&'static AttrMember, String)> {
        let mut out = Vec::new();
        let mut unions_done: Vec<&'static str> = Vec::new();
        for m in ATTR_MEMBERS {
            if m.text == TextRule::Hidden || !self.applies(m, pmus) {
                continue;
            }
            let Some(v) = self.raw(m) else { continue };
            if let Some(u) = m.union {
                // The bit members of aux_action are separate readings of
                // one word, not alternatives.
                if m.bits.is_none() {
                    if unions_done.contains(&u) {
                        continue;
                    }
                    unions_done.push(u);
                }
            }
            if v == 0 && m.text != TextRule::Always {
                continue;
            }
            let Some(mut s) = self.render(m, pmus) else {
                continue;
            };
            if let Presence::Partial(n) = self.presence(m) {
                let _ = write!(s, " /* {n} of {} bytes captured */", m.width);
            }
            out.push((m, s));
        }
        out
    }
}

fn hex(v: u64) -> String {
    if v == 0 {
        "0".to_owned()
    } else {
        format!("{v:#x}")
    }
}

fn render_enum(t: Names, v: u64, unknown: &str) -> String {
    match names::lookup(t, v) {
        Some(n) => n.to_owned(),
        None => format!("{} /* {unknown} */", hex(v)),
    }
}

fn render_type(v: u64, pmus: &PmuTypes) -> String {
    if let Some(n) = names::lookup(names::PERF_TYPE, v) {
        return n.to_owned();
    }
    match u32::try_from(v).ok().and_then(|t| pmus.name(t)) {
        Some(pmu) => format!("{v} /* {pmu} */"),
        None => format!("{} /* PERF_TYPE_??? */", hex(v)),
    }
}

/// Renders a `size` value: `PERF_ATTR_SIZE_VER*`, or hex with a comment.
#[must_use]
pub fn render_size(v: u64) -> String {
    match (v, names::lookup(names::PERF_ATTR_SIZE, v)) {
        (_, Some(n)) => n.to_owned(),
        (0, None) => "0 /* PERF_ATTR_SIZE_VER0 */".to_owned(),
        (144, None) => "0x90 /* PERF_ATTR_SIZE_VER9, unknown to 6.12 */".to_owned(),
        (v, None) => format!("{v:#x} /* PERF_ATTR_SIZE_??? */"),
    }
}

fn render_config(ty: u64, c: u64) -> String {
    match ty {
        names::TYPE_HARDWARE => {
            let low = c & 0xffff_ffff;
            let mut s = String::new();
            if c >> 32 != 0 {
                let _ = write!(s, "{:#x}<<32|", c >> 32);
            }
            s.push_str(&render_enum(names::PERF_HW_ID, low, "PERF_COUNT_HW_???"));
            s
        }
        names::TYPE_SOFTWARE => render_enum(names::PERF_SW_ID, c, "PERF_COUNT_SW_???"),
        names::TYPE_TRACEPOINT => c.to_string(),
        names::TYPE_HW_CACHE => {
            let mut parts = Vec::new();
            if c >> 32 != 0 {
                parts.push(format!("{:#x}<<32", c >> 32));
            }
            if (c >> 24) & 0xff != 0 {
                parts.push(format!("{:#x}<<24", (c >> 24) & 0xff));
            }
            parts.push(format!(
                "{}<<16",
                render_enum(
                    names::PERF_HW_CACHE_RESULT,
                    (c >> 16) & 0xff,
                    "PERF_COUNT_HW_CACHE_RESULT_???"
                )
            ));
            parts.push(format!(
                "{}<<8",
                render_enum(
                    names::PERF_HW_CACHE_OP,
                    (c >> 8) & 0xff,
                    "PERF_COUNT_HW_CACHE_OP_???"
                )
            ));
            parts.push(render_enum(
                names::PERF_HW_CACHE_ID,
                c & 0xff,
                "PERF_COUNT_HW_CACHE_???",
            ));
            parts.join("|")
        }
        _ => hex(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(len: usize) -> Vec<u8> {
        vec![0u8; len]
    }

    #[test]
    fn since_matches_the_reference_table() {
        let since = |n| member(n).unwrap().since;
        assert_eq!(since("type"), 64);
        assert_eq!(since("config1"), 64);
        assert_eq!(since("kprobe_func"), 64);
        assert_eq!(since("bp_len"), 72);
        assert_eq!(since("branch_sample_type"), 80);
        assert_eq!(since("clockid"), 96);
        assert_eq!(since("sample_regs_intr"), 104);
        assert_eq!(since("__reserved_2"), 112);
        assert_eq!(since("aux_resume"), 120);
        assert_eq!(since("sig_data"), 128);
        assert_eq!(since("config3"), 136);
    }

    #[test]
    fn flag_word_bits_are_contiguous_and_cover_64_bits() {
        let mut covered = 0u64;
        for m in ATTR_MEMBERS.iter().filter(|m| m.offset == 40) {
            assert_eq!(covered & m.mask(), 0, "{} overlaps", m.name);
            covered |= m.mask();
        }
        assert_eq!(covered, u64::MAX);
        let mut aux = 0u64;
        for m in ATTR_MEMBERS
            .iter()
            .filter(|m| m.offset == 116 && m.bits.is_some())
        {
            aux |= m.mask();
        }
        assert_eq!(aux, 0xffff_ffff);
    }

    #[test]
    fn absent_members_have_no_value() {
        let mut b = attr(64);
        b[4] = 64;
        let v = AttrView::new(&b);
        assert_eq!(v.get("config1"), Some(0));
        assert_eq!(v.get("bp_len"), None);
        assert_eq!(v.presence(member("config2").unwrap()), Presence::Absent);
    }

    #[test]
    fn partial_members_are_zero_extended() {
        let mut b = attr(109);
        b[108] = 0x7f;
        let v = AttrView::new(&b);
        let m = member("sample_max_stack").unwrap();
        assert_eq!(v.presence(m), Presence::Partial(1));
        assert_eq!(v.raw(m), Some(0x7f));
        assert_eq!(v.get("__reserved_2"), None);
    }

    #[test]
    fn signed_clockid() {
        let mut b = attr(136);
        b[92..96].copy_from_slice(&(-1i32).to_le_bytes());
        let v = AttrView::new(&b);
        let m = member("clockid").unwrap();
        assert_eq!(v.signed(m), Some(-1));
        assert_eq!(
            v.render(m, &PmuTypes::none()).unwrap(),
            "-1 /* CLOCK_??? */"
        );
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

    #[test]
    fn config_by_type() {
        assert_eq!(render_config(3, 0x1_0002), "PERF_COUNT_HW_CACHE_RESULT_MISS<<16|PERF_COUNT_HW_CACHE_OP_READ<<8|PERF_COUNT_HW_CACHE_LL");
        assert_eq!(
            render_config(0, 0x8_0000_0000),
            "0x8<<32|PERF_COUNT_HW_CPU_CYCLES"
        );
        assert_eq!(render_config(1, 99), "0x63 /* PERF_COUNT_SW_??? */");
        assert_eq!(render_config(2, 99), "99");
        assert_eq!(render_config(4, 0xc0), "0xc0");
    }

    #[test]
    fn aliases_follow_type_and_bits() {
        let pmus = PmuTypes::from_pairs([(8, "uprobe".to_owned()), (9, "kprobe".to_owned())]);
        let mut b = attr(136);
        b[0] = 8;
        b[56] = 0x10;
        let v = AttrView::new(&b);
        let shown: Vec<_> = v
            .text_members(&pmus)
            .into_iter()
            .map(|(m, s)| format!("{}={s}", m.name))
            .collect();
        assert!(shown.contains(&"uprobe_path=0x10".to_owned()), "{shown:?}");
        assert!(!shown.iter().any(|s| s.starts_with("config1=")));
        assert!(v.applies(member("probe_offset").unwrap(), &pmus));
        assert!(!v.applies(member("bp_addr").unwrap(), &pmus));
        b[0] = 5;
        let v = AttrView::new(&b);
        assert!(v.applies(member("bp_addr").unwrap(), &pmus));
        // Without sysfs names, the generic alias only.
        b[0] = 8;
        let v = AttrView::new(&b);
        let shown: Vec<_> = v
            .text_members(&PmuTypes::none())
            .into_iter()
            .map(|(m, _)| m.name)
            .collect();
        assert!(shown.contains(&"config1"));
        assert!(shown.contains(&"type"));
    }
}
