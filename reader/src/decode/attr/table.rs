// SPDX-License-Identifier: GPL-2.0-only
//! [`ATTR_MEMBERS`]: every member of `struct perf_event_attr`, and the
//! lookups by name and record key.

use super::names;
use super::{Applies, AttrMember, Repr, TextRule, ATTR_KEY_PREFIX};

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
