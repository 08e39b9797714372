// SPDX-License-Identifier: GPL-2.0-only
//! The ring consumer over byte images: wrap-around and corrupt records.

use antinomie_abi as abi;
use antinomie_reader::pipeline;
use antinomie_reader::record::{RecordError, RecordView};
use antinomie_reader::ring::{ImageRing, RingConsumer, RingMemory};

use antinomie_reader::ring::builder::{
    args, attr, entry_record, set, CaptureSpec, EntrySpec, ExitSpec, RingBuilder,
};

fn entry(id: u64, t: u64) -> EntrySpec {
    let mut a = attr(136);
    set(&mut a, "type", 1);
    EntrySpec {
        call_id: id,
        time_ns: t,
        pid: 1,
        tid: 1,
        args: args(0x1000, 0, -1, -1, 0),
        items: vec![CaptureSpec::complete(&a)],
        ..Default::default()
    }
}

fn consumer(b: &RingBuilder) -> RingConsumer<ImageRing> {
    RingConsumer::new(ImageRing::from_bytes(b.image()).unwrap())
}

#[test]
fn records_straddling_the_end_are_reassembled() {
    // Start at various positions before the end of a 4 KiB data area, so
    // that records (280 bytes each) straddle it; fill most of one lap.
    for start in [0u64, 4096 - 104, 4096 * 7 - 8, 4096 * 9 - 48, 4096 * 9 - 40] {
        let mut ring = RingBuilder::new(0, 4096).start_at(start);
        let mut written = 0;
        while ring.producer_pos() - start + 600 < 4096 {
            written += 1;
            ring.entry(&entry(written, written * 10));
        }
        let mut consumer = consumer(&ring);
        consumer.refresh();
        let mut seen = 0;
        while let Some(next) = consumer.next_record() {
            let rec = next.unwrap_or_else(|e| panic!("start {start:#x}: {e}"));
            seen += 1;
            match rec.view() {
                RecordView::Entry(entry) => {
                    assert_eq!(entry.header.call_id, seen);
                    let item = entry.items().next().unwrap();
                    assert_eq!(item.data.len(), 136);
                    assert_eq!(item.data[0], 1);
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(seen, written);
    }
}

#[test]
fn the_consumer_position_is_published_in_batches_and_at_the_end() {
    let mut b = RingBuilder::new(0, 4096);
    for i in 1..=10 {
        b.entry(&entry(i, i));
    }
    let end = b.producer_pos();
    let mut c = consumer(&b);
    c.set_batch(1000);
    c.refresh();
    let mut published = Vec::new();
    let mut lag = Vec::new();
    loop {
        match c.next_record() {
            Some(r) => r.unwrap().commit(),
            None => break,
        }
        published.push(c.memory().load_consumer_pos());
        lag.push(c.position() - c.memory().load_consumer_pos());
    }
    // Not after every record, but before 1000 unpublished bytes pile up.
    assert!(published.windows(2).any(|w| w[0] == w[1]));
    assert!(lag.iter().all(|&l| l < 1000), "{lag:?}");
    c.publish();
    assert_eq!(c.memory().load_consumer_pos(), end);
}

/// Builds a ring of one good record, a corrupted one, and one more good
/// record; returns the image and the corrupt record's position.
fn with_corruption(corrupt: impl Fn(&mut Vec<u8>)) -> (Vec<u8>, u64) {
    let mut b = RingBuilder::new(2, 4096).start_at(4096 - 64);
    b.entry(&entry(1, 10));
    let mut bad = entry_record(2, &entry(2, 20));
    corrupt(&mut bad);
    let pos = b.raw(&bad);
    b.entry(&entry(3, 30));
    (b.image(), pos)
}

/// What the live reader makes of a ring: a drain pass, which frames the
/// records, then the merge, which decodes them. Returns the records
/// decoded, the errors of both, and whether the ring was stopped.
fn drain(image: Vec<u8>) -> (usize, Vec<antinomie_reader::ring::CorruptRecord>, bool) {
    let mut c = RingConsumer::new(ImageRing::from_bytes(image).unwrap());
    let (cpu, start) = (c.cpu(), c.position());
    let mut out = Vec::new();
    let mut errors = Vec::new();
    c.drain_into(&mut out, &mut errors);
    let mut m = pipeline::Merger::new(&[cpu], 0);
    m.start(cpu, start);
    m.push_batch(cpu, out, &mut errors);
    m.done(cpu);
    let decoded = std::iter::from_fn(|| m.pop(true)).count();
    let stopped = c.is_stopped() || errors.iter().any(|e| e.fatal);
    (decoded, errors, stopped)
}

/// A way to corrupt a record's bytes.
type Corruption = Box<dyn Fn(&mut Vec<u8>)>;

#[test]
fn corrupt_records_are_reported_with_cpu_and_offset() {
    let cases: Vec<(&str, Corruption, bool)> = vec![
        // size not a multiple of 8
        ("bad size", Box::new(|r| r[0] = r[0].wrapping_add(4)), true),
        // size smaller than a header
        (
            "tiny size",
            Box::new(|r| r[0..4].copy_from_slice(&16u32.to_le_bytes())),
            true,
        ),
        // size far past producer_pos
        (
            "overrun",
            Box::new(|r| r[0..4].copy_from_slice(&4000u32.to_le_bytes())),
            true,
        ),
        // type 0
        (
            "zero type",
            Box::new(|r| r[4..8].copy_from_slice(&0u32.to_le_bytes())),
            true,
        ),
        // hdr_size beyond the record
        (
            "bad hdr_size",
            Box::new(|r| r[8..12].copy_from_slice(&5000u32.to_le_bytes())),
            true,
        ),
        // an unknown type: skipped by its size
        (
            "unknown type",
            Box::new(|r| r[4..8].copy_from_slice(&77u32.to_le_bytes())),
            false,
        ),
        // a syscall number the table has no row for (1, write): skipped
        (
            "unknown syscall",
            Box::new(|r| r[44..48].copy_from_slice(&1u32.to_le_bytes())),
            false,
        ),
        // a capture item running past the record: skipped
        (
            "item overrun",
            Box::new(|r| r[48 + 64 + 28..48 + 64 + 32].copy_from_slice(&1000u32.to_le_bytes())),
            false,
        ),
        // nr_items claims more than there are: skipped
        (
            "too many items",
            Box::new(|r| r[48 + 4..48 + 8].copy_from_slice(&9u32.to_le_bytes())),
            false,
        ),
        // the body's size larger than the record: skipped
        (
            "body overrun",
            Box::new(|r| r[48..52].copy_from_slice(&900u32.to_le_bytes())),
            false,
        ),
        // a record claiming another CPU: skipped
        (
            "wrong cpu",
            Box::new(|r| r[40..44].copy_from_slice(&7u32.to_le_bytes())),
            false,
        ),
    ];
    for (what, corrupt, fatal) in cases {
        let (image, pos) = with_corruption(corrupt);
        let (good, errors, stopped) = drain(image);
        assert_eq!(errors.len(), 1, "{what}: {errors:?}");
        let e = &errors[0];
        assert_eq!((e.cpu, e.pos), (2, pos), "{what}");
        // The drain pass knows the data offset of what it checks (the
        // framing); the merge, which checks the rest, does not.
        let offset = fatal.then_some(pos % 4096);
        assert_eq!(e.offset, offset, "{what}");
        assert_eq!(e.fatal, fatal, "{what}: {e}");
        assert_eq!(stopped, fatal, "{what}");
        // Fatal: the ring stops after the good record before it. Otherwise
        // the bad record is skipped and the next one read.
        assert_eq!(good, if fatal { 1 } else { 2 }, "{what}");
        let text = e.to_string();
        assert!(
            text.contains("cpu 2") && text.contains(&format!("{pos:#x}")),
            "{text}"
        );
    }
}

#[test]
fn a_misaligned_consumer_position_is_not_followed() {
    let mut b = RingBuilder::new(0, 4096);
    b.entry(&entry(1, 10));
    let mut image = b.image();
    image[4096..4104].copy_from_slice(&4u64.to_le_bytes());
    let (good, errors, _) = drain(image);
    assert_eq!(good, 0);
    assert!(
        matches!(errors[0].error, RecordError::BadPositions { .. }),
        "{errors:?}"
    );
}

#[test]
fn a_producer_position_too_far_ahead_stops_the_ring() {
    let mut b = RingBuilder::new(0, 4096);
    b.entry(&entry(1, 10));
    let mut image = b.image();
    // producer_pos is at offset 40 of the meta page.
    image[40..48].copy_from_slice(&(5000u64).to_le_bytes());
    let (good, errors, _) = drain(image);
    assert_eq!(good, 0);
    assert!(!errors.is_empty());
}

#[test]
fn a_corrupt_ring_stops_alone() {
    // CPU 2's ring is corrupt in the middle; CPU 0's carries on.
    let (bad, _) = with_corruption(|r| r[0] = 3);
    let mut good = RingBuilder::new(0, 4096);
    for i in 10..15 {
        good.entry(&entry(i, i));
        good.exit(&ExitSpec {
            call_id: i,
            time_ns: i + 1,
            ret: 3,
            ..Default::default()
        });
    }
    let rings = vec![
        ImageRing::from_bytes(bad).unwrap(),
        ImageRing::from_bytes(good.image()).unwrap(),
    ];
    let msgs = pipeline::drain_once(rings);
    let mut sink = antinomie_reader::output::WriterSink::new(
        Vec::new(),
        antinomie_reader::output::Format::Text,
        antinomie_reader::decode::PmuTypes::none(),
        false,
    );
    let summary = pipeline::replay(msgs, pipeline::Assembler::new(&[0, 2], 0, &mut sink)).unwrap();
    assert!(summary.cpus[&2].stopped);
    assert!(!summary.cpus[&0].stopped);
    assert_eq!(summary.complete, 5);
    assert_eq!(summary.unfinished, 1); // CPU 2's first record
    assert_eq!(summary.cpus[&0].balanced(), Some(true));
    assert!(summary.to_text().contains("RING STOPPED"));
}

#[test]
fn images_with_bad_geometry_are_refused() {
    let good = RingBuilder::new(0, 4096).image();
    let mut cases = Vec::new();
    let mut bad_magic = good.clone();
    bad_magic[0] = 0;
    cases.push(bad_magic);
    let mut bad_abi = good.clone();
    bad_abi[4] = 9;
    cases.push(bad_abi);
    let mut not_pow2 = good.clone();
    not_pow2[16..24].copy_from_slice(&3000u64.to_le_bytes());
    cases.push(not_pow2);
    cases.push(good[..good.len() - 8].to_vec());
    let mut consumer_inside_data = good.clone();
    consumer_inside_data[24..32].copy_from_slice(&(8192u64 + 8).to_le_bytes());
    cases.push(consumer_inside_data);
    for (i, img) in cases.into_iter().enumerate() {
        assert!(ImageRing::from_bytes(img).is_err(), "case {i}");
    }
    assert_eq!(ImageRing::from_bytes(good).unwrap().cpu(), 0);
    assert_eq!(abi::RECORD_ALIGN, 8);
}

#[test]
fn an_image_of_another_abi_version_is_refused_by_name() {
    // ABI 1 named calls from one global counter; the records look the same,
    // so only the version tells them apart.
    let mut old = RingBuilder::new(0, 4096).image();
    old[4..8].copy_from_slice(&(abi::ABI_VERSION - 1).to_le_bytes());
    let Err(err) = ImageRing::from_bytes(old) else {
        panic!("an ABI {} image was accepted", abi::ABI_VERSION - 1);
    };
    assert!(
        matches!(err, antinomie_reader::Error::AbiVersion { found, reader, .. }
            if found == abi::ABI_VERSION - 1 && reader == abi::ABI_VERSION),
        "{err:?}"
    );
    let msg = err.to_string();
    assert_eq!(
        msg,
        format!(
            "the ring image is of Antinomie ABI version {old}, this reader's is {new}: \
             use a reader of ABI version {old}",
            old = abi::ABI_VERSION - 1,
            new = abi::ABI_VERSION
        )
    );
}
