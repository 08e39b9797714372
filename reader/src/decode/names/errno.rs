// SPDX-License-Identifier: GPL-2.0-only
//! The complete x86-64 errno table: number, name and `strerror()` text,
//! checked against the real headers like the other name tables.

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
}
