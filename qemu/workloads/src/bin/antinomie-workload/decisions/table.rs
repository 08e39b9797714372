// SPDX-License-Identifier: GPL-2.0-only
//! The decisions workload's cases: one per decision of the functions that
//! decide `perf_event_open`'s result, each named with the function and the
//! check its last call meets (`function: check -> result`; the results
//! are the pinned 6.12.94 kernel's in the guest, `-smp 4` under TCG).
//! Where the result depends on privilege the target says which context
//! gets what; "paranoid 2" stands for the `user-p2`, `user-p3`,
//! `user-p4` and `userns` contexts alike.
//!
//! Attrs are disabled software events on the caller's own task unless a
//! case says otherwise, `exclude_kernel` and `exclude_hv` set so that an
//! unprivileged caller passes the privilege checks the case is not about.

use super::{Case, Open, Pid, Place, Plan, Step, Str, NO_SUCH_TRACEPOINT, NO_SUCH_TYPE};
use crate::call::{
    Attr, CLOCK_MONOTONIC_RAW, DISABLED, EXCLUDE_HV, EXCLUDE_KERNEL, FREQ, HW_BREAKPOINT_LEN_8,
    HW_BREAKPOINT_W, PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_TASK_CLOCK, PERF_FLAG_FD_CLOEXEC,
    PERF_FORMAT_GROUP, PERF_FORMAT_ID, PERF_FORMAT_LOST, PERF_FORMAT_TOTAL_TIME_ENABLED,
    PERF_FORMAT_TOTAL_TIME_RUNNING, PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_TYPE_BREAKPOINT,
    PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE, RESERVED_1_BIT, USE_CLOCKID,
};
use crate::random::{
    NO_SUCH_PID, PERF_FLAG_FD_NO_GROUP, PERF_FLAG_FD_OUTPUT, PERF_SAMPLE_BRANCH_STACK,
    PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_PHYS_ADDR, PERF_SAMPLE_RAW, PERF_SAMPLE_REGS_INTR,
    REMOVE_ON_EXEC, SIGTRAP,
};

const PERF_TYPE_TRACEPOINT: u32 = 2;
const PERF_TYPE_HW_CACHE: u32 = 3;
const PERF_TYPE_RAW: u32 = 4;
/// The types `perf_pmu_register()` gives the `cpu_clock` and `task_clock`
/// PMUs, registered right after the software PMU, before any other
/// dynamic one; sysfs does not list them (`PMU_NULL_DEV`).
const CPU_CLOCK_TYPE: u32 = 6;
const TASK_CLOCK_TYPE: u32 = 7;
const PERF_COUNT_SW_PAGE_FAULTS: u64 = 2;
const PERF_COUNT_SW_CGROUP_SWITCHES: u64 = 11;
/// `PERF_COUNT_SW_MAX`: no software event.
const PERF_COUNT_SW_MAX: u64 = 12;
const PERF_FLAG_PID_CGROUP: u64 = 1 << 2;

// Bits of the flag word at offset 40.
const INHERIT: u64 = 1 << 1;
const PINNED: u64 = 1 << 2;
const EXCLUSIVE: u64 = 1 << 3;
const EXCLUDE_USER: u64 = 1 << 4;
const ENABLE_ON_EXEC: u64 = 1 << 12;
const WRITE_BACKWARD: u64 = 1 << 27;
const NAMESPACES: u64 = 1 << 28;
const AUX_OUTPUT: u64 = 1 << 31;
const INHERIT_THREAD: u64 = 1 << 35;

const PERF_SAMPLE_READ: u64 = 1 << 4;
const PERF_SAMPLE_REGS_USER: u64 = 1 << 12;
const PERF_SAMPLE_STACK_USER: u64 = 1 << 13;
const PERF_SAMPLE_WEIGHT: u64 = 1 << 14;
const PERF_SAMPLE_CGROUP: u64 = 1 << 21;
const PERF_SAMPLE_WEIGHT_STRUCT: u64 = 1 << 24;
/// `PERF_SAMPLE_MAX`: the first undefined sample type.
const PERF_SAMPLE_MAX: u64 = 1 << 25;
/// `PERF_FORMAT_MAX`.
const PERF_FORMAT_MAX: u64 = 1 << 5;
/// Every read format: 24 bytes per group member (value, id, lost).
const READ_FORMAT_ALL: u64 = PERF_FORMAT_TOTAL_TIME_ENABLED
    | PERF_FORMAT_TOTAL_TIME_RUNNING
    | PERF_FORMAT_ID
    | PERF_FORMAT_GROUP
    | PERF_FORMAT_LOST;
/// The most siblings a group whose members read [`READ_FORMAT_ALL`] may
/// have: 8 + 16 + 24 * (1 + 680) = 16368 <= 16 KiB, one more is 16392.
const GROUP_MAX_SIBLINGS: usize = 680;

const BRANCH_USER: u64 = 1 << 0;
const BRANCH_KERNEL: u64 = 1 << 1;
const BRANCH_ANY: u64 = 1 << 3;
/// `PERF_SAMPLE_BRANCH_MAX`: the first undefined branch bit.
const BRANCH_MAX: u64 = 1 << 20;

/// `sample_regs_user` bits (`enum perf_event_x86_regs`).
const REG_SP: u64 = 1 << 7;
const REG_IP: u64 = 1 << 8;
const REG_DS: u64 = 1 << 12;
/// The first bit above `PERF_REG_X86_64_MAX`, below the XMM registers.
const REG_RESERVED: u64 = 1 << 24;
const REG_XMM0: u64 = 1 << 32;

const AUX_START_PAUSED: u32 = 1 << 0;
const AUX_PAUSE: u32 = 1 << 1;
const AUX_RESUME: u32 = 1 << 2;
/// The first bit of `__reserved_3`.
const AUX_RESERVED: u32 = 1 << 3;

const CLOCK_REALTIME: i32 = 0;
const CLOCK_MONOTONIC: i32 = 1;
const CLOCK_PROCESS_CPUTIME_ID: i32 = 2;
const CLOCK_BOOTTIME: i32 = 7;
const CLOCK_TAI: i32 = 11;

const HW_BREAKPOINT_EMPTY: u32 = 0;
const HW_BREAKPOINT_R: u32 = 1;
const HW_BREAKPOINT_RW: u32 = 3;
const HW_BREAKPOINT_X: u32 = 4;
/// `HW_BREAKPOINT_INVALID`: read-write and execute at once.
const HW_BREAKPOINT_INVALID: u32 = 7;
/// A type above every defined one.
const HW_BREAKPOINT_UNKNOWN: u32 = 8;
/// `HBP_NUM`: x86's debug registers, the slots of each breakpoint type.
const HBP_NUM: usize = 4;
/// A user address (nothing need be mapped there), 16-byte aligned.
const USER_ADDR: u64 = 0x10_0000;
/// The guest kernel's text (`_stext`; the guest kernel has no KASLR),
/// outside the kprobe blacklist.
const KERNEL_TEXT: u64 = 0xffff_ffff_8100_0000;
/// The pinned build's entry text (`__entry_text_start`, 2 MiB aligned):
/// in the kprobe blacklist.
const KERNEL_ENTRY_TEXT: u64 = 0xffff_ffff_8140_0000;
/// x86-64's CPU entry area (4-level paging).
const CPU_ENTRY_AREA: u64 = 0xffff_fe00_0000_0000;

/// The slots of a case's kept fds.
const LEADER: usize = 0;
const MEMBERS: usize = 1;
const FILE: usize = 2;

/// Offsets in `struct perf_event_attr`.
const OFF_SAMPLE_PERIOD: usize = 16;
const OFF_SAMPLE_TYPE: usize = 24;
const OFF_CONFIG1: usize = 56;
const OFF_CONFIG2: usize = 64;
const OFF_BRANCH_SAMPLE_TYPE: usize = 72;
const OFF_SAMPLE_REGS_USER: usize = 80;
const OFF_SAMPLE_STACK_USER: usize = 88;
const OFF_CLOCKID: usize = 92;
const OFF_SAMPLE_REGS_INTR: usize = 96;
const OFF_SAMPLE_MAX_STACK: usize = 108;
const OFF_RESERVED_2: usize = 110;
const OFF_AUX_SAMPLE_SIZE: usize = 112;
const OFF_AUX_ACTION: usize = 116;

/// The attr members the cases set, by name.
trait Members {
    fn period(&mut self, v: u64) -> &mut Self;
    fn sample_type(&mut self, v: u64) -> &mut Self;
    /// A sampling event (period 1) of these sample types.
    fn sampling(&mut self, sample_type: u64) -> &mut Self;
    fn config1(&mut self, v: u64) -> &mut Self;
    fn config2(&mut self, v: u64) -> &mut Self;
    /// `PERF_SAMPLE_BRANCH_STACK` with this `branch_sample_type`.
    fn branch(&mut self, v: u64) -> &mut Self;
    fn clock(&mut self, id: i32) -> &mut Self;
    fn max_stack(&mut self, v: u16) -> &mut Self;
    fn aux_action(&mut self, v: u32) -> &mut Self;
}

impl Members for Attr {
    fn period(&mut self, v: u64) -> &mut Self {
        self.u64_at(OFF_SAMPLE_PERIOD, v)
    }

    fn sample_type(&mut self, v: u64) -> &mut Self {
        self.u64_at(OFF_SAMPLE_TYPE, v)
    }

    fn sampling(&mut self, sample_type: u64) -> &mut Self {
        self.sample(1, sample_type)
    }

    fn config1(&mut self, v: u64) -> &mut Self {
        self.u64_at(OFF_CONFIG1, v)
    }

    fn config2(&mut self, v: u64) -> &mut Self {
        self.u64_at(OFF_CONFIG2, v)
    }

    fn branch(&mut self, v: u64) -> &mut Self {
        self.sample_type(PERF_SAMPLE_BRANCH_STACK)
            .u64_at(OFF_BRANCH_SAMPLE_TYPE, v)
    }

    fn clock(&mut self, id: i32) -> &mut Self {
        self.or_flags(USE_CLOCKID)
            .u32_at(OFF_CLOCKID, u32::from_le_bytes(id.to_le_bytes()))
    }

    fn max_stack(&mut self, v: u16) -> &mut Self {
        self.u16_at(OFF_SAMPLE_MAX_STACK, v)
    }

    fn aux_action(&mut self, v: u32) -> &mut Self {
        self.u32_at(OFF_AUX_ACTION, v)
    }
}

/// `a` changed by `f`.
fn with(mut a: Attr, f: impl FnOnce(&mut Attr) -> &mut Attr) -> Attr {
    f(&mut a);
    a
}

/// A disabled software event, user space only.
fn sw(config: u64) -> Attr {
    Attr::sw(config)
}

/// The software event the cases use where any will do: the task clock.
fn clock() -> Attr {
    sw(PERF_COUNT_SW_TASK_CLOCK)
}

/// A software event that `perf_swevent_init()` itself takes (not a clock,
/// which it hands to the clock PMUs): page faults.
fn faults() -> Attr {
    sw(PERF_COUNT_SW_PAGE_FAULTS)
}

/// A disabled event of `type_`, user space only.
fn of_type(type_: u32, config: u64) -> Attr {
    with(Attr::new(type_, config), |a| {
        a.flags(DISABLED | EXCLUDE_KERNEL | EXCLUDE_HV)
    })
}

/// The flags with `exclude_kernel` clear (and `exclude_hv` set).
const KERNEL_TOO: u64 = DISABLED | EXCLUDE_HV;

fn tracepoint(id: u64) -> Attr {
    of_type(PERF_TYPE_TRACEPOINT, id)
}

fn sched_switch(p: &Plan<'_>) -> Attr {
    tracepoint(p.env.sched_switch_id)
}

fn breakpoint(bp_type: u32, addr: u64, len: u64) -> Attr {
    with(of_type(PERF_TYPE_BREAKPOINT, 0), |a| {
        a.u32_at(52, bp_type).u64_at(56, addr).u64_at(64, len)
    })
}

/// A data breakpoint any caller may set: write, 8 bytes, user address.
fn watch() -> Attr {
    breakpoint(HW_BREAKPOINT_W, USER_ADDR, HW_BREAKPOINT_LEN_8)
}

/// A kprobe on the function named at `func` (0: none), at `offset` (or
/// the address `offset` when `func` is 0).
fn kprobe(p: &Plan<'_>, func: u64, offset: u64) -> Attr {
    with(of_type(p.env.kprobe.type_, 0), |a| {
        a.config1(func).config2(offset)
    })
}

fn kprobe_on(p: &Plan<'_>, s: Str) -> Attr {
    kprobe(p, p.env.string(s), 0)
}

fn kretprobe(p: &Plan<'_>, offset: u64) -> Attr {
    with(kprobe(p, p.env.string(Str::Function), offset), |a| {
        a.u64_at(8, 1 << p.env.kprobe.retprobe_bit)
    })
}

/// A uprobe on the file whose path is at `path` (0: none), at `offset`.
fn uprobe(p: &Plan<'_>, path: u64, offset: u64) -> Attr {
    with(of_type(p.env.uprobe.type_, 0), |a| {
        a.config1(path).config2(offset)
    })
}

fn uprobe_on(p: &Plan<'_>, s: Str) -> Attr {
    uprobe(p, p.env.string(s), 0)
}

/// An msr PMU event (config 0: the TSC), every exclude bit clear.
fn msr(p: &Plan<'_>, config: u64) -> Attr {
    with(Attr::new(p.env.msr_type, config), |a| a.flags(DISABLED))
}

/// `attr`'s size set to `size`, and only the bytes the kernel may read.
fn sized(attr: Attr, size: u32, len: usize) -> Attr {
    with(attr, |a| a.size(size).len(len))
}

/// The steps of a leader kept in [`LEADER`].
fn leader(p: &mut Plan<'_>, attr: &Attr) -> usize {
    p.open("leader", attr).keep(LEADER);
    LEADER
}

/// A leader whose ring is mapped, for `FD_OUTPUT`.
fn mapped_leader(p: &mut Plan<'_>) -> usize {
    let l = leader(p, &clock());
    p.step(Step::Mmap(l));
    l
}

/// Where the guest mounts cgroup2.
const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// A cgroup event on `path` (opened into [`FILE`]), on the seed's CPU.
fn cgroup_event<'p>(p: &'p mut Plan<'_>, label: &'static str, path: &'static str) -> &'p mut Open {
    p.step(Step::File { path, slot: FILE });
    let cpu = p.cpu;
    p.open(label, &clock())
        .pid(Pid::Slot(FILE))
        .cpu(cpu)
        .flags(PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC)
}

const OUTPUT_ONLY: u64 = PERF_FLAG_FD_OUTPUT | PERF_FLAG_FD_NO_GROUP | PERF_FLAG_FD_CLOEXEC;

/// The big group cases: a leader reading `leader_format`, then 680
/// siblings, the first reading `first_format`, the others nothing. Every
/// attr has the full size, so that a change to the size checks shows in
/// the size cases, not in 680 siblings here.
fn full_group(p: &mut Plan<'_>, leader_format: u64, first_format: u64) {
    let l = leader(p, &with(clock(), |a| a.read_format(leader_format)));
    let sibling = |format| with(clock(), |a| a.read_format(format));
    for i in 0..GROUP_MAX_SIBLINGS {
        let format = if i == 0 { first_format } else { 0 };
        p.open("sibling", &sibling(format)).group(l).keep(MEMBERS);
    }
}

/// Every case, in table order (the seed shuffles the order they run in).
pub(super) static CASES: &[Case] = &[
    // The flags, checked before the attr is read.
    Case {
        name: "flags-unknown-bit",
        target: "perf_event_open: flags & ~PERF_FLAG_ALL -> EINVAL, the attr not read",
        build: |p| {
            p.open("", &clock()).flags(1 << 4 | PERF_FLAG_FD_CLOEXEC);
        },
    },
    Case {
        name: "flags-none",
        target: "perf_event_open: no FD_CLOEXEC: an fd without O_CLOEXEC -> fd",
        build: |p| {
            p.open("", &clock()).flags(0);
        },
    },
    Case {
        name: "flags-output-without-group-fd",
        target: "perf_event_open: FD_NO_GROUP|FD_OUTPUT with group_fd -1: no leader, no output event -> fd",
        build: |p| {
            p.open("", &clock()).flags(OUTPUT_ONLY);
        },
    },
    // perf_copy_attr(): the size protocol.
    Case {
        name: "attr-null",
        target: "perf_copy_attr: get_user(size) faults on NULL -> EFAULT",
        build: |p| {
            p.place("", Place::Null);
        },
    },
    Case {
        name: "attr-size-word-unmapped",
        target: "perf_copy_attr: get_user(size) faults, the size word half mapped -> EFAULT",
        build: |p| {
            p.place(
                "",
                Place::Cut {
                    bytes: clock().build(),
                    readable: 6,
                },
            );
        },
    },
    Case {
        name: "attr-size-0",
        target: "perf_copy_attr: size 0 means PERF_ATTR_SIZE_VER0 -> fd",
        build: |p| {
            p.open("", &sized(clock(), 0, 64));
        },
    },
    Case {
        name: "attr-size-1",
        target: "perf_copy_attr: size < PERF_ATTR_SIZE_VER0 -> E2BIG, 136 written back",
        build: |p| {
            p.open("", &sized(clock(), 1, 8));
        },
    },
    Case {
        name: "attr-size-63",
        target: "perf_copy_attr: size PERF_ATTR_SIZE_VER0 - 1 -> E2BIG, 136 written back",
        build: |p| {
            p.open("", &sized(clock(), 63, 8));
        },
    },
    Case {
        name: "attr-size-64",
        target: "perf_copy_attr: size PERF_ATTR_SIZE_VER0, the rest zero-filled -> fd",
        build: |p| {
            p.open("", &sized(clock(), 64, 64));
        },
    },
    Case {
        name: "attr-size-4096",
        target: "perf_copy_attr: size PAGE_SIZE, a zero tail past the kernel's struct -> fd",
        build: |p| {
            p.open("", &sized(clock(), 4096, 4096));
        },
    },
    Case {
        name: "attr-size-4097",
        target: "perf_copy_attr: size > PAGE_SIZE -> E2BIG, 136 written back",
        build: |p| {
            p.open("", &sized(clock(), 4097, 8));
        },
    },
    Case {
        name: "attr-size-137-nonzero-tail",
        target: "perf_copy_attr: copy_struct_from_user finds a non-zero byte past the kernel's struct -> E2BIG, 136 written back",
        build: |p| {
            let mut a = sized(clock(), 137, 137);
            a.0[136] = 1;
            p.open("", &a);
        },
    },
    Case {
        name: "attr-cut",
        target: "perf_copy_attr: copy_struct_from_user faults 40 bytes in -> EFAULT",
        build: |p| {
            p.place(
                "",
                Place::Cut {
                    bytes: clock().build(),
                    readable: 40,
                },
            );
        },
    },
    Case {
        name: "attr-size-1-read-only",
        target: "perf_copy_attr: size < PERF_ATTR_SIZE_VER0, the size word read-only: put_user fails -> E2BIG, nothing written back",
        build: |p| {
            p.place("", Place::ReadOnly(sized(clock(), 1, 8).build()));
        },
    },
    // perf_copy_attr(): what it checks of the members.
    Case {
        name: "attr-reserved-1",
        target: "perf_copy_attr: a bit of __reserved_1 -> EINVAL",
        build: |p| {
            p.open("", &with(clock(), |a| a.or_flags(RESERVED_1_BIT)));
        },
    },
    Case {
        name: "attr-reserved-2",
        target: "perf_copy_attr: __reserved_2 non-zero -> EINVAL",
        build: |p| {
            p.open("", &with(clock(), |a| a.u16_at(OFF_RESERVED_2, 1)));
        },
    },
    Case {
        name: "attr-reserved-3",
        target: "perf_copy_attr: a bit of __reserved_3 (aux_action) -> EINVAL",
        build: |p| {
            p.open("", &with(clock(), |a| a.aux_action(AUX_RESERVED)));
        },
    },
    Case {
        name: "sample-type-unknown",
        target: "perf_copy_attr: sample_type bit PERF_SAMPLE_MAX -> EINVAL",
        build: |p| {
            p.open("", &with(clock(), |a| a.sample_type(PERF_SAMPLE_MAX)));
        },
    },
    Case {
        name: "read-format-unknown",
        target: "perf_copy_attr: read_format bit PERF_FORMAT_MAX -> EINVAL",
        build: |p| {
            p.open("", &with(clock(), |a| a.read_format(PERF_FORMAT_MAX)));
        },
    },
    Case {
        name: "branch-unknown-bit",
        target: "perf_copy_attr: branch_sample_type bit PERF_SAMPLE_BRANCH_MAX -> EINVAL",
        build: |p| {
            p.open("", &with(faults(), |a| a.branch(BRANCH_ANY | BRANCH_MAX)));
        },
    },
    Case {
        name: "branch-levels-only",
        target: "perf_copy_attr: branch_sample_type with a level and no branch type -> EINVAL",
        build: |p| {
            p.open("", &with(faults(), |a| a.branch(BRANCH_USER)));
        },
    },
    Case {
        name: "branch-levels-from-exclude-user",
        target: "perf_copy_attr: no levels, exclude_user=0 adds USER only: no privilege check -> EOPNOTSUPP (perf_swevent_init: no branch stack)",
        build: |p| {
            p.open("", &with(faults(), |a| a.branch(BRANCH_ANY)));
        },
    },
    Case {
        name: "branch-levels-from-exclude-kernel",
        target: "perf_copy_attr: no levels, exclude_kernel=0 adds KERNEL -> perf_allow_kernel: EACCES at paranoid 2, else EOPNOTSUPP",
        build: |p| {
            p.open("", &with(faults(), |a| a.flags(KERNEL_TOO).branch(BRANCH_ANY)));
        },
    },
    Case {
        name: "branch-levels-from-exclude-hv",
        target: "perf_copy_attr: no levels, exclude_hv=0 adds HV -> perf_allow_kernel: EACCES at paranoid 2, else EOPNOTSUPP",
        build: |p| {
            p.open(
                "",
                &with(faults(), |a| {
                    a.flags(DISABLED | EXCLUDE_KERNEL).branch(BRANCH_ANY)
                }),
            );
        },
    },
    Case {
        name: "branch-levels-all-excluded",
        target: "perf_copy_attr: no levels, every level excluded: none added, no privilege check -> EOPNOTSUPP",
        build: |p| {
            p.open(
                "",
                &with(faults(), |a| {
                    a.or_flags(EXCLUDE_USER).branch(BRANCH_ANY)
                }),
            );
        },
    },
    Case {
        name: "branch-level-user",
        target: "perf_copy_attr: levels given, USER: none propagated, no privilege check -> EOPNOTSUPP",
        build: |p| {
            p.open("", &with(faults(), |a| a.branch(BRANCH_ANY | BRANCH_USER)));
        },
    },
    Case {
        name: "branch-level-kernel",
        target: "perf_copy_attr: levels given, KERNEL (exclude_kernel set) -> perf_allow_kernel: EACCES at paranoid 2, else EOPNOTSUPP",
        build: |p| {
            p.open("", &with(faults(), |a| a.branch(BRANCH_ANY | BRANCH_KERNEL)));
        },
    },
    Case {
        name: "regs-user-none",
        target: "perf_copy_attr: PERF_SAMPLE_REGS_USER, perf_reg_validate(0) -> EINVAL",
        build: |p| {
            p.open("", &with(clock(), |a| a.sampling(PERF_SAMPLE_REGS_USER)));
        },
    },
    Case {
        name: "regs-user-reserved",
        target: "perf_copy_attr: perf_reg_validate, a reserved register bit -> EINVAL",
        build: |p| {
            p.open(
                "",
                &with(clock(), |a| {
                    a.sampling(PERF_SAMPLE_REGS_USER)
                        .u64_at(OFF_SAMPLE_REGS_USER, REG_RESERVED)
                }),
            );
        },
    },
    Case {
        name: "regs-user-segment",
        target: "perf_copy_attr: perf_reg_validate, DS (REG_NOSUPPORT on x86-64) -> EINVAL",
        build: |p| {
            p.open(
                "",
                &with(clock(), |a| {
                    a.sampling(PERF_SAMPLE_REGS_USER)
                        .u64_at(OFF_SAMPLE_REGS_USER, REG_DS)
                }),
            );
        },
    },
    Case {
        name: "regs-user",
        target: "perf_copy_attr: perf_reg_validate, IP and SP -> fd",
        build: |p| {
            p.open(
                "",
                &with(clock(), |a| {
                    a.sampling(PERF_SAMPLE_REGS_USER)
                        .u64_at(OFF_SAMPLE_REGS_USER, REG_IP | REG_SP)
                }),
            );
        },
    },
    Case {
        name: "regs-user-xmm",
        target: "perf_try_init_event: an XMM register on a PMU without PERF_PMU_CAP_EXTENDED_REGS -> EOPNOTSUPP, the event destroyed",
        build: |p| {
            p.open(
                "",
                &with(faults(), |a| {
                    a.sampling(PERF_SAMPLE_REGS_USER)
                        .u64_at(OFF_SAMPLE_REGS_USER, REG_XMM0)
                }),
            );
        },
    },
    Case {
        name: "stack-user-too-big",
        target: "perf_copy_attr: sample_stack_user >= USHRT_MAX -> EINVAL",
        build: |p| {
            p.open(
                "",
                &with(clock(), |a| {
                    a.sampling(PERF_SAMPLE_STACK_USER)
                        .u32_at(OFF_SAMPLE_STACK_USER, 0xffff)
                }),
            );
        },
    },
    Case {
        name: "stack-user-unaligned",
        target: "perf_copy_attr: sample_stack_user not 8-byte aligned -> EINVAL",
        build: |p| {
            p.open(
                "",
                &with(clock(), |a| {
                    a.sampling(PERF_SAMPLE_STACK_USER)
                        .u32_at(OFF_SAMPLE_STACK_USER, 12)
                }),
            );
        },
    },
    Case {
        name: "stack-user",
        target: "perf_copy_attr: sample_stack_user 4096 -> fd",
        build: |p| {
            p.open(
                "",
                &with(clock(), |a| {
                    a.sampling(PERF_SAMPLE_STACK_USER)
                        .u32_at(OFF_SAMPLE_STACK_USER, 4096)
                }),
            );
        },
    },
    Case {
        name: "regs-intr-none",
        target: "perf_copy_attr: PERF_SAMPLE_REGS_INTR, perf_reg_validate(0) -> EINVAL",
        build: |p| {
            p.open("", &with(clock(), |a| a.sampling(PERF_SAMPLE_REGS_INTR)));
        },
    },
    Case {
        name: "regs-intr",
        target: "perf_event_open: PERF_SAMPLE_REGS_INTR, no lockdown in the guest -> fd",
        build: |p| {
            p.open(
                "",
                &with(clock(), |a| {
                    a.sampling(PERF_SAMPLE_REGS_INTR)
                        .u64_at(OFF_SAMPLE_REGS_INTR, REG_IP)
                }),
            );
        },
    },
    Case {
        name: "sample-cgroup",
        target: "perf_copy_attr: PERF_SAMPLE_CGROUP -> EINVAL without CONFIG_CGROUP_PERF, else fd",
        build: |p| {
            p.open("", &with(clock(), |a| a.sampling(PERF_SAMPLE_CGROUP)));
        },
    },
    Case {
        name: "sample-weight-both",
        target: "perf_copy_attr: PERF_SAMPLE_WEIGHT with PERF_SAMPLE_WEIGHT_STRUCT -> EINVAL",
        build: |p| {
            p.open(
                "",
                &with(clock(), |a| {
                    a.sampling(PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)
                }),
            );
        },
    },
    Case {
        name: "inherit-thread-alone",
        target: "perf_copy_attr: inherit_thread without inherit -> EINVAL",
        build: |p| {
            p.open("", &with(clock(), |a| a.or_flags(INHERIT_THREAD)));
        },
    },
    Case {
        name: "inherit-thread",
        target: "perf_copy_attr: inherit_thread with inherit -> fd",
        build: |p| {
            p.open("", &with(clock(), |a| a.or_flags(INHERIT | INHERIT_THREAD)));
        },
    },
    Case {
        name: "remove-and-enable-on-exec",
        target: "perf_copy_attr: remove_on_exec with enable_on_exec -> EINVAL",
        build: |p| {
            p.open(
                "",
                &with(clock(), |a| a.or_flags(REMOVE_ON_EXEC | ENABLE_ON_EXEC)),
            );
        },
    },
    Case {
        name: "sigtrap-alone",
        target: "perf_copy_attr: sigtrap without remove_on_exec -> EINVAL",
        build: |p| {
            p.open("", &with(clock(), |a| a.or_flags(SIGTRAP)));
        },
    },
    Case {
        name: "max-stack-default",
        target: "perf_copy_attr: sample_max_stack 0 becomes kernel.perf_event_max_stack (callchains) -> fd",
        build: |p| {
            p.open("", &with(clock(), |a| a.sampling(PERF_SAMPLE_CALLCHAIN)));
        },
    },
    // The open body's own checks.
    Case {
        name: "exclude-kernel-0",
        target: "perf_event_open: exclude_kernel=0 -> perf_allow_kernel: EACCES at paranoid 2 without CAP_PERFMON, else fd",
        build: |p| {
            p.open("", &with(clock(), |a| a.flags(KERNEL_TOO)));
        },
    },
    Case {
        name: "callchain-kernel",
        target: "perf_event_open: kernel callchains (exclude_kernel=0) -> perf_allow_kernel: EACCES at paranoid 2, else fd",
        build: |p| {
            p.open(
                "",
                &with(clock(), |a| a.flags(KERNEL_TOO).sampling(PERF_SAMPLE_CALLCHAIN)),
            );
        },
    },
    Case {
        name: "namespaces",
        target: "perf_event_open: namespaces without CAP_PERFMON -> EACCES, else fd",
        build: |p| {
            p.open("", &with(clock(), |a| a.or_flags(NAMESPACES)));
        },
    },
    Case {
        name: "freq-at-max-rate",
        target: "perf_event_open: sample_freq == kernel.perf_event_max_sample_rate -> fd",
        build: |p| {
            let rate = p.env.max_sample_rate;
            p.open("", &with(clock(), |a| a.or_flags(FREQ).period(rate)));
        },
    },
    Case {
        name: "freq-above-max-rate",
        target: "perf_event_open: sample_freq > kernel.perf_event_max_sample_rate -> EINVAL",
        build: |p| {
            let rate = p.env.max_sample_rate + 1;
            p.open("", &with(clock(), |a| a.or_flags(FREQ).period(rate)));
        },
    },
    Case {
        name: "freq-zero",
        target: "perf_event_alloc: freq with sample_freq 0: counting, period 0 -> fd",
        build: |p| {
            p.open("", &with(clock(), |a| a.or_flags(FREQ)));
        },
    },
    Case {
        name: "period-bit-63",
        target: "perf_event_open: sample_period with bit 63 -> EINVAL",
        build: |p| {
            p.open("", &with(clock(), |a| a.period(1 << 63)));
        },
    },
    Case {
        name: "phys-addr",
        target: "perf_event_open: PERF_SAMPLE_PHYS_ADDR -> perf_allow_kernel: EACCES at paranoid 2, else fd",
        build: |p| {
            p.open("", &with(clock(), |a| a.sampling(PERF_SAMPLE_PHYS_ADDR)));
        },
    },
    Case {
        name: "cgroup-pid-minus-1",
        target: "perf_event_open: PERF_FLAG_PID_CGROUP with pid -1 -> EINVAL",
        build: |p| {
            let cpu = p.cpu;
            p.open("", &clock())
                .cpu_wide(cpu)
                .flags(PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC);
        },
    },
    Case {
        name: "cgroup-cpu-minus-1",
        target: "perf_event_open: PERF_FLAG_PID_CGROUP with cpu -1 -> EINVAL",
        build: |p| {
            p.step(Step::File {
                path: CGROUP_ROOT,
                slot: FILE,
            });
            p.open("", &clock())
                .pid(Pid::Slot(FILE))
                .flags(PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC);
        },
    },
    Case {
        name: "cgroup-fd",
        target: "perf_cgroup_connect: the cgroup2 root -> perf_allow_cpu: EACCES at paranoid > 0, else fd (EINVAL without CONFIG_CGROUP_PERF)",
        build: |p| {
            cgroup_event(p, "", CGROUP_ROOT);
        },
    },
    Case {
        name: "cgroup-fd-not-cgroup",
        target: "perf_cgroup_connect: /dev/null, no cgroup's directory -> EBADF (EINVAL without CONFIG_CGROUP_PERF)",
        build: |p| {
            cgroup_event(p, "", "/dev/null");
        },
    },
    Case {
        name: "cgroup-fd-closed",
        target: "perf_cgroup_connect: pid a closed fd -> EBADF (EINVAL without CONFIG_CGROUP_PERF)",
        build: |p| {
            p.step(Step::File {
                path: CGROUP_ROOT,
                slot: FILE,
            });
            p.step(Step::Close(FILE));
            let cpu = p.cpu;
            p.open("", &clock())
                .pid(Pid::Slot(FILE))
                .cpu(cpu)
                .flags(PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC);
        },
    },
    Case {
        name: "cgroup-sibling",
        target: "perf_cgroup_connect: a sibling on its leader's cgroup -> fd with CPU access (else EACCES, EBADF)",
        build: |p| {
            cgroup_event(p, "leader", CGROUP_ROOT).keep(LEADER);
            let cpu = p.cpu;
            p.open("", &faults())
                .pid(Pid::Slot(FILE))
                .cpu(cpu)
                .group(LEADER)
                .flags(PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC);
        },
    },
    Case {
        name: "cgroup-leader-not-cgroup",
        target: "perf_cgroup_connect: a cgroup sibling of a CPU-wide leader on no cgroup -> EINVAL (EBADF where the leader needs CPU access)",
        build: |p| {
            let cpu = p.cpu;
            p.open("leader", &clock()).cpu_wide(cpu).keep(LEADER);
            cgroup_event(p, "", CGROUP_ROOT).group(LEADER);
        },
    },
    Case {
        name: "no-free-fd",
        target: "perf_event_open: get_unused_fd_flags under RLIMIT_NOFILE 0 -> EMFILE",
        build: |p| {
            p.step(Step::NoFiles);
            p.open("", &clock());
        },
    },
    Case {
        name: "group-fd-closed",
        target: "perf_fget_light: group_fd a closed fd -> EBADF",
        build: |p| {
            p.step(Step::File {
                path: "/dev/null",
                slot: FILE,
            });
            p.step(Step::Close(FILE));
            p.open("", &clock()).group(FILE);
        },
    },
    Case {
        name: "group-fd-not-perf",
        target: "perf_fget_light: group_fd not a perf event (/dev/null) -> EBADF",
        build: |p| {
            p.step(Step::File {
                path: "/dev/null",
                slot: FILE,
            });
            p.open("", &clock()).group(FILE);
        },
    },
    Case {
        name: "pid-own",
        target: "find_lively_task_by_vpid: the caller's own pid -> fd",
        build: |p| {
            p.open("", &clock()).pid(Pid::Own);
        },
    },
    Case {
        name: "pid-no-such-task",
        target: "find_lively_task_by_vpid: no task has the pid -> ESRCH",
        build: |p| {
            p.open("", &clock()).pid(Pid::Value(NO_SUCH_PID));
        },
    },
    Case {
        name: "pid-other-user",
        target: "perf_check_permission: another user's task: CAP_PERFMON or ptrace access -> EACCES unprivileged, else fd",
        build: |p| {
            let other = p.env.other_pid;
            p.open("", &clock()).pid(Pid::Value(other));
        },
    },
    Case {
        name: "sigtrap-other-user",
        target: "perf_check_permission: sigtrap on another user's task needs CAP_KILL too (else ptrace attach) -> EACCES but for root",
        build: |p| {
            let other = p.env.other_pid;
            p.open("", &with(clock(), |a| a.or_flags(SIGTRAP | REMOVE_ON_EXEC)))
                .pid(Pid::Value(other));
        },
    },
    Case {
        name: "sigtrap-own",
        target: "perf_check_permission: sigtrap on the caller's own task -> fd",
        build: |p| {
            p.open("", &with(clock(), |a| a.or_flags(SIGTRAP | REMOVE_ON_EXEC)));
        },
    },
    Case {
        name: "sigtrap-cpu-wide",
        target: "perf_event_alloc: sigtrap without a task -> EINVAL",
        build: |p| {
            let cpu = p.cpu;
            p.open("", &with(clock(), |a| a.or_flags(SIGTRAP | REMOVE_ON_EXEC)))
                .cpu_wide(cpu);
        },
    },
    Case {
        name: "inherit-differs-from-leader",
        target: "perf_event_open: a task event whose inherit differs from its leader's -> EINVAL",
        build: |p| {
            let l = leader(p, &clock());
            p.open("", &with(clock(), |a| a.or_flags(INHERIT))).group(l);
        },
    },
    Case {
        name: "inherit-differs-cpu-wide",
        target: "perf_event_open: inherit differs from a CPU-wide leader's, no task: not checked -> fd with CPU access (else EACCES, EBADF)",
        build: |p| {
            let cpu = p.cpu;
            p.open("leader", &clock()).cpu_wide(cpu).keep(LEADER);
            p.open("", &with(clock(), |a| a.or_flags(INHERIT)))
                .cpu_wide(cpu)
                .group(LEADER);
        },
    },
    Case {
        name: "cpu-nr-cpu-ids",
        target: "perf_event_alloc: cpu == nr_cpu_ids -> EINVAL",
        build: |p| {
            let n = p.env.nr_cpu_ids;
            p.open("", &clock()).cpu(n);
        },
    },
    Case {
        name: "cpu-last",
        target: "perf_event_alloc: cpu nr_cpu_ids - 1 on a task -> fd",
        build: |p| {
            let n = p.env.nr_cpu_ids - 1;
            p.open("", &clock()).cpu(n);
        },
    },
    Case {
        name: "pid-and-cpu-minus-1",
        target: "perf_event_alloc: pid -1 and cpu -1, neither task nor CPU -> EINVAL",
        build: |p| {
            p.open("", &clock()).cpu_wide(-1);
        },
    },
    Case {
        name: "cpu-wide",
        target: "find_get_context: a CPU-wide event -> perf_allow_cpu: EACCES at paranoid > 0 without CAP_PERFMON, else fd",
        build: |p| {
            let cpu = p.cpu;
            p.open("", &clock()).cpu_wide(cpu);
        },
    },
    Case {
        name: "task-on-cpu",
        target: "find_get_context: a task event on one CPU, no CPU check -> fd",
        build: |p| {
            let cpu = p.cpu;
            p.open("", &clock()).cpu(cpu);
        },
    },
    // perf_event_set_clock().
    Case {
        name: "clock-monotonic",
        target: "perf_event_set_clock: CLOCK_MONOTONIC, NMI-safe -> fd",
        build: |p| {
            p.open("", &with(clock(), |a| a.clock(CLOCK_MONOTONIC)));
        },
    },
    Case {
        name: "clock-monotonic-raw",
        target: "perf_event_set_clock: CLOCK_MONOTONIC_RAW, NMI-safe -> fd",
        build: |p| {
            p.open("", &with(clock(), |a| a.clock(CLOCK_MONOTONIC_RAW)));
        },
    },
    Case {
        name: "clock-realtime",
        target: "perf_event_set_clock: CLOCK_REALTIME, not NMI-safe, the PMU has PERF_PMU_CAP_NO_NMI -> fd",
        build: |p| {
            p.open("", &with(clock(), |a| a.clock(CLOCK_REALTIME)));
        },
    },
    Case {
        name: "clock-boottime",
        target: "perf_event_set_clock: CLOCK_BOOTTIME -> fd",
        build: |p| {
            p.open("", &with(clock(), |a| a.clock(CLOCK_BOOTTIME)));
        },
    },
    Case {
        name: "clock-tai",
        target: "perf_event_set_clock: CLOCK_TAI -> fd",
        build: |p| {
            p.open("", &with(clock(), |a| a.clock(CLOCK_TAI)));
        },
    },
    Case {
        name: "clock-process-cputime",
        target: "perf_event_set_clock: CLOCK_PROCESS_CPUTIME_ID, no perf clock -> EINVAL",
        build: |p| {
            p.open("", &with(clock(), |a| a.clock(CLOCK_PROCESS_CPUTIME_ID)));
        },
    },
    Case {
        name: "clock-negative",
        target: "perf_event_set_clock: clockid -1 (a dynamic clock) -> EINVAL",
        build: |p| {
            p.open("", &with(clock(), |a| a.clock(-1)));
        },
    },
    Case {
        name: "clock-realtime-tracepoint",
        target: "perf_event_set_clock: CLOCK_REALTIME on the tracepoint PMU, no PERF_PMU_CAP_NO_NMI -> EINVAL",
        build: |p| {
            let a = with(sched_switch(p), |a| a.clock(CLOCK_REALTIME));
            p.open("", &a);
        },
    },
    Case {
        name: "clock-monotonic-tracepoint",
        target: "perf_event_set_clock: CLOCK_MONOTONIC on the tracepoint PMU, NMI-safe -> fd",
        build: |p| {
            let a = with(sched_switch(p), |a| a.clock(CLOCK_MONOTONIC));
            p.open("", &a);
        },
    },
    // Groups.
    Case {
        name: "group-sibling",
        target: "perf_event_open: a software sibling of a software leader on the same task -> fd",
        build: |p| {
            let l = leader(p, &clock());
            p.open("", &faults()).group(l);
        },
    },
    Case {
        name: "group-of-a-sibling",
        target: "perf_event_open: group_fd a sibling, not a leader -> EINVAL",
        build: |p| {
            let l = leader(p, &clock());
            p.open("sibling", &faults()).group(l).keep(MEMBERS);
            p.open("", &clock()).group(MEMBERS);
        },
    },
    Case {
        name: "group-clock-differs",
        target: "perf_event_open: a sibling's clock differs from its leader's -> EINVAL",
        build: |p| {
            let l = leader(p, &with(clock(), |a| a.clock(CLOCK_MONOTONIC_RAW)));
            p.open("", &clock()).group(l);
        },
    },
    Case {
        name: "group-leader-other-cpu",
        target: "perf_event_open: the leader is on another CPU -> EINVAL",
        build: |p| {
            let (cpu, other) = (p.cpu, p.other_cpu);
            p.open("leader", &clock()).cpu(cpu).keep(LEADER);
            p.open("", &clock()).cpu(other).group(LEADER);
        },
    },
    Case {
        name: "group-leader-other-task",
        target: "perf_event_open: the leader is on another task (the helper thread): contexts differ -> EINVAL",
        build: |p| {
            p.open("leader", &clock()).helper().keep(LEADER);
            p.open("", &clock()).group(LEADER);
        },
    },
    Case {
        name: "group-leader-cpu-wide",
        target: "perf_event_open: a task sibling of a CPU-wide leader on its CPU: contexts differ -> EINVAL (EBADF where the leader needs CPU access)",
        build: |p| {
            let cpu = p.cpu;
            p.open("leader", &clock()).cpu_wide(cpu).keep(LEADER);
            p.open("", &clock()).cpu(cpu).group(LEADER);
        },
    },
    Case {
        name: "group-pinned-sibling",
        target: "perf_event_open: a pinned sibling, only a leader may be -> EINVAL",
        build: |p| {
            let l = leader(p, &clock());
            p.open("", &with(clock(), |a| a.or_flags(PINNED))).group(l);
        },
    },
    Case {
        name: "group-exclusive-sibling",
        target: "perf_event_open: an exclusive sibling, only a leader may be -> EINVAL",
        build: |p| {
            let l = leader(p, &clock());
            p.open("", &with(clock(), |a| a.or_flags(EXCLUSIVE))).group(l);
        },
    },
    Case {
        name: "pinned-leader",
        target: "perf_event_open: a pinned leader -> fd",
        build: |p| {
            p.open("", &with(clock(), |a| a.or_flags(PINNED)));
        },
    },
    Case {
        name: "exclusive-leader",
        target: "exclusive_event_init: an exclusive leader on a PMU that is not exclusive -> fd",
        build: |p| {
            p.open("", &with(clock(), |a| a.or_flags(EXCLUSIVE)));
        },
    },
    Case {
        name: "group-fd-no-group",
        target: "perf_event_open: FD_NO_GROUP: group_fd looked up, no leader taken -> fd",
        build: |p| {
            let l = leader(p, &clock());
            p.open("", &clock())
                .group(l)
                .flags(PERF_FLAG_FD_NO_GROUP | PERF_FLAG_FD_CLOEXEC);
        },
    },
    Case {
        name: "group-tracepoint-sibling",
        target: "perf_event_open: a tracepoint sibling of a software leader; every guest PMU is software-context, no move_group -> fd",
        build: |p| {
            let l = leader(p, &clock());
            let tp = sched_switch(p);
            p.open("", &tp).group(l);
        },
    },
    Case {
        name: "group-breakpoint-sibling",
        target: "perf_event_open: a breakpoint sibling of a software leader, no move_group -> fd",
        build: |p| {
            let l = leader(p, &clock());
            p.open("", &watch()).group(l);
        },
    },
    // perf_event_set_output(): FD_OUTPUT.
    Case {
        name: "output-unmapped",
        target: "perf_event_set_output: the output event has no ring buffer -> EINVAL",
        build: |p| {
            let l = leader(p, &clock());
            p.open("", &clock()).group(l).flags(OUTPUT_ONLY);
        },
    },
    Case {
        name: "output-mapped",
        target: "perf_event_set_output: the output event's mapped ring, same task and CPU -> fd",
        build: |p| {
            let l = mapped_leader(p);
            p.open("", &clock()).group(l).flags(OUTPUT_ONLY);
        },
    },
    Case {
        name: "output-mapped-sibling",
        target: "perf_event_set_output: a sibling writing to its leader's mapped ring -> fd",
        build: |p| {
            let l = mapped_leader(p);
            p.open("", &clock())
                .group(l)
                .flags(PERF_FLAG_FD_OUTPUT | PERF_FLAG_FD_CLOEXEC);
        },
    },
    Case {
        name: "output-other-cpu",
        target: "perf_event_set_output: the output event's CPU (-1) differs -> EINVAL",
        build: |p| {
            let l = mapped_leader(p);
            let cpu = p.cpu;
            p.open("", &clock()).cpu(cpu).group(l).flags(OUTPUT_ONLY);
        },
    },
    Case {
        name: "output-other-task",
        target: "perf_event_set_output: a per-task ring of another task (the helper thread) -> EINVAL",
        build: |p| {
            p.open("leader", &clock()).helper().keep(LEADER);
            p.step(Step::Mmap(LEADER));
            p.open("", &clock()).group(LEADER).flags(OUTPUT_ONLY);
        },
    },
    Case {
        name: "output-per-cpu",
        target: "perf_event_set_output: a per-CPU ring on the same CPU, no task check -> fd",
        build: |p| {
            let cpu = p.cpu;
            p.open("leader", &clock()).cpu(cpu).keep(LEADER);
            p.step(Step::Mmap(LEADER));
            p.open("", &clock()).cpu(cpu).group(LEADER).flags(OUTPUT_ONLY);
        },
    },
    Case {
        name: "output-clock-differs",
        target: "perf_event_set_output: the events' clocks differ -> EINVAL",
        build: |p| {
            let l = mapped_leader(p);
            p.open("", &with(clock(), |a| a.clock(CLOCK_MONOTONIC_RAW)))
                .group(l)
                .flags(OUTPUT_ONLY);
        },
    },
    Case {
        name: "output-backward-differs",
        target: "perf_event_set_output: one writes backward, the other not -> EINVAL",
        build: |p| {
            let l = mapped_leader(p);
            p.open("", &with(clock(), |a| a.or_flags(WRITE_BACKWARD)))
                .group(l)
                .flags(OUTPUT_ONLY);
        },
    },
    // perf_event_alloc().
    Case {
        name: "inherit-sample-read",
        target: "perf_event_alloc: inherit with PERF_SAMPLE_READ, without PERF_SAMPLE_TID -> EINVAL",
        build: |p| {
            p.open(
                "",
                &with(clock(), |a| a.or_flags(INHERIT).sampling(PERF_SAMPLE_READ)),
            );
        },
    },
    Case {
        name: "inherit-sample-read-tid",
        target: "perf_event_alloc: inherit with PERF_SAMPLE_READ and PERF_SAMPLE_TID -> fd (and a fork inherits it)",
        build: |p| {
            let a = with(clock(), |a| {
                a.or_flags(INHERIT)
                    .sampling(PERF_SAMPLE_READ | PERF_SAMPLE_TID)
            });
            p.open("", &a).keep(LEADER);
            p.step(Step::Fork);
        },
    },
    Case {
        name: "inherit-sample-read-group",
        target: "perf_event_alloc: inherit, PERF_SAMPLE_READ|PERF_SAMPLE_TID and PERF_FORMAT_GROUP -> fd",
        build: |p| {
            let a = with(clock(), |a| {
                a.or_flags(INHERIT)
                    .sampling(PERF_SAMPLE_READ | PERF_SAMPLE_TID)
                    .read_format(PERF_FORMAT_GROUP | PERF_FORMAT_ID)
            });
            p.open("", &a);
        },
    },
    Case {
        name: "inherit-fork",
        target: "perf_init_event: a fork inherits a software event with callchains, a tracepoint, a breakpoint (the parent's PMU first; perf_trace_event_perm passes a child) -> fd",
        build: |p| {
            let inherit = |a: Attr| with(a, |a| a.or_flags(INHERIT));
            let callchains = with(faults(), |a| a.sampling(PERF_SAMPLE_CALLCHAIN));
            p.open("software", &inherit(callchains)).keep(LEADER);
            let tp = inherit(sched_switch(p));
            p.open("tracepoint", &tp).keep(MEMBERS);
            p.open("", &inherit(watch())).keep(FILE);
            p.step(Step::Fork);
        },
    },
    Case {
        name: "aux-output",
        target: "perf_event_alloc: aux_output on a PMU without PERF_PMU_CAP_AUX_OUTPUT -> EOPNOTSUPP",
        build: |p| {
            p.open("", &with(clock(), |a| a.or_flags(AUX_OUTPUT)));
        },
    },
    Case {
        name: "aux-pause-and-resume",
        target: "perf_event_alloc: aux_pause with aux_resume -> EINVAL",
        build: |p| {
            p.open("", &with(clock(), |a| a.aux_action(AUX_PAUSE | AUX_RESUME)));
        },
    },
    Case {
        name: "aux-start-paused",
        target: "perf_event_alloc: aux_start_paused on a PMU without PERF_PMU_CAP_AUX_PAUSE -> EOPNOTSUPP",
        build: |p| {
            p.open("", &with(clock(), |a| a.aux_action(AUX_START_PAUSED)));
        },
    },
    Case {
        name: "aux-sample-size-alone",
        target: "perf_get_aux_event: aux_sample_size without a group leader -> EINVAL",
        build: |p| {
            p.open("", &with(clock(), |a| a.u32_at(OFF_AUX_SAMPLE_SIZE, 4096)));
        },
    },
    Case {
        name: "aux-sample-size-sibling",
        target: "perf_get_aux_event: aux_sample_size, the leader's PMU has no snapshot_aux -> EINVAL",
        build: |p| {
            let l = leader(p, &clock());
            p.open("", &with(clock(), |a| a.u32_at(OFF_AUX_SAMPLE_SIZE, 4096)))
                .group(l);
        },
    },
    Case {
        name: "aux-pause-sibling",
        target: "perf_get_aux_event: aux_pause, the leader's PMU lacks PERF_PMU_CAP_AUX_PAUSE -> EINVAL",
        build: |p| {
            let l = leader(p, &clock());
            p.open("", &with(clock(), |a| a.aux_action(AUX_PAUSE))).group(l);
        },
    },
    Case {
        name: "max-stack-at-sysctl",
        target: "get_callchain_buffers: sample_max_stack == kernel.perf_event_max_stack -> fd",
        build: |p| {
            let max = p.env.max_stack;
            p.open(
                "",
                &with(clock(), |a| a.sampling(PERF_SAMPLE_CALLCHAIN).max_stack(max)),
            );
        },
    },
    Case {
        name: "max-stack-above-sysctl",
        target: "get_callchain_buffers: sample_max_stack > kernel.perf_event_max_stack -> EOVERFLOW",
        build: |p| {
            let above = p.env.max_stack.saturating_add(1);
            p.open(
                "",
                &with(clock(), |a| a.sampling(PERF_SAMPLE_CALLCHAIN).max_stack(above)),
            );
        },
    },
    Case {
        name: "callchain-twice",
        target: "get_callchain_buffers: a second callchain event, the buffers already there -> fd",
        build: |p| {
            let a = with(clock(), |a| a.sampling(PERF_SAMPLE_CALLCHAIN));
            leader(p, &a);
            p.open("", &a);
        },
    },
    Case {
        name: "write-backward",
        target: "perf_event_alloc: write_backward, the backward output handler -> fd",
        build: |p| {
            p.open("", &with(clock(), |a| a.or_flags(WRITE_BACKWARD)));
        },
    },
    // perf_init_event() and the software PMUs.
    Case {
        name: "type-hardware",
        target: "perf_init_event: PERF_TYPE_HARDWARE, no hardware PMU under TCG -> ENOENT",
        build: |p| {
            p.open("", &of_type(PERF_TYPE_HARDWARE, 0));
        },
    },
    Case {
        name: "type-hw-cache",
        target: "perf_init_event: PERF_TYPE_HW_CACHE, no hardware PMU -> ENOENT",
        build: |p| {
            p.open("", &of_type(PERF_TYPE_HW_CACHE, 0));
        },
    },
    Case {
        name: "type-raw",
        target: "perf_init_event: PERF_TYPE_RAW, no PMU of the type: every PMU refuses it -> ENOENT",
        build: |p| {
            p.open("", &of_type(PERF_TYPE_RAW, 0));
        },
    },
    Case {
        name: "type-unknown",
        target: "perf_init_event: a type no PMU has: every PMU's event_init refuses it -> ENOENT",
        build: |p| {
            p.open("", &of_type(NO_SUCH_TYPE, 0));
        },
    },
    Case {
        name: "type-hardware-extended-software",
        target: "perf_init_event: PERF_TYPE_HARDWARE extended to the software PMU, without PERF_PMU_CAP_EXTENDED_HW_TYPE -> ENOENT",
        build: |p| {
            let config = u64::from(PERF_TYPE_SOFTWARE) << 32;
            p.open("", &of_type(PERF_TYPE_HARDWARE, config));
        },
    },
    Case {
        name: "type-hardware-extended-unknown",
        target: "perf_init_event: PERF_TYPE_HARDWARE extended to a type no PMU has -> ENOENT",
        build: |p| {
            let config = u64::from(NO_SUCH_TYPE) << 32;
            p.open("", &of_type(PERF_TYPE_HARDWARE, config));
        },
    },
    Case {
        name: "sw-cpu-clock",
        target: "perf_swevent_init: CPU_CLOCK, handed to the cpu_clock PMU (ENOENT, again) -> fd",
        build: |p| {
            p.open("", &sw(PERF_COUNT_SW_CPU_CLOCK));
        },
    },
    Case {
        name: "sw-page-faults",
        target: "perf_swevent_init: a software event it takes itself (swevent_hlist_get) -> fd",
        build: |p| {
            p.open("", &faults());
        },
    },
    Case {
        name: "sw-cgroup-switches",
        target: "perf_swevent_init: the last software event, CGROUP_SWITCHES -> fd",
        build: |p| {
            p.open("", &sw(PERF_COUNT_SW_CGROUP_SWITCHES));
        },
    },
    Case {
        name: "sw-max",
        target: "perf_swevent_init: config >= PERF_COUNT_SW_MAX -> ENOENT",
        build: |p| {
            p.open("", &sw(PERF_COUNT_SW_MAX));
        },
    },
    Case {
        name: "cpu-clock-type",
        target: "cpu_clock_event_init: the cpu_clock PMU's own type -> fd",
        build: |p| {
            p.open("", &of_type(CPU_CLOCK_TYPE, PERF_COUNT_SW_CPU_CLOCK));
        },
    },
    Case {
        name: "cpu-clock-type-other-config",
        target: "cpu_clock_event_init: config not PERF_COUNT_SW_CPU_CLOCK -> ENOENT",
        build: |p| {
            p.open("", &of_type(CPU_CLOCK_TYPE, PERF_COUNT_SW_TASK_CLOCK));
        },
    },
    Case {
        name: "cpu-clock-type-branch-stack",
        target: "cpu_clock_event_init: branch stack -> EOPNOTSUPP",
        build: |p| {
            let a = with(of_type(CPU_CLOCK_TYPE, PERF_COUNT_SW_CPU_CLOCK), |a| {
                a.branch(BRANCH_ANY | BRANCH_USER)
            });
            p.open("", &a);
        },
    },
    Case {
        name: "task-clock-type",
        target: "task_clock_event_init: the task_clock PMU's own type -> fd",
        build: |p| {
            p.open("", &of_type(TASK_CLOCK_TYPE, PERF_COUNT_SW_TASK_CLOCK));
        },
    },
    Case {
        name: "task-clock-type-other-config",
        target: "task_clock_event_init: config not PERF_COUNT_SW_TASK_CLOCK -> ENOENT",
        build: |p| {
            p.open("", &of_type(TASK_CLOCK_TYPE, PERF_COUNT_SW_CPU_CLOCK));
        },
    },
    Case {
        name: "task-clock-type-branch-stack",
        target: "task_clock_event_init: branch stack -> EOPNOTSUPP",
        build: |p| {
            let a = with(of_type(TASK_CLOCK_TYPE, PERF_COUNT_SW_TASK_CLOCK), |a| {
                a.branch(BRANCH_ANY | BRANCH_USER)
            });
            p.open("", &a);
        },
    },
    // Hardware breakpoints.
    Case {
        name: "bp-w-1",
        target: "arch_build_bp_info: write, length 1 -> fd",
        build: |p| {
            p.open("", &breakpoint(HW_BREAKPOINT_W, USER_ADDR, 1));
        },
    },
    Case {
        name: "bp-w-2",
        target: "arch_build_bp_info: write, length 2 -> fd",
        build: |p| {
            p.open("", &breakpoint(HW_BREAKPOINT_W, USER_ADDR, 2));
        },
    },
    Case {
        name: "bp-w-4",
        target: "arch_build_bp_info: write, length 4 -> fd",
        build: |p| {
            p.open("", &breakpoint(HW_BREAKPOINT_W, USER_ADDR, 4));
        },
    },
    Case {
        name: "bp-w-8",
        target: "arch_build_bp_info: write, length 8 -> fd",
        build: |p| {
            p.open("", &watch());
        },
    },
    Case {
        name: "bp-rw-8",
        target: "arch_build_bp_info: read-write, length 8 -> fd",
        build: |p| {
            p.open("", &breakpoint(HW_BREAKPOINT_RW, USER_ADDR, 8));
        },
    },
    Case {
        name: "bp-r",
        target: "arch_build_bp_info: read only, which x86 cannot watch -> EINVAL",
        build: |p| {
            p.open("", &breakpoint(HW_BREAKPOINT_R, USER_ADDR, 4));
        },
    },
    Case {
        name: "bp-x",
        target: "arch_build_bp_info: execute, length sizeof(long) -> fd",
        build: |p| {
            p.open("", &breakpoint(HW_BREAKPOINT_X, USER_ADDR, 8));
        },
    },
    Case {
        name: "bp-x-4",
        target: "arch_build_bp_info: execute, length 4 (not sizeof(long)) -> EINVAL",
        build: |p| {
            p.open("", &breakpoint(HW_BREAKPOINT_X, USER_ADDR, 4));
        },
    },
    Case {
        name: "bp-empty",
        target: "__reserve_bp_slot: HW_BREAKPOINT_EMPTY -> EINVAL",
        build: |p| {
            p.open("", &breakpoint(HW_BREAKPOINT_EMPTY, USER_ADDR, 8));
        },
    },
    Case {
        name: "bp-invalid",
        target: "__reserve_bp_slot: HW_BREAKPOINT_INVALID (read-write and execute) -> EINVAL",
        build: |p| {
            p.open("", &breakpoint(HW_BREAKPOINT_INVALID, USER_ADDR, 8));
        },
    },
    Case {
        name: "bp-type-unknown",
        target: "arch_build_bp_info: a type above every defined one -> EINVAL",
        build: |p| {
            p.open("", &breakpoint(HW_BREAKPOINT_UNKNOWN, USER_ADDR, 8));
        },
    },
    Case {
        name: "bp-len-0",
        target: "arch_build_bp_info: length 0, not a power of two -> EINVAL",
        build: |p| {
            p.open("", &breakpoint(HW_BREAKPOINT_W, USER_ADDR, 0));
        },
    },
    Case {
        name: "bp-len-3",
        target: "arch_build_bp_info: length 3, not a power of two -> EINVAL",
        build: |p| {
            p.open("", &breakpoint(HW_BREAKPOINT_W, USER_ADDR, 3));
        },
    },
    Case {
        name: "bp-len-16",
        target: "arch_build_bp_info: an aligned range of 16, no X86_FEATURE_BPEXT under TCG -> EOPNOTSUPP",
        build: |p| {
            p.open("", &breakpoint(HW_BREAKPOINT_W, USER_ADDR, 16));
        },
    },
    Case {
        name: "bp-len-16-unaligned",
        target: "arch_build_bp_info: a range of 16 at an 8-byte boundary -> EINVAL",
        build: |p| {
            p.open("", &breakpoint(HW_BREAKPOINT_W, USER_ADDR + 8, 16));
        },
    },
    Case {
        name: "bp-w-1-odd",
        target: "hw_breakpoint_arch_parse: length 1 at an odd address -> fd",
        build: |p| {
            p.open("", &breakpoint(HW_BREAKPOINT_W, USER_ADDR + 1, 1));
        },
    },
    Case {
        name: "bp-w-2-odd",
        target: "hw_breakpoint_arch_parse: length 2 at an odd address -> EINVAL",
        build: |p| {
            p.open("", &breakpoint(HW_BREAKPOINT_W, USER_ADDR + 1, 2));
        },
    },
    Case {
        name: "bp-w-4-unaligned",
        target: "hw_breakpoint_arch_parse: length 4 at a 2-byte boundary -> EINVAL",
        build: |p| {
            p.open("", &breakpoint(HW_BREAKPOINT_W, USER_ADDR + 2, 4));
        },
    },
    Case {
        name: "bp-w-8-unaligned",
        target: "hw_breakpoint_arch_parse: length 8 at a 4-byte boundary -> EINVAL",
        build: |p| {
            p.open("", &breakpoint(HW_BREAKPOINT_W, USER_ADDR + 4, 8));
        },
    },
    Case {
        name: "bp-wraps",
        target: "arch_build_bp_info: bp_addr + bp_len wraps around -> EINVAL",
        build: |p| {
            p.open("", &breakpoint(HW_BREAKPOINT_W, u64::MAX - 3, 8));
        },
    },
    Case {
        name: "bp-cpu-entry-area",
        target: "arch_build_bp_info: in the CPU entry area -> EINVAL",
        build: |p| {
            p.open("", &breakpoint(HW_BREAKPOINT_W, CPU_ENTRY_AREA, 8));
        },
    },
    Case {
        name: "bp-kernel",
        target: "hw_breakpoint_parse: a kernel address needs CAP_SYS_ADMIN -> EPERM (EACCES first at paranoid 2), fd as root",
        build: |p| {
            let a = with(breakpoint(HW_BREAKPOINT_W, KERNEL_TEXT, 8), |a| a.flags(KERNEL_TOO));
            p.open("", &a);
        },
    },
    Case {
        name: "bp-kernel-excluded",
        target: "hw_breakpoint_parse: a kernel address with exclude_kernel -> EINVAL",
        build: |p| {
            p.open("", &breakpoint(HW_BREAKPOINT_W, KERNEL_TEXT, 8));
        },
    },
    Case {
        name: "bp-kernel-x",
        target: "arch_build_bp_info: execute on kernel text outside the kprobe blacklist -> fd as root (else EPERM, EACCES)",
        build: |p| {
            let a = with(breakpoint(HW_BREAKPOINT_X, KERNEL_TEXT, 8), |a| a.flags(KERNEL_TOO));
            p.open("", &a);
        },
    },
    Case {
        name: "bp-kernel-x-entry",
        target: "arch_build_bp_info: execute on the entry text, in the kprobe blacklist -> EINVAL (EACCES first at paranoid 2)",
        build: |p| {
            let a = with(breakpoint(HW_BREAKPOINT_X, KERNEL_ENTRY_TEXT, 8), |a| {
                a.flags(KERNEL_TOO)
            });
            p.open("", &a);
        },
    },
    Case {
        name: "bp-branch-stack",
        target: "hw_breakpoint_event_init: branch stack -> EOPNOTSUPP",
        build: |p| {
            p.open("", &with(watch(), |a| a.branch(BRANCH_ANY | BRANCH_USER)));
        },
    },
    Case {
        name: "bp-cpu-wide",
        target: "reserve_bp_slot: a CPU-wide breakpoint -> fd with CPU access (else EACCES)",
        build: |p| {
            let cpu = p.cpu;
            p.open("", &watch()).cpu_wide(cpu);
        },
    },
    Case {
        name: "bp-task-on-cpu",
        target: "reserve_bp_slot: a task breakpoint bound to one CPU -> fd",
        build: |p| {
            let cpu = p.cpu;
            p.open("", &watch()).cpu(cpu);
        },
    },
    Case {
        name: "bp-slots-data",
        target: "__reserve_bp_slot: a fifth data breakpoint on one task, HBP_NUM 4 -> ENOSPC",
        build: |p| {
            for _ in 0..HBP_NUM {
                p.open("slot", &watch()).keep(MEMBERS);
            }
            p.open("", &watch());
        },
    },
    Case {
        name: "bp-slots-instruction",
        target: "__reserve_bp_slot: a fifth instruction breakpoint on one task, HBP_NUM 4 -> ENOSPC",
        build: |p| {
            let x = breakpoint(HW_BREAKPOINT_X, USER_ADDR, 8);
            for _ in 0..HBP_NUM {
                p.open("slot", &x).keep(MEMBERS);
            }
            p.open("", &x);
        },
    },
    Case {
        name: "bp-clock-realtime",
        target: "perf_event_set_clock: CLOCK_REALTIME on the breakpoint PMU, no PERF_PMU_CAP_NO_NMI -> EINVAL",
        build: |p| {
            p.open("", &with(watch(), |a| a.clock(CLOCK_REALTIME)));
        },
    },
    // Tracepoints.
    Case {
        name: "tp-count",
        target: "perf_trace_event_perm: counting, no raw data -> fd",
        build: |p| {
            let a = sched_switch(p);
            p.open("", &a);
        },
    },
    Case {
        name: "tp-exclude-kernel-0",
        target: "perf_event_open: a tracepoint with exclude_kernel=0 -> perf_allow_kernel: EACCES at paranoid 2, else fd",
        build: |p| {
            let a = with(sched_switch(p), |a| a.flags(KERNEL_TOO));
            p.open("", &a);
        },
    },
    Case {
        name: "tp-raw",
        target: "perf_trace_event_perm: raw samples -> perf_allow_tracepoint: EPERM at paranoid > -1 without CAP_PERFMON, else fd",
        build: |p| {
            let a = with(sched_switch(p), |a| a.sampling(PERF_SAMPLE_RAW | PERF_SAMPLE_IP));
            p.open("", &a);
        },
    },
    Case {
        name: "tp-raw-cap-any",
        target: "perf_trace_event_perm: raw samples of a TRACE_EVENT_FL_CAP_ANY syscall tracepoint on a task -> fd",
        build: |p| {
            let a = with(tracepoint(p.env.sys_enter_getpid_id), |a| {
                a.sampling(PERF_SAMPLE_RAW)
            });
            p.open("", &a);
        },
    },
    Case {
        name: "tp-raw-cap-any-cpu-wide",
        target: "perf_trace_event_perm: raw samples of a CAP_ANY tracepoint CPU-wide -> perf_allow_tracepoint: EPERM at paranoid > -1, else fd",
        build: |p| {
            let cpu = p.cpu;
            let a = with(tracepoint(p.env.sys_enter_getpid_id), |a| {
                a.sampling(PERF_SAMPLE_RAW)
            });
            p.open("", &a).cpu_wide(cpu);
        },
    },
    Case {
        name: "tp-perf-perm-counting",
        target: "perf_trace_event_perm: a tracepoint's perf_perm hook (irq_vectors/irq_work_exit) lets a counting event through -> fd",
        build: |p| {
            p.open("", &tracepoint(p.env.irq_work_exit_id));
        },
    },
    Case {
        name: "tp-perf-perm-sampling",
        target: "perf_trace_event_perm: a tracepoint's perf_perm hook (irq_vectors/irq_work_exit) refuses a sampling event -> EPERM",
        build: |p| {
            let a = with(tracepoint(p.env.irq_work_exit_id), |a| a.sampling(PERF_SAMPLE_IP));
            p.open("", &a);
        },
    },
    Case {
        name: "tp-no-such-id",
        target: "perf_trace_init: no tracepoint has the id -> EINVAL",
        build: |p| {
            p.open("", &tracepoint(NO_SUCH_TRACEPOINT));
        },
    },
    Case {
        name: "tp-ftrace-function",
        target: "perf_trace_init: ftrace's function event (id 1) has no reg without CONFIG_FUNCTION_TRACER -> EINVAL",
        build: |p| {
            p.open("", &tracepoint(1));
        },
    },
    Case {
        name: "tp-branch-stack",
        target: "perf_tp_event_init: branch stack -> EOPNOTSUPP",
        build: |p| {
            let a = with(sched_switch(p), |a| a.branch(BRANCH_ANY | BRANCH_USER));
            p.open("", &a);
        },
    },
    Case {
        name: "tp-twice",
        target: "perf_trace_event_reg: a second event on a registered tracepoint (perf_refcount > 0) -> fd",
        build: |p| {
            let a = sched_switch(p);
            let l = leader(p, &a);
            p.open("", &a).group(l);
        },
    },
    // The kprobe PMU.
    Case {
        name: "kprobe",
        target: "perf_kprobe_event_init: CAP_PERFMON (else EACCES), then perf_kprobe_init on do_sys_open -> fd",
        build: |p| {
            let a = kprobe_on(p, Str::Function);
            p.open("", &a);
        },
    },
    Case {
        name: "kprobe-retprobe",
        target: "perf_kprobe_event_init: the format's retprobe bit -> a kretprobe, fd",
        build: |p| {
            let a = kretprobe(p, 0);
            p.open("", &a);
        },
    },
    Case {
        name: "kprobe-retprobe-offset",
        target: "perf_kprobe_init: a kretprobe off the function's entry (offset 4) -> EINVAL",
        build: |p| {
            let a = kretprobe(p, 4);
            p.open("", &a);
        },
    },
    Case {
        name: "kprobe-offset",
        target: "perf_kprobe_init: offset 4, an instruction boundary of do_sys_open -> fd",
        build: |p| {
            let a = kprobe(p, p.env.string(Str::Function), 4);
            p.open("", &a);
        },
    },
    Case {
        name: "kprobe-offset-mid-instruction",
        target: "perf_kprobe_init: offset 1, inside do_sys_open's first instruction -> EILSEQ",
        build: |p| {
            let a = kprobe(p, p.env.string(Str::Function), 1);
            p.open("", &a);
        },
    },
    Case {
        name: "kprobe-no-such-function",
        target: "perf_kprobe_init: create_local_trace_kprobe, no such symbol -> ENOENT",
        build: |p| {
            let a = kprobe_on(p, Str::NoSuchFunction);
            p.open("", &a);
        },
    },
    Case {
        name: "kprobe-ambiguous-function",
        target: "perf_kprobe_init: create_local_trace_kprobe, a name several functions have -> EADDRNOTAVAIL",
        build: |p| {
            let a = kprobe_on(p, Str::AmbiguousFunction);
            p.open("", &a);
        },
    },
    Case {
        name: "kprobe-empty-name",
        target: "perf_kprobe_init: an empty name counts as none, kprobe_addr 0 -> EINVAL",
        build: |p| {
            let a = kprobe_on(p, Str::Empty);
            p.open("", &a);
        },
    },
    Case {
        name: "kprobe-no-name",
        target: "perf_kprobe_init: kprobe_func 0 and kprobe_addr 0 -> EINVAL",
        build: |p| {
            let a = kprobe(p, 0, 0);
            p.open("", &a);
        },
    },
    Case {
        name: "kprobe-name-unmapped",
        target: "perf_kprobe_init: strndup_user faults on kprobe_func -> EFAULT",
        build: |p| {
            let a = kprobe(p, p.env.unmapped(), 0);
            p.open("", &a);
        },
    },
    Case {
        name: "kprobe-name-unterminated",
        target: "perf_kprobe_init: strndup_user faults past the name's last byte -> EFAULT",
        build: |p| {
            let a = kprobe_on(p, Str::Unterminated);
            p.open("", &a);
        },
    },
    Case {
        name: "kprobe-name-511",
        target: "perf_kprobe_init: a name of KSYM_NAME_LEN - 1 bytes is taken, no such symbol -> ENOENT",
        build: |p| {
            let a = kprobe_on(p, Str::Name511);
            p.open("", &a);
        },
    },
    Case {
        name: "kprobe-name-512",
        target: "perf_kprobe_init: a name of KSYM_NAME_LEN bytes, strndup_user EINVAL -> E2BIG",
        build: |p| {
            let a = kprobe_on(p, Str::Name512);
            p.open("", &a);
        },
    },
    Case {
        name: "kprobe-name-600",
        target: "perf_kprobe_init: a name longer than KSYM_NAME_LEN -> E2BIG",
        build: |p| {
            let a = kprobe_on(p, Str::Name600);
            p.open("", &a);
        },
    },
    Case {
        name: "kprobe-branch-stack",
        target: "perf_kprobe_event_init: branch stack -> EOPNOTSUPP (EACCES without CAP_PERFMON)",
        build: |p| {
            let a = with(kprobe_on(p, Str::Function), |a| {
                a.branch(BRANCH_ANY | BRANCH_USER)
            });
            p.open("", &a);
        },
    },
    Case {
        name: "kprobe-cpu-wide",
        target: "find_get_context: a CPU-wide kprobe -> fd with CAP_PERFMON (else EACCES)",
        build: |p| {
            let cpu = p.cpu;
            let a = kprobe_on(p, Str::Function);
            p.open("", &a).cpu_wide(cpu);
        },
    },
    Case {
        name: "kprobe-clock-realtime",
        target: "perf_event_set_clock: CLOCK_REALTIME on the kprobe PMU, no PERF_PMU_CAP_NO_NMI -> EINVAL",
        build: |p| {
            let a = with(kprobe_on(p, Str::Function), |a| a.clock(CLOCK_REALTIME));
            p.open("", &a);
        },
    },
    // The uprobe PMU.
    Case {
        name: "uprobe",
        target: "perf_uprobe_event_init: CAP_SYS_ADMIN (else EACCES), then a uprobe on /bin/busybox at 0 -> fd",
        build: |p| {
            let a = uprobe_on(p, Str::Executable);
            p.open("", &a);
        },
    },
    Case {
        name: "uprobe-retprobe",
        target: "perf_uprobe_event_init: the format's retprobe bit -> a uretprobe, fd",
        build: |p| {
            let bit = p.env.uprobe.retprobe_bit;
            let a = with(uprobe_on(p, Str::Executable), |a| a.u64_at(8, 1 << bit));
            p.open("", &a);
        },
    },
    Case {
        name: "uprobe-ref-ctr-offset-odd",
        target: "perf_uprobe_event_init: ref_ctr_offset from config's upper bits, odd -> EINVAL (uprobe_register)",
        build: |p| {
            let shift = p.env.uprobe.ref_ctr_shift;
            let a = with(uprobe_on(p, Str::Executable), |a| a.u64_at(8, 1 << shift));
            p.open("", &a);
        },
    },
    Case {
        name: "uprobe-offset-past-the-end",
        target: "perf_uprobe_init: an offset past the file's end -> EINVAL (uprobe_register)",
        build: |p| {
            let a = uprobe(p, p.env.string(Str::Executable), 0x7fff_ffff);
            p.open("", &a);
        },
    },
    Case {
        name: "uprobe-no-such-path",
        target: "perf_uprobe_init: create_local_trace_uprobe, no such file -> ENOENT",
        build: |p| {
            let a = uprobe_on(p, Str::NoSuchPath);
            p.open("", &a);
        },
    },
    Case {
        name: "uprobe-directory",
        target: "perf_uprobe_init: create_local_trace_uprobe, not a regular file (/) -> EINVAL",
        build: |p| {
            let a = uprobe_on(p, Str::Directory);
            p.open("", &a);
        },
    },
    Case {
        name: "uprobe-empty-path",
        target: "perf_uprobe_init: an empty path -> EINVAL",
        build: |p| {
            let a = uprobe_on(p, Str::Empty);
            p.open("", &a);
        },
    },
    Case {
        name: "uprobe-no-path",
        target: "perf_uprobe_init: uprobe_path 0 -> EINVAL",
        build: |p| {
            let a = uprobe(p, 0, 0);
            p.open("", &a);
        },
    },
    Case {
        name: "uprobe-path-unmapped",
        target: "perf_uprobe_init: strndup_user faults on uprobe_path -> EFAULT",
        build: |p| {
            let a = uprobe(p, p.env.unmapped(), 0);
            p.open("", &a);
        },
    },
    Case {
        name: "uprobe-path-4095",
        target: "perf_uprobe_init: a path of PATH_MAX - 1 bytes is taken, it names / -> EINVAL",
        build: |p| {
            let a = uprobe_on(p, Str::Slashes4095);
            p.open("", &a);
        },
    },
    Case {
        name: "uprobe-path-4096",
        target: "perf_uprobe_init: a path of PATH_MAX bytes, strndup_user EINVAL -> E2BIG",
        build: |p| {
            let a = uprobe_on(p, Str::Slashes4096);
            p.open("", &a);
        },
    },
    Case {
        name: "uprobe-branch-stack",
        target: "perf_uprobe_event_init: branch stack -> EOPNOTSUPP (EACCES without CAP_SYS_ADMIN)",
        build: |p| {
            let a = with(uprobe_on(p, Str::Executable), |a| {
                a.branch(BRANCH_ANY | BRANCH_USER)
            });
            p.open("", &a);
        },
    },
    // The msr PMU: the guest's one PMU with capabilities.
    Case {
        name: "msr-tsc",
        target: "msr_event_init: the TSC, no exclude bit -> fd (EACCES first at paranoid 2: exclude_kernel=0)",
        build: |p| {
            let a = msr(p, 0);
            p.open("", &a);
        },
    },
    Case {
        name: "msr-tsc-exclude-kernel",
        target: "perf_try_init_event: an exclude bit on a PERF_PMU_CAP_NO_EXCLUDE PMU -> EINVAL",
        build: |p| {
            let a = with(msr(p, 0), |a| a.or_flags(EXCLUDE_KERNEL | EXCLUDE_HV));
            p.open("", &a);
        },
    },
    Case {
        name: "msr-sampling",
        target: "msr_event_init: a sampling event -> EINVAL",
        build: |p| {
            let a = with(msr(p, 0), |a| {
                a.or_flags(EXCLUDE_KERNEL | EXCLUDE_HV)
                    .sampling(PERF_SAMPLE_IP)
            });
            p.open("", &a);
        },
    },
    Case {
        name: "msr-no-such-event",
        target: "msr_event_init: config >= PERF_MSR_EVENT_MAX -> EINVAL",
        build: |p| {
            let a = with(msr(p, 99), |a| a.or_flags(EXCLUDE_KERNEL | EXCLUDE_HV));
            p.open("", &a);
        },
    },
    // perf_event_validate_size(): the read size of a group, at most 16 KiB.
    Case {
        name: "group-size-leader-format",
        target: "perf_event_validate_size: a 681st sibling, the leader reads 24 bytes a member -> E2BIG (its own read_format alike, checked first)",
        build: |p| {
            full_group(p, READ_FORMAT_ALL, 0);
            let own = with(clock(), |a| a.read_format(READ_FORMAT_ALL));
            p.open("own-format", &own).group(LEADER);
            p.open("", &clock()).group(LEADER);
        },
    },
    Case {
        name: "group-size-sibling-format",
        target: "perf_event_validate_size: a 681st sibling, the first sibling reads 24 bytes a member -> E2BIG",
        build: |p| {
            full_group(p, 0, READ_FORMAT_ALL);
            p.open("", &clock()).group(LEADER);
        },
    },
];
