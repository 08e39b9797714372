// SPDX-License-Identifier: GPL-2.0-only
//! Filter evaluation cost per call, next to what decoding and formatting
//! the same call costs.
//!
//! Not a test: run it with
//!
//! ```sh
//! cargo bench -p antinomie-reader --bench filter
//! ```
//!
//! For each golden image set under `reader/tests/data/` (`synthetic/`, and
//! `guest/*/` once there), it collects the calls, then
//!
//! 1. times `Filter::matches` alone, per call, for a range of filters
//!    (cheap call fields, attr members, bit tests, sets, `config` names,
//!    strings, a long expression), and
//! 2. times the whole `reader show` path (drain, merge, pair, decode,
//!    filter, format into a sink that discards the bytes) without a
//!    filter and with the longest one, per call, as text and JSON.
//!
//! Each number is the best of several batches (the machine is shared with
//! kernel builds); `--quick` makes the batches short.
//!
//! Results are in `BENCHMARKS.md`, "The filter".

use std::hint::black_box;
use std::io;
use std::time::{Duration, Instant};

use antinomie_reader::call::Call;
use antinomie_reader::decode::PmuTypes;
use antinomie_reader::filter::Filter;
use antinomie_reader::output::{Format, WriterSink};
use antinomie_reader::pipeline::{self, Assembler, Sink};
use antinomie_reader::record::LostRecord;
use antinomie_reader::ring::ImageRing;

/// Counts bytes, keeps none.
struct Discard;

impl io::Write for Discard {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Keeps the calls.
#[derive(Default)]
struct Calls(Vec<Call>);

impl Sink for Calls {
    fn call(&mut self, c: &Call) -> io::Result<()> {
        self.0.push(c.clone());
        Ok(())
    }
    fn lost(&mut self, _: &LostRecord) -> io::Result<()> {
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

const FILTERS: &[&str] = &[
    "ret == 3",
    "syscall.errno == E2BIG",
    "syscall.errno in {EINVAL, E2BIG, EFAULT, ENOENT}",
    "args.flags & PERF_FLAG_FD_CLOEXEC",
    "args.attr_uptr.size < PERF_ATTR_SIZE_VER8",
    "args.attr_uptr.sample_type & PERF_SAMPLE_IP",
    "args.attr_uptr.config == PERF_COUNT_SW_CPU_CLOCK",
    "exists(args.attr_uptr.bp_len)",
    "arg0.status == complete",
    "syscall.errno_name == \"EINVAL\"",
    "args.flags_names == \"PERF_FLAG_FD_CLOEXEC\"",
    LONG,
];

/// Many fields, every operator.
const LONG: &str = "(syscall.errno == E2BIG && args.attr_uptr.size > 136) \
    || (args.flags & PERF_FLAG_FD_CLOEXEC && exists(args.attr_uptr.sig_data) && arg0.status == complete) \
    || (!syscall.success && syscall.duration_ns > 9000 && args.attr_uptr.type in {PERF_TYPE_SOFTWARE, PERF_TYPE_HW_CACHE}) \
    || args.attr_uptr.config == PERF_COUNT_HW_CACHE_LL";

fn images_of(dir: &std::path::Path) -> Vec<Vec<u8>> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "ring"))
        .collect();
    paths.sort();
    paths.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

fn golden_sets() -> Vec<(String, Vec<Vec<u8>>)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut dirs = vec![root.join("synthetic")];
    if let Ok(d) = std::fs::read_dir(root.join("guest")) {
        dirs.extend(d.flatten().map(|e| e.path()));
    }
    dirs.into_iter()
        .map(|d| {
            let name = d.strip_prefix(&root).unwrap().display().to_string();
            (name, images_of(&d))
        })
        .filter(|(_, i)| !i.is_empty())
        .collect()
}

fn cpus_of(images: &[Vec<u8>]) -> Vec<u32> {
    let mut cpus: Vec<u32> = images
        .iter()
        .map(|i| ImageRing::from_bytes(i.clone()).unwrap().meta().cpu)
        .collect();
    cpus.sort_unstable();
    cpus
}

fn rings(images: &[Vec<u8>]) -> Vec<ImageRing> {
    images
        .iter()
        .map(|i| ImageRing::from_bytes(i.clone()).unwrap())
        .collect()
}

fn calls_of(images: &[Vec<u8>]) -> Vec<Call> {
    let mut sink = Calls::default();
    pipeline::replay(
        pipeline::drain_once(rings(images)),
        Assembler::new(&cpus_of(images), 0, &mut sink),
    )
    .unwrap();
    sink.0
}

/// Batches per measurement: the machine is shared (kernel builds), so
/// each number is the best of several batches, the one least disturbed.
const BATCHES: u32 = 7;

/// The best of [`BATCHES`] runs of `batch`, each repeated until `min`
/// has passed; `batch` returns how many calls it handled.
fn best_ns_per_call(min: Duration, mut batch: impl FnMut() -> u64) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..BATCHES {
        let start = Instant::now();
        let mut calls = 0u64;
        while calls == 0 || start.elapsed() < min {
            calls += batch();
        }
        #[allow(clippy::cast_precision_loss)]
        let ns = start.elapsed().as_nanos() as f64 / calls as f64;
        best = best.min(ns);
    }
    best
}

/// Nanoseconds per call of `f.matches`, and how many calls matched.
fn time_filter(f: &Filter, calls: &[Call], min: Duration) -> (f64, usize) {
    let matched = calls.iter().filter(|c| f.matches(c)).count();
    let ns = best_ns_per_call(min, || {
        for _ in 0..100 {
            for c in calls {
                black_box(f.matches(black_box(c)));
            }
        }
        100 * calls.len() as u64
    });
    (ns, matched)
}

/// Nanoseconds per call of the whole show path (rings to formatted
/// bytes), with an optional filter.
fn time_show(
    images: &[Vec<u8>],
    calls: usize,
    format: Format,
    filter: Option<&Filter>,
    min: Duration,
) -> f64 {
    let cpus = cpus_of(images);
    best_ns_per_call(min, || {
        let msgs = pipeline::drain_once(rings(images));
        let mut sink = WriterSink::new(Discard, format, PmuTypes::none(), false);
        let mut asm = Assembler::new(&cpus, 0, &mut sink);
        if let Some(f) = filter {
            asm.set_filter(Box::new(f.clone()));
        }
        black_box(pipeline::replay(msgs, asm).unwrap());
        calls as u64
    })
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let min = if quick {
        Duration::from_millis(20)
    } else {
        Duration::from_millis(300)
    };
    for (name, images) in golden_sets() {
        let calls = calls_of(&images);
        println!("golden {name}: {} calls", calls.len());
        println!("  filter evaluation alone, ns/call:");
        for src in FILTERS {
            let f = Filter::parse(src).unwrap();
            let (ns, matched) = time_filter(&f, &calls, min);
            let shown: String = if src.len() > 60 {
                format!("{}… (long)", &src[..57])
            } else {
                (*src).to_owned()
            };
            println!("    {ns:>8.1}  {matched:>3} match  {shown}");
        }
        let long = Filter::parse(LONG).unwrap();
        let (long_ns, _) = time_filter(&long, &calls, min);
        println!("  show path (drain, pair, decode, filter, format), ns/call:");
        for (format, fname) in [(Format::Text, "text"), (Format::Json, "json")] {
            let none = time_show(&images, calls.len(), format, None, min);
            let with = time_show(&images, calls.len(), format, Some(&long), min);
            println!(
                "    {fname:<4}  no filter {none:>7.0}   long filter {with:>7.0}   \
                 (the long filter alone is {:.1}% of the unfiltered path)",
                long_ns / none * 100.0
            );
        }
    }
}
