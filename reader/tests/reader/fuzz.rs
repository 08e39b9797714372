// SPDX-License-Identifier: GPL-2.0-only
//! Random bytes never panic the decoder (a property test).

use antinomie_reader::decode::{AttrView, PmuTypes, ATTR_MEMBERS};
use antinomie_reader::output::{call_json, call_text};
use antinomie_reader::record::{self, Record};
use antinomie_reader::ring::{CorruptRecord, ImageRing, RingConsumer, RingMemory};
use antinomie_reader::{pipeline, trace};
use proptest::prelude::*;

use crate::support::scenario_images;
use antinomie_reader::ring::builder::RingBuilder;

/// Formats every call both ways, keeping nothing.
struct Both(Vec<u8>);

impl pipeline::Sink for Both {
    fn call(&mut self, c: &antinomie_reader::call::Call) -> std::io::Result<()> {
        let _ = call_text(c, &PmuTypes::none());
        self.0.clear();
        call_json(c, &PmuTypes::none(), &mut self.0)
    }
    fn lost(&mut self, _: &record::LostRecord) -> std::io::Result<()> {
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What the reader made of a ring: the records decoded, the errors (CPU,
/// ring position, fatal, what), whether the ring was stopped, and the
/// consumer position published.
type Decoded = (Vec<Record>, Vec<(u32, u64, bool, String)>, bool, u64);

fn decoded(
    records: Vec<Record>,
    errors: &[CorruptRecord],
    stopped: bool,
    published: u64,
) -> Decoded {
    let errors = errors
        .iter()
        .map(|e| (e.cpu, e.pos, e.fatal, e.error.to_string()))
        .collect();
    (records, errors, stopped, published)
}

/// The live reader's path: one drain pass ([`RingConsumer::drain_into`],
/// the whole span copied at once and only framed), then the merge, which
/// decodes each record and validates its body.
fn by_drain_pass(image: Vec<u8>) -> Decoded {
    let mut c = RingConsumer::new(ImageRing::from_bytes(image).unwrap());
    let (cpu, start) = (c.cpu(), c.position());
    let (mut bytes, mut errors) = (Vec::new(), Vec::new());
    c.drain_into(&mut bytes, &mut errors);
    c.publish();
    let mut m = pipeline::Merger::new(&[cpu], 0);
    m.start(cpu, start);
    m.push_batch(cpu, bytes, &mut errors);
    m.done(cpu);
    let records: Vec<Record> = std::iter::from_fn(|| m.pop(true)).collect();
    // The drain's errors and the merge's, in ring order.
    errors.sort_by_key(|e| e.pos.wrapping_sub(start));
    let stopped = c.is_stopped() || errors.iter().any(|e| e.fatal);
    decoded(records, &errors, stopped, c.memory().load_consumer_pos())
}

/// Record after record ([`RingConsumer::next_record`]), each validated
/// whole as it is taken.
fn by_record(image: Vec<u8>) -> Decoded {
    let mut c = RingConsumer::new(ImageRing::from_bytes(image).unwrap());
    let (mut records, mut errors) = (Vec::new(), Vec::new());
    c.refresh();
    while let Some(next) = c.next_record() {
        match next {
            Ok(guard) => records.push(Record::from(*guard.view())),
            Err(e) => errors.push(e),
        }
    }
    c.publish();
    decoded(
        records,
        &errors,
        c.is_stopped(),
        c.memory().load_consumer_pos(),
    )
}

/// A drain pass and the merge keep, skip and stop exactly as the
/// record-by-record path does.
fn drain_pass_matches_record_by_record(image: &[u8]) -> Result<(), TestCaseError> {
    prop_assert_eq!(by_drain_pass(image.to_vec()), by_record(image.to_vec()));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Real records with bytes flipped (skipped records, framing errors,
    /// both at once): the drain pass keeps, skips and stops exactly as
    /// the record-by-record path does.
    #[test]
    fn drain_pass_is_record_by_record(
        ring in 0usize..2,
        flips in proptest::collection::vec((0usize..16384, any::<u8>()), 0..6),
    ) {
        let mut image = scenario_images().swap_remove(ring);
        for (off, b) in flips {
            image[8192 + off] = b;
        }
        drain_pass_matches_record_by_record(&image)?;
    }

    #[test]
    fn records_from_random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        if let Ok(view) = record::parse(&bytes) {
            let _ = Record::from(view);
        }
        let _ = record::parse_header(&bytes, bytes.len() as u64);
    }

    #[test]
    fn attrs_from_random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let view = AttrView::new(&bytes);
        let pmus = PmuTypes::from_pairs([(6, "kprobe".to_owned()), (7, "uprobe".to_owned())]);
        for m in ATTR_MEMBERS {
            let _ = view.render(m, &pmus);
        }
        let _ = view.text_members(&pmus);
    }

    /// Random data and positions: no panic, and the drain pass still
    /// matches the record-by-record path.
    #[test]
    fn rings_with_random_data(
        data in proptest::collection::vec(any::<u8>(), 4096),
        producer in any::<u64>(),
        consumer in any::<u64>(),
    ) {
        let mut img = RingBuilder::new(0, 4096).image();
        img[8192..].copy_from_slice(&data);
        img[40..48].copy_from_slice(&producer.to_le_bytes());
        img[4096..4104].copy_from_slice(&consumer.to_le_bytes());
        drain_pass_matches_record_by_record(&img)?;
    }

    /// Random mutations of real records: still no panic, through the whole
    /// pipeline and both output formats.
    #[test]
    fn mutated_scenario_rings(flips in proptest::collection::vec((0usize..16384, any::<u8>()), 1..8)) {
        let mut images = scenario_images();
        for (off, b) in flips {
            images[0][8192 + off] = b;
        }
        let rings: Vec<ImageRing> = images.into_iter().map(|i| ImageRing::from_bytes(i).unwrap()).collect();
        let msgs = pipeline::drain_once(rings);
        let mut sink = Both(Vec::new());
        let _ = pipeline::replay(msgs, pipeline::Assembler::new(&[0, 1], 0, &mut sink));
    }

    #[test]
    fn trace_files_from_random_bytes(tail in proptest::collection::vec(any::<u8>(), 0..300)) {
        let mut bytes = b"ANTI-TRC\x01\0\0\0\x01\0\0\0".to_vec();
        bytes.extend_from_slice(&tail);
        let _ = trace::read_trace(&bytes);
    }
}

/// Found by the AFL++ `ring` target (reader/fuzz): a LOST record whose
/// counts sum past `u64::MAX` overflowed the summary's and the output's
/// totals. They saturate now; text, JSON and the summary all survive.
#[test]
fn lost_counts_that_overflow_do_not_panic() {
    let body = antinomie_abi::Lost {
        size: u32::try_from(size_of::<antinomie_abi::Lost>()).unwrap(),
        lost: [u64::MAX; antinomie_abi::LOST_NR_SLOTS],
        ..Default::default()
    };
    let mut ring = RingBuilder::new(0, 4096);
    ring.raw(&antinomie_reader::ring::builder::lost_record(0, 5, &body));
    ring.raw(&antinomie_reader::ring::builder::lost_record(0, 6, &body));
    let msgs = pipeline::drain_once(vec![ImageRing::from_bytes(ring.image()).unwrap()]);
    let mut sink = Both(Vec::new());
    let summary = pipeline::replay(msgs, pipeline::Assembler::new(&[0], 0, &mut sink)).unwrap();
    assert_eq!(summary.lost_reported(), u64::MAX);
    assert!(summary.to_text().contains("lost"));
    let mut text = Vec::new();
    let mut json = antinomie_reader::output::WriterSink::new(
        &mut text,
        antinomie_reader::output::Format::Json,
        PmuTypes::none(),
        false,
    );
    let msgs = pipeline::drain_once(vec![ImageRing::from_bytes(ring.image()).unwrap()]);
    pipeline::replay(msgs, pipeline::Assembler::new(&[0], 0, &mut json)).unwrap();
    let line = String::from_utf8(text).unwrap();
    assert!(
        line.contains(&format!("\"lost.other\":{}", u64::MAX)),
        "{line}"
    );
}
