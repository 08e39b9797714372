//! Name tables of the pinned 6.12.94 uapi: enumerations (value → name) and
//! bit sets (bit value → name), plus the complete x86-64 errno table.
//!
//! Every name here is checked against the real headers by the integration
//! test `decode::table_matches_c_header`, which compiles a C shim that
//! prints each name's value.

/// A table of `(value, name)`; for a bit set each value is one bit.
pub type Names = &'static [(u64, &'static str)];

/// `enum perf_type_id` (`PERF_TYPE_MAX` is not ABI and not listed).
pub static PERF_TYPE: Names = &[
    (0, "PERF_TYPE_HARDWARE"),
    (1, "PERF_TYPE_SOFTWARE"),
    (2, "PERF_TYPE_TRACEPOINT"),
    (3, "PERF_TYPE_HW_CACHE"),
    (4, "PERF_TYPE_RAW"),
    (5, "PERF_TYPE_BREAKPOINT"),
];

/// `PERF_TYPE_HARDWARE`.
pub const TYPE_HARDWARE: u64 = 0;
/// `PERF_TYPE_SOFTWARE`.
pub const TYPE_SOFTWARE: u64 = 1;
/// `PERF_TYPE_TRACEPOINT`.
pub const TYPE_TRACEPOINT: u64 = 2;
/// `PERF_TYPE_HW_CACHE`.
pub const TYPE_HW_CACHE: u64 = 3;
/// `PERF_TYPE_BREAKPOINT`.
pub const TYPE_BREAKPOINT: u64 = 5;

/// `enum perf_hw_id`: `config` of `PERF_TYPE_HARDWARE` (low 32 bits).
pub static PERF_HW_ID: Names = &[
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

/// `enum perf_hw_cache_id`: bits 0-7 of a `PERF_TYPE_HW_CACHE` config.
pub static PERF_HW_CACHE_ID: Names = &[
    (0, "PERF_COUNT_HW_CACHE_L1D"),
    (1, "PERF_COUNT_HW_CACHE_L1I"),
    (2, "PERF_COUNT_HW_CACHE_LL"),
    (3, "PERF_COUNT_HW_CACHE_DTLB"),
    (4, "PERF_COUNT_HW_CACHE_ITLB"),
    (5, "PERF_COUNT_HW_CACHE_BPU"),
    (6, "PERF_COUNT_HW_CACHE_NODE"),
];

/// `enum perf_hw_cache_op_id`: bits 8-15 of a `PERF_TYPE_HW_CACHE` config.
pub static PERF_HW_CACHE_OP: Names = &[
    (0, "PERF_COUNT_HW_CACHE_OP_READ"),
    (1, "PERF_COUNT_HW_CACHE_OP_WRITE"),
    (2, "PERF_COUNT_HW_CACHE_OP_PREFETCH"),
];

/// `enum perf_hw_cache_op_result_id`: bits 16-23 of a `PERF_TYPE_HW_CACHE`
/// config.
pub static PERF_HW_CACHE_RESULT: Names = &[
    (0, "PERF_COUNT_HW_CACHE_RESULT_ACCESS"),
    (1, "PERF_COUNT_HW_CACHE_RESULT_MISS"),
];

/// `enum perf_sw_ids`: `config` of `PERF_TYPE_SOFTWARE`.
pub static PERF_SW_ID: Names = &[
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

/// `enum perf_event_sample_format` (bits; `PERF_SAMPLE_MAX` excluded).
pub static PERF_SAMPLE: Names = &[
    (1 << 0, "PERF_SAMPLE_IP"),
    (1 << 1, "PERF_SAMPLE_TID"),
    (1 << 2, "PERF_SAMPLE_TIME"),
    (1 << 3, "PERF_SAMPLE_ADDR"),
    (1 << 4, "PERF_SAMPLE_READ"),
    (1 << 5, "PERF_SAMPLE_CALLCHAIN"),
    (1 << 6, "PERF_SAMPLE_ID"),
    (1 << 7, "PERF_SAMPLE_CPU"),
    (1 << 8, "PERF_SAMPLE_PERIOD"),
    (1 << 9, "PERF_SAMPLE_STREAM_ID"),
    (1 << 10, "PERF_SAMPLE_RAW"),
    (1 << 11, "PERF_SAMPLE_BRANCH_STACK"),
    (1 << 12, "PERF_SAMPLE_REGS_USER"),
    (1 << 13, "PERF_SAMPLE_STACK_USER"),
    (1 << 14, "PERF_SAMPLE_WEIGHT"),
    (1 << 15, "PERF_SAMPLE_DATA_SRC"),
    (1 << 16, "PERF_SAMPLE_IDENTIFIER"),
    (1 << 17, "PERF_SAMPLE_TRANSACTION"),
    (1 << 18, "PERF_SAMPLE_REGS_INTR"),
    (1 << 19, "PERF_SAMPLE_PHYS_ADDR"),
    (1 << 20, "PERF_SAMPLE_AUX"),
    (1 << 21, "PERF_SAMPLE_CGROUP"),
    (1 << 22, "PERF_SAMPLE_DATA_PAGE_SIZE"),
    (1 << 23, "PERF_SAMPLE_CODE_PAGE_SIZE"),
    (1 << 24, "PERF_SAMPLE_WEIGHT_STRUCT"),
];

/// `PERF_SAMPLE_BRANCH_STACK`.
pub const SAMPLE_BRANCH_STACK: u64 = 1 << 11;
/// `PERF_SAMPLE_STACK_USER`.
pub const SAMPLE_STACK_USER: u64 = 1 << 13;

/// `enum perf_event_read_format` (bits; `PERF_FORMAT_MAX` excluded).
pub static PERF_FORMAT: Names = &[
    (1 << 0, "PERF_FORMAT_TOTAL_TIME_ENABLED"),
    (1 << 1, "PERF_FORMAT_TOTAL_TIME_RUNNING"),
    (1 << 2, "PERF_FORMAT_ID"),
    (1 << 3, "PERF_FORMAT_GROUP"),
    (1 << 4, "PERF_FORMAT_LOST"),
];

/// `enum perf_branch_sample_type` (bits; `PERF_SAMPLE_BRANCH_MAX`
/// excluded).
pub static PERF_SAMPLE_BRANCH: Names = &[
    (1 << 0, "PERF_SAMPLE_BRANCH_USER"),
    (1 << 1, "PERF_SAMPLE_BRANCH_KERNEL"),
    (1 << 2, "PERF_SAMPLE_BRANCH_HV"),
    (1 << 3, "PERF_SAMPLE_BRANCH_ANY"),
    (1 << 4, "PERF_SAMPLE_BRANCH_ANY_CALL"),
    (1 << 5, "PERF_SAMPLE_BRANCH_ANY_RETURN"),
    (1 << 6, "PERF_SAMPLE_BRANCH_IND_CALL"),
    (1 << 7, "PERF_SAMPLE_BRANCH_ABORT_TX"),
    (1 << 8, "PERF_SAMPLE_BRANCH_IN_TX"),
    (1 << 9, "PERF_SAMPLE_BRANCH_NO_TX"),
    (1 << 10, "PERF_SAMPLE_BRANCH_COND"),
    (1 << 11, "PERF_SAMPLE_BRANCH_CALL_STACK"),
    (1 << 12, "PERF_SAMPLE_BRANCH_IND_JUMP"),
    (1 << 13, "PERF_SAMPLE_BRANCH_CALL"),
    (1 << 14, "PERF_SAMPLE_BRANCH_NO_FLAGS"),
    (1 << 15, "PERF_SAMPLE_BRANCH_NO_CYCLES"),
    (1 << 16, "PERF_SAMPLE_BRANCH_TYPE_SAVE"),
    (1 << 17, "PERF_SAMPLE_BRANCH_HW_INDEX"),
    (1 << 18, "PERF_SAMPLE_BRANCH_PRIV_SAVE"),
    (1 << 19, "PERF_SAMPLE_BRANCH_COUNTERS"),
];

/// `PERF_FLAG_*`: the syscall's `flags` argument (bits).
pub static PERF_FLAG: Names = &[
    (1 << 0, "PERF_FLAG_FD_NO_GROUP"),
    (1 << 1, "PERF_FLAG_FD_OUTPUT"),
    (1 << 2, "PERF_FLAG_PID_CGROUP"),
    (1 << 3, "PERF_FLAG_FD_CLOEXEC"),
];

/// Clock ids (`<linux/time.h>`), for `clockid`; perf accepts only
/// `REALTIME`, `MONOTONIC`, `MONOTONIC_RAW`, `BOOTTIME` and `TAI`.
pub static CLOCK: Names = &[
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
    (10, "CLOCK_SGI_CYCLE"),
    (11, "CLOCK_TAI"),
];

/// `bp_type` values (`<linux/hw_breakpoint.h>`); 7 is `RW|X`, named
/// `HW_BREAKPOINT_INVALID` there.
pub static HW_BREAKPOINT_TYPE: Names = &[
    (0, "HW_BREAKPOINT_EMPTY"),
    (1, "HW_BREAKPOINT_R"),
    (2, "HW_BREAKPOINT_W"),
    (3, "HW_BREAKPOINT_RW"),
    (4, "HW_BREAKPOINT_X"),
    (7, "HW_BREAKPOINT_INVALID"),
];

/// `bp_len` values (`<linux/hw_breakpoint.h>`).
pub static HW_BREAKPOINT_LEN: Names = &[
    (1, "HW_BREAKPOINT_LEN_1"),
    (2, "HW_BREAKPOINT_LEN_2"),
    (3, "HW_BREAKPOINT_LEN_3"),
    (4, "HW_BREAKPOINT_LEN_4"),
    (5, "HW_BREAKPOINT_LEN_5"),
    (6, "HW_BREAKPOINT_LEN_6"),
    (7, "HW_BREAKPOINT_LEN_7"),
    (8, "HW_BREAKPOINT_LEN_8"),
];

/// `PERF_ATTR_SIZE_VER0` … `VER8`: the sizes of `struct perf_event_attr`
/// the pinned uapi knows.
pub static PERF_ATTR_SIZE: Names = &[
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

/// The name of `value` in an enumeration table.
#[must_use]
pub fn lookup(table: Names, value: u64) -> Option<&'static str> {
    table.iter().find(|(v, _)| *v == value).map(|(_, n)| *n)
}

/// The value of `name` in a table.
#[must_use]
pub fn value_of(table: Names, name: &str) -> Option<u64> {
    table.iter().find(|(_, n)| *n == name).map(|(v, _)| *v)
}

/// Splits a bit set into the names of its known bits and the bits no name
/// covers.
#[must_use]
pub fn split_flags(table: Names, value: u64) -> (Vec<&'static str>, u64) {
    let mut names = Vec::new();
    let rest = known_flags(table, value, |name| names.push(name));
    (names, rest)
}

/// Calls `each` with the name of every known bit of `value`, in table
/// order; returns the bits no name covers.
pub fn known_flags(table: Names, value: u64, mut each: impl FnMut(&'static str)) -> u64 {
    let mut rest = value;
    for &(bit, name) in table {
        if value & bit == bit && bit != 0 {
            each(name);
            rest &= !bit;
        }
    }
    rest
}

/// Renders a bit set as strace does: `A|B|0x…` with unknown bits in hex
/// last, `0` when empty, and `0x… /* PREFIX??? */` when no bit is known.
#[must_use]
pub fn format_flags(table: Names, value: u64, unknown_comment: &str) -> String {
    let mut s = String::new();
    flags_into(&mut s, table, value, unknown_comment);
    s
}

/// [`format_flags`], appended to `out`.
pub fn flags_into(out: &mut String, table: Names, value: u64, unknown_comment: &str) {
    if value == 0 {
        out.push('0');
        return;
    }
    let start = out.len();
    let rest = known_flags(table, value, |name| {
        if out.len() > start {
            out.push('|');
        }
        out.push_str(name);
    });
    if out.len() == start {
        push_hex(out, rest);
        out.push_str(" /* ");
        out.push_str(unknown_comment);
        out.push_str(" */");
    } else if rest != 0 {
        out.push('|');
        push_hex(out, rest);
    }
}

/// Appends `v` as `{v:#x}` formats it: `0x` and its lowercase hex digits,
/// without leading zeros. Without `core::fmt`, whose machinery cost more
/// than the digits in the full JSON line's flag renderings (random
/// `sample_type` and `read_format` words have unknown bits).
pub fn push_hex(out: &mut String, v: u64) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    // One digit per 4 bits of the bit length; one for 0.
    let digits = (64 - (v | 1).leading_zeros()).div_ceil(4);
    out.reserve(2 + digits as usize);
    out.push_str("0x");
    for i in (0..digits).rev() {
        // A nibble: below 16.
        #[allow(clippy::cast_possible_truncation)]
        out.push(char::from(HEX[((v >> (4 * i)) & 0xf) as usize]));
    }
}

/// One errno: number, name, and glibc's `strerror()` text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Errno {
    /// The positive errno value.
    pub value: u32,
    /// Its symbolic name, e.g. `E2BIG`.
    pub name: &'static str,
    /// What `strerror()` says, e.g. `Argument list too long`.
    pub message: &'static str,
    /// A kernel-internal value (`include/linux/errno.h`, 512 and up) that
    /// user space should never see; it still appears in raw returns.
    pub internal: bool,
}

const fn e(value: u32, name: &'static str, message: &'static str) -> Errno {
    Errno {
        value,
        name,
        message,
        internal: false,
    }
}

const fn k(value: u32, name: &'static str, message: &'static str) -> Errno {
    Errno {
        value,
        name,
        message,
        internal: true,
    }
}

/// Every errno of Linux on x86-64 (`asm-generic/errno-base.h`,
/// `asm-generic/errno.h`), then the kernel-internal ones of
/// `include/linux/errno.h`. Aliases (`EWOULDBLOCK`, `EDEADLOCK`,
/// `ENOTSUP`) share a value with the name listed and are not repeated.
pub static ERRNO: &[Errno] = &[
    e(1, "EPERM", "Operation not permitted"),
    e(2, "ENOENT", "No such file or directory"),
    e(3, "ESRCH", "No such process"),
    e(4, "EINTR", "Interrupted system call"),
    e(5, "EIO", "Input/output error"),
    e(6, "ENXIO", "No such device or address"),
    e(7, "E2BIG", "Argument list too long"),
    e(8, "ENOEXEC", "Exec format error"),
    e(9, "EBADF", "Bad file descriptor"),
    e(10, "ECHILD", "No child processes"),
    e(11, "EAGAIN", "Resource temporarily unavailable"),
    e(12, "ENOMEM", "Cannot allocate memory"),
    e(13, "EACCES", "Permission denied"),
    e(14, "EFAULT", "Bad address"),
    e(15, "ENOTBLK", "Block device required"),
    e(16, "EBUSY", "Device or resource busy"),
    e(17, "EEXIST", "File exists"),
    e(18, "EXDEV", "Invalid cross-device link"),
    e(19, "ENODEV", "No such device"),
    e(20, "ENOTDIR", "Not a directory"),
    e(21, "EISDIR", "Is a directory"),
    e(22, "EINVAL", "Invalid argument"),
    e(23, "ENFILE", "Too many open files in system"),
    e(24, "EMFILE", "Too many open files"),
    e(25, "ENOTTY", "Inappropriate ioctl for device"),
    e(26, "ETXTBSY", "Text file busy"),
    e(27, "EFBIG", "File too large"),
    e(28, "ENOSPC", "No space left on device"),
    e(29, "ESPIPE", "Illegal seek"),
    e(30, "EROFS", "Read-only file system"),
    e(31, "EMLINK", "Too many links"),
    e(32, "EPIPE", "Broken pipe"),
    e(33, "EDOM", "Numerical argument out of domain"),
    e(34, "ERANGE", "Numerical result out of range"),
    e(35, "EDEADLK", "Resource deadlock avoided"),
    e(36, "ENAMETOOLONG", "File name too long"),
    e(37, "ENOLCK", "No locks available"),
    e(38, "ENOSYS", "Function not implemented"),
    e(39, "ENOTEMPTY", "Directory not empty"),
    e(40, "ELOOP", "Too many levels of symbolic links"),
    e(42, "ENOMSG", "No message of desired type"),
    e(43, "EIDRM", "Identifier removed"),
    e(44, "ECHRNG", "Channel number out of range"),
    e(45, "EL2NSYNC", "Level 2 not synchronized"),
    e(46, "EL3HLT", "Level 3 halted"),
    e(47, "EL3RST", "Level 3 reset"),
    e(48, "ELNRNG", "Link number out of range"),
    e(49, "EUNATCH", "Protocol driver not attached"),
    e(50, "ENOCSI", "No CSI structure available"),
    e(51, "EL2HLT", "Level 2 halted"),
    e(52, "EBADE", "Invalid exchange"),
    e(53, "EBADR", "Invalid request descriptor"),
    e(54, "EXFULL", "Exchange full"),
    e(55, "ENOANO", "No anode"),
    e(56, "EBADRQC", "Invalid request code"),
    e(57, "EBADSLT", "Invalid slot"),
    e(59, "EBFONT", "Bad font file format"),
    e(60, "ENOSTR", "Device not a stream"),
    e(61, "ENODATA", "No data available"),
    e(62, "ETIME", "Timer expired"),
    e(63, "ENOSR", "Out of streams resources"),
    e(64, "ENONET", "Machine is not on the network"),
    e(65, "ENOPKG", "Package not installed"),
    e(66, "EREMOTE", "Object is remote"),
    e(67, "ENOLINK", "Link has been severed"),
    e(68, "EADV", "Advertise error"),
    e(69, "ESRMNT", "Srmount error"),
    e(70, "ECOMM", "Communication error on send"),
    e(71, "EPROTO", "Protocol error"),
    e(72, "EMULTIHOP", "Multihop attempted"),
    e(73, "EDOTDOT", "RFS specific error"),
    e(74, "EBADMSG", "Bad message"),
    e(75, "EOVERFLOW", "Value too large for defined data type"),
    e(76, "ENOTUNIQ", "Name not unique on network"),
    e(77, "EBADFD", "File descriptor in bad state"),
    e(78, "EREMCHG", "Remote address changed"),
    e(79, "ELIBACC", "Can not access a needed shared library"),
    e(80, "ELIBBAD", "Accessing a corrupted shared library"),
    e(81, "ELIBSCN", ".lib section in a.out corrupted"),
    e(
        82,
        "ELIBMAX",
        "Attempting to link in too many shared libraries",
    ),
    e(83, "ELIBEXEC", "Cannot exec a shared library directly"),
    e(
        84,
        "EILSEQ",
        "Invalid or incomplete multibyte or wide character",
    ),
    e(
        85,
        "ERESTART",
        "Interrupted system call should be restarted",
    ),
    e(86, "ESTRPIPE", "Streams pipe error"),
    e(87, "EUSERS", "Too many users"),
    e(88, "ENOTSOCK", "Socket operation on non-socket"),
    e(89, "EDESTADDRREQ", "Destination address required"),
    e(90, "EMSGSIZE", "Message too long"),
    e(91, "EPROTOTYPE", "Protocol wrong type for socket"),
    e(92, "ENOPROTOOPT", "Protocol not available"),
    e(93, "EPROTONOSUPPORT", "Protocol not supported"),
    e(94, "ESOCKTNOSUPPORT", "Socket type not supported"),
    e(95, "EOPNOTSUPP", "Operation not supported"),
    e(96, "EPFNOSUPPORT", "Protocol family not supported"),
    e(
        97,
        "EAFNOSUPPORT",
        "Address family not supported by protocol",
    ),
    e(98, "EADDRINUSE", "Address already in use"),
    e(99, "EADDRNOTAVAIL", "Cannot assign requested address"),
    e(100, "ENETDOWN", "Network is down"),
    e(101, "ENETUNREACH", "Network is unreachable"),
    e(102, "ENETRESET", "Network dropped connection on reset"),
    e(103, "ECONNABORTED", "Software caused connection abort"),
    e(104, "ECONNRESET", "Connection reset by peer"),
    e(105, "ENOBUFS", "No buffer space available"),
    e(106, "EISCONN", "Transport endpoint is already connected"),
    e(107, "ENOTCONN", "Transport endpoint is not connected"),
    e(
        108,
        "ESHUTDOWN",
        "Cannot send after transport endpoint shutdown",
    ),
    e(109, "ETOOMANYREFS", "Too many references: cannot splice"),
    e(110, "ETIMEDOUT", "Connection timed out"),
    e(111, "ECONNREFUSED", "Connection refused"),
    e(112, "EHOSTDOWN", "Host is down"),
    e(113, "EHOSTUNREACH", "No route to host"),
    e(114, "EALREADY", "Operation already in progress"),
    e(115, "EINPROGRESS", "Operation now in progress"),
    e(116, "ESTALE", "Stale file handle"),
    e(117, "EUCLEAN", "Structure needs cleaning"),
    e(118, "ENOTNAM", "Not a XENIX named type file"),
    e(119, "ENAVAIL", "No XENIX semaphores available"),
    e(120, "EISNAM", "Is a named type file"),
    e(121, "EREMOTEIO", "Remote I/O error"),
    e(122, "EDQUOT", "Disk quota exceeded"),
    e(123, "ENOMEDIUM", "No medium found"),
    e(124, "EMEDIUMTYPE", "Wrong medium type"),
    e(125, "ECANCELED", "Operation canceled"),
    e(126, "ENOKEY", "Required key not available"),
    e(127, "EKEYEXPIRED", "Key has expired"),
    e(128, "EKEYREVOKED", "Key has been revoked"),
    e(129, "EKEYREJECTED", "Key was rejected by service"),
    e(130, "EOWNERDEAD", "Owner died"),
    e(131, "ENOTRECOVERABLE", "State not recoverable"),
    e(132, "ERFKILL", "Operation not possible due to RF-kill"),
    e(133, "EHWPOISON", "Memory page has hardware error"),
    k(
        512,
        "ERESTARTSYS",
        "Restart the system call (kernel-internal)",
    ),
    k(
        513,
        "ERESTARTNOINTR",
        "Restart the system call (kernel-internal)",
    ),
    k(
        514,
        "ERESTARTNOHAND",
        "Restart if no handler (kernel-internal)",
    ),
    k(515, "ENOIOCTLCMD", "No ioctl command (kernel-internal)"),
    k(
        516,
        "ERESTART_RESTARTBLOCK",
        "Restart by calling sys_restart_syscall (kernel-internal)",
    ),
    k(
        517,
        "EPROBE_DEFER",
        "Driver requests probe retry (kernel-internal)",
    ),
    k(
        518,
        "EOPENSTALE",
        "Open found a stale dentry (kernel-internal)",
    ),
    k(519, "ENOPARAM", "Parameter not supported (kernel-internal)"),
    k(
        521,
        "EBADHANDLE",
        "Illegal NFS file handle (kernel-internal)",
    ),
    k(
        522,
        "ENOTSYNC",
        "Update synchronization mismatch (kernel-internal)",
    ),
    k(523, "EBADCOOKIE", "Cookie is stale (kernel-internal)"),
    k(
        524,
        "ENOTSUPP",
        "Operation is not supported (kernel-internal)",
    ),
    k(
        525,
        "ETOOSMALL",
        "Buffer or request is too small (kernel-internal)",
    ),
    k(
        526,
        "ESERVERFAULT",
        "An untranslatable error occurred (kernel-internal)",
    ),
    k(
        527,
        "EBADTYPE",
        "Type not supported by server (kernel-internal)",
    ),
    k(
        528,
        "EJUKEBOX",
        "Request initiated, but will not complete before timeout (kernel-internal)",
    ),
    k(
        529,
        "EIOCBQUEUED",
        "iocb queued, will get completion event (kernel-internal)",
    ),
    k(
        530,
        "ERECALLCONFLICT",
        "Conflict with recalled state (kernel-internal)",
    ),
    k(
        531,
        "ENOGRACE",
        "NFS file lock reclaim refused (kernel-internal)",
    ),
];

/// The errno with this positive value.
#[must_use]
pub fn errno(value: u32) -> Option<&'static Errno> {
    ERRNO.iter().find(|e| e.value == value)
}

/// The errno with this name (aliases included).
#[must_use]
pub fn errno_by_name(name: &str) -> Option<&'static Errno> {
    let canonical = match name {
        "EWOULDBLOCK" => "EAGAIN",
        "EDEADLOCK" => "EDEADLK",
        "ENOTSUP" => "EOPNOTSUPP",
        other => other,
    };
    ERRNO.iter().find(|e| e.name == canonical)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_table_is_sorted_and_unique() {
        for w in ERRNO.windows(2) {
            assert!(w[0].value < w[1].value, "{} / {}", w[0].name, w[1].name);
        }
        assert_eq!(errno(7).unwrap().name, "E2BIG");
        assert_eq!(errno_by_name("EWOULDBLOCK").unwrap().value, 11);
        assert!(errno(41).is_none());
    }

    #[test]
    fn flags_render_like_strace() {
        assert_eq!(format_flags(PERF_FLAG, 0, "PERF_FLAG_???"), "0");
        assert_eq!(
            format_flags(PERF_FLAG, 8, "PERF_FLAG_???"),
            "PERF_FLAG_FD_CLOEXEC"
        );
        assert_eq!(
            format_flags(PERF_FLAG, 0x19, "PERF_FLAG_???"),
            "PERF_FLAG_FD_NO_GROUP|PERF_FLAG_FD_CLOEXEC|0x10"
        );
        assert_eq!(
            format_flags(PERF_FLAG, 0x10, "PERF_FLAG_???"),
            "0x10 /* PERF_FLAG_??? */"
        );
    }

    #[test]
    fn hex_pushes_as_format_does() {
        let mut values = vec![0u64, 1, 0xf, 0x10, 0xdead_beef, u64::MAX];
        values.extend((0..64).flat_map(|b| [1u64 << b, (1u64 << b) - 1]));
        for v in values {
            let mut s = "x".to_owned();
            push_hex(&mut s, v);
            assert_eq!(s, format!("x{v:#x}"));
        }
    }

    #[test]
    fn bit_tables_hold_single_bits() {
        for table in [PERF_SAMPLE, PERF_FORMAT, PERF_SAMPLE_BRANCH, PERF_FLAG] {
            for (i, &(bit, name)) in table.iter().enumerate() {
                assert_eq!(bit, 1 << i, "{name}");
            }
        }
    }
}
