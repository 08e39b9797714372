// SPDX-License-Identifier: GPL-2.0-only
//! Loss is never hidden: the summary's headline and `diff::RunLoss` count
//! what the kernel's final counters say was lost, reported by a LOST
//! record or not, and say so when those counters are unknown.

use antinomie_abi as abi;
use antinomie_reader::decode::PmuTypes;
use antinomie_reader::diff::{LastRecord, LostStretch, RunLoss};
use antinomie_reader::output::Format;
use antinomie_reader::pipeline::{self, Assembler, DrainMsg, FinalCounters, Recorder, Sink};
use antinomie_reader::record::LostRecord;
use antinomie_reader::ring::builder::RingBuilder;
use antinomie_reader::trace::{TraceReader, TraceWriter};

use crate::pipeline::{entry, exit};
use crate::support::{guest_rings, guest_trace, record_trace, show_images};

fn guest_images(name: &str) -> Vec<Vec<u8>> {
    guest_rings(name)
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect()
}

/// CPU 0 makes call 1 (ENTRY and EXIT written), then drops two records
/// that no LOST record reports (nothing is written after them); CPU 1
/// makes call 2 cleanly.
fn never_reported() -> Vec<Vec<u8>> {
    let mut b0 = RingBuilder::new(0, 4096);
    b0.entry(&entry(1, 10));
    b0.exit(&exit(1, 20, 3));
    b0.drop_record(abi::LOST_RING_FULL, 3, 30);
    b0.drop_record(abi::LOST_RING_FULL, 3, 40);
    let mut b1 = RingBuilder::new(1, 4096);
    let id = 1 << abi::CALL_ID_SEQ_BITS | 1;
    b1.entry(&entry(id, 15));
    b1.exit(&exit(id, 25, 4));
    vec![b0.image(), b1.image()]
}

#[test]
fn the_headline_counts_the_final_counters_of_a_real_lossy_capture() {
    // The guest's lossy capture: its meta pages say 9, 7, 11 and 11
    // records lost on CPUs 0 to 3, one LOST record reports one of them.
    let (_, summary) = show_images(&guest_images("lossy"), Format::Text, &PmuTypes::none());
    let loss = summary.loss();
    assert_eq!((loss.lost, loss.reported, loss.consumed), (38, 1, Some(90)));
    assert_eq!(loss.final_counters, FinalCounters::All);
    let text = summary.to_text();
    let headline = text.lines().next().unwrap();
    assert!(
        headline.ends_with(
            "; 128 records produced = 90 consumed + 38 lost (1 reported by LOST records, 37 not)"
        ),
        "{headline}"
    );
}

#[test]
fn the_headline_counts_drops_no_lost_record_reported() {
    let (_, summary) = show_images(&never_reported(), Format::Text, &PmuTypes::none());
    let text = summary.to_text();
    let headline = text.lines().next().unwrap();
    assert!(
        headline.ends_with(
            "; 6 records produced = 4 consumed + 2 lost (0 reported by LOST records, 2 not)"
        ),
        "{headline}"
    );
    let (_, clean) = show_images(&never_reported()[1..], Format::Text, &PmuTypes::none());
    let text = clean.to_text();
    assert!(
        text.lines()
            .next()
            .unwrap()
            .ends_with("; 2 records produced = 2 consumed + 0 lost"),
        "{text}"
    );
}

#[test]
fn run_loss_of_a_trace_names_the_rings_and_call_ids() {
    let (trace, _) = record_trace(&never_reported(), Format::Json);
    let run = RunLoss::from_trace(TraceReader::new(&trace[..]).unwrap()).unwrap();
    let total = run.total();
    assert_eq!((total.lost, total.reported), (2, 0));
    assert!(total.is_lossy() && !total.is_partial());
    let cpu0 = &run.rings[&0];
    assert_eq!(cpu0.consumed, Some(2));
    assert_eq!(cpu0.unreported(), Some(2));
    assert!(cpu0.stretches.is_empty());
    // The drops came after the ring's last record: call 1's EXIT.
    assert_eq!(
        cpu0.last,
        Some(LastRecord {
            call_id: 1,
            time_ns: 20
        })
    );
    assert_eq!(run.rings[&1].lost(), 0);

    // The guest's lossy capture: its one LOST record is on CPU 1.
    let run =
        RunLoss::from_trace(TraceReader::new(&guest_trace("lossy", None)[..]).unwrap()).unwrap();
    let lost: Vec<(u32, u64, Option<u64>)> = run
        .rings
        .iter()
        .map(|(&cpu, r)| (cpu, r.lost(), r.unreported()))
        .collect();
    assert_eq!(
        lost,
        [
            (0, 9, Some(9)),
            (1, 7, Some(6)),
            (2, 11, Some(11)),
            (3, 11, Some(11))
        ]
    );
    let cpu1_first = 1 << abi::CALL_ID_SEQ_BITS;
    assert_eq!(
        run.rings[&1].stretches,
        [LostStretch {
            records: 1,
            min_call_id: cpu1_first + 17,
            max_call_id: cpu1_first + 17,
        }]
    );
}

/// Discards what it is given: only the summary matters.
struct Discard;

impl Sink for Discard {
    fn call(&mut self, _: &antinomie_reader::call::Call) -> std::io::Result<()> {
        Ok(())
    }
    fn lost(&mut self, _: &LostRecord) -> std::io::Result<()> {
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn without_done_frames_the_loss_is_a_lower_bound() {
    // The lossy capture's trace with its DONE frames left out, as a file
    // cut before them would be: only the LOST record counts.
    let full = guest_trace("lossy", None);
    let mut reader = TraceReader::new(&full[..]).unwrap();
    let header = reader.header().clone();
    let msgs: Vec<DrainMsg> = reader
        .by_ref()
        .map(Result::unwrap)
        .filter(|m| !matches!(m, DrainMsg::Done { .. }))
        .collect();
    let mut w = TraceWriter::new(Vec::new(), &header).unwrap();
    for m in &msgs {
        w.record(m).unwrap();
    }
    let cut = w.finish().unwrap();

    let run = RunLoss::from_trace(TraceReader::new(&cut[..]).unwrap()).unwrap();
    let total = run.total();
    assert_eq!(total.lost, 1);
    assert_eq!(
        total.final_counters,
        FinalCounters::Missing(vec![0, 1, 2, 3])
    );
    assert_eq!(
        total.to_string(),
        "90 records consumed, at least 1 records lost (final counters unknown for cpu 0, 1, 2, 3: there only LOST records count)"
    );

    let mut sink = Discard;
    let summary = pipeline::replay(
        msgs,
        Assembler::new(&header.cpus, header.window_ns, &mut sink),
    )
    .unwrap();
    let text = summary.to_text();
    assert!(
        text.lines()
            .next()
            .unwrap()
            .ends_with("; 90 records consumed, at least 1 records lost (final counters unknown for cpu 0, 1, 2, 3: there only LOST records count)"),
        "{text}"
    );
}

#[test]
fn json_lines_give_only_their_lost_lines() {
    let mut run = RunLoss {
        from_json: true,
        ..RunLoss::default()
    };
    assert_eq!(
        run.total().to_string(),
        "at least 0 records lost (final counters unknown: only LOST records count)"
    );
    let lost = serde_json::json!({
        "event": "lost", "cpu": 2, "lost.ring_full": 3, "lost.bad_consumer": 0,
        "lost.other": 1, "lost.min_call_id": 40, "lost.max_call_id": 41,
    });
    run.push_lost_json(&lost).unwrap();
    assert_eq!(run.rings[&2].reported[abi::LOST_RING_FULL], 3);
    assert_eq!(run.rings[&2].unreported(), None);
    assert_eq!(run.total().lost, 4);
    assert!(run.total().is_partial());
    let mut no_cpu = lost.clone();
    no_cpu.as_object_mut().unwrap().remove("cpu");
    assert_eq!(
        run.push_lost_json(&no_cpu),
        Err("a LOST line without `cpu`".to_owned())
    );
}

#[test]
fn records_written_but_not_consumed_are_a_term_of_their_own() {
    // A reader that started after 3 records were consumed by another:
    // the kernel counts them written, this run did not consume them.
    let mut summary = pipeline::Summary::default();
    let mut lost = [0; abi::LOST_NR_SLOTS];
    lost[abi::LOST_RING_FULL] = 2;
    summary.cpus.insert(
        0,
        pipeline::CpuSummary {
            entries: 4,
            exits: 4,
            start_pos: Some(0x180),
            counters: Some(antinomie_reader::ring::RingCounters {
                produced: 11,
                lost,
                ..Default::default()
            }),
            ..Default::default()
        },
    );
    let text = summary.to_text();
    assert!(
        text.lines().next().unwrap().ends_with(
            "; 13 records produced = 8 consumed + 2 lost + 3 not consumed in this run \
             (0 reported by LOST records, 2 not)"
        ),
        "{text}"
    );
}
