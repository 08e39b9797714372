// SPDX-License-Identifier: GPL-2.0-only
//! Writes the seed corpora: `DIR/ring/` the golden ring images,
//! `DIR/trace/` trace files recorded from them (whole, and cut inside its
//! last frame), `DIR/filter/` the filters of the reader's documentation.
//!
//! usage: fuzz-seeds DIR

use std::path::{Path, PathBuf};

use antinomie_reader::decode::PmuTypes;
use antinomie_reader::pipeline::{self, Recorder};
use antinomie_reader::ring::ImageRing;
use antinomie_reader::trace::{TraceHeader, TraceWriter};

const FILTERS: &[&str] = &[
    "syscall.errno == E2BIG",
    "args.flags & PERF_FLAG_FD_CLOEXEC",
    "syscall.errno == E2BIG && args.attr_uptr.size > 136",
    "ret in {-EINVAL, -E2BIG} && !(args.flags & PERF_FLAG_FD_CLOEXEC)",
    "args.attr_uptr.config == PERF_COUNT_SW_CPU_CLOCK",
    "exists(args.attr_uptr.bp_len) || arg0.status == complete",
    "syscall.errno_name == \"EINVAL\" && args.flags_names == \"PERF_FLAG_FD_CLOEXEC\"",
    "args.attr_uptr.sample_type & PERF_SAMPLE_IP && tid != 1",
];

fn main() {
    let out = PathBuf::from(std::env::args().nth(1).expect("usage: fuzz-seeds DIR"));
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data");
    for sub in ["ring", "trace", "filter"] {
        std::fs::create_dir_all(out.join(sub)).expect("creating the seed directories");
    }
    let mut sets = vec![data.join("synthetic")];
    for d in std::fs::read_dir(data.join("guest")).expect("reader/tests/data/guest") {
        sets.push(d.expect("a directory entry").path());
    }
    for (n, set) in sets.iter().enumerate() {
        let mut images: Vec<PathBuf> = std::fs::read_dir(set)
            .expect("a golden set")
            .map(|e| e.expect("a directory entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "ring"))
            .collect();
        images.sort();
        let mut rings = Vec::new();
        for (i, p) in images.iter().enumerate() {
            let bytes = std::fs::read(p).expect("a golden image");
            std::fs::write(out.join(format!("ring/{n}-{i}.ring")), &bytes).expect("a seed");
            rings.push(ImageRing::from_bytes(bytes).expect("a golden image"));
        }
        let cpus: Vec<u32> = rings.iter().map(|r| r.meta().cpu).collect();
        let header = TraceHeader {
            abi_version: antinomie_abi::ABI_VERSION,
            window_ns: 0,
            cpus,
            pmus: PmuTypes::from_pairs([(6, "kprobe".to_owned())]),
            // Ring images hold no wall clock.
            realtime_offset_ns: None,
        };
        let mut w = TraceWriter::new(Vec::new(), &header).expect("a trace in memory");
        for m in pipeline::drain_once(rings) {
            w.record(&m).expect("a trace in memory");
        }
        let trace = w.finish().expect("a trace in memory");
        std::fs::write(out.join(format!("trace/{n}.trace")), &trace).expect("a seed");
        std::fs::write(
            out.join(format!("trace/{n}-cut.trace")),
            &trace[..trace.len() - 30],
        )
        .expect("a seed");
    }
    for (i, f) in FILTERS.iter().enumerate() {
        std::fs::write(out.join(format!("filter/{i}.txt")), f).expect("a seed");
    }
}
