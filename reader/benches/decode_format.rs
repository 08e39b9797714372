// SPDX-License-Identifier: GPL-2.0-only
//! Decode + format throughput, in records per second, for text and JSON.
//!
//! Not a test: run it with
//!
//! ```sh
//! cargo bench -p antinomie-reader --bench decode_format
//! ```
//!
//! It builds synthetic rings with the library's `ring::builder` (4 CPUs,
//! 1 MiB each, the golden scenario's call shapes repeated until the rings
//! are nearly full), then times the whole path `reader show` takes:
//! validating and copying the records out of the rings, parsing, merging
//! by time, pairing, decoding every attr member and formatting, into a sink
//! that discards the bytes. Golden images from `reader/tests/data/**/*.ring`
//! are timed too. `BENCHMARKS.md` records `show_trace`'s figures for the
//! same path ("Reader throughput"), not this bench's: run it to compare
//! two versions of the decoder.

use std::io;
use std::time::{Duration, Instant};

use antinomie_abi as abi;
use antinomie_reader::decode::PmuTypes;
use antinomie_reader::output::{Format, WriterSink};
use antinomie_reader::pipeline::{self, Assembler};
use antinomie_reader::ring::ImageRing;

use antinomie_reader::ring::builder::{
    args, attr, set, CaptureSpec, EntrySpec, ExitSpec, RingBuilder,
};

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

fn attrs() -> Vec<Vec<u8>> {
    let mut sw = attr(136);
    set(&mut sw, "type", 1);
    set(&mut sw, "disabled", 1);
    set(&mut sw, "exclude_kernel", 1);
    let mut hw = attr(136);
    set(&mut hw, "type", 3);
    set(&mut hw, "config", 0x1_0002);
    set(&mut hw, "freq", 1);
    set(&mut hw, "sample_freq", 4000);
    set(&mut hw, "sample_type", 0x1_0107);
    set(&mut hw, "read_format", 0xf);
    let mut bp = attr(72);
    set(&mut bp, "type", 5);
    set(&mut bp, "bp_type", 3);
    set(&mut bp, "bp_addr", 0x55af_5005_703c);
    set(&mut bp, "bp_len", 4);
    vec![sw, hw, bp[..72].to_vec()]
}

/// `cpus` rings of `size` bytes, filled with calls (ENTRY on one CPU,
/// EXIT on the next); returns the images and the record count.
fn synthetic(cpus: u32, size: usize) -> (Vec<Vec<u8>>, u64) {
    let attrs = attrs();
    let mut rings: Vec<RingBuilder> = (0..cpus).map(|c| RingBuilder::new(c, size)).collect();
    let mut records = 0;
    let mut id = 0u64;
    let room = |r: &RingBuilder| r.producer_pos() + 1024 <= size as u64;
    'fill: loop {
        for cpu in 0..cpus as usize {
            if !room(&rings[cpu]) || !room(&rings[(cpu + 1) % cpus as usize]) {
                break 'fill;
            }
            id += 1;
            let t = 1_000_000_000 + id * 1000;
            let a = &attrs[usize::try_from(id).unwrap() % attrs.len()];
            rings[cpu].entry(&EntrySpec {
                call_id: id,
                time_ns: t,
                pid: 100,
                tid: 100 + u32::try_from(cpu).unwrap(),
                args: args(0x7ffd_0000_1000, 0, -1, -1, 8),
                items: vec![CaptureSpec::complete(a)],
                ..Default::default()
            });
            let fail = id.is_multiple_of(4);
            rings[(cpu + 1) % cpus as usize].exit(&ExitSpec {
                call_id: id,
                time_ns: t + 500,
                pid: 100,
                tid: 100 + u32::try_from(cpu).unwrap(),
                ret: if fail { -22 } else { 3 },
                duration_ns: 450,
                flags: if fail { 0 } else { abi::EXIT_F_ATTR_COPIED },
                ..Default::default()
            });
            records += 2;
        }
    }
    (rings.iter().map(RingBuilder::image).collect(), records)
}

/// Runs the show path over `images` until `min` has passed; returns
/// records/s and output bytes per record.
fn measure(images: &[Vec<u8>], records: u64, format: Format, min: Duration) -> (f64, f64) {
    let mut cpus: Vec<u32> = Vec::new();
    for i in images {
        cpus.push(ImageRing::from_bytes(i.clone()).unwrap().meta().cpu);
    }
    cpus.sort_unstable();
    let start = Instant::now();
    let mut rounds = 0u64;
    let mut bytes = 0u64;
    while rounds == 0 || start.elapsed() < min {
        let rings: Vec<ImageRing> = images
            .iter()
            .map(|i| ImageRing::from_bytes(i.clone()).unwrap())
            .collect();
        let msgs = pipeline::drain_once(rings);
        let mut sink = WriterSink::new(Discard(0), format, PmuTypes::none(), false);
        pipeline::replay(msgs, Assembler::new(&cpus, 0, &mut sink)).unwrap();
        bytes += sink.into_inner().0;
        rounds += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    #[allow(clippy::cast_precision_loss)]
    let per_s = (records * rounds) as f64 / secs;
    #[allow(clippy::cast_precision_loss)]
    let per_rec = bytes as f64 / (records * rounds) as f64;
    (per_s, per_rec)
}

fn golden_images() -> Vec<(String, Vec<Vec<u8>>)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut sets = Vec::new();
    let mut dirs = vec![root.join("synthetic")];
    if let Ok(d) = std::fs::read_dir(root.join("guest")) {
        dirs.extend(d.flatten().map(|e| e.path()));
    }
    for dir in dirs {
        let mut images: Vec<_> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "ring"))
            .collect();
        images.sort();
        if !images.is_empty() {
            let name = dir.strip_prefix(&root).unwrap().display().to_string();
            sets.push((
                name,
                images.iter().map(|p| std::fs::read(p).unwrap()).collect(),
            ));
        }
    }
    sets
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let min = if quick {
        Duration::from_millis(200)
    } else {
        Duration::from_secs(3)
    };
    let (images, records) = synthetic(4, 1 << 20);
    println!(
        "synthetic: 4 CPUs x 1 MiB, {records} records ({} calls)",
        records / 2
    );
    for (format, name) in [(Format::Text, "text"), (Format::Json, "json")] {
        let (rate, per) = measure(&images, records, format, min);
        println!("  {name:<4}  {rate:>12.0} records/s  ({per:.0} output bytes/record)");
    }
    for (name, images) in golden_images() {
        let rings: Vec<ImageRing> = images
            .iter()
            .map(|i| ImageRing::from_bytes(i.clone()).unwrap())
            .collect();
        let records: u64 = pipeline::drain_once(rings)
            .iter()
            .map(|m| match m {
                pipeline::DrainMsg::Done { stats, .. } => stats.records,
                _ => 0,
            })
            .sum();
        println!("golden {name}: {records} records");
        for (format, fname) in [(Format::Text, "text"), (Format::Json, "json")] {
            let (rate, per) = measure(&images, records, format, min);
            println!("  {fname:<4}  {rate:>12.0} records/s  ({per:.0} output bytes/record)");
        }
    }
}
