//! The comparator's own model of what Antinomie must record for a call,
//! written from the pinned 6.12.94 uapi (`include/uapi/linux/perf_event.h`,
//! `hw_breakpoint.h`, `errno.h`), the capture rules of `abi/antinomie.h`
//! and `perf_copy_attr()` in `kernel/events/core.c` — deliberately not from
//! the reader's code, so that the end-to-end test checks the reader's
//! decoding against an independent implementation instead of against
//! itself.

use serde_json::{Map, Value};

/// `sizeof(struct perf_event_attr)` on 6.12.94.
pub const ATTR_MAX: usize = 136;
/// `PERF_ATTR_SIZE_VER0`.
pub const VER0: u32 = 64;
/// `PAGE_SIZE` of the x86-64 guest, the largest attr size accepted.
pub const PAGE_SIZE: u32 = 4096;
/// `PERF_FLAG_ALL`.
pub const PERF_FLAG_ALL: u64 = 0xf;

pub const EFAULT: i32 = 14;
pub const EINVAL: i32 = 22;
pub const E2BIG: i32 = 7;

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

type Names = &'static [(u64, &'static str)];

static PERF_TYPE: Names = &[
    (0, "PERF_TYPE_HARDWARE"),
    (1, "PERF_TYPE_SOFTWARE"),
    (2, "PERF_TYPE_TRACEPOINT"),
    (3, "PERF_TYPE_HW_CACHE"),
    (4, "PERF_TYPE_RAW"),
    (5, "PERF_TYPE_BREAKPOINT"),
];
static ATTR_SIZES: Names = &[
    (64, "PERF_ATTR_SIZE_VER0"),
    (72, "PERF_ATTR_SIZE_VER1"),
    (80, "PERF_ATTR_SIZE_VER2"),
    (96, "PERF_ATTR_SIZE_VER3"),
    (104, "PERF_ATTR_SIZE_VER4"),
    (112, "PERF_ATTR_SIZE_VER5"),
    (120, "PERF_ATTR_SIZE_VER6"),
    (128, "PERF_ATTR_SIZE_VER7"),
    (136, "PERF_ATTR_SIZE_VER8"),
];
static HW_ID: Names = &[
    (0, "PERF_COUNT_HW_CPU_CYCLES"),
    (1, "PERF_COUNT_HW_INSTRUCTIONS"),
    (2, "PERF_COUNT_HW_CACHE_REFERENCES"),
    (3, "PERF_COUNT_HW_CACHE_MISSES"),
    (4, "PERF_COUNT_HW_BRANCH_INSTRUCTIONS"),
    (5, "PERF_COUNT_HW_BRANCH_MISSES"),
    (6, "PERF_COUNT_HW_BUS_CYCLES"),
    (7, "PERF_COUNT_HW_STALLED_CYCLES_FRONTEND"),
    (8, "PERF_COUNT_HW_STALLED_CYCLES_BACKEND"),
    (9, "PERF_COUNT_HW_REF_CPU_CYCLES"),
];
static SW_ID: Names = &[
    (0, "PERF_COUNT_SW_CPU_CLOCK"),
    (1, "PERF_COUNT_SW_TASK_CLOCK"),
    (2, "PERF_COUNT_SW_PAGE_FAULTS"),
    (3, "PERF_COUNT_SW_CONTEXT_SWITCHES"),
    (4, "PERF_COUNT_SW_CPU_MIGRATIONS"),
    (5, "PERF_COUNT_SW_PAGE_FAULTS_MIN"),
    (6, "PERF_COUNT_SW_PAGE_FAULTS_MAJ"),
    (7, "PERF_COUNT_SW_ALIGNMENT_FAULTS"),
    (8, "PERF_COUNT_SW_EMULATION_FAULTS"),
    (9, "PERF_COUNT_SW_DUMMY"),
    (10, "PERF_COUNT_SW_BPF_OUTPUT"),
    (11, "PERF_COUNT_SW_CGROUP_SWITCHES"),
];
static CACHE_ID: Names = &[
    (0, "PERF_COUNT_HW_CACHE_L1D"),
    (1, "PERF_COUNT_HW_CACHE_L1I"),
    (2, "PERF_COUNT_HW_CACHE_LL"),
    (3, "PERF_COUNT_HW_CACHE_DTLB"),
    (4, "PERF_COUNT_HW_CACHE_ITLB"),
    (5, "PERF_COUNT_HW_CACHE_BPU"),
    (6, "PERF_COUNT_HW_CACHE_NODE"),
];
static CACHE_OP: Names = &[
    (0, "PERF_COUNT_HW_CACHE_OP_READ"),
    (1, "PERF_COUNT_HW_CACHE_OP_WRITE"),
    (2, "PERF_COUNT_HW_CACHE_OP_PREFETCH"),
];
static CACHE_RESULT: Names = &[
    (0, "PERF_COUNT_HW_CACHE_RESULT_ACCESS"),
    (1, "PERF_COUNT_HW_CACHE_RESULT_MISS"),
];
/// Bit numbers of `enum perf_event_sample_format`.
static SAMPLE: &[&str] = &[
    "PERF_SAMPLE_IP",
    "PERF_SAMPLE_TID",
    "PERF_SAMPLE_TIME",
    "PERF_SAMPLE_ADDR",
    "PERF_SAMPLE_READ",
    "PERF_SAMPLE_CALLCHAIN",
    "PERF_SAMPLE_ID",
    "PERF_SAMPLE_CPU",
    "PERF_SAMPLE_PERIOD",
    "PERF_SAMPLE_STREAM_ID",
    "PERF_SAMPLE_RAW",
    "PERF_SAMPLE_BRANCH_STACK",
    "PERF_SAMPLE_REGS_USER",
    "PERF_SAMPLE_STACK_USER",
    "PERF_SAMPLE_WEIGHT",
    "PERF_SAMPLE_DATA_SRC",
    "PERF_SAMPLE_IDENTIFIER",
    "PERF_SAMPLE_TRANSACTION",
    "PERF_SAMPLE_REGS_INTR",
    "PERF_SAMPLE_PHYS_ADDR",
    "PERF_SAMPLE_AUX",
    "PERF_SAMPLE_CGROUP",
    "PERF_SAMPLE_DATA_PAGE_SIZE",
    "PERF_SAMPLE_CODE_PAGE_SIZE",
    "PERF_SAMPLE_WEIGHT_STRUCT",
];
static FORMAT: &[&str] = &[
    "PERF_FORMAT_TOTAL_TIME_ENABLED",
    "PERF_FORMAT_TOTAL_TIME_RUNNING",
    "PERF_FORMAT_ID",
    "PERF_FORMAT_GROUP",
    "PERF_FORMAT_LOST",
];
static BRANCH: &[&str] = &[
    "PERF_SAMPLE_BRANCH_USER",
    "PERF_SAMPLE_BRANCH_KERNEL",
    "PERF_SAMPLE_BRANCH_HV",
    "PERF_SAMPLE_BRANCH_ANY",
    "PERF_SAMPLE_BRANCH_ANY_CALL",
    "PERF_SAMPLE_BRANCH_ANY_RETURN",
    "PERF_SAMPLE_BRANCH_IND_CALL",
    "PERF_SAMPLE_BRANCH_ABORT_TX",
    "PERF_SAMPLE_BRANCH_IN_TX",
    "PERF_SAMPLE_BRANCH_NO_TX",
    "PERF_SAMPLE_BRANCH_COND",
    "PERF_SAMPLE_BRANCH_CALL_STACK",
    "PERF_SAMPLE_BRANCH_IND_JUMP",
    "PERF_SAMPLE_BRANCH_CALL",
    "PERF_SAMPLE_BRANCH_NO_FLAGS",
    "PERF_SAMPLE_BRANCH_NO_CYCLES",
    "PERF_SAMPLE_BRANCH_TYPE_SAVE",
    "PERF_SAMPLE_BRANCH_HW_INDEX",
    "PERF_SAMPLE_BRANCH_PRIV_SAVE",
    "PERF_SAMPLE_BRANCH_COUNTERS",
];
static PERF_FLAG: &[&str] = &[
    "PERF_FLAG_FD_NO_GROUP",
    "PERF_FLAG_FD_OUTPUT",
    "PERF_FLAG_PID_CGROUP",
    "PERF_FLAG_FD_CLOEXEC",
];
static BP_TYPE: Names = &[
    (0, "HW_BREAKPOINT_EMPTY"),
    (1, "HW_BREAKPOINT_R"),
    (2, "HW_BREAKPOINT_W"),
    (3, "HW_BREAKPOINT_RW"),
    (4, "HW_BREAKPOINT_X"),
    (7, "HW_BREAKPOINT_INVALID"),
];
static BP_LEN: Names = &[
    (1, "HW_BREAKPOINT_LEN_1"),
    (2, "HW_BREAKPOINT_LEN_2"),
    (3, "HW_BREAKPOINT_LEN_3"),
    (4, "HW_BREAKPOINT_LEN_4"),
    (5, "HW_BREAKPOINT_LEN_5"),
    (6, "HW_BREAKPOINT_LEN_6"),
    (7, "HW_BREAKPOINT_LEN_7"),
    (8, "HW_BREAKPOINT_LEN_8"),
];
static CLOCKS: Names = &[
    (0, "CLOCK_REALTIME"),
    (1, "CLOCK_MONOTONIC"),
    (2, "CLOCK_PROCESS_CPUTIME_ID"),
    (3, "CLOCK_THREAD_CPUTIME_ID"),
    (4, "CLOCK_MONOTONIC_RAW"),
    (5, "CLOCK_REALTIME_COARSE"),
    (6, "CLOCK_MONOTONIC_COARSE"),
    (7, "CLOCK_BOOTTIME"),
    (8, "CLOCK_REALTIME_ALARM"),
    (9, "CLOCK_BOOTTIME_ALARM"),
    (11, "CLOCK_TAI"),
];

/// x86-64 errno names: `asm-generic/errno-base.h`, `errno.h`, and the
/// kernel-internal `include/linux/errno.h` (which a raw return can carry).
static ERRNO: Names = &[
    (1, "EPERM"),
    (2, "ENOENT"),
    (3, "ESRCH"),
    (4, "EINTR"),
    (5, "EIO"),
    (6, "ENXIO"),
    (7, "E2BIG"),
    (8, "ENOEXEC"),
    (9, "EBADF"),
    (10, "ECHILD"),
    (11, "EAGAIN"),
    (12, "ENOMEM"),
    (13, "EACCES"),
    (14, "EFAULT"),
    (15, "ENOTBLK"),
    (16, "EBUSY"),
    (17, "EEXIST"),
    (18, "EXDEV"),
    (19, "ENODEV"),
    (20, "ENOTDIR"),
    (21, "EISDIR"),
    (22, "EINVAL"),
    (23, "ENFILE"),
    (24, "EMFILE"),
    (25, "ENOTTY"),
    (26, "ETXTBSY"),
    (27, "EFBIG"),
    (28, "ENOSPC"),
    (29, "ESPIPE"),
    (30, "EROFS"),
    (31, "EMLINK"),
    (32, "EPIPE"),
    (33, "EDOM"),
    (34, "ERANGE"),
    (35, "EDEADLK"),
    (36, "ENAMETOOLONG"),
    (37, "ENOLCK"),
    (38, "ENOSYS"),
    (39, "ENOTEMPTY"),
    (40, "ELOOP"),
    (42, "ENOMSG"),
    (43, "EIDRM"),
    (44, "ECHRNG"),
    (45, "EL2NSYNC"),
    (46, "EL3HLT"),
    (47, "EL3RST"),
    (48, "ELNRNG"),
    (49, "EUNATCH"),
    (50, "ENOCSI"),
    (51, "EL2HLT"),
    (52, "EBADE"),
    (53, "EBADR"),
    (54, "EXFULL"),
    (55, "ENOANO"),
    (56, "EBADRQC"),
    (57, "EBADSLT"),
    (59, "EBFONT"),
    (60, "ENOSTR"),
    (61, "ENODATA"),
    (62, "ETIME"),
    (63, "ENOSR"),
    (64, "ENONET"),
    (65, "ENOPKG"),
    (66, "EREMOTE"),
    (67, "ENOLINK"),
    (68, "EADV"),
    (69, "ESRMNT"),
    (70, "ECOMM"),
    (71, "EPROTO"),
    (72, "EMULTIHOP"),
    (73, "EDOTDOT"),
    (74, "EBADMSG"),
    (75, "EOVERFLOW"),
    (76, "ENOTUNIQ"),
    (77, "EBADFD"),
    (78, "EREMCHG"),
    (79, "ELIBACC"),
    (80, "ELIBBAD"),
    (81, "ELIBSCN"),
    (82, "ELIBMAX"),
    (83, "ELIBEXEC"),
    (84, "EILSEQ"),
    (85, "ERESTART"),
    (86, "ESTRPIPE"),
    (87, "EUSERS"),
    (88, "ENOTSOCK"),
    (89, "EDESTADDRREQ"),
    (90, "EMSGSIZE"),
    (91, "EPROTOTYPE"),
    (92, "ENOPROTOOPT"),
    (93, "EPROTONOSUPPORT"),
    (94, "ESOCKTNOSUPPORT"),
    (95, "EOPNOTSUPP"),
    (96, "EPFNOSUPPORT"),
    (97, "EAFNOSUPPORT"),
    (98, "EADDRINUSE"),
    (99, "EADDRNOTAVAIL"),
    (100, "ENETDOWN"),
    (101, "ENETUNREACH"),
    (102, "ENETRESET"),
    (103, "ECONNABORTED"),
    (104, "ECONNRESET"),
    (105, "ENOBUFS"),
    (106, "EISCONN"),
    (107, "ENOTCONN"),
    (108, "ESHUTDOWN"),
    (109, "ETOOMANYREFS"),
    (110, "ETIMEDOUT"),
    (111, "ECONNREFUSED"),
    (112, "EHOSTDOWN"),
    (113, "EHOSTUNREACH"),
    (114, "EALREADY"),
    (115, "EINPROGRESS"),
    (116, "ESTALE"),
    (117, "EUCLEAN"),
    (118, "ENOTNAM"),
    (119, "ENAVAIL"),
    (120, "EISNAM"),
    (121, "EREMOTEIO"),
    (122, "EDQUOT"),
    (123, "ENOMEDIUM"),
    (124, "EMEDIUMTYPE"),
    (125, "ECANCELED"),
    (126, "ENOKEY"),
    (127, "EKEYEXPIRED"),
    (128, "EKEYREVOKED"),
    (129, "EKEYREJECTED"),
    (130, "EOWNERDEAD"),
    (131, "ENOTRECOVERABLE"),
    (132, "ERFKILL"),
    (133, "EHWPOISON"),
    (512, "ERESTARTSYS"),
    (513, "ERESTARTNOINTR"),
    (514, "ERESTARTNOHAND"),
    (515, "ENOIOCTLCMD"),
    (516, "ERESTART_RESTARTBLOCK"),
    (517, "EPROBE_DEFER"),
    (518, "EOPENSTALE"),
    (519, "ENOPARAM"),
    (521, "EBADHANDLE"),
    (522, "ENOTSYNC"),
    (523, "EBADCOOKIE"),
    (524, "ENOTSUPP"),
    (525, "ETOOSMALL"),
    (526, "ESERVERFAULT"),
    (527, "EBADTYPE"),
    (528, "EJUKEBOX"),
    (529, "EIOCBQUEUED"),
    (530, "ERECALLCONFLICT"),
    (531, "ENOGRACE"),
];

fn lookup(t: Names, v: u64) -> Option<&'static str> {
    t.iter().find(|(k, _)| *k == v).map(|(_, n)| *n)
}

/// The name of a positive errno, `E<n>` when unknown.
#[must_use]
pub fn errno_name(e: u64) -> String {
    lookup(ERRNO, e).map_or_else(|| format!("E{e}"), str::to_owned)
}

fn hex(v: u64) -> String {
    if v == 0 {
        "0".to_owned()
    } else {
        format!("{v:#x}")
    }
}

/// A bit set by name: `A|B|0x..` with unknown bits last; `0` for none;
/// only unknown bits: `0x.. /* PREFIX??? */`.
fn bits(names: &[&str], v: u64, unknown: &str) -> String {
    if v == 0 {
        return "0".to_owned();
    }
    let mut out: Vec<String> = Vec::new();
    let mut rest = v;
    for (i, n) in names.iter().enumerate() {
        if v & (1 << i) != 0 {
            out.push((*n).to_owned());
            rest &= !(1 << i);
        }
    }
    if out.is_empty() {
        return format!("{rest:#x} /* {unknown} */");
    }
    if rest != 0 {
        out.push(format!("{rest:#x}"));
    }
    out.join("|")
}

/// `args.flags_names`.
#[must_use]
pub fn perf_flags_names(v: u64) -> String {
    bits(PERF_FLAG, v, "PERF_FLAG_???")
}

fn enum_name(t: Names, v: u64, unknown: &str) -> String {
    lookup(t, v).map_or_else(|| format!("{} /* {unknown} */", hex(v)), str::to_owned)
}

fn config_name(ty: u64, c: u64) -> String {
    match ty {
        0 => {
            let low = enum_name(HW_ID, c & 0xffff_ffff, "PERF_COUNT_HW_???");
            if c >> 32 == 0 {
                low
            } else {
                format!("{:#x}<<32|{low}", c >> 32)
            }
        }
        1 => enum_name(SW_ID, c, "PERF_COUNT_SW_???"),
        2 => c.to_string(),
        3 => {
            let mut parts = Vec::new();
            if c >> 32 != 0 {
                parts.push(format!("{:#x}<<32", c >> 32));
            }
            if (c >> 24) & 0xff != 0 {
                parts.push(format!("{:#x}<<24", (c >> 24) & 0xff));
            }
            parts.push(format!(
                "{}<<16",
                enum_name(
                    CACHE_RESULT,
                    (c >> 16) & 0xff,
                    "PERF_COUNT_HW_CACHE_RESULT_???"
                )
            ));
            parts.push(format!(
                "{}<<8",
                enum_name(CACHE_OP, (c >> 8) & 0xff, "PERF_COUNT_HW_CACHE_OP_???")
            ));
            parts.push(enum_name(CACHE_ID, c & 0xff, "PERF_COUNT_HW_CACHE_???"));
            parts.join("|")
        }
        _ => hex(c),
    }
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

    fn get(&self, name: &str) -> u64 {
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

/// `ANTINOMIE_STATUS_*`, by the capture rules of the uapi header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Complete,
    NullPtr,
    Fault,
    Truncated,
    InvalidSize,
    NotApplicable,
}

impl Status {
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Status::Complete => "complete",
            Status::NullPtr => "null_ptr",
            Status::Fault => "fault",
            Status::Truncated => "truncated",
            Status::InvalidSize => "invalid_size",
            Status::NotApplicable => "not_applicable",
        }
    }
}

/// What the entry capture of argument 0 must hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    pub status: Status,
    /// `tail_zero`, `tail_nonzero`, `size_fault`, in the header's bit order.
    pub flags: Vec<&'static str>,
    pub declared_size: u32,
    /// The captured bytes (their count is `copied_len`).
    pub data: Vec<u8>,
    pub fault_offset: Option<u32>,
}

/// What the kernel must answer for the capture, as far as it decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Fails with this errno before or in `perf_copy_attr()`; the bool:
    /// `perf_copy_attr()` wrote `size` back (its size checks).
    Fails(i32, bool),
    /// `perf_copy_attr()` succeeds; what follows is up to the rest of
    /// `perf_event_open()`.
    Copied,
    /// The model cannot tell (sample bits whose checks depend on the
    /// architecture or the configuration).
    Unknown,
}

/// The capture, from what the workload passed: the flags word, the
/// pointer, the readable bytes from it (`readable`, exact: the next byte is
/// unmapped) and their contents at the call.
#[must_use]
pub fn capture(flags: u64, ptr: u64, mem: &[u8], readable: usize) -> Capture {
    let none = |status| Capture {
        status,
        flags: Vec::new(),
        declared_size: 0,
        data: Vec::new(),
        fault_offset: None,
    };
    if flags & !PERF_FLAG_ALL != 0 {
        return none(Status::NotApplicable);
    }
    if ptr == 0 {
        return none(Status::NullPtr);
    }
    if readable < 8 {
        return Capture {
            status: Status::Fault,
            flags: vec!["size_fault"],
            declared_size: 0,
            data: Vec::new(),
            fault_offset: Some(4),
        };
    }
    let size = u32::from_le_bytes(mem[4..8].try_into().expect("4 bytes"));
    let eff = if size == 0 { VER0 } else { size };
    let mut cap = Capture {
        declared_size: size,
        ..none(Status::InvalidSize)
    };
    if !(VER0..=PAGE_SIZE).contains(&eff) {
        return cap;
    }
    let eff = eff as usize;
    let as_u32 = |v: usize| u32::try_from(v).expect("below a page");
    // copy_struct_from_user() checks the tail [136, eff) first: the first
    // non-zero byte wins over a later fault, and either fails the call
    // before the head is read, so no head byte is captured.
    if eff > ATTR_MAX {
        let scan_end = eff.min(readable);
        if mem
            .get(ATTR_MAX..scan_end)
            .is_some_and(|t| t.iter().any(|&b| b != 0))
        {
            cap.status = Status::Truncated;
            cap.flags = vec!["tail_nonzero"];
            return cap;
        }
        if readable < eff {
            cap.status = Status::Fault;
            cap.fault_offset = Some(as_u32(readable.max(ATTR_MAX)));
            return cap;
        }
    }
    let len = eff.min(ATTR_MAX);
    let copied = len.min(readable);
    cap.data = mem[..copied].to_vec();
    if copied < len {
        cap.status = Status::Fault;
        cap.fault_offset = Some(as_u32(copied));
    } else if eff <= ATTR_MAX {
        cap.status = Status::Complete;
    } else {
        cap.status = Status::Truncated;
        cap.flags = vec!["tail_zero"];
    }
    cap
}

/// What `perf_event_open()` must answer up to the end of
/// `perf_copy_attr()`, for this capture (which mirrors the kernel's reads).
#[must_use]
pub fn outcome(cap: &Capture) -> Outcome {
    match cap.status {
        Status::NotApplicable => Outcome::Fails(EINVAL, false),
        Status::NullPtr | Status::Fault => Outcome::Fails(EFAULT, false),
        Status::InvalidSize => Outcome::Fails(E2BIG, true),
        Status::Truncated if cap.flags.contains(&"tail_nonzero") => Outcome::Fails(E2BIG, true),
        Status::Complete | Status::Truncated => copy_attr_checks(AttrBytes(&cap.data)),
    }
}

/// `perf_copy_attr()`'s checks after the copy, for the bits this model
/// knows; the copy is zero beyond the captured bytes.
fn copy_attr_checks(a: AttrBytes<'_>) -> Outcome {
    const BRANCH_STACK: u64 = 1 << 11;
    const REGS_USER: u64 = 1 << 12;
    const STACK_USER: u64 = 1 << 13;
    const WEIGHT: u64 = 1 << 14;
    const REGS_INTR: u64 = 1 << 18;
    const CGROUP: u64 = 1 << 21;
    const WEIGHT_STRUCT: u64 = 1 << 24;
    let st = a.get("sample_type");
    let einval = Outcome::Fails(EINVAL, false);
    if a.get("__reserved_1") != 0 || a.get("__reserved_2") != 0 || a.get("__reserved_3") != 0 {
        return einval;
    }
    if st & !((1 << 25) - 1) != 0 || a.get("read_format") & !((1 << 5) - 1) != 0 {
        return einval;
    }
    if st & (BRANCH_STACK | REGS_USER | STACK_USER | REGS_INTR | CGROUP) != 0 {
        return Outcome::Unknown;
    }
    if st & WEIGHT != 0 && st & WEIGHT_STRUCT != 0 {
        return einval;
    }
    if a.get("inherit") == 0 && a.get("inherit_thread") != 0 {
        return einval;
    }
    if a.get("remove_on_exec") != 0 && a.get("enable_on_exec") != 0 {
        return einval;
    }
    if a.get("sigtrap") != 0 && a.get("remove_on_exec") == 0 {
        return einval;
    }
    Outcome::Copied
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

    #[test]
    fn capture_rules() {
        let mut a = vec![0u8; 200];
        a[4..8].copy_from_slice(&200u32.to_le_bytes());
        let c = capture(0, 1, &a, 150);
        assert_eq!(
            (c.status, c.fault_offset, c.data.len()),
            (Status::Fault, Some(150), 0)
        );
        a[140] = 1;
        let c = capture(0, 1, &a, 150);
        assert_eq!(
            (c.status, c.flags.clone(), c.data.len()),
            (Status::Truncated, vec!["tail_nonzero"], 0)
        );
        assert_eq!(outcome(&c), Outcome::Fails(E2BIG, true));
        // The tail is read first: it faults at its start, 136.
        let c = capture(0, 1, &a, 40);
        assert_eq!((c.status, c.fault_offset), (Status::Fault, Some(136)));
        let c = capture(0, 1, &a, 6);
        assert_eq!(
            (c.status, c.flags.clone()),
            (Status::Fault, vec!["size_fault"])
        );
        assert_eq!(capture(1 << 20, 0, &a, 0).status, Status::NotApplicable);
    }

    #[test]
    fn names() {
        assert_eq!(
            bits(SAMPLE, 0x4000_0003, "PERF_SAMPLE_???"),
            "PERF_SAMPLE_IP|PERF_SAMPLE_TID|0x40000000"
        );
        assert_eq!(
            bits(PERF_FLAG, 1 << 20, "PERF_FLAG_???"),
            "0x100000 /* PERF_FLAG_??? */"
        );
        assert_eq!(config_name(3, 0x1_0002), "PERF_COUNT_HW_CACHE_RESULT_MISS<<16|PERF_COUNT_HW_CACHE_OP_READ<<8|PERF_COUNT_HW_CACHE_LL");
    }
}
