// SPDX-License-Identifier: GPL-2.0-only
//! `antinomie-workload decisions --seed S | --list`: a fixed, table-driven
//! walk of `perf_event_open(2)` calls, a case for each decision of the
//! functions that decide the call's result, for the regression corpus: a
//! change to any of them changes the result of some call here, in the
//! contexts where that decision differs. `--list` prints the cases.
//!
//! The random workload meets the common checks often and the rare ones
//! never (a leader on another task, a mapped output buffer, the 681st
//! member of a group, a kprobe name of exactly `KSYM_NAME_LEN` bytes); a
//! change there passed as "equal". Here every case is written for one
//! decision: [`table::CASES`] names each with the function and the check
//! it aims at (`perf_copy_attr: size < PERF_ATTR_SIZE_VER0 -> E2BIG, 136
//! written back`), and builds its calls: set-up calls (a leader, a group,
//! a mapped ring, a cgroup directory) and the call that meets the
//! decision. Together they reach every errno return and success path of
//! `perf_copy_attr()`, the open body, `perf_event_alloc()`,
//! `perf_init_event()` and `perf_try_init_event()`, the software, clock,
//! tracepoint, breakpoint, kprobe, uprobe and msr PMUs' `event_init`,
//! `perf_trace_init()` and `perf_trace_event_perm()`,
//! `perf_kprobe_init()` and `perf_uprobe_init()`, the breakpoint checks
//! (`hw_breakpoint_arch_parse()`, `reserve_bp_slot()`: four slots per
//! type), `perf_check_permission()` and `perf_allow_*()`,
//! `find_get_context()`, `perf_cgroup_connect()`,
//! `perf_event_set_output()`, `perf_event_set_clock()` and
//! `perf_event_validate_size()` that a TCG guest can host. Out of reach:
//! the hardware PMU's paths (`move_group`, a software event in a hardware
//! group, an exclusive PMU's `EBUSY`, `PERF_PMU_CAP_NO_INTERRUPT` with
//! sampling, address filters, AUX, PMU scopes), allocation failures,
//! races (`TASK_TOMBSTONE`, an interrupted `exec_update_lock`), an offline
//! CPU's `ENODEV` (CPU hotplug in the guest the reader runs in), LSM and
//! lockdown refusals, and what the guest kernel is built without
//! (`CONFIG_FUNCTION_TRACER`'s function event). Privileged set-ups (a
//! CPU-wide leader, a kprobe) fail in unprivileged contexts, which is a
//! result of its own: the calls stay the same.
//!
//! Calls never depend on results. The table is planned in full before the
//! first call ([`plan`]): the seed shuffles the order of the cases and
//! picks the two CPUs that CPU-bound cases name; what the environment
//! says (PMU types from sysfs, the `kernel.perf_event_max_stack` and
//! `kernel.perf_event_max_sample_rate` sysctls, the tracepoint ids,
//! `ANTINOMIE_OTHER_PID`) is read once at the start. A set-up call that
//! fails leaves a bad fd ([`BAD_FD`](super::random::BAD_FD)) in its slot,
//! so later calls keep their arguments. Every case closes all it opened
//! (and unmaps, restores `RLIMIT_NOFILE`, reaps its child) before the
//! next starts, so fd numbers, which `reader diff` leaves out of its key
//! anyway, come out the same on both kernels too. The strings that
//! kprobe and uprobe attrs point to lie at a fixed address
//! ([`STRINGS_AT`], `MAP_FIXED_NOREPLACE`), so that the pointers in the
//! attr (`config1`, which `reader diff` compares) are the same in every
//! run.
//!
//! Two threads, pinned to two CPUs: the main thread makes every call but
//! the leaders of "another task", which it asks the helper thread to open
//! (the same process's second thread: its pid argument stays 0, which
//! `reader diff` compares as is, where another process's pid would
//! differ between runs). What keeps it safe in any context: every event
//! is `disabled`, `enable_on_exec` only where the kernel refuses it, and
//! nothing execs, so nothing counts, samples, signals or fires (a kprobe
//! is armed while its event is open, with nothing to record into); the
//! only child is a fork that exits at once (it inherits the `inherit`
//! events: their inheritance goes through `perf_event_alloc()` and
//! `perf_init_event()` with a parent); a uprobe names a file the workload
//! does not map (`/bin/busybox`, task-bound, so no other process gets the
//! breakpoint); kprobes are on `do_sys_open`, at its entry or an
//! instruction boundary.
//!
//! Each call is logged as the e2e scripts log theirs (`antinomie_workloads::log::LoggedCall`,
//! script `decisions`, case `NAME` or `NAME/STEP`), one JSON line on
//! stdout as it is made; a summary line (calls, successes, results by
//! errno) goes to stderr at the end. Exit status 0 whenever the walk
//! completed, whatever the results; 1 when it could not run, 2 for bad
//! usage.

mod run;
mod table;

use std::process::ExitCode;

use clap::Parser;

use crate::call::{Attr, PAGE};
use crate::random::Rng;
use crate::system::online_cpus;

/// The script id in the tag of argument word 5 (`random` 5, `dependent` 6).
const SCRIPT_ID: u64 = 7;
/// Where the strings kprobe and uprobe attrs point to are mapped: far from
/// where the kernel places anything of a process on its own (the binary,
/// the heap, the stack and `mmap` live near the top of the 47-bit address
/// space or below 4 GiB), and the same in every run.
const STRINGS_AT: u64 = 0x2a5a_0000_0000;
/// Where the tracepoint ids are read from when tracefs is readable
/// (root), else from the environment the corpus scenario exports.
const SCHED_SWITCH_ID: (&str, &str) = (
    "/sys/kernel/tracing/events/sched/sched_switch/id",
    "ANTINOMIE_TRACEPOINT_ID",
);
/// A syscall tracepoint: `TRACE_EVENT_FL_CAP_ANY`, so raw samples of it
/// are allowed to anyone on their own task.
const SYS_ENTER_GETPID_ID: (&str, &str) = (
    "/sys/kernel/tracing/events/syscalls/sys_enter_getpid/id",
    "ANTINOMIE_SYSCALL_TRACEPOINT_ID",
);
/// A tracepoint with a `perf_perm` hook (`TRACE_EVENT_PERF_PERM`): it refuses
/// sampling events before any other permission check.
const IRQ_WORK_EXIT_ID: (&str, &str) = (
    "/sys/kernel/tracing/events/irq_vectors/irq_work_exit/id",
    "ANTINOMIE_PERM_TRACEPOINT_ID",
);
/// A tracepoint id no event has (event types are 16-bit).
pub(super) const NO_SUCH_TRACEPOINT: u64 = 1 << 32;
/// A PMU type no PMU has, for a PMU sysfs does not list.
pub(super) const NO_SUCH_TYPE: u32 = 0xdead;

/// The `decisions` workload's options.
#[derive(Debug, Parser)]
#[command(name = "antinomie-workload decisions")]
struct Args {
    /// The seed: the order of the cases and the CPUs they name.
    #[arg(long, required_unless_present = "list")]
    seed: Option<u64>,
    /// Print the cases (name and the decision each aims at), make no call.
    #[arg(long, conflicts_with = "seed")]
    list: bool,
}

/// A dynamic PMU's type and where its format puts the flags in `config`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Probe {
    pub(super) type_: u32,
    /// `format/retprobe`'s bit.
    pub(super) retprobe_bit: u32,
    /// `format/ref_ctr_offset`'s first bit (uprobe).
    pub(super) ref_ctr_shift: u32,
}

/// What the plan takes from the system, read once before it is made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Env {
    pub(super) cpus: Vec<u32>,
    /// `nr_cpu_ids`: one more than the last possible CPU.
    pub(super) nr_cpu_ids: i32,
    /// "Another user's task": `ANTINOMIE_OTHER_PID`, else init.
    pub(super) other_pid: i32,
    pub(super) sched_switch_id: u64,
    pub(super) sys_enter_getpid_id: u64,
    pub(super) irq_work_exit_id: u64,
    pub(super) kprobe: Probe,
    pub(super) uprobe: Probe,
    pub(super) msr_type: u32,
    /// `kernel.perf_event_max_stack`.
    pub(super) max_stack: u16,
    /// `kernel.perf_event_max_sample_rate`.
    pub(super) max_sample_rate: u64,
    /// Where [`Str`]'s strings are mapped.
    pub(super) strings_at: u64,
}

fn read_trimmed(path: &str) -> Option<String> {
    Some(std::fs::read_to_string(path).ok()?.trim().to_owned())
}

/// `config:N` or `config:N-M` of a PMU format file: N.
fn format_bit(path: &str) -> Option<u32> {
    let spec = read_trimmed(path)?;
    let bits = spec.strip_prefix("config:")?;
    bits.split('-').next()?.parse().ok()
}

fn probe(name: &str, default_ref_ctr_shift: u32) -> Probe {
    let dir = format!("/sys/bus/event_source/devices/{name}");
    Probe {
        type_: read_trimmed(&format!("{dir}/type"))
            .and_then(|t| t.parse().ok())
            .unwrap_or(NO_SUCH_TYPE),
        retprobe_bit: format_bit(&format!("{dir}/format/retprobe")).unwrap_or(0),
        ref_ctr_shift: format_bit(&format!("{dir}/format/ref_ctr_offset"))
            .unwrap_or(default_ref_ctr_shift),
    }
}

/// A tracepoint id: from tracefs, else from the environment, else none.
fn tracepoint_id((path, var): (&str, &str)) -> u64 {
    read_trimmed(path)
        .or_else(|| std::env::var(var).ok())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(NO_SUCH_TRACEPOINT)
}

/// `nr_cpu_ids` from `/sys/devices/system/cpu/possible` (`0-3`, `0`,
/// `0-1,4`): the last CPU plus one.
fn nr_cpu_ids(possible: &str) -> Option<i32> {
    let last = possible.trim().rsplit([',', '-']).next()?;
    last.parse::<i32>().ok().map(|n| n + 1)
}

impl Env {
    fn read(strings_at: u64) -> Result<Env, String> {
        let cpus = online_cpus();
        let other_pid = match std::env::var("ANTINOMIE_OTHER_PID") {
            Ok(v) => v
                .parse()
                .map_err(|e| format!("ANTINOMIE_OTHER_PID={v:?}: {e}"))?,
            Err(_) => 1,
        };
        let last_cpu = cpus.last().copied().unwrap_or(0);
        Ok(Env {
            nr_cpu_ids: read_trimmed("/sys/devices/system/cpu/possible")
                .and_then(|p| nr_cpu_ids(&p))
                .unwrap_or_else(|| i32::try_from(last_cpu + 1).unwrap_or(i32::MAX)),
            cpus,
            other_pid,
            sched_switch_id: tracepoint_id(SCHED_SWITCH_ID),
            sys_enter_getpid_id: tracepoint_id(SYS_ENTER_GETPID_ID),
            irq_work_exit_id: tracepoint_id(IRQ_WORK_EXIT_ID),
            kprobe: probe("kprobe", 32),
            uprobe: probe("uprobe", 32),
            msr_type: read_trimmed("/sys/bus/event_source/devices/msr/type")
                .and_then(|t| t.parse().ok())
                .unwrap_or(NO_SUCH_TYPE),
            max_stack: read_trimmed("/proc/sys/kernel/perf_event_max_stack")
                .and_then(|v| v.parse().ok())
                .unwrap_or(127),
            max_sample_rate: read_trimmed("/proc/sys/kernel/perf_event_max_sample_rate")
                .and_then(|v| v.parse().ok())
                .unwrap_or(100_000),
            strings_at,
        })
    }
}

/// The strings kprobe and uprobe attrs point to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Str {
    /// A kernel function kprobes may probe.
    Function,
    NoSuchFunction,
    /// A name several kernel functions have (an inline helper emitted out
    /// of line in many files).
    AmbiguousFunction,
    Empty,
    /// `KSYM_NAME_LEN - 1` bytes: the longest name `strndup_user()` takes.
    Name511,
    /// `KSYM_NAME_LEN` bytes: one too long.
    Name512,
    Name600,
    /// An executable that exists in the guest and that this process does
    /// not map.
    Executable,
    NoSuchPath,
    Directory,
    /// `PATH_MAX - 1` slashes: the longest path taken, naming `/`.
    Slashes4095,
    /// `PATH_MAX` slashes: one too long.
    Slashes4096,
    /// A function name without its NUL, ending at the unmapped page.
    Unterminated,
}

impl Str {
    const ALL: [Str; 13] = [
        Str::Function,
        Str::NoSuchFunction,
        Str::AmbiguousFunction,
        Str::Empty,
        Str::Name511,
        Str::Name512,
        Str::Name600,
        Str::Executable,
        Str::NoSuchPath,
        Str::Directory,
        Str::Slashes4095,
        Str::Slashes4096,
        Str::Unterminated,
    ];

    /// The bytes placed, with the NUL (none for [`Str::Unterminated`]).
    fn bytes(self) -> Vec<u8> {
        let repeated = |b: u8, n: usize| {
            let mut v = vec![b; n];
            v.push(0);
            v
        };
        let text = |s: &str| {
            let mut v = s.as_bytes().to_vec();
            v.push(0);
            v
        };
        match self {
            Str::Function => text("do_sys_open"),
            Str::NoSuchFunction => text("antinomie_no_such_function"),
            Str::AmbiguousFunction => text("signal_pending"),
            Str::Empty => text(""),
            Str::Name511 => repeated(b'a', 511),
            Str::Name512 => repeated(b'a', 512),
            Str::Name600 => repeated(b'a', 600),
            Str::Executable => text("/bin/busybox"),
            Str::NoSuchPath => text("/antinomie/no/such/file"),
            Str::Directory => text("/"),
            Str::Slashes4095 => repeated(b'/', 4095),
            Str::Slashes4096 => repeated(b'/', 4096),
            Str::Unterminated => b"do_sys_open".to_vec(),
        }
    }
}

/// The strings' layout: each string's offset, and the mapping's readable
/// pages. The strings follow each other 8-byte aligned; the unterminated
/// one ends exactly at the end of the readable pages, where the unmapped
/// guard page starts.
pub(super) fn strings_layout() -> (Vec<(Str, usize)>, usize) {
    let mut at = 0;
    let mut offsets = Vec::new();
    let mut last = None;
    for s in Str::ALL {
        let len = s.bytes().len();
        if s == Str::Unterminated {
            last = Some(len);
            continue;
        }
        offsets.push((s, at));
        at = (at + len).next_multiple_of(8);
    }
    let last = last.expect("Str::ALL has the unterminated string");
    let pages = (at + last).div_ceil(PAGE);
    offsets.push((Str::Unterminated, pages * PAGE - last));
    (offsets, pages)
}

impl Env {
    /// Where string `s` is.
    pub(super) fn string(&self, s: Str) -> u64 {
        let (offsets, _) = strings_layout();
        let (_, at) = offsets
            .into_iter()
            .find(|&(t, _)| t == s)
            .expect("every Str has an offset");
        self.strings_at + at as u64
    }

    /// The first byte of the unmapped page after the strings.
    pub(super) fn unmapped(&self) -> u64 {
        self.strings_at + (strings_layout().1 * PAGE) as u64
    }
}

/// Where a call's attr lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Place {
    /// A NULL pointer.
    Null,
    /// Every byte readable and writable, ending right before an unmapped
    /// page.
    Readable(Vec<u8>),
    /// Only the first `readable` bytes mapped, the rest would lie in the
    /// unmapped page.
    Cut { bytes: Vec<u8>, readable: usize },
    /// Every byte readable, none writable: the size written back after
    /// `E2BIG` faults.
    ReadOnly(Vec<u8>),
}

/// A call's `pid` argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pid {
    Value(i32),
    /// The calling process's pid (the main thread's tid).
    Own,
    /// The first fd of a slot (`PERF_FLAG_PID_CGROUP`).
    Slot(usize),
}

/// A call's `group_fd` argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Group {
    None,
    /// The first fd of a slot; a bad fd if it could not be opened, the
    /// number it had if it was closed.
    Slot(usize),
}

/// One `perf_event_open` call of a case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Open {
    /// What the call is within the case (`leader`, `sibling`); empty for
    /// the call the case is about.
    pub(super) label: &'static str,
    pub(super) place: Place,
    pub(super) pid: Pid,
    pub(super) cpu: i32,
    pub(super) group: Group,
    pub(super) flags: u64,
    /// Keep the fd (appended to this slot) until the case ends; else it is
    /// closed at once.
    pub(super) keep: Option<usize>,
    /// Made by the helper thread: "another task".
    pub(super) helper: bool,
}

impl Open {
    pub(super) fn pid(&mut self, pid: Pid) -> &mut Self {
        self.pid = pid;
        self
    }

    pub(super) fn cpu(&mut self, cpu: i32) -> &mut Self {
        self.cpu = cpu;
        self
    }

    /// On a task (`pid`) everywhere (`cpu` -1) or CPU-wide (`pid` -1).
    pub(super) fn cpu_wide(&mut self, cpu: i32) -> &mut Self {
        self.pid(Pid::Value(-1)).cpu(cpu)
    }

    pub(super) fn group(&mut self, slot: usize) -> &mut Self {
        self.group = Group::Slot(slot);
        self
    }

    pub(super) fn flags(&mut self, flags: u64) -> &mut Self {
        self.flags = flags;
        self
    }

    pub(super) fn keep(&mut self, slot: usize) -> &mut Self {
        self.keep = Some(slot);
        self
    }

    pub(super) fn helper(&mut self) -> &mut Self {
        self.helper = true;
        self
    }
}

/// A step of a case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Step {
    Open(Open),
    /// Open a file or directory (read-only) into a slot.
    File {
        path: &'static str,
        slot: usize,
    },
    /// Close a slot's fds now; the slot keeps their numbers.
    Close(usize),
    /// Map the ring (one page of header, one of data) of a slot's first fd.
    Mmap(usize),
    /// Fork a child that exits at once: it inherits the `inherit` events.
    Fork,
    /// `RLIMIT_NOFILE` 0 from here to the end of the case.
    NoFiles,
}

/// A case's steps, as its builder makes them.
#[derive(Debug)]
pub(super) struct Plan<'e> {
    pub(super) env: &'e Env,
    /// A CPU (online), picked by the seed.
    pub(super) cpu: i32,
    /// Another online CPU where there are two, else the same.
    pub(super) other_cpu: i32,
    pub(super) steps: Vec<Step>,
}

impl Plan<'_> {
    /// A call with `attr` wholly readable, on this task (`pid` 0), any CPU,
    /// no group, `FD_CLOEXEC`; the returned call can be changed.
    pub(super) fn open(&mut self, label: &'static str, attr: &Attr) -> &mut Open {
        self.place(label, Place::Readable(attr.build()))
    }

    /// A call with its attr placed as `place`.
    pub(super) fn place(&mut self, label: &'static str, place: Place) -> &mut Open {
        self.steps.push(Step::Open(Open {
            label,
            place,
            pid: Pid::Value(0),
            cpu: -1,
            group: Group::None,
            flags: super::PERF_FLAG_FD_CLOEXEC,
            keep: None,
            helper: false,
        }));
        match self.steps.last_mut() {
            Some(Step::Open(o)) => o,
            _ => unreachable!("an Open was just pushed"),
        }
    }

    pub(super) fn step(&mut self, step: Step) {
        self.steps.push(step);
    }
}

/// A case: the decision it aims at and how it gets there.
#[derive(Debug)]
pub(super) struct Case {
    /// Unique; the log's `case` (with `/label` for set-up calls).
    pub(super) name: &'static str,
    /// The function and the check the case's last call meets, and what it
    /// returns there.
    pub(super) target: &'static str,
    pub(super) build: fn(&mut Plan<'_>),
}

/// The whole walk: each case (an index into [`table::CASES`]) with its
/// steps, in the seed's order.
pub(super) fn plan(seed: u64, env: &Env) -> Vec<(usize, Vec<Step>)> {
    let mut rng = Rng::new(seed, 0);
    let mut order: Vec<usize> = (0..table::CASES.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.index(i + 1));
    }
    // The CPU the cases name is never the last one, which cpu-last names
    // on its own: task-on-cpu would make the same call.
    let n = env.cpus.len().max(1);
    let a = rng.index((n - 1).max(1));
    let b = if n > 1 {
        (a + 1 + rng.index(n - 1)) % n
    } else {
        a
    };
    let cpu_at = |i: usize| {
        env.cpus
            .get(i)
            .and_then(|&c| i32::try_from(c).ok())
            .unwrap_or(0)
    };
    let (cpu, other_cpu) = (cpu_at(a), cpu_at(b));
    order
        .into_iter()
        .map(|i| {
            let mut p = Plan {
                env,
                cpu,
                other_cpu,
                steps: Vec::new(),
            };
            (table::CASES[i].build)(&mut p);
            (i, p.steps)
        })
        .collect()
}

/// Runs the workload with `args` (`args[0]` is `decisions`).
pub fn main(args: &[String]) -> ExitCode {
    let args = Args::parse_from(args);
    let Some(seed) = args.seed else {
        for case in table::CASES {
            println!("{:<40} {}", case.name, case.target);
        }
        return ExitCode::SUCCESS;
    };
    let strings_at = match run::map_strings() {
        Ok(at) => at,
        Err(why) => {
            eprintln!("antinomie-workload: decisions: {why}");
            return ExitCode::FAILURE;
        }
    };
    if strings_at != STRINGS_AT {
        eprintln!(
            "antinomie-workload: decisions: the strings are at {strings_at:#x}, not {STRINGS_AT:#x}: kprobe and uprobe attrs differ from other runs'"
        );
    }
    let env = match Env::read(strings_at) {
        Ok(env) => env,
        Err(why) => {
            eprintln!("antinomie-workload: decisions: {why}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!("antinomie-workload: decisions: {env:?}");
    let walk = plan(seed, &env);
    match run::walk(&walk, SCRIPT_ID, &env) {
        Ok(Some(tally)) => {
            eprintln!(
                "antinomie-workload: decisions: seed {seed}, {} cases, {tally}",
                walk.len()
            );
            ExitCode::SUCCESS
        }
        // stdout went away: nothing left to report to.
        Ok(None) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("antinomie-workload: decisions: {why}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::table::CASES;
    use super::*;

    fn env() -> Env {
        Env {
            cpus: vec![0, 1, 2, 3],
            nr_cpu_ids: 4,
            other_pid: 30_000,
            sched_switch_id: 259,
            sys_enter_getpid_id: 400,
            irq_work_exit_id: 401,
            kprobe: Probe {
                type_: 8,
                retprobe_bit: 0,
                ref_ctr_shift: 32,
            },
            uprobe: Probe {
                type_: 9,
                retprobe_bit: 0,
                ref_ctr_shift: 32,
            },
            msr_type: 10,
            max_stack: 127,
            max_sample_rate: 100_000,
            strings_at: STRINGS_AT,
        }
    }

    #[test]
    fn every_case_names_its_decision() {
        let mut names = HashSet::new();
        for case in CASES {
            assert!(names.insert(case.name), "two cases are named {}", case.name);
            assert!(
                !case.name.is_empty() && !case.name.contains(['/', ' ']),
                "{:?}: a name is one word of the log's case",
                case.name
            );
            // "function: check -> result".
            let (function, rest) = case
                .target
                .split_once(": ")
                .unwrap_or_else(|| panic!("{}: no `function: ` in {:?}", case.name, case.target));
            assert!(
                !function.is_empty() && !function.contains(' '),
                "{}",
                case.name
            );
            assert!(
                rest.contains(" -> "),
                "{}: no ` -> ` in {:?}",
                case.name,
                case.target
            );
        }
    }

    #[test]
    fn no_two_cases_make_the_same_calls() {
        let env = env();
        let walk = plan(1, &env);
        let mut seen = HashSet::new();
        for (i, steps) in &walk {
            assert!(
                steps
                    .iter()
                    .any(|s| matches!(s, Step::Open(o) if o.label.is_empty())),
                "{}: no call the case is about",
                CASES[*i].name
            );
            assert!(
                seen.insert(format!("{steps:?}")),
                "{} makes the calls of an earlier case",
                CASES[*i].name
            );
        }
    }

    #[test]
    fn a_seed_makes_the_same_calls_and_another_seed_another_order() {
        let env = env();
        let a = plan(20_261_203, &env);
        assert_eq!(a, plan(20_261_203, &env));
        assert_eq!(a.len(), CASES.len());
        let b = plan(20_261_204, &env);
        assert_ne!(
            a.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            b.iter().map(|(i, _)| *i).collect::<Vec<_>>()
        );
        let mut cases: Vec<usize> = b.iter().map(|(i, _)| *i).collect();
        cases.sort_unstable();
        assert_eq!(cases, (0..CASES.len()).collect::<Vec<_>>());
    }

    #[test]
    fn slots_are_filled_before_they_are_named() {
        for (i, steps) in plan(3, &env()) {
            let mut filled = HashSet::new();
            for step in &steps {
                let named = match step {
                    Step::Open(o) => [
                        match o.group {
                            Group::Slot(s) => Some(s),
                            Group::None => None,
                        },
                        match o.pid {
                            Pid::Slot(s) => Some(s),
                            Pid::Value(_) | Pid::Own => None,
                        },
                    ],
                    Step::Close(s) | Step::Mmap(s) => [Some(*s), None],
                    Step::File { .. } | Step::Fork | Step::NoFiles => [None, None],
                };
                for s in named.into_iter().flatten() {
                    assert!(filled.contains(&s), "{}: slot {s} is empty", CASES[i].name);
                }
                match step {
                    Step::Open(Open { keep: Some(s), .. }) | Step::File { slot: s, .. } => {
                        filled.insert(*s);
                    }
                    _ => {}
                }
            }
        }
    }

    #[test]
    fn the_strings_fit_their_pages_and_the_unterminated_one_ends_at_the_guard() {
        let (offsets, pages) = strings_layout();
        let mut ends: Vec<(usize, usize)> = offsets
            .iter()
            .map(|&(s, at)| (at, at + s.bytes().len()))
            .collect();
        ends.sort_unstable();
        assert!(ends.windows(2).all(|w| w[0].1 <= w[1].0), "{ends:?}");
        assert_eq!(ends.last().map(|e| e.1), Some(pages * PAGE));
        let env = env();
        assert_eq!(env.string(Str::Function), STRINGS_AT);
        assert_eq!(
            env.string(Str::Unterminated) + Str::Unterminated.bytes().len() as u64,
            env.unmapped()
        );
        assert_eq!(Str::Name511.bytes().len(), 512);
    }

    #[test]
    fn sysfs_formats_and_cpu_lists_parse() {
        assert_eq!(nr_cpu_ids("0-3\n"), Some(4));
        assert_eq!(nr_cpu_ids("0"), Some(1));
        assert_eq!(nr_cpu_ids("0-1,4-7"), Some(8));
    }
}
