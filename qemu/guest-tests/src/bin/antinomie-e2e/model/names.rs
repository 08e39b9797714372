// SPDX-License-Identifier: GPL-2.0-only
//! The uapi's names the model renders values with (`PERF_TYPE_*`,
//! `PERF_ATTR_SIZE_VER*`, event ids, sample and format bits, breakpoint
//! types, clocks, errnos), and how enums, bit sets and configs are
//! written with them.

pub(super) type Names = &'static [(u64, &'static str)];

pub(super) static PERF_TYPE: Names = &[
    (0, "PERF_TYPE_HARDWARE"),
    (1, "PERF_TYPE_SOFTWARE"),
    (2, "PERF_TYPE_TRACEPOINT"),
    (3, "PERF_TYPE_HW_CACHE"),
    (4, "PERF_TYPE_RAW"),
    (5, "PERF_TYPE_BREAKPOINT"),
];
pub(super) static ATTR_SIZES: Names = &[
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
pub(super) static SAMPLE: &[&str] = &[
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
pub(super) static FORMAT: &[&str] = &[
    "PERF_FORMAT_TOTAL_TIME_ENABLED",
    "PERF_FORMAT_TOTAL_TIME_RUNNING",
    "PERF_FORMAT_ID",
    "PERF_FORMAT_GROUP",
    "PERF_FORMAT_LOST",
];
pub(super) static BRANCH: &[&str] = &[
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
pub(super) static BP_TYPE: Names = &[
    (0, "HW_BREAKPOINT_EMPTY"),
    (1, "HW_BREAKPOINT_R"),
    (2, "HW_BREAKPOINT_W"),
    (3, "HW_BREAKPOINT_RW"),
    (4, "HW_BREAKPOINT_X"),
    (7, "HW_BREAKPOINT_INVALID"),
];
pub(super) static BP_LEN: Names = &[
    (1, "HW_BREAKPOINT_LEN_1"),
    (2, "HW_BREAKPOINT_LEN_2"),
    (3, "HW_BREAKPOINT_LEN_3"),
    (4, "HW_BREAKPOINT_LEN_4"),
    (5, "HW_BREAKPOINT_LEN_5"),
    (6, "HW_BREAKPOINT_LEN_6"),
    (7, "HW_BREAKPOINT_LEN_7"),
    (8, "HW_BREAKPOINT_LEN_8"),
];
pub(super) static CLOCKS: Names = &[
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

pub(super) fn lookup(t: Names, v: u64) -> Option<&'static str> {
    t.iter().find(|(k, _)| *k == v).map(|(_, n)| *n)
}

/// The name of a positive errno, `E<n>` when unknown.
#[must_use]
pub fn errno_name(e: u64) -> String {
    lookup(ERRNO, e).map_or_else(|| format!("E{e}"), str::to_owned)
}

pub(super) fn hex(v: u64) -> String {
    if v == 0 {
        "0".to_owned()
    } else {
        format!("{v:#x}")
    }
}

/// A bit set by name: `A|B|0x..` with unknown bits last; `0` for none;
/// only unknown bits: `0x.. /* PREFIX??? */`.
pub(super) fn bits(names: &[&str], v: u64, unknown: &str) -> String {
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

pub(super) fn enum_name(t: Names, v: u64, unknown: &str) -> String {
    lookup(t, v).map_or_else(|| format!("{} /* {unknown} */", hex(v)), str::to_owned)
}

pub(super) fn config_name(ty: u64, c: u64) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
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
