// SPDX-License-Identifier: GPL-2.0-only
//! `antinomie-workload campaign --seed S --calls N [--threads T] [--burst B]
//! [--passes off,on]`: the randomized campaign of the debug kernel
//! (`qemu/scenarios/campaign`, `scripts/campaign.sh`).
//!
//! T threads (default 4), each pinned to one CPU, make N `perf_event_open(2)`
//! calls per pass between them, drawn from the seed; every pass makes the
//! same calls, in the same order per thread. Per call it draws:
//!
//! * the declared size: a boundary (`BOUNDARY_SIZES`: 0, 1, 63–65, the `VER*`
//!   sizes, 135–137, 200, 4095–4097) or any size in 0..=4097, and above 136
//!   a zero or non-zero tail; the attr itself as `antinomie-workload random`
//!   does (software events, other types, random bytes; never a flag that
//!   counts, signals or acts on exec);
//! * where it lies: NULL; the readable bytes ending exactly where the kernel
//!   stops reading, before, inside the size word or a little after, followed
//!   by an unmapped page; starting a few bytes before the end of a
//!   userfaultfd-registered page (the kernel reads that page only when it
//!   reads the attr's head, not when it refuses the size or the tail first);
//!   ending in a userfaultfd-registered page (exactly where the kernel stops
//!   reading, or anywhere before), followed by an unmapped page; in a
//!   buffer the racing writer thread rewrites during the call; or where
//!   the first read of the attr allocates, so that a reader of it other
//!   than the kernel would take the allocations, and their injection
//!   points, from the kernel's read: the attr's first k bytes at the end
//!   of a fresh memfd's first page (written with `pwrite()`), the rest in
//!   its second page, a hole (zeros, the size word's bytes among them:
//!   the drawn bytes say so), or an untouched `MAP_SHARED|MAP_ANONYMOUS`
//!   page (all zeros: size 0, read as 64). Both are mapped per call, in
//!   fixed windows of the thread's arena, before `fail-nth` is armed, and
//!   unmapped after it is read back;
//! * pid (0, -1, 1, none), cpu (-1, an online one, an invalid one), group fd
//!   (none, the thread's leader, another thread's leader, a bad fd, a file
//!   that is no perf event) and flags (valid ones, every combination of the
//!   four, or random bits);
//! * on a kernel with `CONFIG_FAULT_INJECTION` (the debug kernel), one call
//!   in ten gets an injected fault at one of its first six injection points
//!   (`/proc/thread-self/fail-nth`, written just before the call), from a
//!   stream of its own, so that the calls are the same with it and without.
//!   The points are user copies and, where the kernel has
//!   `CONFIG_FAILSLAB` and `CONFIG_FAIL_PAGE_ALLOC`, slab and page
//!   allocations: the campaign then sets debugfs up so that a call takes
//!   the same points each time (`inject.rs`: a stack filter, no stack
//!   dumps; restored at the end), and an armed call runs alone among the
//!   campaign's calls (what it allocates must not depend on what the other
//!   threads hold). `--require-fault-injection` fails the run where any
//!   of this is missing, with the reason.
//!
//! Each thread opens a group leader before the first burst (with capture
//! off) and keeps it for the whole pass; every other fd is closed at once.
//!
//! The calls run in bursts of B calls per thread. Between two bursts, with
//! every thread waiting, the main thread applies the epoch's setting of
//! the allocators' fault injection (the kernel's defaults, or syzkaller's:
//! allocations that may sleep too, pages of any order), the same in every
//! pass, and changes the device as the epoch's plan (drawn from the seed
//! too) says: in a pass `on`, most epochs resize
//! the rings (4 KiB to 1 MiB; the small ones fill under load, and make the
//! calls wait) and run `reader --follow --enable --lossless` through the
//! burst; the others switch
//! capture off and check that the rings then record nothing. In a pass
//! `off` capture stays off throughout. A pass `bpf` is a pass `off` with the
//! BPF contender (`antinomie-bpf --variant tp|raw`, `qemu/bpf-contender/`)
//! attached throughout instead of capture: the differential then measures
//! what a tracepoint + BPF tracer changes in the traced calls, and its
//! summary counts the attrs it could not read. A pass `on+bpf` is a pass
//! `on` that captures every epoch (`reader --follow -w TRACE`) with the
//! contender attached as well: it measures fidelity, whether each tracer
//! recorded the attr the kernel used (`fidelity.rs`). Capture's records say
//! what the kernel used (the ENTRY's attr is the kernel's own copy, its one
//! read of the call); on every call the writer does not touch, that must
//! be the bytes placed. Per call, the contender's attr is compared with it
//! over the bytes both have; the pass counts the contender's wrong, unread
//! and truncated attrs. The differential holds this pass to the first as
//! well: both tracers at once must not change a call either.
//!
//! Checks, each failing the run with a line that says what differed:
//!
//! * accounting, per capture epoch and CPU: the reader consumed exactly what
//!   the kernel says it produced (`GET_COUNTERS` after the reader exited,
//!   and the reader's own summary), and produced + lost = 2 records per call
//!   the threads pinned to that CPU made, so every call is accounted for;
//!   in lossless mode none is lost, no skipped record;
//! * the differential: per call, every later pass must give what the first
//!   pass gave: the same result (`-errno`, or a new fd with or without
//!   `FD_CLOEXEC`: fd numbers depend on the other threads), the same user
//!   memory afterwards (a digest of every byte placed for the call: the
//!   kernel writes `attr.size` back on `E2BIG`, the capture must write
//!   nothing) and the same number of userfaultfd page faults (a capture that
//!   reads a byte the kernel does not read adds a fault) and, with fault
//!   injection, the same `fail-nth` left after the call (a capture whose
//!   own user copy were an injection point would take the fault meant for
//!   the kernel's, and the call would succeed where it fails; one that
//!   read the attr before the kernel would take the allocations of its
//!   first read, and their injection points: the kernel's read then fails
//!   or succeeds where it did not, or a read longer than the kernel's
//!   allocates a page the kernel never reads, and takes points the kernel
//!   does not);
//! * no fd leaks: a pass ends with the fds it started with;
//! * in a pass `on+bpf`: both tracers recorded each thread's calls, with
//!   the same argument words; capture's record of a call the racing writer
//!   does not touch is the bytes placed.
//!
//! The racing writer's calls are drawn from the seed like the others, so
//! every pass makes them at the same positions; their result depends on
//! the writer's timing, so they are counted in the accounting but left out
//! of the differential (nothing else about them is compared, and the
//! summary's counts of them, fds and faults reached among them, may
//! differ from pass to pass).
//!
//! Each pass's summary also says how many calls had their attr in each
//! placement whose first read allocates and ran under each setting of the
//! allocators, and, per placement and setting, the calls with a fault
//! injected, those that reached it and those of them that failed with
//! `EFAULT`.
//!
//! `--test-break outcome|accounting` breaks the check on purpose (test
//! only): `outcome` changes the recorded result of one call of the last
//! pass, `accounting` forgets one call in the first capture epoch's count.

mod arena;
mod capture;
mod contender;
mod draw;
mod fidelity;
mod inject;
mod pass;
mod thread;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};

use crate::random::Rng;
use crate::system::online_cpus;
use arena::{race, serve_faults, Addr, Arena, R8, U0, U3};
use capture::Tally;
use draw::{draw, Allocating};
use inject::Allocators;
use pass::{plan, run_pass, Setting};
use thread::{calls_of_thread, Outcome, FAIL_NTH_MAX};

/// Streams of the seed: the plan uses `STREAM_BASE`, thread t `STREAM_BASE + t`
/// (the `random` workload uses 1..=T, so the same seed draws other calls).
const STREAM_BASE: u32 = 0x100;
/// Fault injection's draws: thread t uses `STREAM_FAULT + t`.
const STREAM_FAULT: u32 = 0x200;

/// The campaign's options.
#[derive(Debug, Parser)]
#[command(name = "antinomie-workload campaign")]
struct Args {
    /// The seed: the same seed makes the same calls and the same plan.
    #[arg(long)]
    seed: u64,
    /// Calls per pass, shared between the threads (the leaders come on top).
    #[arg(long)]
    calls: usize,
    /// Calling threads, pinned one per online CPU (round robin).
    #[arg(long, default_value_t = 4)]
    threads: usize,
    /// Calls per thread between two device changes.
    #[arg(long, default_value_t = 1000)]
    burst: usize,
    /// The passes, in order; every later pass is compared with the first.
    #[arg(long, value_delimiter = ',', default_value = "off,on")]
    passes: Vec<PassKind>,
    /// The BPF contender run through a pass `bpf`.
    #[arg(long, default_value = "antinomie-bpf")]
    bpf: PathBuf,
    /// Its placement: `tp` (the syscall tracepoints) or `raw` (`raw_tp`
    /// `sys_enter`/`sys_exit`, filtered by number).
    #[arg(long, default_value = "tp", value_parser = ["tp", "raw"])]
    bpf_variant: String,
    /// The reader binary run with `--follow --enable` in capture epochs.
    #[arg(long, default_value = "reader")]
    reader: PathBuf,
    /// A cgroup v2 directory: the campaign moves itself into it before its
    /// first pass, so that every pass runs there, and its reader captures
    /// only that cgroup's calls (`reader --cgroup`): nothing else on the
    /// machine is captured or waits.
    #[arg(long)]
    cgroup: Option<PathBuf>,
    /// The capture device.
    #[arg(long, default_value = "/dev/antinomie")]
    device: PathBuf,
    /// Test only: break one check on purpose, to see it fail.
    #[arg(long)]
    test_break: Option<Break>,
    /// Fail unless the kernel can inject faults (`/proc/thread-self/fail-nth`).
    #[arg(long)]
    require_fault_injection: bool,
}

/// What a pass does with the capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum PassKind {
    /// Capture off throughout (the reference).
    Off,
    /// Capture on (with `reader --follow`) in most epochs, per the plan.
    On,
    /// Capture off, the BPF contender attached throughout.
    Bpf,
    /// Capture on in every epoch and the BPF contender attached: the
    /// fidelity of both tracers' attrs, call by call.
    #[value(name = "on+bpf")]
    OnBpf,
}

/// A check to break on purpose (`--test-break`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Break {
    /// Record a wrong result for one call of the last pass.
    Outcome,
    /// Forget one call in the first capture epoch's accounting.
    Accounting,
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count)
}

/// Runs the campaign with `args` (`args[0]` is `campaign`).
pub fn main(args: &[String]) -> ExitCode {
    let args = Args::parse_from(args);
    if args.threads == 0 || args.burst == 0 || args.passes.is_empty() {
        eprintln!("antinomie-workload campaign: --threads, --burst and --passes must not be empty");
        return ExitCode::from(2);
    }
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(why) => {
            eprintln!("campaign: FAIL {why}");
            ExitCode::FAILURE
        }
    }
}

#[allow(clippy::too_many_lines)]
fn run(args: &Args) -> Result<bool, String> {
    let cpus = online_cpus();
    let threads = args.threads;
    let most = calls_of_thread(args.calls, threads, 0);
    let epochs = plan(args.seed, most.div_ceil(args.burst).max(1));
    let fds_before = open_fds();
    let arenas = (0..threads)
        .map(|_| Arena::new())
        .collect::<Result<Vec<_>, _>>()?;
    let stop = AtomicBool::new(false);
    let racy: Vec<Addr> = arenas.iter().map(|a| Addr(a.page(R8))).collect();
    // Restored when it drops, at the end of this function.
    let mut injection = inject::setup();
    if args.require_fault_injection {
        if let Err(why) = injection.as_ref().and_then(|fi| fi.allocators.as_ref()) {
            return Err(format!("--require-fault-injection: {why}"));
        }
    }
    let injecting = match &injection {
        Ok(fi) => format!(
            "on (one call in ten, at one of its first {FAIL_NTH_MAX} injection points, through /proc/thread-self/fail-nth); {}",
            match &fi.allocators {
                Ok(r) => format!(
                    "user copies, slab and page allocations, the allocators' settings drawn per epoch, the stack filter rejecting {} ({:#x}..{:#x})",
                    r.symbol, r.start, r.end
                ),
                Err(why) => format!("user copies only: {why}"),
            }
        ),
        Err(why) => format!("off ({why})"),
    };
    println!(
        "campaign: seed {}, {} calls per pass from {threads} threads on {} CPUs, {} epochs of <= {} calls per thread, passes {:?}; fault injection: {injecting}",
        args.seed,
        args.calls,
        cpus.len(),
        epochs.len(),
        args.burst,
        args.passes,
    );
    if let Some(dir) = &args.cgroup {
        let procs = dir.join("cgroup.procs");
        // "0" moves the writer's thread group, every thread of it.
        std::fs::write(&procs, "0").map_err(|e| format!("{}: {e}", procs.display()))?;
    }
    let mut results: Vec<(PassKind, Vec<Vec<Outcome>>, Duration, Tally)> = Vec::new();
    std::thread::scope(|s| -> Result<(), String> {
        let handlers: Vec<_> = arenas
            .iter()
            .map(|a| {
                let (fd, u0, u3) = (a.uffd, a.page(U0), a.page(U3));
                let (staging, faults, stop) = (&a.staging, &a.faults, &stop);
                s.spawn(move || serve_faults(fd, u0, u3, staging, faults, stop))
            })
            .collect();
        let writer = s.spawn(|| race(&racy, &stop));
        let mut run_all = || -> Result<(), String> {
            for (i, &kind) in args.passes.iter().enumerate() {
                let last = i + 1 == args.passes.len();
                let mut tally = Tally::default();
                let t0 = Instant::now();
                let fds0 = open_fds();
                let break_accounting = args.test_break == Some(Break::Accounting);
                let mut out = run_pass(
                    args,
                    kind,
                    &arenas,
                    &Setting {
                        epochs: &epochs,
                        cpus: &cpus,
                        injection: injection.as_ref().ok(),
                    },
                    break_accounting,
                    &mut tally,
                )?;
                let took = t0.elapsed();
                // Progress, for long runs (the results follow at the end).
                println!(
                    "campaign: pass {i} ({kind:?}) done in {:.1} s",
                    took.as_secs_f64()
                );
                let fds1 = open_fds();
                if fds1 != fds0 {
                    tally.mismatches.push(format!(
                        "pass {i} ({kind:?}): {fds0} fds open before, {fds1} after"
                    ));
                }
                if last && i > 0 && args.test_break == Some(Break::Outcome) {
                    if let Some(o) = out[0].iter_mut().find(|o| o.compared) {
                        o.ret = if o.ret == -i64::from(libc::EINVAL) {
                            -i64::from(libc::E2BIG)
                        } else {
                            -i64::from(libc::EINVAL)
                        };
                    }
                }
                results.push((kind, out, took, tally));
            }
            Ok(())
        };
        let r = run_all();
        // ATOMICS: Relaxed: the flag only ends the helpers' loops.
        stop.store(true, Ordering::Relaxed);
        writer.join().expect("the racing writer panicked");
        for h in handlers {
            h.join().expect("a userfaultfd handler panicked")?;
        }
        r
    })?;
    drop(arenas);
    let mut ok = true;
    if let Ok(fi) = &mut injection {
        if let Err(why) = fi.restore() {
            println!("campaign: FAIL fault injection: {why}");
            ok = false;
        }
    }
    let fds_after = open_fds();

    let (first_kind, reference) = (results[0].0, &results[0].1);
    for (i, (kind, out, took, tally)) in results.iter().enumerate() {
        let calls: usize = out.iter().map(Vec::len).sum();
        let compared: usize = out.iter().flatten().filter(|o| o.compared).count();
        let faults: u64 = out.iter().flatten().map(|o| o.uffd_faults).sum();
        let fds = out.iter().flatten().filter(|o| o.ret > 0).count();
        let injected = out.iter().flatten().filter(|o| o.fail_nth > 0);
        let (asked, reached) = injected.fold((0usize, 0usize), |(a, r), o| {
            (a + 1, r + usize::from(o.fail_nth_left == 0))
        });
        let mut line = format!(
            "campaign: pass {i} ({kind:?}): {calls} calls (+{threads} leaders) in {:.1} s, {fds} fds opened and closed, {faults} userfaultfd faults, {} racing-writer calls, {asked} calls with a fault injected ({reached} reached it)",
            took.as_secs_f64(),
            calls - compared
        );
        if matches!(kind, PassKind::On | PassKind::OnBpf) {
            let _ = write!(
                line,
                "; {} capture epochs ({} calls: {} records produced and consumed, {} lost; the reader's exit freed the rings after {} of them), {} epochs with capture off",
                tally.capture_epochs,
                tally.calls_captured,
                tally.records_produced,
                tally.records_lost,
                tally.rings_freed,
                tally.off_epochs
            );
        }
        if let Some(c) = &tally.contender {
            // Its failed reads beyond the kernel's EFAULTs are calls it
            // has no attr for although the kernel did not fault on them
            // (a lower bound: the two need not fail on the same calls).
            let efault = out
                .iter()
                .flatten()
                .filter(|o| o.ret == -i64::from(libc::EFAULT))
                .count();
            let _ = write!(
                line,
                "; BPF contender: {} records produced, {} consumed, {} lost; {} entries, {} exits; {} attr reads failed ({efault} calls got EFAULT), {} truncated at 136 bytes",
                c.produced, c.consumed, c.lost, c.entries, c.exits, c.fault, c.truncated
            );
        }
        println!("{line}");
        println!("campaign: pass {i} ({kind:?}): {}", injection_line(out));
        if let Some(f) = &tally.fidelity {
            println!(
                "campaign: pass {i} ({kind:?}): fidelity over {} calls ({} racing-writer calls): BPF contender: attr not what the kernel used {} ({} of them racing-writer calls), attr read failed {} ({} where the kernel read the attr), truncated at 136 bytes {}; capture: record not what the kernel used {}",
                f.calls,
                f.racy,
                f.contender_wrong,
                f.contender_wrong_racy,
                f.contender_unread,
                f.contender_unread_kernel_read,
                f.contender_truncated,
                f.capture_wrong
            );
        }
        println!(
            "campaign: pass {i} ({kind:?}): {} counter mismatches",
            tally.mismatches.len()
        );
        for m in tally.mismatches.iter().take(20) {
            println!("campaign: MISMATCH pass {i} ({kind:?}): {m}");
        }
        ok &= tally.mismatches.is_empty();
        if i == 0 {
            continue;
        }
        let mut differences = 0usize;
        let mut classes = std::collections::BTreeMap::<String, usize>::new();
        for (t, (a, b)) in reference.iter().zip(out).enumerate() {
            if a.len() != b.len() {
                println!(
                    "campaign: DIFFERENCE thread {t}: {} calls vs {}",
                    a.len(),
                    b.len()
                );
                differences += 1;
            }
            let mut rng = None;
            let mut drawn = 0usize;
            let mut call = None;
            for (k, (x, y)) in a.iter().zip(b).enumerate() {
                if !(x.compared && y.compared) || x == y {
                    continue;
                }
                differences += 1;
                // Draw again up to call k to say what it was.
                let rng = rng.get_or_insert_with(|| {
                    Rng::new(
                        args.seed,
                        STREAM_BASE + 1 + u32::try_from(t).expect("few threads"),
                    )
                });
                while drawn <= k {
                    call = Some(draw(rng, &cpus));
                    drawn += 1;
                }
                let call = call.as_ref().expect("drawn");
                *classes.entry(call.class(x, y)).or_insert(0) += 1;
                if differences > 20 {
                    continue;
                }
                println!(
                    "campaign: DIFFERENCE thread {t} call {k} ({}, fail-nth {}): pass 0 ({first_kind:?}) ret {} uffd faults {} memory {:#018x} fail-nth left {}, pass {i} ({kind:?}) ret {} uffd faults {} memory {:#018x} fail-nth left {}",
                    call.describe(),
                    x.fail_nth,
                    x.ret,
                    x.uffd_faults,
                    x.memory,
                    x.fail_nth_left,
                    y.ret,
                    y.uffd_faults,
                    y.memory,
                    y.fail_nth_left
                );
            }
        }
        for (class, n) in &classes {
            println!("campaign: DIFFERENCES {n} x {class}");
        }
        println!(
            "campaign: pass {i} ({kind:?}) vs pass 0 ({first_kind:?}): {differences} differences"
        );
        ok &= differences == 0;
    }
    if fds_after != fds_before {
        println!("campaign: FAIL {fds_before} fds open at the start, {fds_after} at the end");
        ok = false;
    }
    println!("campaign: {}", if ok { "passed" } else { "FAILED" });
    Ok(ok)
}

/// The calls of a pass by placement (those whose first read allocates)
/// and by the allocators' setting, and the faults injected into them.
fn injection_line(out: &[Vec<Outcome>]) -> String {
    /// Calls, calls with a fault injected, those that reached it, and
    /// those of them that failed with EFAULT.
    type Count = [usize; 4];
    let mut counts = std::collections::BTreeMap::<(Allocating, Option<Allocators>), Count>::new();
    for o in out.iter().flatten() {
        let c = counts.entry((o.allocating, o.allocators)).or_default();
        let reached = o.fail_nth > 0 && o.fail_nth_left == 0;
        let add = [
            true,
            o.fail_nth > 0,
            reached,
            reached && o.ret == -i64::from(libc::EFAULT),
        ];
        for (n, a) in c.iter_mut().zip(add) {
            *n += usize::from(a);
        }
    }
    let sum = |keep: &dyn Fn(Allocating, Option<Allocators>) -> bool| {
        counts
            .iter()
            .filter(|((p, a), _)| keep(*p, *a))
            .fold([0; 4], |s, (_, c)| [0, 1, 2, 3].map(|i| s[i] + c[i]))
    };
    let places = [
        (Allocating::MemfdHole, "before a memfd hole"),
        (Allocating::SharedPage, "on an untouched shared page"),
        (Allocating::No, "elsewhere"),
    ];
    let mut line = format!(
        "attrs whose first read allocates: {} calls before a memfd hole, {} on an untouched shared page; the allocators' setting: ",
        sum(&|p, _| p == Allocating::MemfdHole)[0],
        sum(&|p, _| p == Allocating::SharedPage)[0],
    );
    let settings: Vec<Option<Allocators>> = if counts.keys().any(|(_, a)| a.is_some()) {
        Allocators::ALL.map(Some).to_vec()
    } else {
        line.push_str("none (no allocator injection)");
        vec![None]
    };
    let per_setting: Vec<String> = settings
        .iter()
        .flatten()
        .map(|s| format!("{} {} calls", s.name(), sum(&|_, a| a == Some(*s))[0]))
        .collect();
    line.push_str(&per_setting.join(", "));
    line.push_str("; faults injected (calls armed/reached it, of those EFAULT): ");
    let mut parts = Vec::new();
    for (place, name) in places {
        let cells: Vec<String> = settings
            .iter()
            .map(|&setting| {
                let c = sum(&|p, a| p == place && a == setting);
                let at = setting.map_or(String::new(), |s| format!(" at {}", s.name()));
                format!("{}/{} ({}){at}", c[1], c[2], c[3])
            })
            .collect();
        parts.push(format!("{name} {}", cells.join(", ")));
    }
    line.push_str(&parts.join("; "));
    line
}
