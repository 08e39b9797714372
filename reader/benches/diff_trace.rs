// SPDX-License-Identifier: GPL-2.0-only
//! `reader diff` at scale, next to `reader show` on the same traces: two
//! trace files of one seeded workload (1 000 000 calls each by default,
//! written with the reader's own `TraceWriter` from `ring::builder`
//! records), run B with a few injected outcome changes that make the
//! thread fall back (other calls after the changed result, as a program
//! probing a feature does). Each command runs as a child on one core
//! (`taskset -c 0`); its wall time, CPU time and peak resident set are
//! `/usr/bin/time`'s.
//!
//! Not a test: build the reader first, then run it with
//!
//! ```sh
//! cargo build --release -p antinomie-reader-cli
//! cargo bench -p antinomie-reader --bench diff_trace
//! ```
//!
//! Options: `--calls N` (per run), `--dir DIR` (where the traces, 720 MB
//! at the default 1 000 000 calls, and the reports go; default
//! `target/diff-bench` of the workspace), `--reader PATH` (default the
//! workspace's `target/release/reader`). Results are recorded in `BENCHMARKS.md`
//! (`## reader diff`).

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use antinomie_abi as abi;
use antinomie_reader::decode::PmuTypes;
use antinomie_reader::pipeline::{DrainMsg, Recorder};
use antinomie_reader::ring::builder::{
    entry_record, exit_record, CaptureSpec, EntrySpec, ExitSpec,
};
use antinomie_reader::trace::{TraceHeader, TraceWriter};
use antinomie_reader_testkit::SplitMix64;

const SEED: u64 = 0x5eed_d1ff_0000_0001;
const CPUS: u32 = 4;
const THREADS: u32 = 4;
/// Run B's injected outcome changes: at these fractions of the run, a
/// call fails in B where it did not (or fails otherwise) in A.
const INJECTED: [u64; 5] = [1, 3, 5, 7, 9];
/// How many fallback calls B's thread makes after an injected change.
const FALLBACK_CALLS: u64 = 3;
/// Records per CPU per drain pass, as a drain writes them.
const PASS: usize = 256;

/// An attr of `PERF_ATTR_SIZE_VER8` (136 bytes) with this type and config.
fn attr(ty: u32, config: u64) -> CaptureSpec {
    let mut data = vec![0u8; 136];
    data[..4].copy_from_slice(&ty.to_le_bytes());
    data[4..8].copy_from_slice(&136u32.to_le_bytes());
    data[8..16].copy_from_slice(&config.to_le_bytes());
    // disabled, exclude_kernel, exclude_hv
    data[40..48].copy_from_slice(&0b110_0001u64.to_le_bytes());
    CaptureSpec {
        arg: 0,
        kind: abi::KIND_PERF_EVENT_ATTR,
        status: abi::STATUS_COMPLETE,
        flags: 0,
        declared_size: 136,
        fault_offset: 0,
        data,
    }
}

/// The trace being written: records per CPU, flushed in drain passes.
struct Writer {
    trace: TraceWriter<BufWriter<File>>,
    lanes: Vec<Vec<Vec<u8>>>,
    call_id: u64,
    time_ns: u64,
}

impl Writer {
    fn new(path: &Path) -> Self {
        let header = TraceHeader {
            abi_version: abi::ABI_VERSION,
            window_ns: 0,
            cpus: (0..CPUS).collect(),
            pmus: PmuTypes::default(),
            realtime_offset_ns: None,
        };
        let out = BufWriter::with_capacity(1 << 20, File::create(path).unwrap());
        Writer {
            trace: TraceWriter::new(out, &header).unwrap(),
            lanes: vec![Vec::new(); CPUS as usize],
            call_id: 0,
            time_ns: 1_000_000_000,
        }
    }

    /// One call of thread `tid` on `cpu`: ENTRY then EXIT on that CPU.
    fn call(&mut self, cpu: u32, tid: u32, config: u64, group_fd: i64, ret: i64) {
        self.call_id += 1;
        self.time_ns += 1000;
        let dur = 400;
        let e = EntrySpec {
            call_id: self.call_id,
            time_ns: self.time_ns,
            start_ns: None,
            pid: 100,
            tid,
            flags: 0,
            args: [
                0x7ffd_0000_1000,
                0,
                u64::MAX,
                u64::from_ne_bytes(group_fd.to_ne_bytes()),
                8,
                self.call_id,
            ],
            items: vec![attr(1, config)],
        };
        let x = ExitSpec {
            call_id: self.call_id,
            time_ns: self.time_ns + dur,
            pid: 100,
            tid,
            ret,
            duration_ns: dur,
            flags: 0,
            required_size: 0,
            entry_pos: 0,
        };
        let lane = &mut self.lanes[cpu as usize];
        lane.push(entry_record(cpu, &e));
        lane.push(exit_record(cpu, &x));
        if lane.len() >= PASS {
            self.pass();
        }
    }

    /// A drain pass: each CPU's records so far, as one frame.
    fn pass(&mut self) {
        for (cpu, lane) in self.lanes.iter_mut().enumerate() {
            if lane.is_empty() {
                continue;
            }
            let msg = DrainMsg::Records {
                cpu: u32::try_from(cpu).unwrap(),
                bytes: lane.concat(),
            };
            self.trace.record(&msg).unwrap();
            lane.clear();
        }
    }

    fn finish(mut self) {
        self.pass();
        self.trace.finish().unwrap();
    }
}

/// Writes the workload's trace: `injected` makes it run B.
fn write_run(path: &Path, calls: u64, injected: bool) {
    let mut rng = SplitMix64(SEED);
    let mut w = Writer::new(path);
    let at: Vec<u64> = INJECTED.iter().map(|k| calls * k / 10).collect();
    for n in 0..calls {
        let tid = 100 + u32::try_from(rng.below(u64::from(THREADS))).unwrap();
        let cpu = u32::try_from(rng.below(u64::from(CPUS))).unwrap();
        let config = rng.below(12);
        // One call in five fails; the others open fd 3 to 1026.
        let fails = rng.below(5) == 0;
        let leader = rng.below(4) == 0;
        let fd = i64::try_from(3 + rng.below(1024)).unwrap();
        let ret = if fails { -22 } else { fd };
        let group_fd = if leader { 3 } else { -1 };
        if injected && at.contains(&n) {
            // The changed outcome, then the thread's fallback calls.
            let changed = if fails { -95 } else { -2 };
            w.call(cpu, tid, config, group_fd, changed);
            for k in 0..FALLBACK_CALLS {
                w.call(cpu, tid, 0xfa11_0000 + k, -1, fd);
            }
        } else {
            w.call(cpu, tid, config, group_fd, ret);
        }
    }
    w.finish();
}

/// Wall time (s), CPU time (s), peak RSS (KiB) and exit code of `cmd`
/// (with its arguments) under `/usr/bin/time`, its standard output into
/// `stdout`.
fn measure(cmd: &[&Path], stdout: &Path) -> (f64, f64, u64, i32) {
    let times = stdout.with_extension("time");
    let status = Command::new("/usr/bin/time")
        .arg("-o")
        .arg(&times)
        .args(["-f", "%e %U %S %M"])
        .args(cmd)
        .stdout(File::create(stdout).unwrap())
        .stderr(Stdio::inherit())
        .status()
        .unwrap();
    let text = std::fs::read_to_string(&times).unwrap();
    // The last line: `time` writes "Command exited with non-zero
    // status N" before it.
    let f: Vec<&str> = text.lines().last().unwrap().split(' ').collect();
    let num = |i: usize| f[i].parse::<f64>().unwrap();
    (
        num(0),
        num(1) + num(2),
        f[3].parse().unwrap(),
        status.code().unwrap_or(-1),
    )
}

fn main() {
    let mut calls = 1_000_000u64;
    // `cargo bench` runs this in the package's directory: the defaults
    // are in the workspace's target directory.
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target");
    let mut dir = target.join("diff-bench");
    let mut reader = target.join("release/reader");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--calls" => calls = args.next().unwrap().parse().unwrap(),
            "--dir" => dir = args.next().unwrap().into(),
            "--reader" => reader = args.next().unwrap().into(),
            // `cargo bench` passes `--bench`.
            _ => {}
        }
    }
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("a.trace"), dir.join("b.trace"));
    let started = Instant::now();
    write_run(&a, calls, false);
    write_run(&b, calls, true);
    println!(
        "two traces of {calls} calls written in {:.1} s: {} and {} bytes",
        started.elapsed().as_secs_f64(),
        std::fs::metadata(&a).unwrap().len(),
        std::fs::metadata(&b).unwrap().len()
    );
    let on_core_0 = |args: &[&'static str], runs: &[&Path]| -> Vec<PathBuf> {
        let mut c: Vec<PathBuf> = ["taskset", "-c", "0"].iter().map(PathBuf::from).collect();
        c.push(reader.clone());
        c.extend(args.iter().map(PathBuf::from));
        c.extend(runs.iter().map(|p| p.to_path_buf()));
        c
    };
    let figures = [
        (
            "reader show A (text)",
            on_core_0(&["show"], &[&a]),
            dir.join("show-a.txt"),
        ),
        (
            "reader diff A B (text)",
            on_core_0(&["diff"], &[&a, &b]),
            dir.join("diff.txt"),
        ),
        (
            "reader diff A B (JSON)",
            on_core_0(&["diff", "--format", "json"], &[&a, &b]),
            dir.join("diff.jsonl"),
        ),
        (
            "reader diff A A (text)",
            on_core_0(&["diff"], &[&a, &a]),
            dir.join("diff-equal.txt"),
        ),
    ];
    println!("| command | exit | wall s | CPU s | calls/s (wall) | peak RSS MiB |");
    println!("|---|---|---|---|---|---|");
    for (name, cmd, out) in figures {
        let cmd: Vec<&Path> = cmd.iter().map(PathBuf::as_path).collect();
        let (wall, cpu, rss_kib, code) = measure(&cmd, &out);
        // A diff reads both runs.
        let read = if name.contains("diff") {
            2 * calls
        } else {
            calls
        };
        #[allow(clippy::cast_precision_loss)]
        let rate = read as f64 / wall;
        #[allow(clippy::cast_precision_loss)]
        let mib = rss_kib as f64 / 1024.0;
        println!("| `{name}` | {code} | {wall:.2} | {cpu:.2} | {rate:.0} | {mib:.1} |");
    }
    // What the diff found: its summary line.
    let summary = BufReader::new(File::open(dir.join("diff.jsonl")).unwrap())
        .lines()
        .map(Result::unwrap)
        .last()
        .unwrap();
    println!("diff summary: {summary}");
}
