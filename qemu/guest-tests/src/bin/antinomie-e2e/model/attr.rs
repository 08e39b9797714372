// SPDX-License-Identifier: GPL-2.0-only
//! `struct perf_event_attr` of 6.12.94 as the model knows it: every
//! member's offset, width, kind, when a union's reading applies and how it
//! is named, and the JSON objects the reader must print for captured bytes.

use serde_json::{Map, Value};

use super::names::{
    bits, config_name, enum_name, hex, lookup, ATTR_SIZES, BP_LEN, BP_TYPE, BRANCH, CLOCKS, FORMAT,
    PERF_TYPE, SAMPLE,
};

/// A member's storage and meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A plain unsigned field.
    Plain,
    /// A signed field (`__s32 clockid`).
    Signed,
    /// A bit field: (first bit, bits). One bit is a JSON bool.
    Bits(u32, u32),
}

/// Which reading of a union's bytes applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum When {
    Always,
    FreqOff,
    FreqOn,
    WatermarkOff,
    WatermarkOn,
    Breakpoint,
    Kprobe,
    Uprobe,
    KprobeNoFunc,
    ProbeOffset,
}

/// How the `_names` object renders a member, if it is symbolic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sym {
    No,
    Type,
    Size,
    Config,
    SampleType,
    ReadFormat,
    BpType,
    BpLen,
    BranchSampleType,
    Clockid,
}

#[derive(Debug, Clone, Copy)]
struct Member {
    name: &'static str,
    off: usize,
    width: usize,
    kind: Kind,
    when: When,
    sym: Sym,
}

const fn m(name: &'static str, off: usize, width: usize) -> Member {
    Member {
        name,
        off,
        width,
        kind: Kind::Plain,
        when: When::Always,
        sym: Sym::No,
    }
}

const fn bit(name: &'static str, shift: u32) -> Member {
    Member {
        kind: Kind::Bits(shift, 1),
        ..m(name, 40, 8)
    }
}

impl Member {
    const fn when(self, when: When) -> Self {
        Member { when, ..self }
    }
    const fn sym(self, sym: Sym) -> Self {
        Member { sym, ..self }
    }
    const fn kind(self, kind: Kind) -> Self {
        Member { kind, ..self }
    }
}

/// `struct perf_event_attr` of 6.12.94, in declaration order, every union
/// alias and reserved field included (transcribed from the uapi header).
static MEMBERS: &[Member] = &[
    m("type", 0, 4).sym(Sym::Type),
    m("size", 4, 4).sym(Sym::Size),
    m("config", 8, 8).sym(Sym::Config),
    m("sample_period", 16, 8).when(When::FreqOff),
    m("sample_freq", 16, 8).when(When::FreqOn),
    m("sample_type", 24, 8).sym(Sym::SampleType),
    m("read_format", 32, 8).sym(Sym::ReadFormat),
    bit("disabled", 0),
    bit("inherit", 1),
    bit("pinned", 2),
    bit("exclusive", 3),
    bit("exclude_user", 4),
    bit("exclude_kernel", 5),
    bit("exclude_hv", 6),
    bit("exclude_idle", 7),
    bit("mmap", 8),
    bit("comm", 9),
    bit("freq", 10),
    bit("inherit_stat", 11),
    bit("enable_on_exec", 12),
    bit("task", 13),
    bit("watermark", 14),
    m("precise_ip", 40, 8).kind(Kind::Bits(15, 2)),
    bit("mmap_data", 17),
    bit("sample_id_all", 18),
    bit("exclude_host", 19),
    bit("exclude_guest", 20),
    bit("exclude_callchain_kernel", 21),
    bit("exclude_callchain_user", 22),
    bit("mmap2", 23),
    bit("comm_exec", 24),
    bit("use_clockid", 25),
    bit("context_switch", 26),
    bit("write_backward", 27),
    bit("namespaces", 28),
    bit("ksymbol", 29),
    bit("bpf_event", 30),
    bit("aux_output", 31),
    bit("cgroup", 32),
    bit("text_poke", 33),
    bit("build_id", 34),
    bit("inherit_thread", 35),
    bit("remove_on_exec", 36),
    bit("sigtrap", 37),
    m("__reserved_1", 40, 8).kind(Kind::Bits(38, 26)),
    m("wakeup_events", 48, 4).when(When::WatermarkOff),
    m("wakeup_watermark", 48, 4).when(When::WatermarkOn),
    m("bp_type", 52, 4).sym(Sym::BpType),
    m("bp_addr", 56, 8).when(When::Breakpoint),
    m("kprobe_func", 56, 8).when(When::Kprobe),
    m("uprobe_path", 56, 8).when(When::Uprobe),
    m("config1", 56, 8),
    m("bp_len", 64, 8).when(When::Breakpoint).sym(Sym::BpLen),
    m("kprobe_addr", 64, 8).when(When::KprobeNoFunc),
    m("probe_offset", 64, 8).when(When::ProbeOffset),
    m("config2", 64, 8),
    m("branch_sample_type", 72, 8).sym(Sym::BranchSampleType),
    m("sample_regs_user", 80, 8),
    m("sample_stack_user", 88, 4),
    m("clockid", 92, 4).kind(Kind::Signed).sym(Sym::Clockid),
    m("sample_regs_intr", 96, 8),
    m("aux_watermark", 104, 4),
    m("sample_max_stack", 108, 2),
    m("__reserved_2", 110, 2),
    m("aux_sample_size", 112, 4),
    m("aux_action", 116, 4),
    m("aux_start_paused", 116, 4).kind(Kind::Bits(0, 1)),
    m("aux_pause", 116, 4).kind(Kind::Bits(1, 1)),
    m("aux_resume", 116, 4).kind(Kind::Bits(2, 1)),
    m("__reserved_3", 116, 4).kind(Kind::Bits(3, 29)),
    m("sig_data", 120, 8),
    m("config3", 128, 8),
];

/// The name of every member of `struct perf_event_attr`, in order.
pub fn member_names() -> impl Iterator<Item = &'static str> {
    MEMBERS.iter().map(|m| m.name)
}

/// Dynamic PMUs by type, from `/sys/bus/event_source/devices/*/type`.
#[derive(Debug, Clone, Default)]
pub struct Pmus(pub Vec<(u32, String)>);

impl Pmus {
    /// Reads them under `sysfs` (empty when unreadable).
    #[must_use]
    pub fn read(sysfs: &std::path::Path) -> Self {
        let mut v = Vec::new();
        if let Ok(d) = std::fs::read_dir(sysfs.join("bus/event_source/devices")) {
            for e in d.flatten() {
                if let Ok(t) = std::fs::read_to_string(e.path().join("type")) {
                    if let Ok(t) = t.trim().parse() {
                        v.push((t, e.file_name().to_string_lossy().into_owned()));
                    }
                }
            }
        }
        Pmus(v)
    }

    fn name(&self, ty: u64) -> Option<&str> {
        self.0
            .iter()
            .find(|(t, _)| u64::from(*t) == ty)
            .map(|(_, n)| n.as_str())
    }
}

/// Captured attr bytes (the first `copied_len` bytes of the pointee).
#[derive(Debug, Clone, Copy)]
pub struct AttrBytes<'a>(pub &'a [u8]);

impl AttrBytes<'_> {
    fn raw(&self, member: &Member) -> Option<u64> {
        let bytes = self.0;
        if member.off >= bytes.len() {
            return None;
        }
        let end = (member.off + member.width).min(bytes.len());
        let mut buf = [0u8; 8];
        buf[..end - member.off].copy_from_slice(&bytes[member.off..end]);
        let word = u64::from_le_bytes(buf);
        Some(match member.kind {
            Kind::Bits(s, n) => (word >> s) & ((1u64 << n) - 1),
            _ => word,
        })
    }

    pub(super) fn get(&self, name: &str) -> u64 {
        MEMBERS
            .iter()
            .find(|m| m.name == name)
            .and_then(|m| self.raw(m))
            .unwrap_or(0)
    }

    fn applies(&self, m: &Member, pmus: &Pmus) -> bool {
        let ty = self.get("type");
        let pmu = pmus.name(ty);
        match m.when {
            When::Always => true,
            When::FreqOff => self.get("freq") == 0,
            When::FreqOn => self.get("freq") != 0,
            When::WatermarkOff => self.get("watermark") == 0,
            When::WatermarkOn => self.get("watermark") != 0,
            When::Breakpoint => ty == 5,
            When::Kprobe => pmu == Some("kprobe"),
            When::Uprobe => pmu == Some("uprobe"),
            When::KprobeNoFunc => pmu == Some("kprobe") && self.get("config1") == 0,
            When::ProbeOffset => {
                pmu == Some("uprobe") || (pmu == Some("kprobe") && self.get("config1") != 0)
            }
        }
    }

    /// `arg0.perf_event_attr`: present, applicable members, in order.
    #[must_use]
    pub fn members_json(&self, pmus: &Pmus) -> Map<String, Value> {
        let mut out = Map::new();
        for m in MEMBERS {
            if !self.applies(m, pmus) {
                continue;
            }
            let Some(v) = self.raw(m) else { continue };
            let json = match m.kind {
                Kind::Bits(_, 1) => Value::Bool(v != 0),
                #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
                Kind::Signed => Value::from(i64::from(v as u32 as i32)),
                _ => Value::from(v),
            };
            out.insert(m.name.to_owned(), json);
        }
        out
    }

    /// `arg0.perf_event_attr_names`: present, applicable symbolic members.
    #[must_use]
    pub fn names_json(&self, pmus: &Pmus) -> Map<String, Value> {
        let mut out = Map::new();
        for m in MEMBERS {
            if m.sym == Sym::No || !self.applies(m, pmus) {
                continue;
            }
            let Some(v) = self.raw(m) else { continue };
            let s = match m.sym {
                Sym::No => continue,
                Sym::Type => match (lookup(PERF_TYPE, v), pmus.name(v)) {
                    (Some(n), _) => n.to_owned(),
                    (None, Some(p)) => format!("{v} /* {p} */"),
                    (None, None) => format!("{} /* PERF_TYPE_??? */", hex(v)),
                },
                Sym::Size => match (v, lookup(ATTR_SIZES, v)) {
                    (_, Some(n)) => n.to_owned(),
                    (0, None) => "0 /* PERF_ATTR_SIZE_VER0 */".to_owned(),
                    (v, None) => format!("{v:#x} /* PERF_ATTR_SIZE_??? */"),
                },
                Sym::Config => config_name(self.get("type"), v),
                Sym::SampleType => bits(SAMPLE, v, "PERF_SAMPLE_???"),
                Sym::ReadFormat => bits(FORMAT, v, "PERF_FORMAT_???"),
                Sym::BranchSampleType => bits(BRANCH, v, "PERF_SAMPLE_BRANCH_???"),
                Sym::BpType => enum_name(BP_TYPE, v, "HW_BREAKPOINT_???"),
                Sym::BpLen => enum_name(BP_LEN, v, "HW_BREAKPOINT_LEN_???"),
                Sym::Clockid => {
                    #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
                    let c = i64::from(v as u32 as i32);
                    match u64::try_from(c).ok().and_then(|u| lookup(CLOCKS, u)) {
                        Some(n) => n.to_owned(),
                        None => format!("{c} /* CLOCK_??? */"),
                    }
                }
            };
            out.insert(m.name.to_owned(), Value::from(s));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn flag_word_is_covered_once() {
        let mut seen = 0u64;
        for m in MEMBERS.iter().filter(|m| m.off == 40) {
            let Kind::Bits(s, n) = m.kind else {
                panic!("{} is not a bit field", m.name)
            };
            let mask = if n == 64 {
                u64::MAX
            } else {
                ((1u64 << n) - 1) << s
            };
            assert_eq!(seen & mask, 0, "{}", m.name);
            seen |= mask;
        }
        assert_eq!(seen, u64::MAX);
    }
}
