//! The table of capture rules per syscall, and the reference page made
//! from it.
//!
//! [`SYSCALLS`] says, for each syscall Antinomie captures, what each
//! argument is and what the capture records of it: when (ENTRY or EXIT
//! hook), how, under which record keys, on which condition. The keys are
//! those of [`crate::call::CALL_FIELDS`] (a test checks that every rule's
//! keys exist and that every key has a rule), so the record keys, the
//! filter's fields ([`crate::filter::fields`]) and the page cannot drift:
//! [`reference_page`] builds the page from this table, the call and attr
//! tables and the name tables. `reader describe perf_event_open` prints it;
//! `docs/syscalls/perf_event_open.md` is the checked-in copy, and a test
//! fails when it is stale.

use std::collections::HashSet;
use std::fmt::Write as _;

use crate::call::{CAPTURE_FLAGS, CAPTURE_STATUS, CAPTURE_STATUS_DOC};
use crate::decode::errno_by_name;
use crate::decode::names::{self, Names};
use crate::filter::{fields, is_bit_table, ConstSet, Type};

/// One argument of a syscall.
#[derive(Debug, Clone, Copy)]
pub struct Arg {
    /// Its name in the kernel's definition.
    pub name: &'static str,
    /// Its C type there.
    pub c_type: &'static str,
    /// The x86-64 register that carries it.
    pub register: &'static str,
    /// The record key (and filter field) of its value.
    pub field: &'static str,
    /// What it means.
    pub meaning: &'static str,
}

/// When a value is recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// By the hook at the start of the syscall (the ENTRY record).
    Entry,
    /// By the hook at its end (the EXIT record).
    Exit,
    /// In both records' headers.
    Both,
    /// Derived by the reader (pairing).
    Reader,
}

impl When {
    /// As the page prints it.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            When::Entry => "Entry",
            When::Exit => "Exit",
            When::Both => "Entry and Exit",
            When::Reader => "reader",
        }
    }
}

/// One capture rule: what is recorded, when, how, under which keys.
#[derive(Debug, Clone, Copy)]
pub struct Capture {
    /// What is recorded.
    pub what: &'static str,
    /// When.
    pub when: When,
    /// How.
    pub how: &'static str,
    /// The record keys (filter fields) that hold it; `args.attr_uptr.<member>`
    /// stands for every attr member.
    pub keys: &'static [&'static str],
    /// On which condition it is recorded.
    pub condition: &'static str,
}

/// An errno the syscall commonly returns, and why.
#[derive(Debug, Clone, Copy)]
pub struct ErrorCase {
    /// The errno's name (its value comes from [`crate::decode::ERRNO`]).
    pub errno: &'static str,
    /// When the kernel returns it.
    pub when: &'static str,
}

/// A syscall Antinomie captures.
#[derive(Debug, Clone, Copy)]
pub struct Syscall {
    /// Its name.
    pub name: &'static str,
    /// What it does, in a sentence.
    pub summary: &'static str,
    /// Its number on x86-64.
    pub nr: u32,
    /// Its number from the ia32 compat entry.
    pub compat_nr: u32,
    /// The kernel's prototype (`include/linux/syscalls.h`).
    pub prototype: &'static str,
    /// The x86-64 entry point.
    pub entry_point: &'static str,
    /// The ia32 compat entry point.
    pub compat_entry_point: &'static str,
    /// The definition that generates them, and its file.
    pub definition: &'static str,
    /// How user space calls it.
    pub libc: &'static str,
    /// Its arguments.
    pub args: &'static [Arg],
    /// Its return value.
    pub returns: &'static str,
    /// Its common errors.
    pub errors: &'static [ErrorCase],
    /// What Antinomie records of it.
    pub captures: &'static [Capture],
    /// What Antinomie never records of it.
    pub gaps: &'static [&'static str],
    /// Filter examples: (filter, what it selects).
    pub examples: &'static [(&'static str, &'static str)],
}

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

/// Every syscall with a capture table.
pub static SYSCALLS: &[&Syscall] = &[&PERF_EVENT_OPEN];

/// The syscall with this name.
#[must_use]
pub fn syscall(name: &str) -> Option<&'static Syscall> {
    SYSCALLS.iter().copied().find(|s| s.name == name)
}

/// A Markdown table cell: `|` escaped, newlines joined.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn code(s: &str) -> String {
    format!("`{}`", s.replace('|', "\\|"))
}

/// The reference page of syscall `name` (Markdown), or `None` for a
/// syscall without a capture table.
#[must_use]
pub fn reference_page(name: &str) -> Option<String> {
    syscall(name).map(page)
}

#[allow(clippy::too_many_lines)]
fn page(sc: &Syscall) -> String {
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(
        w,
        "# {}(2): Antinomie reference\n\n\
         <!-- Generated by `reader describe {}` from the reader's tables \
         (reader/src/syscall.rs, call.rs, decode/); do not edit. \
         `ANTINOMIE_UPDATE_GOLDEN=1 cargo test -p antinomie-reader` rewrites it. -->\n\n\
         Linux 6.12.94, x86-64. {}\n",
        sc.name, sc.name, sc.summary
    );

    let _ = writeln!(w, "## Synopsis\n\n```c\n{}\n```\n", sc.prototype);
    let _ = writeln!(w, "| | |\n|---|---|");
    let _ = writeln!(
        w,
        "| number | {} on x86-64 (`__NR_{}`); {} from the ia32 compat entry |",
        sc.nr, sc.name, sc.compat_nr
    );
    let _ = writeln!(
        w,
        "| entry point | `{}` (ia32: `{}`) |",
        sc.entry_point, sc.compat_entry_point
    );
    let _ = writeln!(w, "| definition | {} |", cell(sc.definition));
    let _ = writeln!(w, "| from user space | {} |\n", cell(sc.libc));

    let _ = writeln!(w, "## Arguments\n");
    let _ = writeln!(
        w,
        "| # | name | type | register | filter field | meaning |\n|---|---|---|---|---|---|"
    );
    for (i, a) in sc.args.iter().enumerate() {
        let _ = writeln!(
            w,
            "| {i} | `{}` | `{}` | `{}` | `{}` (raw word: `args.{i}`) | {} |",
            a.name,
            a.c_type,
            a.register,
            a.field,
            cell(a.meaning)
        );
    }
    let _ = writeln!(w);

    let _ = writeln!(w, "## Return value\n\n{}\n", sc.returns);

    let _ = writeln!(w, "## Common errors\n");
    let _ = writeln!(
        w,
        "| errno | raw `ret` | filter | when |\n|---|---|---|---|"
    );
    for e in sc.errors {
        let value = errno_by_name(e.errno).map_or(0, |x| x.value);
        let _ = writeln!(
            w,
            "| `{}` ({value}) | -{value} | `syscall.errno == {}`, `ret == -{}` | {} |",
            e.errno,
            e.errno,
            e.errno,
            cell(e.when)
        );
    }
    let _ = writeln!(w);

    let _ = writeln!(w, "## What Antinomie captures\n");
    let _ = writeln!(
        w,
        "| what | when | how | record keys (filter fields) | condition |\n|---|---|---|---|---|"
    );
    for c in sc.captures {
        let keys: Vec<String> = c.keys.iter().map(|k| code(k)).collect();
        let _ = writeln!(
            w,
            "| {} | {} | {} | {} | {} |",
            cell(c.what),
            c.when.as_str(),
            cell(c.how),
            keys.join(", "),
            cell(c.condition)
        );
    }
    let _ = writeln!(w);

    let _ = writeln!(w, "## Capture statuses\n");
    let _ = writeln!(
        w,
        "`arg0.status`, how reading `*attr_uptr` at Entry went (`ANTINOMIE_STATUS_*`):\n"
    );
    let _ = writeln!(w, "| status | value | meaning |\n|---|---|---|");
    for &(value, name) in CAPTURE_STATUS {
        let doc = CAPTURE_STATUS_DOC
            .iter()
            .find(|(n, _)| *n == name)
            .map_or("", |(_, d)| d);
        let _ = writeln!(w, "| `{name}` | {value} | {} |", cell(doc));
    }
    let _ = writeln!(
        w,
        "\n`arg0.capture_flags` (`ANTINOMIE_CAPTURE_F_*`): {}.\n",
        CAPTURE_FLAGS
            .iter()
            .map(|(v, n)| format!("`{n}` ({v:#x})"))
            .collect::<Vec<_>>()
            .join(", ")
    );

    filter_fields(w);
    constants(w);

    let _ = writeln!(w, "## Filter examples\n");
    let _ = writeln!(w, "| filter | selects |\n|---|---|");
    for (f, what) in sc.examples {
        let _ = writeln!(w, "| {} | {} |", code(f), cell(what));
    }
    let _ = writeln!(w);

    let _ = writeln!(w, "## Known gaps: what is never recorded\n");
    for g in sc.gaps {
        let _ = writeln!(w, "* {g}");
    }
    s
}

fn filter_fields(w: &mut String) {
    let all = fields();
    let calls: Vec<_> = all.iter().filter(|f| f.member().is_none()).collect();
    let members: Vec<_> = all.iter().filter(|f| f.member().is_some()).collect();
    let _ = writeln!(
        w,
        "## Filter fields\n\n\
         {} fields (`reader fields`): {} call fields, the JSON Lines keys, and {} members \
         of the captured attr, `args.attr_uptr.<member>` (every named field, bit field, \
         union alias and reserved field of the pinned uapi). An absent field (null in \
         JSON) makes every comparison on it false; `exists(FIELD)` tests presence.\n",
        all.len(),
        calls.len(),
        members.len()
    );
    let _ = writeln!(
        w,
        "| field | type | constants | meaning |\n|---|---|---|---|"
    );
    for f in calls {
        let _ = writeln!(
            w,
            "| `{}` | {} | {} | {} |",
            f.key,
            f.ty.name(),
            cell(&f.constants.describe()),
            cell(&f.doc)
        );
    }
    let _ = writeln!(
        w,
        "\nThe attr's members, in declaration order. *present* is when the member has a \
         value: its first byte was captured (whole from the size version shown; a cut \
         member reads its missing bytes as zero, as the kernel does), and for a union \
         alias, the alias applies.\n"
    );
    let _ = writeln!(
        w,
        "| field | offset | storage | type | present | constants | meaning |\n|---|---|---|---|---|---|---|"
    );
    for f in members {
        let m = f.member().expect("a member");
        let bits = match m.bits {
            Some((shift, 1)) => format!("bit {shift}"),
            Some((shift, len)) => format!("bits {shift}-{}", shift + len - 1),
            None => format!(
                "{}{}",
                if f.ty == Type::Signed { "s" } else { "u" },
                m.width * 8
            ),
        };
        let present = f.presence().unwrap_or_default();
        let _ = writeln!(
            w,
            "| `{}` | {} | {bits} | {} | {} | {} | {} |",
            f.key,
            m.offset,
            f.ty.name(),
            cell(&present),
            cell(&f.constants.describe()),
            cell(m.doc)
        );
    }
    let _ = writeln!(w);
}

/// The name tables behind a field's constants, each with what it needs.
fn tables_of(c: ConstSet) -> Vec<(Names, &'static str)> {
    match c {
        ConstSet::Table(t) => vec![(t, "")],
        ConstSet::Config => vec![
            (
                names::PERF_HW_ID,
                " with `PERF_TYPE_HARDWARE` (low 32 bits)",
            ),
            (names::PERF_SW_ID, " with `PERF_TYPE_SOFTWARE`"),
            (
                names::PERF_HW_CACHE_ID,
                " with `PERF_TYPE_HW_CACHE` (bits 0-7)",
            ),
            (
                names::PERF_HW_CACHE_OP,
                " with `PERF_TYPE_HW_CACHE` (bits 8-15)",
            ),
            (
                names::PERF_HW_CACHE_RESULT,
                " with `PERF_TYPE_HW_CACHE` (bits 16-23)",
            ),
        ],
        _ => Vec::new(),
    }
}

/// The name tables the fields use, in full (errno names excepted).
fn constants(w: &mut String) {
    let _ = writeln!(
        w,
        "## Constants\n\n\
         A name is valid only next to a field that takes it (`args.flags & PERF_FLAG_FD_CLOEXEC`). \
         Errno names are every x86-64 errno (`syscall.errno == EINVAL`, `ret == -EINVAL`). \
         The `config` names imply their `type`: `args.attr_uptr.config == PERF_COUNT_SW_CPU_CLOCK` \
         is `type == PERF_TYPE_SOFTWARE && config == 0`; a `PERF_COUNT_HW_*` name matches the low \
         32 bits of a hardware config, a `PERF_COUNT_HW_CACHE_*` name its byte of a cache config.\n"
    );
    let mut seen: HashSet<*const (u64, &str)> = HashSet::new();
    for f in fields() {
        for (t, label) in tables_of(f.constants) {
            if !seen.insert(t.as_ptr()) {
                continue;
            }
            let users: Vec<String> = fields()
                .iter()
                .filter(|g| {
                    tables_of(g.constants)
                        .iter()
                        .any(|(u, _)| std::ptr::eq(u.as_ptr(), t.as_ptr()))
                })
                .map(|g| format!("`{}`", g.key))
                .collect();
            let row: Vec<String> = t
                .iter()
                .map(|&(v, n)| {
                    if f.ty == Type::Str {
                        format!("`{n}`")
                    } else if is_bit_table(t) {
                        format!("`{n}` ({v:#x})")
                    } else {
                        format!("`{n}` ({v})")
                    }
                })
                .collect();
            let _ = writeln!(w, "* {}{label}: {}", users.join(", "), row.join(", "));
        }
    }
    let _ = writeln!(w);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::{call_field, CALL_FIELDS};
    use crate::filter::field;

    #[test]
    fn every_rule_names_real_keys_and_every_key_has_a_rule() {
        for sc in SYSCALLS {
            let mut covered = HashSet::new();
            for c in sc.captures {
                for &k in c.keys {
                    if k == "args.attr_uptr.<member>" {
                        continue;
                    }
                    assert!(call_field(k).is_some(), "{}: no record key {k}", sc.name);
                    assert!(covered.insert(k), "{}: {k} has two rules", sc.name);
                }
            }
            for f in CALL_FIELDS {
                assert!(
                    covered.contains(f.key),
                    "{}: no capture rule for {}",
                    sc.name,
                    f.key
                );
            }
            for (i, a) in sc.args.iter().enumerate() {
                assert!(field(a.field).is_some(), "{}", a.field);
                assert!(field(&format!("args.{i}")).is_some());
            }
            for e in sc.errors {
                assert!(errno_by_name(e.errno).is_some(), "{}", e.errno);
            }
            for (f, _) in sc.examples {
                crate::filter::Filter::parse(f).unwrap_or_else(|e| panic!("{f}: {e}"));
            }
        }
    }

    #[test]
    fn the_page_has_every_section_and_field() {
        let page = reference_page("perf_event_open").unwrap();
        for section in [
            "## Synopsis",
            "## Arguments",
            "## Return value",
            "## Common errors",
            "## What Antinomie captures",
            "## Capture statuses",
            "## Filter fields",
            "## Constants",
            "## Known gaps",
        ] {
            assert!(page.contains(section), "{section}");
        }
        assert!(page.contains("| number | 298 on x86-64"));
        assert!(page.contains("`__x64_sys_perf_event_open`"));
        assert!(page.contains("| `E2BIG` (7) | -7 |"));
        for f in fields() {
            assert!(page.contains(&format!("| `{}` |", f.key)), "{}", f.key);
        }
        assert!(reference_page("open").is_none());
    }
}
