// SPDX-License-Identifier: GPL-2.0-only
//! `reader show` of a recorded trace, end to end on one core: read the
//! trace file, merge by time, pair, filter, decode and format as JSON
//! Lines (full and compact schema; and text), into a sink that discards the bytes. Plus the raw
//! drain (records copied out of ring images) and merge + pair alone at 4,
//! 64 and 256 CPUs.
//!
//! Not a test: run it with
//!
//! ```sh
//! cargo bench -p antinomie-reader --bench show_trace
//! ```
//!
//! The trace is a seeded random workload (`SEED`, 60 000 calls on 4 CPUs,
//! written with the reader's own `TraceWriter`): attr sizes from 0 to 4097
//! (every `PERF_ATTR_SIZE_VER*`, odd and page-sized ones), every capture
//! status (complete, NULL, fault at a random offset, truncated, invalid
//! size), random attr bytes under one of seven `type`s (so every flag and
//! union mix occurs), random `flags`, successes and errnos, ENTRY and EXIT
//! on random CPUs. Results are recorded in `BENCHMARKS.md` (`## Reader
//! throughput`).
//!
//! Every figure is the best of several runs, timed in this thread's CPU
//! time (`CLOCK_THREAD_CPUTIME_ID`), so that other load on the machine
//! does not count; run the old and the new binary one after the other
//! for a before/after comparison. The runs allocate and free megabytes
//! each; glibc would hand them back to the kernel between runs and the
//! next run would fault the pages in again, so that the figures measured
//! the allocator's thresholds and the kernel's page faults (merge + pair
//! at 256 CPUs moved from 0.83 to 0.73 of 4 CPUs when records grew by 8
//! bytes): [`keep_freed_memory`] first.
//!
//! Options: `--quick` (0.3 s per figure instead of 3), `--only WORD` (the
//! figures whose name contains WORD; `--only none` just builds the
//! inputs), `--runs N` (exactly N timed runs per figure, for `perf stat`).

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use antinomie_abi as abi;
use antinomie_reader::decode::PmuTypes;
use antinomie_reader::filter::Filter;
use antinomie_reader::output::{Format, JsonSchema, WriterSink};
use antinomie_reader::pipeline::{self, Assembler, DrainMsg, Event, Merger, Pairer};
use antinomie_reader::ring::{ImageRing, RingConsumer, RingCounters, RingMemory};
use antinomie_reader::trace::{TraceHeader, TraceReader, TraceWriter};
use antinomie_reader_testkit::SplitMix64;

use antinomie_reader::ring::builder::{
    entry_record, exit_record, CaptureSpec, EntrySpec, ExitSpec, RingBuilder,
};

const SEED: u64 = 0x5eed_a471_0e00_0010;
const CALLS: u64 = 60_000;
const CPUS: u32 = 4;
/// The filter of the decode + filter + JSON figure: reads a header field,
/// the errno and an attr member, and keeps every call.
const FILTER: &str = "tid != 1 && !(args.attr_uptr.size == 99) && !(syscall.errno == 99)";

/// One random attr capture.
fn capture(rng: &mut SplitMix64) -> CaptureSpec {
    const SIZES: &[u32] = &[
        0, 8, 64, 72, 80, 96, 104, 112, 120, 128, 136, 137, 144, 200, 512, 4095, 4096, 4097,
    ];
    let size = if rng.below(4) == 0 {
        u32::try_from(rng.below(4098)).unwrap()
    } else {
        rng.pick(SIZES)
    };
    let status = rng.pick(&[
        abi::STATUS_COMPLETE,
        abi::STATUS_COMPLETE,
        abi::STATUS_COMPLETE,
        abi::STATUS_NULL_PTR,
        abi::STATUS_FAULT,
        abi::STATUS_TRUNCATED,
        abi::STATUS_INVALID_SIZE,
    ]);
    let len = match status {
        abi::STATUS_COMPLETE => size.clamp(8, 512),
        abi::STATUS_FAULT => u32::try_from(rng.below(136)).unwrap(),
        abi::STATUS_TRUNCATED => 512,
        _ => 0,
    };
    let mut data = rng.bytes(len as usize);
    if data.len() >= 8 {
        let ty = rng.pick(&[0u32, 1, 2, 3, 4, 5, 6, 999]);
        data[..4].copy_from_slice(&ty.to_le_bytes());
        data[4..8].copy_from_slice(&size.to_le_bytes());
    }
    CaptureSpec {
        arg: 0,
        kind: abi::KIND_PERF_EVENT_ATTR,
        status,
        flags: u32::try_from(rng.below(16)).unwrap(),
        declared_size: size,
        fault_offset: if status == abi::STATUS_FAULT { len } else { 0 },
        data,
    }
}

/// The records of the random workload, per CPU, in time order.
fn workload(calls: u64, cpus: u32) -> Vec<Vec<Vec<u8>>> {
    let mut rng = SplitMix64(SEED);
    let mut per_cpu: Vec<Vec<Vec<u8>>> = vec![Vec::new(); cpus as usize];
    let mut t = 1_000_000_000u64;
    for id in 1..=calls {
        t += 1 + rng.below(2000);
        let cpu = u32::try_from(rng.below(u64::from(cpus))).unwrap();
        let xcpu = if rng.below(4) == 0 {
            u32::try_from(rng.below(u64::from(cpus))).unwrap()
        } else {
            cpu
        };
        let ptr = rng.pick(&[0, 0x7ffd_0000_1000, 0x7ffd_0000_1ff8, 0xdead_0000_0000]);
        let tid = 100 + u32::try_from(rng.below(8)).unwrap();
        let e = EntrySpec {
            call_id: id,
            time_ns: t,
            start_ns: None,
            pid: 100,
            tid,
            flags: 0,
            args: [
                ptr,
                rng.pick(&[0, u64::MAX, 1234]),
                rng.pick(&[u64::MAX, 0, 1, 3]),
                rng.pick(&[u64::MAX, 3, 5]),
                rng.below(32),
                rng.next_u64(),
            ],
            items: vec![capture(&mut rng)],
        };
        let fail = rng.below(3) == 0;
        let dur = 100 + rng.below(5000);
        let x = ExitSpec {
            call_id: id,
            time_ns: t + dur,
            pid: 100,
            tid,
            ret: if fail {
                -i64::try_from(rng.pick(&[1u64, 2, 7, 9, 13, 14, 22, 95])).unwrap()
            } else {
                i64::try_from(3 + rng.below(100)).unwrap()
            },
            duration_ns: dur,
            flags: u32::try_from(rng.below(16)).unwrap(),
            required_size: if rng.below(8) == 0 { 136 } else { 0 },
            entry_pos: 0,
        };
        per_cpu[cpu as usize].push(entry_record(cpu, &e));
        per_cpu[xcpu as usize].push(exit_record(xcpu, &x));
    }
    // An EXIT on another CPU may precede its ENTRY's time on that CPU's
    // lane; the kernel writes each ring in time order.
    for lane in &mut per_cpu {
        lane.sort_by_key(|r| u64::from_le_bytes(r[24..32].try_into().unwrap()));
    }
    per_cpu
}

/// A trace file of the workload: drain passes of 256 records per CPU.
fn trace_file(per_cpu: &[Vec<Vec<u8>>]) -> Vec<u8> {
    let cpus: Vec<u32> = (0..u32::try_from(per_cpu.len()).unwrap()).collect();
    let header = TraceHeader {
        abi_version: abi::ABI_VERSION,
        window_ns: 0,
        cpus: cpus.clone(),
        pmus: PmuTypes::from_pairs([(6, "kprobe".to_owned()), (7, "uprobe".to_owned())]),
        realtime_offset_ns: None,
    };
    let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
    let mut at = vec![0usize; per_cpu.len()];
    loop {
        let mut any = false;
        for (cpu, lane) in per_cpu.iter().enumerate() {
            let end = (at[cpu] + 256).min(lane.len());
            if at[cpu] < end {
                any = true;
                let bytes = lane[at[cpu]..end].concat();
                let msg = DrainMsg::Records {
                    cpu: u32::try_from(cpu).unwrap(),
                    bytes,
                };
                pipeline::Recorder::record(&mut w, &msg).unwrap();
                at[cpu] = end;
            }
        }
        if !any {
            break;
        }
    }
    w.finish().unwrap()
}

/// A ring image borrowed, not copied, so that the drain is timed alone.
struct Borrowed<'a> {
    meta: abi::Meta,
    data: &'a [u8],
    consumer_pos: AtomicU64,
}

impl<'a> Borrowed<'a> {
    fn new(image: &'a [u8]) -> Self {
        let ring = ImageRing::from_bytes(image.to_vec()).unwrap();
        let meta = *ring.meta();
        let off = usize::try_from(meta.data_offset).unwrap();
        Borrowed {
            meta,
            data: &image[off..],
            consumer_pos: AtomicU64::new(ring.load_consumer_pos()),
        }
    }
}

impl RingMemory for Borrowed<'_> {
    fn cpu(&self) -> u32 {
        self.meta.cpu
    }
    fn data_size(&self) -> u64 {
        self.meta.data_size
    }
    fn read_data(&self, offset: usize, out: &mut [u8]) {
        let first = out.len().min(self.data.len() - offset);
        out[..first].copy_from_slice(&self.data[offset..offset + first]);
        let rest = out.len() - first;
        out[first..].copy_from_slice(&self.data[..rest]);
    }
    fn load_producer_pos(&self) -> u64 {
        self.meta.producer_pos
    }
    fn load_consumer_pos(&self) -> u64 {
        self.consumer_pos.load(Ordering::Relaxed)
    }
    fn store_consumer_pos(&self, pos: u64) {
        // ATOMICS: no producer to pair with.
        self.consumer_pos.store(pos, Ordering::Relaxed);
    }
    fn counters(&self) -> RingCounters {
        RingCounters::default()
    }
}

/// Counts bytes, keeps none.
struct Discard(u64);

impl io::Write for Discard {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0 += b.len() as u64;
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// How long and how often each figure is timed.
#[derive(Clone, Copy)]
struct Timing {
    /// At least this long...
    min: Duration,
    /// ... and at least this many runs; with `--runs N`, exactly N runs
    /// (for `perf stat`, whose counts must not depend on the speed).
    runs: u32,
    exact: bool,
}

/// This thread's CPU time: unlike the wall clock, it does not count the
/// time other processes held the CPU (this machine's 2 cores are shared).
fn cpu_time() -> Duration {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        u64::try_from(ts.tv_sec).unwrap(),
        u32::try_from(ts.tv_nsec).unwrap(),
    )
}

/// Runs `f` as `t` says; returns the best CPU seconds per run.
fn best(t: Timing, mut f: impl FnMut()) -> f64 {
    best_of(t, || (), |()| f())
}

/// Runs `f` on what `setup` makes, as `t` says, timing `f` alone;
/// returns the best CPU seconds per run.
fn best_of<I>(t: Timing, mut setup: impl FnMut() -> I, mut f: impl FnMut(I)) -> f64 {
    let start = Instant::now();
    let mut best = f64::MAX;
    let mut runs = 0;
    while runs < t.runs || (!t.exact && start.elapsed() < t.min) {
        let input = setup();
        let t = cpu_time();
        f(input);
        // A thread's CPU time never goes back.
        best = best.min(cpu_time().saturating_sub(t).as_secs_f64());
        runs += 1;
    }
    best
}

/// `reader show TRACE [--filter FILTER] --format F --json-schema S`:
/// returns output bytes and the calls shown.
fn show(
    trace_bytes: &[u8],
    format: Format,
    schema: JsonSchema,
    filter: Option<&str>,
) -> (u64, u64) {
    // As `reader show` reads a trace: frame by frame, streaming.
    let mut t = TraceReader::new(trace_bytes).unwrap();
    let header = t.header().clone();
    let mut sink =
        WriterSink::new(Discard(0), format, header.pmus.clone(), false).with_json_schema(schema);
    let mut a = Assembler::new(&header.cpus, header.window_ns, &mut sink);
    if let Some(f) = filter {
        a.set_filter(Box::new(
            Filter::parse(f).unwrap().with_pmus(header.pmus.clone()),
        ));
    }
    let summary = pipeline::replay(t.by_ref().map(Result::unwrap), a).unwrap();
    assert!(t.complete());
    (sink.into_inner().0, summary.calls() - summary.filtered_out)
}

/// `records` dealt round robin over `cpus` lanes, each lane's bytes as
/// one drain pass would hand them over, each record claiming its lane's
/// CPU (the merge skips one that claims another).
fn lanes(records: &[Vec<u8>], cpus: u32) -> Vec<Vec<u8>> {
    let mut lanes: Vec<Vec<u8>> = vec![Vec::new(); cpus as usize];
    let cpu_at = std::mem::offset_of!(abi::RecordHeader, cpu);
    for (i, r) in records.iter().enumerate() {
        let lane = &mut lanes[i % cpus as usize];
        let at = lane.len() + cpu_at;
        lane.extend_from_slice(r);
        let cpu = u32::try_from(i % cpus as usize).unwrap();
        lane[at..at + 4].copy_from_slice(&cpu.to_le_bytes());
    }
    lanes
}

/// Merge + pair of `lanes`, no decoding: each lane moved in whole, as a
/// drain pass is (`push_batch`, no copy).
fn merge_pair(lanes: Vec<Vec<u8>>) -> u64 {
    let ids: Vec<u32> = (0..u32::try_from(lanes.len()).unwrap()).collect();
    let mut m = Merger::new(&ids, 0);
    let mut errors = Vec::new();
    for (cpu, bytes) in lanes.into_iter().enumerate() {
        m.push_batch(u32::try_from(cpu).unwrap(), bytes, &mut errors);
        assert!(errors.is_empty(), "{errors:?}");
        m.done(u32::try_from(cpu).unwrap());
    }
    let mut p = Pairer::new();
    let mut out: Vec<Event> = Vec::new();
    let mut n = 0;
    while let Some(r) = m.pop(false) {
        p.push(r, &mut out);
        n += out.len() as u64;
        out.clear();
    }
    n + p.finish().len() as u64
}

/// Keeps what the process frees in its heap: no block served by its own
/// `mmap` below 32 MiB (glibc's most), no trimming of the heap's top.
fn keep_freed_memory() {
    // SAFETY: mallopt() only sets the allocator's parameters, before any
    // other thread runs.
    let set = unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20) == 1
            && libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX) == 1
    };
    assert!(set, "mallopt refused the thresholds");
}

#[allow(clippy::cast_precision_loss)]
fn main() {
    keep_freed_memory();
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    // `--only WORD`: only the figures whose name contains WORD (profiling).
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map_or("", String::as_str);
    let exact_runs = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok());
    let min = Timing {
        min: Duration::from_millis(if quick { 300 } else { 3000 }),
        runs: exact_runs.unwrap_or(3),
        exact: exact_runs.is_some(),
    };
    let per_cpu = workload(CALLS, CPUS);
    let records: u64 = per_cpu.iter().map(|l| l.len() as u64).sum();
    let trace_bytes = trace_file(&per_cpu);
    println!(
        "seeded random trace: {CALLS} calls, {records} records on {CPUS} CPUs, {} bytes",
        trace_bytes.len()
    );
    for (name, format, schema, filter) in [
        ("json, filter", Format::Json, JsonSchema::Full, Some(FILTER)),
        ("json", Format::Json, JsonSchema::Full, None),
        (
            "json compact, filter",
            Format::Json,
            JsonSchema::Compact,
            Some(FILTER),
        ),
        ("json compact", Format::Json, JsonSchema::Compact, None),
        ("text", Format::Text, JsonSchema::Full, None),
    ] {
        if !format!("show {name}").contains(only) {
            continue;
        }
        let mut out = (0, 0);
        let s = best(min, || out = show(&trace_bytes, format, schema, filter));
        println!(
            "  show {name:<21} {:>6.3} M calls/s  ({} calls shown, {:.0} bytes/call)",
            CALLS as f64 / s / 1e6,
            out.1,
            out.0 as f64 / out.1.max(1) as f64
        );
    }

    if "raw drain".contains(only) {
        raw_drain(&per_cpu, min);
    }
    if "merge+pair".contains(only) {
        merge_pair_figures(&per_cpu, min);
    }
}

/// Raw drain: copy every record out of 4 ring images of 1 MiB.
#[allow(clippy::cast_precision_loss)]
fn raw_drain(per_cpu: &[Vec<Vec<u8>>], min: Timing) {
    let mut rings: Vec<RingBuilder> = (0..CPUS).map(|c| RingBuilder::new(c, 1 << 20)).collect();
    let mut drained = 0u64;
    'fill: for (cpu, lane) in per_cpu.iter().enumerate() {
        for r in lane {
            if rings[cpu].producer_pos() + r.len() as u64 > (1 << 20) {
                continue 'fill;
            }
            rings[cpu].raw(r);
            drained += 1;
        }
    }
    let images: Vec<Vec<u8>> = rings.iter().map(RingBuilder::image).collect();
    let mut batch = Vec::with_capacity(1 << 21);
    let mut errors = Vec::new();
    let s = best(min, || {
        for image in &images {
            let mut c = RingConsumer::new(Borrowed::new(image));
            batch.clear();
            c.drain_into(&mut batch, &mut errors);
        }
    });
    assert!(errors.is_empty());
    println!(
        "  raw drain           {:>6.3} M records/s  ({drained} records, 4 x 1 MiB images)",
        drained as f64 / s / 1e6
    );
}

/// Merge + pair alone, the same records spread over more CPUs.
#[allow(clippy::cast_precision_loss)]
fn merge_pair_figures(per_cpu: &[Vec<Vec<u8>>], min: Timing) {
    let all: Vec<Vec<u8>> = {
        let mut v: Vec<Vec<u8>> = per_cpu.iter().flatten().cloned().collect();
        v.sort_by_key(|r| u64::from_le_bytes(r[24..32].try_into().unwrap()));
        v
    };
    for cpus in [4u32, 64, 256] {
        // The lanes are built outside the timed part: that copy is the
        // drain's, measured by "raw drain".
        let s = best_of(
            min,
            || lanes(&all, cpus),
            |l| {
                merge_pair(l);
            },
        );
        println!(
            "  merge+pair {cpus:>3} CPUs {:>6.3} M records/s",
            all.len() as f64 / s / 1e6
        );
    }
}
