// SPDX-License-Identifier: GPL-2.0-only
//! What the tests of the reader library and of the `reader` binary share:
//! the scenario of calls the golden files come from (one of each record
//! shape), the golden-file comparison, the guest's golden images, and
//! helpers that decode ring images the way `reader` does.
//!
//! Not a product: a dev-dependency of `antinomie-reader` and
//! `antinomie-reader-cli`. The ring images themselves are built with the
//! library's [`antinomie_reader::ring::builder`].

// Every helper panics on a bad fixture or a failed step: that is how the
// test that called it fails, and the panic message says where.
#![allow(clippy::missing_panics_doc)]

use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use antinomie_abi as abi;
use antinomie_reader::call::Call;
use antinomie_reader::decode::PmuTypes;
use antinomie_reader::output::{Format, JsonSchema, WriterSink};
use antinomie_reader::pipeline::{self, Assembler, Mode, Recorder, Sink, Summary};
use antinomie_reader::record::LostRecord;
use antinomie_reader::ring::{ImageRing, RingConsumer};
use antinomie_reader::trace::{TraceHeader, TraceWriter};

use antinomie_reader::ring::builder::{
    args, attr, set, CaptureSpec, EntrySpec, ExitSpec, RingBuilder,
};

/// `reader/tests/data`.
#[must_use]
pub fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data")
}

/// The `cpuN.ring` images the guest captured for run `name`
/// (`tests/data/guest/NAME/`), in order.
#[must_use]
pub fn guest_rings(name: &str) -> Vec<PathBuf> {
    let mut rings: Vec<PathBuf> = std::fs::read_dir(data_dir().join("guest").join(name))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ring"))
        .collect();
    rings.sort();
    rings
}

/// A trace file of the guest's run `name`, recorded from its ring images
/// through the live pipeline, with `realtime_offset_ns` in its header.
#[must_use]
pub fn guest_trace(name: &str, realtime_offset_ns: Option<i64>) -> Vec<u8> {
    let images: Vec<Vec<u8>> = guest_rings(name)
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    let header = TraceHeader {
        abi_version: abi::ABI_VERSION,
        window_ns: pipeline::DEFAULT_WINDOW_NS,
        cpus: (0..u32::try_from(images.len()).unwrap()).collect(),
        pmus: PmuTypes::none(),
        realtime_offset_ns,
    };
    let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
    run_images(&images, Format::Json, &header.pmus, Some(&mut w));
    w.finish().unwrap()
}

/// Whether to rewrite golden files instead of comparing
/// (`ANTINOMIE_UPDATE_GOLDEN=1 cargo test`).
#[must_use]
pub fn updating() -> bool {
    std::env::var_os("ANTINOMIE_UPDATE_GOLDEN").is_some_and(|v| v == "1")
}

/// Compares `actual` with the golden file `name` under `tests/data`, byte
/// for byte (or rewrites it when updating).
pub fn golden(name: &str, actual: &[u8]) {
    let path = data_dir().join(name);
    if updating() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with ANTINOMIE_UPDATE_GOLDEN=1 to create it)",
            path.display()
        )
    });
    if expected != actual {
        let exp = String::from_utf8_lossy(&expected);
        let act = String::from_utf8_lossy(actual);
        for (i, (e, a)) in exp.lines().zip(act.lines()).enumerate() {
            assert_eq!(e, a, "{name}: first difference at line {}", i + 1);
        }
        panic!(
            "{name}: {} lines expected, {} produced",
            exp.lines().count(),
            act.lines().count()
        );
    }
}

/// Decodes ring images as `reader show` does (one pass per ring, then the
/// replay), returning the output and the summary.
#[must_use]
pub fn show_images(images: &[Vec<u8>], format: Format, pmus: &PmuTypes) -> (String, Summary) {
    show_images_into(
        images,
        WriterSink::new(Vec::new(), format, pmus.clone(), false),
    )
}

/// [`show_images`] as JSON Lines in `schema`.
#[must_use]
pub fn show_images_json(images: &[Vec<u8>], schema: JsonSchema, pmus: &PmuTypes) -> String {
    let sink =
        WriterSink::new(Vec::new(), Format::Json, pmus.clone(), false).with_json_schema(schema);
    show_images_into(images, sink).0
}

/// The replay of [`show_images`] into `sink`.
fn show_images_into(images: &[Vec<u8>], mut sink: WriterSink<Vec<u8>>) -> (String, Summary) {
    let rings: Vec<ImageRing> = images
        .iter()
        .map(|i| ImageRing::from_bytes(i.clone()).unwrap())
        .collect();
    let mut cpus: Vec<u32> = rings.iter().map(|r| r.meta().cpu).collect();
    cpus.sort_unstable();
    let msgs = pipeline::drain_once(rings);
    let summary = pipeline::replay(msgs, Assembler::new(&cpus, 0, &mut sink)).unwrap();
    (String::from_utf8(sink.into_inner()).unwrap(), summary)
}

/// A consumer of each ring image.
#[must_use]
pub fn consumers(images: &[Vec<u8>]) -> Vec<RingConsumer<ImageRing>> {
    images
        .iter()
        .map(|i| RingConsumer::new(ImageRing::from_bytes(i.clone()).unwrap()))
        .collect()
}

/// Decodes ring images with the threaded live pipeline (a drain thread,
/// the calling thread assembling), recording the messages to `recorder`.
pub fn run_images(
    images: &[Vec<u8>],
    format: Format,
    pmus: &PmuTypes,
    recorder: Option<&mut dyn Recorder>,
) -> (String, Summary) {
    let rings = consumers(images);
    let mut cpus: Vec<u32> = rings.iter().map(RingConsumer::cpu).collect();
    cpus.sort_unstable();
    let mut sink = WriterSink::new(Vec::new(), format, pmus.clone(), false);
    let summary = pipeline::run(
        rings,
        Mode::Once,
        Assembler::new(&cpus, pipeline::DEFAULT_WINDOW_NS, &mut sink),
        recorder,
    )
    .unwrap();
    (String::from_utf8(sink.into_inner()).unwrap(), summary)
}

/// A file in the temporary directory, removed when dropped.
#[derive(Debug)]
pub struct ScratchFile(pub PathBuf);

impl ScratchFile {
    /// A new, unique path for `what` (nothing is created).
    #[must_use]
    pub fn new(what: &str) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        ScratchFile(
            std::env::temp_dir().join(format!("antinomie-{what}-{}-{n}", std::process::id())),
        )
    }

    /// Creates it empty, for reading and writing.
    ///
    /// # Panics
    /// If it cannot be created.
    #[must_use]
    pub fn create(&self) -> File {
        File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&self.0)
            .unwrap()
    }
}

impl Drop for ScratchFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The header [`record_trace`] writes: CPUs 0 and 1, PMU type 9 named
/// `kprobe`, no wall clock.
#[must_use]
pub fn trace_header() -> TraceHeader {
    TraceHeader {
        abi_version: abi::ABI_VERSION,
        window_ns: pipeline::DEFAULT_WINDOW_NS,
        cpus: vec![0, 1],
        pmus: PmuTypes::from_pairs([(9, "kprobe".to_owned())]),
        realtime_offset_ns: None,
    }
}

/// A trace file of ring images recorded as `reader -w` records one (the
/// threaded live pipeline writing the file as it drains and decoding it
/// behind, [`pipeline::run_to_trace`]; header [`trace_header`]), and the
/// live run's output in `format`.
///
/// # Panics
/// If the scratch file cannot be used or the run fails.
#[must_use]
pub fn record_trace(images: &[Vec<u8>], format: Format) -> (Vec<u8>, String) {
    let header = trace_header();
    let scratch = ScratchFile::new("trace");
    let file = scratch.create();
    let mut sink = WriterSink::new(Vec::new(), format, header.pmus.clone(), false);
    pipeline::run_to_trace(
        consumers(images),
        Mode::Once,
        Assembler::new(&header.cpus, header.window_ns, &mut sink),
        &file,
        &header,
    )
    .unwrap();
    let out = String::from_utf8(sink.into_inner()).unwrap();
    (std::fs::read(&scratch.0).unwrap(), out)
}

/// Keeps the calls.
#[derive(Default)]
struct Calls(Vec<Call>);

impl Sink for Calls {
    fn call(&mut self, c: &Call) -> std::io::Result<()> {
        self.0.push(c.clone());
        Ok(())
    }
    fn lost(&mut self, _: &LostRecord) -> std::io::Result<()> {
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The calls of ring images, in output order.
#[must_use]
pub fn calls_of(images: &[Vec<u8>]) -> Vec<Call> {
    let rings: Vec<ImageRing> = images
        .iter()
        .map(|i| ImageRing::from_bytes(i.clone()).unwrap())
        .collect();
    let mut cpus: Vec<u32> = rings.iter().map(|r| r.meta().cpu).collect();
    cpus.sort_unstable();
    let mut sink = Calls::default();
    pipeline::replay(
        pipeline::drain_once(rings),
        Assembler::new(&cpus, 0, &mut sink),
    )
    .unwrap();
    sink.0
}

const T0: u64 = 5_000_000_000;
const PID: u32 = 100;
const ATTR_PTR: u64 = 0x7ffd_1234_5000;
const CLOEXEC: u64 = 8;

/// The id of the `seq`-th call named by `cpu`, as the kernel builds it.
fn id(cpu: u32, seq: u64) -> u64 {
    u64::from(cpu) << abi::CALL_ID_SEQ_BITS | seq
}

fn sw_clock(size: u32) -> Vec<u8> {
    let mut a = attr(size);
    set(&mut a, "type", 1);
    set(&mut a, "config", 0);
    set(&mut a, "disabled", 1);
    set(&mut a, "exclude_kernel", 1);
    a
}

/// One call: ENTRY on the ring of the CPU that named it (its id's), EXIT
/// on any.
struct CallSpec {
    id: u64,
    tid: u32,
    /// When it began (the ENTRY's `start_ns`).
    start: u64,
    args: [u64; 6],
    item: Option<CaptureSpec>,
    ret: i64,
    exit_flags: u32,
    required_size: u32,
    /// Where its ENTRY was written or offered.
    entry_pos: u64,
}

fn call(id: u64, start: u64, args: [u64; 6], item: Option<CaptureSpec>, ret: i64) -> CallSpec {
    CallSpec {
        id,
        tid: PID + u32::try_from(id % 3).unwrap(),
        start,
        args,
        item,
        ret,
        exit_flags: 0,
        required_size: 0,
        entry_pos: 0,
    }
}

impl CallSpec {
    /// The ENTRY, written 500 ns after the call began (once the kernel
    /// read the attr).
    fn entry(&self) -> EntrySpec {
        EntrySpec {
            call_id: self.id,
            time_ns: self.entry_time(),
            start_ns: Some(self.start),
            pid: PID,
            tid: self.tid,
            flags: 0,
            args: self.args,
            items: self.item.iter().cloned().collect(),
        }
    }

    fn entry_time(&self) -> u64 {
        self.start + 500
    }

    /// The EXIT, its duration from the call's start as the kernel
    /// measures it.
    fn exit(&self) -> ExitSpec {
        let seq = self.id & abi::CALL_ID_SEQ_MASK;
        let duration_ns = 8_500 + seq * 100;
        ExitSpec {
            call_id: self.id,
            time_ns: self.start + duration_ns,
            pid: PID,
            tid: self.tid,
            ret: self.ret,
            duration_ns,
            flags: self.exit_flags,
            required_size: self.required_size,
            entry_pos: self.entry_pos,
        }
    }

    /// Writes the ENTRY to `r` (the ring of the CPU that named the call).
    fn write_entry(&mut self, r: &mut RingBuilder) {
        self.entry_pos = r.entry(&self.entry());
    }

    /// Writes the ENTRY and then the EXIT to `r`: a call that stays on the
    /// CPU that named it.
    fn write_both(&mut self, r: &mut RingBuilder) {
        self.write_entry(r);
        r.exit(&self.exit());
    }
}

/// Two rings (CPUs 0 and 1, 16 KiB each, CPU 1's wrapping around the end
/// of its data area and read from a position an earlier reader left)
/// holding one of each record shape: successes and errors, every capture
/// status (a fault of the size word, a fault of the kernel's copy, which
/// has no offset), E2BIG with and without write-back, a call that
/// migrates, a LOST record, an EXIT whose ENTRY was lost, an EXIT whose
/// ENTRY is missing (in a ring not read), an EXIT whose ENTRY an earlier
/// reader read, an unfinished call, a group leader, a compat call, unknown
/// bits and a dynamic PMU type.
#[allow(clippy::too_many_lines)]
#[must_use]
pub fn scenario() -> Vec<RingBuilder> {
    const R1_START: u64 = 16384 * 3 - 1024;
    let mut r0 = RingBuilder::new(0, 16384);
    let mut r1 = RingBuilder::new(1, 16384).start_at(R1_START);
    let at = |i: u64| T0 + i * 100_000;

    // 1. The README's call: a software clock, FD_CLOEXEC.
    let mut c = call(
        id(0, 1),
        at(1),
        args(ATTR_PTR, 0, -1, -1, CLOEXEC),
        Some(CaptureSpec::complete(&sw_clock(136))),
        3,
    );
    c.write_both(&mut r0);

    // 2. Flags outside PERF_FLAG_ALL: the attr is not read.
    let mut c = call(
        id(1, 2),
        at(2),
        args(0x1000, 0, -1, -1, 1 << 20),
        Some(CaptureSpec::empty(abi::STATUS_NOT_APPLICABLE, 0)),
        -22,
    );
    c.write_both(&mut r1);

    // 3. NULL attr.
    let mut c = call(
        id(0, 3),
        at(3),
        args(0, 0, -1, -1, 0),
        Some(CaptureSpec::empty(abi::STATUS_NULL_PTR, 0)),
        -14,
    );
    c.write_both(&mut r0);

    // 4. size 1: invalid, E2BIG, the kernel writes 136 back.
    let mut c = call(
        id(1, 4),
        at(4),
        args(ATTR_PTR, 0, -1, -1, 0),
        Some(CaptureSpec::empty(abi::STATUS_INVALID_SIZE, 1)),
        -7,
    );
    c.exit_flags = abi::EXIT_F_SIZE_WRITTEN;
    c.required_size = 136;
    c.write_both(&mut r1);

    // 5. Migrates: ENTRY on CPU 0, EXIT on CPU 1. A cache event with a
    // frequency, unknown sample_type bits and a reserved bit set.
    let mut a = attr(128);
    set(&mut a, "type", 3);
    set(&mut a, "config", 0x1_0002);
    set(&mut a, "freq", 1);
    set(&mut a, "sample_freq", 4000);
    set(&mut a, "sample_type", 0x7 | (1 << 30));
    set(&mut a, "read_format", 0x3);
    set(&mut a, "precise_ip", 2);
    set(&mut a, "__reserved_1", 0x10);
    set(&mut a, "sig_data", 0xdead);
    set(&mut a, "config3", 0x55); // beyond size 128: absent
    let mut c = call(
        id(0, 5),
        at(5),
        args(ATTR_PTR, 0, -1, -1, CLOEXEC),
        Some(CaptureSpec::complete(&a[..128])),
        -22,
    );
    c.write_entry(&mut r0);
    r1.exit(&c.exit());

    // 6. size 200 with a non-zero tail: truncated, E2BIG, nothing copied;
    // the kernel's store of 136 faults (read-only memory).
    let mut item = CaptureSpec::empty(abi::STATUS_TRUNCATED, 200);
    item.flags = abi::CAPTURE_F_TAIL_NONZERO;
    let mut c = call(
        id(0, 6),
        at(6),
        args(ATTR_PTR, 0, -1, -1, 0),
        Some(item),
        -7,
    );
    c.exit_flags = abi::EXIT_F_SIZE_WRITTEN | abi::EXIT_F_SIZE_STORE_FAULT;
    c.required_size = 136;
    c.write_both(&mut r0);

    // 7. A VER0 breakpoint: bp_len (offset 64) is absent.
    let mut a = attr(64);
    set(&mut a, "type", 5);
    set(&mut a, "sample_period", 1);
    set(&mut a, "bp_type", 3);
    set(&mut a, "bp_addr", 0x55af_5005_703c);
    set(&mut a, "exclude_kernel", 1);
    set(&mut a, "exclude_hv", 1);
    let mut c = call(
        id(1, 7),
        at(7),
        args(ATTR_PTR, 0, -1, -1, CLOEXEC),
        Some(CaptureSpec::complete(&a[..64])),
        4,
    );
    c.write_both(&mut r1);

    // 8. size 200 with a zero tail: truncated, the kernel's copy of the
    // first 136 bytes.
    let a = sw_clock(200);
    let mut item = CaptureSpec::complete(&a);
    item.status = abi::STATUS_TRUNCATED;
    item.flags = abi::CAPTURE_F_TAIL_ZERO;
    let mut c = call(
        id(0, 8),
        at(8),
        args(ATTR_PTR, 0, -1, -1, CLOEXEC),
        Some(item),
        5,
    );
    c.exit_flags = abi::EXIT_F_ATTR_COPIED;
    c.write_both(&mut r0);

    // 9. The kernel's copy of a VER8 attr faulted (at offset 72, say): it
    // does not say where, and keeps nothing.
    let item = CaptureSpec::empty(abi::STATUS_FAULT, 136);
    let mut c = call(
        id(1, 9),
        at(9),
        args(ATTR_PTR, 0, -1, -1, 0),
        Some(item),
        -14,
    );
    c.write_both(&mut r1);

    // 10. E2BIG from perf_event_validate_size: copied, no size stored.
    let mut a = sw_clock(136);
    set(&mut a, "sample_type", 0x1ff_ffff);
    set(&mut a, "read_format", 0xf);
    let mut c = call(
        id(0, 10),
        at(10),
        args(ATTR_PTR, 0, -1, 3, 0),
        Some(CaptureSpec::complete(&a)),
        -7,
    );
    c.exit_flags = abi::EXIT_F_ATTR_COPIED;
    c.write_both(&mut r0);

    // 11. Both records of a call dropped on CPU 1: a LOST record follows.
    let c = call(id(1, 11), at(11), args(ATTR_PTR, 0, -1, -1, 0), None, 0);
    r1.drop_record(abi::LOST_RING_FULL, c.id, c.entry_time());
    r1.drop_record(abi::LOST_RING_FULL, c.id, c.exit().time_ns);

    // 12. ENTRY dropped on CPU 0; its EXIT says so.
    let mut c = call(id(0, 12), at(12), args(ATTR_PTR, 0, -1, -1, 0), None, 6);
    c.entry_pos = r0.drop_record(abi::LOST_RING_FULL, c.id, c.entry_time());
    c.exit_flags = abi::EXIT_F_ENTRY_LOST | abi::EXIT_F_ATTR_COPIED;
    r0.exit(&c.exit());

    // 13. A group member: pid -1 on CPU 0, group_fd 3, FD_OUTPUT|FD_CLOEXEC
    // and an unknown flag bit; a dynamic PMU type.
    let mut a = attr(136);
    set(&mut a, "type", 9);
    set(&mut a, "config", 0x1);
    set(&mut a, "config1", 0x7fff_0000_1000);
    set(&mut a, "config2", 0x40);
    set(&mut a, "clockid", 1);
    set(&mut a, "use_clockid", 1);
    set(&mut a, "branch_sample_type", (1 << 25) | 1);
    set(&mut a, "aux_pause", 1);
    set(&mut a, "__reserved_3", 1);
    set(&mut a, "wakeup_watermark", 4096);
    set(&mut a, "watermark", 1);
    let mut c = call(
        id(1, 13),
        at(13),
        args(ATTR_PTR, -1, 0, 3, 0x2 | 0x8 | 0x40),
        Some(CaptureSpec::complete(&a)),
        -2,
    );
    c.write_both(&mut r1);

    // 14. A compat call (ia32): args are zero-extended 32-bit values.
    let mut c = call(
        id(0, 14),
        at(14),
        [0xffd0_1000, 0, 0xffff_ffff, 0xffff_ffff, 8, 0],
        Some(CaptureSpec::complete(&sw_clock(112)[..112])),
        7,
    );
    c.tid = 200;
    let mut e = c.entry();
    e.flags = abi::RECORD_F_COMPAT;
    c.entry_pos = r0.entry(&e);
    r0.exit(&c.exit());

    // 15. An EXIT whose ENTRY this reader never saw (not flagged): named
    // by CPU 2, whose ring it does not read.
    let mut c = call(id(2, 15), at(15), args(ATTR_PTR, 0, -1, -1, 0), None, 8);
    c.entry_pos = 4096;
    r1.exit(&c.exit());

    // 16. Still running: ENTRY only (on CPU 1, after the LOST record's
    // range). Size 0: the kernel takes it as 64 and copies 64 bytes, its
    // size word still 0.
    let mut c = call(
        id(1, 16),
        at(16),
        args(ATTR_PTR, 0, -1, -1, 0),
        Some(CaptureSpec::complete(&sw_clock(0)[..64])),
        0,
    );
    c.write_entry(&mut r1);

    // 17. Unfinished too, and its id lies in CPU 0's LOST range: its EXIT
    // may have been lost.
    let mut c = call(
        id(1, 17),
        at(17),
        args(ATTR_PTR, 0, -1, -1, 0),
        Some(CaptureSpec::complete(&sw_clock(136))),
        0,
    );
    r0.drop_record(abi::LOST_RING_FULL, c.id, c.exit().time_ns);
    c.write_entry(&mut r1);
    // CPU 0's LOST record for call 17's EXIT is written before its next
    // record: one more successful call.
    let mut c = call(
        id(0, 18),
        at(18),
        args(ATTR_PTR, 0, -1, -1, CLOEXEC),
        Some(CaptureSpec::complete(&sw_clock(136))),
        9,
    );
    c.write_both(&mut r0);

    // 19. The size word unreadable: a fault at offset 4, declared size 0.
    let mut item = CaptureSpec::empty(abi::STATUS_FAULT, 0);
    item.flags = abi::CAPTURE_F_SIZE_FAULT;
    item.fault_offset = 4;
    let mut c = call(
        id(0, 19),
        at(19),
        args(ATTR_PTR, 0, -1, -1, 0),
        Some(item),
        -14,
    );
    c.write_both(&mut r0);

    // 20. An EXIT whose ENTRY an earlier reader read: written on CPU 1
    // before the position this reader begins reading that ring at.
    let mut c = call(id(1, 20), at(20), args(ATTR_PTR, 0, -1, -1, 0), None, 10);
    c.entry_pos = R1_START - 512;
    r1.exit(&c.exit());
    vec![r0, r1]
}

/// The scenario's golden images.
#[must_use]
pub fn scenario_images() -> Vec<Vec<u8>> {
    scenario().iter().map(RingBuilder::image).collect()
}

/// splitmix64: a seeded generator for the benches' synthetic workloads,
/// the same stream on every machine.
#[derive(Debug)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// One of `of`.
    pub fn pick<T: Copy>(&mut self, of: &[T]) -> T {
        of[usize::try_from(self.below(of.len() as u64)).unwrap()]
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64().to_le_bytes()[0]).collect()
    }
}
