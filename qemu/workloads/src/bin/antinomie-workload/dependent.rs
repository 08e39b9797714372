// SPDX-License-Identifier: GPL-2.0-only
//! `antinomie-workload dependent --seed S --rounds R [--threads T]`: a
//! seeded workload whose calls depend on earlier results, as real
//! programs' do, for checking how `reader diff` tells a cause from its
//! consequences (two kernels, one workload).
//!
//! T threads (default: one per online CPU), each pinned to one CPU, each
//! run R rounds. A round opens a group the way a counting tool does: a
//! leader (a software clock), then one to three siblings (software
//! events) with the leader's fd as their `group_fd`. What the program does
//! next depends on what the kernel answered:
//!
//! * a call refused with `E2BIG` that got a size written back is made
//!   again, once, with that size (as a tool built against newer headers
//!   retries with the size the kernel knows);
//! * when the leader cannot be opened, the siblings are opened on their
//!   own (`group_fd` -1) instead;
//! * when a sibling cannot join the group, the round gives the group up:
//!   it opens no more siblings and closes what it opened.
//!
//! The declared sizes are drawn from the ones where kernels may differ:
//! 0 (which means `PERF_ATTR_SIZE_VER0`), 1 (always refused, 136 written
//! back), 64 (`VER0`), 72, 96, 128 and 136. Each round's draws are made
//! before its first call, from the thread's own `ChaCha8Rng` (seed S,
//! stream T, as `random` does), so the calls a round makes depend on the
//! results but the rounds themselves do not: after a changed result the
//! two runs make other calls for the rest of that round only.
//!
//! Each call is logged as the e2e scripts log theirs (`antinomie_workloads::log::LoggedCall`,
//! script `dependent`; its tag names the thread and the call's position in
//! the thread), streamed to stdout as it is made. Every attr has `disabled`
//! set, so nothing counts; every fd is closed by the end of its round.

use std::process::ExitCode;

use clap::Parser;

use crate::call::{Attr, PERF_COUNT_SW_CPU_CLOCK, PERF_FLAG_FD_CLOEXEC};
use crate::caller::{close, Caller, Ptr};
use crate::random::{stream_threads, Rng};
use crate::system::online_cpus;

/// The script id in the tag of argument word 5 (`random` is 5).
const SCRIPT_ID: u64 = 6;
/// Declared sizes and their weights: most open on every kernel, 0 and 64
/// sit on the `PERF_ATTR_SIZE_VER0` boundary, 1 is refused everywhere.
const SIZES: [(u64, u32); 7] = [
    (1, 0),
    (1, 1),
    (1, 64),
    (3, 72),
    (2, 96),
    (2, 128),
    (4, 136),
];
/// Sibling events: `PERF_COUNT_SW_*` (cpu clock, task clock, page faults,
/// context switches, dummy) and `PERF_COUNT_SW_MAX`, which no software
/// event has, so that joining a group fails on every kernel now and then.
const SIBLING_CONFIGS: [(u64, u64); 6] = [(3, 0), (3, 1), (2, 2), (2, 3), (2, 9), (1, 12)];
/// Largest size the kernel may write back that the workload retries with.
const RETRY_MAX: u32 = 4096;
const E2BIG: i64 = -(libc::E2BIG as i64);

/// The `dependent` workload's options.
#[derive(Debug, Parser)]
#[command(name = "antinomie-workload dependent")]
struct Args {
    /// The seed: the same seed on the same kernel makes the same calls.
    #[arg(long)]
    seed: u64,
    /// Rounds per thread (a leader and its siblings each).
    #[arg(long)]
    rounds: usize,
    /// How many threads (default: one per online CPU), pinned one per CPU.
    #[arg(long)]
    threads: Option<usize>,
}

/// One round's draws, made before its first call.
struct Round {
    leader_size: u32,
    /// Each sibling's size and `PERF_COUNT_SW_*` config.
    siblings: Vec<(u32, u64)>,
}

fn draw(rng: &mut Rng) -> Round {
    let leader_size = rng.weighted(&SIZES);
    let n = 1 + rng.index(3);
    let siblings = (0..n)
        .map(|_| (rng.weighted(&SIZES), rng.weighted(&SIBLING_CONFIGS)))
        .collect();
    Round {
        leader_size,
        siblings,
    }
}

/// A thread's calling context and where its log lines go.
struct Thread<'a> {
    caller: Caller,
    lines: &'a crossbeam_channel::Sender<String>,
    /// False once the output went away: no more calls.
    alive: bool,
    calls: usize,
    succeeded: usize,
}

impl Thread<'_> {
    /// Opens `config` with `size` on this task, any CPU, in `group_fd`'s
    /// group; on `E2BIG` with a size written back, once more with that
    /// size. Returns the last call's result.
    fn open(&mut self, what: &str, config: u64, size: u32, group_fd: i32) -> i64 {
        let mut attr = Attr::sw(config);
        attr.size(size);
        let ret = self.call(&format!("{what}-size-{size}"), &attr, group_fd);
        let written_back = self
            .caller
            .records
            .last()
            .and_then(|r| r.required_size)
            .filter(|&s| s != size && (1..=RETRY_MAX).contains(&s));
        match written_back {
            Some(wanted) if ret == E2BIG && self.alive => {
                attr.size(wanted);
                self.call(&format!("{what}-retry-size-{wanted}"), &attr, group_fd)
            }
            _ => ret,
        }
    }

    fn call(&mut self, case: &str, attr: &Attr, group_fd: i32) -> i64 {
        let ptr = Ptr::at_page_end(attr.build());
        let ret = self
            .caller
            .call(case, &ptr, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
        self.calls += 1;
        self.succeeded += usize::from(ret >= 0);
        let rec = self.caller.records.last().expect("a call was logged");
        let line = serde_json::to_string(rec).expect("a LoggedCall always serializes");
        self.alive = self.lines.send(line).is_ok();
        ret
    }

    /// One round: the leader, then its siblings, with the fallbacks of the
    /// module comment; every fd it opened is closed at its end.
    fn round(&mut self, round: &Round) {
        let leader = self.open("leader", PERF_COUNT_SW_CPU_CLOCK, round.leader_size, -1);
        let mut opened = vec![leader];
        let group_fd = i32::try_from(leader).unwrap_or(-1);
        for &(size, config) in &round.siblings {
            if !self.alive {
                break;
            }
            let what = if group_fd >= 0 {
                format!("sibling-{config}")
            } else {
                format!("alone-{config}")
            };
            let ret = self.open(&what, config, size, group_fd);
            opened.push(ret);
            if ret < 0 && group_fd >= 0 {
                break;
            }
        }
        opened.into_iter().for_each(close);
        // The records are on stdout already; keep the thread's memory flat.
        self.caller.records.clear();
    }
}

/// Thread `thread`'s rounds on `cpu`; returns (calls made, succeeded).
fn thread_rounds(
    seed: u64,
    thread: u32,
    cpu: u32,
    rounds: usize,
    lines: &crossbeam_channel::Sender<String>,
) -> (usize, usize) {
    let mut rng = Rng::new(seed, thread);
    let mut t = Thread {
        caller: Caller::new("dependent", SCRIPT_ID, thread, Some(cpu)),
        lines,
        alive: true,
        calls: 0,
        succeeded: 0,
    };
    for _ in 0..rounds {
        if !t.alive {
            break;
        }
        let round = draw(&mut rng);
        t.round(&round);
    }
    (t.calls, t.succeeded)
}

/// Runs the workload with `args` (`args[0]` is `dependent`).
pub fn main(args: &[String]) -> ExitCode {
    let args = Args::parse_from(args);
    let cpus = online_cpus();
    let threads = args.threads.unwrap_or(cpus.len()).max(1);
    let results = stream_threads(threads, &cpus, |thread, cpu, lines| {
        thread_rounds(args.seed, thread, cpu, args.rounds, lines)
    });
    if let Some(results) = results {
        let (calls, ok) = results
            .into_iter()
            .fold((0, 0), |(c, s), (tc, ts)| (c + tc, s + ts));
        eprintln!(
            "antinomie-workload: dependent: seed {}, {} rounds in each of {threads} threads, {calls} calls, {ok} succeeded",
            args.seed, args.rounds
        );
    }
    ExitCode::SUCCESS
}
