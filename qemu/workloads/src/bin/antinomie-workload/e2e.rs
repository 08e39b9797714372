// SPDX-License-Identifier: GPL-2.0-only
//! The end-to-end scripts of `antinomie-workload` (`e2e`, `e2e-small`,
//! `burst`, `flush`): `perf_event_open(2)` calls covering the capture's
//! cases, each logged as one JSON line ([`LoggedCall`]) with everything the
//! comparator (`antinomie-e2e`) needs to derive what Antinomie must have
//! recorded: the six argument words, the attr bytes as they were in memory
//! at the call and how many of them were readable before an unmapped page,
//! the thread, its CPU, the clock around the call, and what the kernel gave
//! back (return value, errno, `attr.size` read back after `E2BIG`,
//! `FD_CLOEXEC` of a new fd).
//!
//! Every attr lives at the end of its own mapping, right before a
//! `PROT_NONE` guard page, so "readable" is exact: the kernel (and the
//! capture) can read those bytes and not one more. Every call carries a
//! unique tag in argument word 5, which `perf_event_open` ignores and the
//! capture records raw, so that each captured call names the logged call it
//! is. Threads pin themselves to a CPU before calling, so the ring a call
//! lands on is known too.

mod cases;

use std::sync::Mutex;

use crate::call::{
    Attr, LoggedCall, PERF_COUNT_SW_DUMMY, PERF_COUNT_SW_TASK_CLOCK, PERF_FLAG_FD_CLOEXEC,
};
use crate::caller::{close, Caller};
use crate::system::online_cpus;
use cases::{big_group, change_during_the_call, main_cases, per_cpu_cases};

/// The attr size of call `k` of burst thread `thread`. On fresh 4 KiB
/// rings that nobody drains, one pinned thread per CPU, the sizes decide
/// which records fit (ENTRY: 152 + the attr rounded up to 8 bytes; EXIT:
/// 88; a pending LOST record: 152 more, written with the next record that
/// fits with it):
/// * thread 1 cycles once through the `PERF_ATTR_SIZE_VER*`, then makes
///   calls of 64 and 136 (3752 bytes so far): its 12th call's ENTRY (size
///   112, 264 bytes) fits and leaves 80 bytes, so its EXIT is dropped
///   (unfinished);
/// * thread 2 makes 9 calls of size 64 and 3 of 120 (3816 bytes), then
///   size 136: the 13th call's ENTRY (288 bytes) is dropped, but the LOST
///   record and its EXIT (240 bytes) fit in the 280 left (entry lost);
/// * the others use 136: the 11th call's ENTRY fits, its EXIT does not,
///   and the calls after it are dropped whole.
fn burst_attr_size(thread: u32, k: usize) -> u32 {
    const VERS: [u32; 9] = [64, 72, 80, 96, 104, 112, 120, 128, 136];
    /// Thread 1's calls after its cycle: then 112 on.
    const THREAD1_AFTER: [u32; 2] = [64, 136];
    match thread {
        1 if k < VERS.len() => VERS[k],
        1 => THREAD1_AFTER.get(k - VERS.len()).copied().unwrap_or(112),
        2 if k < 9 => 64,
        2 if k < 12 => 120,
        _ => 136,
    }
}

/// `burst N`: N calls spread over one pinned thread per CPU, as fast as
/// they go, keeping every fd open (so every return value is distinct).
fn burst(script_id: u64, cpus: &[u32], n: usize) -> Vec<LoggedCall> {
    let per = n.div_ceil(cpus.len().max(1));
    let handles: Vec<_> = cpus
        .iter()
        .enumerate()
        .map(|(i, &cpu)| {
            std::thread::spawn(move || {
                let thread = u32::try_from(i + 1).expect("few threads");
                let mut c = Caller::new("burst", script_id, thread, Some(cpu));
                let mut fds = Vec::new();
                for k in 0..per {
                    let size = burst_attr_size(thread, k);
                    let mut attr = Attr::sw(PERF_COUNT_SW_TASK_CLOCK);
                    attr.size(size).len(size as usize);
                    fds.push(c.simple("burst", &attr, PERF_FLAG_FD_CLOEXEC));
                }
                (c.records, fds)
            })
        })
        .collect();
    let mut records = Vec::new();
    let mut fds = Vec::new();
    for h in handles {
        let (r, f) = h.join().expect("a workload thread panicked");
        records.extend(r);
        fds.extend(f);
    }
    for fd in fds {
        close(fd);
    }
    records
}

/// Runs script `name`: its records, and whether its own preconditions
/// held (the big group ended in `E2BIG` where expected).
///
/// # Errors
/// An unknown script.
pub fn run(
    name: &str,
    count: Option<usize>,
) -> Result<(Vec<LoggedCall>, Result<(), String>), String> {
    let cpus = online_cpus();
    let main_cpu = cpus.first().copied();
    let out = Mutex::new(Vec::new());
    let mut status = Ok(());
    match name {
        "e2e" | "e2e-small" => {
            let script: &'static str = if name == "e2e" { "e2e" } else { "e2e-small" };
            let id = if name == "e2e" { 1 } else { 2 };
            let mut c = Caller::new(script, id, 0, main_cpu);
            main_cases(&mut c);
            out.lock()
                .expect("not poisoned")
                .extend(per_cpu_cases(script, id, &cpus));
            if name == "e2e" {
                status = change_during_the_call(&mut c).and(big_group(&mut c));
            }
            out.lock().expect("not poisoned").extend(c.records);
        }
        "burst" => {
            let n = count.unwrap_or(200);
            out.lock().expect("not poisoned").extend(burst(3, &cpus, n));
        }
        "flush" => {
            // One call per CPU, to make each ring emit its pending LOST record.
            let recs = cpus
                .iter()
                .enumerate()
                .map(|(i, &cpu)| {
                    std::thread::spawn(move || {
                        let thread = u32::try_from(i + 1).expect("few threads");
                        let mut c = Caller::new("flush", 4, thread, Some(cpu));
                        close(c.simple("flush", &Attr::sw(PERF_COUNT_SW_DUMMY), 0));
                        c.records
                    })
                })
                .collect::<Vec<_>>()
                .into_iter()
                .flat_map(|h| h.join().expect("a workload thread panicked"))
                .collect::<Vec<_>>();
            out.lock().expect("not poisoned").extend(recs);
        }
        other => return Err(format!("unknown script {other}")),
    }
    let mut records = out.into_inner().expect("not poisoned");
    records.sort_by_key(|r| (r.thread, r.seq));
    Ok((records, status))
}
