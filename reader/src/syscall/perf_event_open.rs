//! The capture table of `perf_event_open(2)`.

use super::{Arg, Capture, ErrorCase, Syscall, When};

/// `perf_event_open(2)` on the pinned Linux 6.12.94.
pub static PERF_EVENT_OPEN: Syscall = Syscall {
    name: "perf_event_open",
    summary: "Opens a performance-monitoring event described by `*attr_uptr`, counting on a task (`pid`) and/or a CPU (`cpu`), optionally in a group (`group_fd`), and returns a file descriptor for it.",
    nr: 298,
    compat_nr: 336,
    prototype: "asmlinkage long sys_perf_event_open(struct perf_event_attr __user *attr_uptr,\n                                    pid_t pid, int cpu, int group_fd,\n                                    unsigned long flags);",
    entry_point: "__x64_sys_perf_event_open",
    compat_entry_point: "__ia32_sys_perf_event_open",
    definition: "`SYSCALL_DEFINE5(perf_event_open, struct perf_event_attr __user *, attr_uptr, pid_t, pid, int, cpu, int, group_fd, unsigned long, flags)` in `kernel/events/core.c`",
    libc: "glibc has no wrapper: `syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags)`",
    args: &[
        Arg {
            name: "attr_uptr",
            c_type: "struct perf_event_attr __user *",
            register: "rdi",
            field: "args.attr_uptr",
            meaning: "the event to open: a `struct perf_event_attr` whose own `size` field (u32 at offset 4) says how long it is (0 means 64, `PERF_ATTR_SIZE_VER0`; the pinned kernel knows 136, `PERF_ATTR_SIZE_VER8`)",
        },
        Arg {
            name: "pid",
            c_type: "pid_t",
            register: "rsi",
            field: "args.pid",
            meaning: "the task to measure: 0 the caller, -1 any task (needs `cpu` >= 0), else a pid in the caller's pid namespace; with `PERF_FLAG_PID_CGROUP`, a cgroup directory fd",
        },
        Arg {
            name: "cpu",
            c_type: "int",
            register: "rdx",
            field: "args.cpu",
            meaning: "the CPU to measure on, or -1 for any CPU the task runs on",
        },
        Arg {
            name: "group_fd",
            c_type: "int",
            register: "r10",
            field: "args.group_fd",
            meaning: "the fd of the group leader to join, or -1 to start a new group",
        },
        Arg {
            name: "flags",
            c_type: "unsigned long",
            register: "r8",
            field: "args.flags",
            meaning: "`PERF_FLAG_FD_NO_GROUP`, `PERF_FLAG_FD_OUTPUT`, `PERF_FLAG_PID_CGROUP`, `PERF_FLAG_FD_CLOEXEC`; any other bit fails with EINVAL before the attr is read",
        },
    ],
    returns: "A new file descriptor (>= 0) on success. On failure the kernel returns a negative errno in `rax`, and Antinomie records that raw value: `ret == -22` (`ret == -EINVAL`), with `syscall.errno == 22` (`syscall.errno == EINVAL`) and `syscall.success == false`; libc's `syscall()` would return -1 and set `errno` instead. The kernel never writes the user's attr on success; on E2BIG from its size checks it writes 136 into `attr_uptr->size`.",
    errors: &[
        ErrorCase {
            errno: "EINVAL",
            when: "flags outside `PERF_FLAG_ALL` (checked first: the attr is never read, `arg0.status == not_applicable`); reserved bits or fields set; `sample_type`, `read_format` or `branch_sample_type` bits the kernel does not know; `sample_freq` above the sysctl or bit 63 of `sample_period`; `PERF_FLAG_PID_CGROUP` with `pid` or `cpu` -1; `cpu` out of range; a `clockid` perf refuses; group mismatches; `inherit_thread` without `inherit`; `sigtrap` without `remove_on_exec`",
        },
        ErrorCase {
            errno: "E2BIG",
            when: "the attr's size is < 64 (but not 0), > PAGE_SIZE, or > 136 with a non-zero tail: `perf_copy_attr()` writes 136 into `attr_uptr->size` (`arg0.size_written`); or the read or sample size is too large (`perf_event_validate_size()`, e.g. a huge group): nothing is written",
        },
        ErrorCase {
            errno: "EFAULT",
            when: "`attr_uptr` is NULL or unreadable",
        },
        ErrorCase {
            errno: "EACCES",
            when: "`perf_event_paranoid` forbids it without CAP_PERFMON (kernel or CPU-wide counting, `namespaces`), or the ptrace access check on the target task failed",
        },
        ErrorCase {
            errno: "EPERM",
            when: "an LSM or lockdown refused it (`PERF_SAMPLE_REGS_INTR` under lockdown)",
        },
        ErrorCase {
            errno: "ENOENT",
            when: "no PMU accepts `type` and `config` (a tracepoint without tracefs, hardware events without a PMU)",
        },
        ErrorCase {
            errno: "ESRCH",
            when: "`pid` names no task",
        },
        ErrorCase {
            errno: "EBADF",
            when: "`group_fd` is not a perf event fd",
        },
        ErrorCase {
            errno: "EMFILE",
            when: "the caller has no free file descriptor",
        },
        ErrorCase {
            errno: "ENODEV",
            when: "the CPU is offline, the group leader is exiting, or the PMU refused",
        },
        ErrorCase {
            errno: "EOPNOTSUPP",
            when: "the PMU lacks a feature: sampling on a counting-only PMU, `aux_output`, extended registers, `aux_start_paused`",
        },
        ErrorCase {
            errno: "EBUSY",
            when: "an exclusive event is in the way",
        },
        ErrorCase {
            errno: "EOVERFLOW",
            when: "`sample_max_stack` is above `kernel.perf_event_max_stack`",
        },
        ErrorCase {
            errno: "ENOMEM",
            when: "an allocation failed",
        },
        ErrorCase {
            errno: "EINTR",
            when: "a signal interrupted the wait for the target task's exec lock",
        },
        ErrorCase {
            errno: "ENOSYS",
            when: "`PERF_SAMPLE_STACK_USER` without architecture support",
        },
    ],
    captures: &[
        Capture {
            what: "the six argument registers",
            when: When::Entry,
            how: "`syscall_get_arguments()` on the syscall's `pt_regs`, before the kernel reads any argument itself; zero-extended 32-bit values from the compat entry",
            keys: &["args.0", "args.1", "args.2", "args.3", "args.4", "args.5"],
            condition: "every captured call (`args.5` is a register this syscall ignores)",
        },
        Capture {
            what: "`attr_uptr`",
            when: When::Entry,
            how: "argument word 0, the user pointer",
            keys: &["args.attr_uptr"],
            condition: "every captured call",
        },
        Capture {
            what: "`pid`, `cpu`, `group_fd`",
            when: When::Entry,
            how: "the low 32 bits of words 1-3, sign-extended, as the syscall's `pid_t` and `int` parameters see them",
            keys: &["args.pid", "args.cpu", "args.group_fd"],
            condition: "every captured call",
        },
        Capture {
            what: "`flags`",
            when: When::Entry,
            how: "argument word 4 as is, and by name (unknown bits in hex)",
            keys: &["args.flags", "args.flags_names"],
            condition: "every captured call",
        },
        Capture {
            what: "`attr_uptr->size`",
            when: When::Entry,
            how: "`get_user()` of the u32 at offset 4, as `perf_copy_attr()` reads it first; the effective size is 64 when it is 0",
            keys: &["arg0.declared_size", "arg0.status"],
            condition: "`flags` within `PERF_FLAG_ALL` (else status `not_applicable`: the kernel never reads the attr) and `attr_uptr` not NULL (else `null_ptr`); a fault gives `fault` with capture flag `size_fault`",
        },
        Capture {
            what: "`*attr_uptr`, the struct",
            when: When::Entry,
            how: "`copy_from_user()` of min(effective size, 136) bytes, before the ring reservation (it may fault and sleep); decoded member by member",
            keys: &[
                "arg0.perf_event_attr",
                "arg0.perf_event_attr_names",
                "args.attr_uptr.<member>",
                "arg0.copied_len",
                "arg0.fault_offset",
            ],
            condition: "64 <= effective size <= PAGE_SIZE (status `complete` or `truncated`; `fault` keeps the bytes before the fault); a member is present when its first byte was captured",
        },
        Capture {
            what: "`*attr_uptr` beyond 136 bytes",
            when: When::Entry,
            how: "checked for zero bytes as `copy_struct_from_user()` does (the kernel's E2BIG rule); the bytes are not kept",
            keys: &["arg0.capture_flags"],
            condition: "136 < effective size <= PAGE_SIZE (status `truncated`)",
        },
        Capture {
            what: "the return value",
            when: When::Exit,
            how: "the syscall's return value: a file descriptor, or a negative errno",
            keys: &["ret", "syscall.errno", "syscall.errno_name", "syscall.success"],
            condition: "every EXIT (`syscall.errno` only on failure)",
        },
        Capture {
            what: "the duration",
            when: When::Exit,
            how: "measured in the kernel from the Entry hook to the Exit hook, the capture's own work excluded",
            keys: &["syscall.duration_ns"],
            condition: "every EXIT",
        },
        Capture {
            what: "`attr_uptr->size` after E2BIG",
            when: When::Exit,
            how: "the u32 at offset 4 read back with `get_user()`, and whether the E2BIG came from `perf_copy_attr()`'s size checks, which write 136 there (`perf_event_validate_size()` writes nothing)",
            keys: &["arg0.required_size", "arg0.size_written"],
            condition: "`ret == -E2BIG` (`arg0.required_size` absent when the read back faulted)",
        },
        Capture {
            what: "the kernel's own copy of the attr (double fetch)",
            when: When::Exit,
            how: "right after `copy_struct_from_user()` in `perf_copy_attr()`, the bytes it read are compared with the Entry capture byte for byte, before `perf_copy_attr()` rewrites anything (`size` 0, `sample_max_stack` 0, the privilege bits of `branch_sample_type`), so a change of those counts too; on a difference the kernel's bytes are recorded",
            keys: &["arg0.attr_copied", "arg0.double_fetch", "arg0.kernel_attr"],
            condition: "`perf_copy_attr()` read the attr (`arg0.attr_copied`: it also passed its checks); `arg0.kernel_attr` only when they differ",
        },
        Capture {
            what: "who, where, when",
            when: When::Both,
            how: "the record header: pid (tgid) and tid in the initial pid namespace, the CPU whose ring holds the record, CLOCK_MONOTONIC read just before the ring reservation, the per-call id, the syscall number, the compat flag",
            keys: &[
                "time_ns",
                "cpu",
                "exit_cpu",
                "pid",
                "tid",
                "call_id",
                "syscall.nr",
                "compat",
            ],
            condition: "every record (`exit_cpu` is the EXIT's CPU; the task may migrate)",
        },
        Capture {
            what: "pairing",
            when: When::Reader,
            how: "ENTRY and EXIT paired by call id across CPUs; an unpaired record is shown, never dropped; LOST records' call-id ranges mark unfinished calls whose EXIT may be lost",
            keys: &["event", "state", "exit_maybe_lost"],
            condition: "every call line",
        },
    ],
    gaps: &[
        "The strings behind pointers inside the attr: `kprobe_func` and `uprobe_path` are recorded as pointer values, the probed function's name and file's path are not read.",
        "The bytes of an attr beyond 136: only whether they were all zero (`tail_zero`, `tail_nonzero`).",
        "Any member of an attr whose size is invalid (< 64 but not 0, > PAGE_SIZE): the kernel reads nothing but the size, and neither does the capture.",
        "What the kernel rewrites in its own copy (`size` 0 to 64, `sample_max_stack` 0 to the sysctl, the privilege bits of `branch_sample_type`, the extended PMU type in the high bits of a hardware `config`): neither reported as a double fetch nor recorded.",
        "Why a call failed: the errno is recorded, not which check returned it (except that `arg0.status == not_applicable` means the flags were rejected first, and `arg0.size_written` tells the two E2BIGs apart).",
        "What the new file descriptor refers to: the PMU that accepted the event, the group it joined, the task it targets; `pid` and `group_fd` are recorded as the numbers passed (`pid` in the caller's pid namespace, while the caller's own `pid` and `tid` are in the initial one).",
        "Other ways in: `ioctl(PERF_EVENT_IOC_MODIFY_ATTRIBUTES)` also copies an attr with `perf_copy_attr()`, and in-kernel users create events without the syscall; neither is captured.",
        "Calls made while capture is off, and records dropped because a ring was full: the drops are counted and reported (LOST records, the summary), their contents are gone.",
        "Wall-clock time: records carry CLOCK_MONOTONIC only.",
    ],
    examples: &[
        ("syscall.errno == E2BIG", "every E2BIG"),
        ("ret in {-EINVAL, -E2BIG}", "EINVAL or E2BIG, from the raw return value"),
        (
            "syscall.errno == E2BIG && !arg0.size_written",
            "E2BIG from perf_event_validate_size(), not from the attr's size",
        ),
        ("args.flags & PERF_FLAG_FD_CLOEXEC", "calls asking for close-on-exec"),
        (
            "args.attr_uptr.type == PERF_TYPE_SOFTWARE && args.attr_uptr.config == PERF_COUNT_SW_CPU_CLOCK",
            "software CPU clocks (the config name implies its type, so the first test is redundant)",
        ),
        (
            "args.attr_uptr.sample_type & PERF_SAMPLE_IP",
            "sampling events that record the instruction pointer",
        ),
        (
            "args.attr_uptr.size == PERF_ATTR_SIZE_VER0 && !exists(args.attr_uptr.bp_len)",
            "VER0 attrs: members from offset 64 on are absent",
        ),
        ("arg0.status != complete", "attrs not captured whole"),
        ("arg0.double_fetch", "user memory changed under the kernel"),
        ("syscall.duration_ns > 1000000", "calls that took over a millisecond"),
    ],
};
