// SPDX-License-Identifier: GPL-2.0-only
//! Merging, pairing, LOST records and the summary.

use antinomie_abi as abi;
use antinomie_reader::call::CallState;
use antinomie_reader::decode::PmuTypes;
use antinomie_reader::output::Format;
use antinomie_reader::pipeline::{
    self, Assembler, CpuSummary, DrainMsg, Merger, Mode, Sink, Tick, Waker,
};
use antinomie_reader::record::LostRecord;
use antinomie_reader::ring::{ConsumerStats, ImageRing, RingCounters};

use crate::support::{consumers, run_images, scenario, scenario_images, show_images};
use antinomie_reader::ring::builder::{args, EntrySpec, ExitSpec, RingBuilder};

/// Collects what the pipeline outputs.
#[derive(Default)]
struct Collect {
    calls: Vec<antinomie_reader::call::Call>,
    lost: Vec<LostRecord>,
    order: Vec<u64>,
}

impl Sink for Collect {
    fn call(&mut self, call: &antinomie_reader::call::Call) -> std::io::Result<()> {
        // The time the merge went by: the record's own, not the call's
        // start.
        self.order.push(call.header().time_ns);
        self.calls.push(call.clone());
        Ok(())
    }
    fn lost(&mut self, lost: &LostRecord) -> std::io::Result<()> {
        self.order.push(lost.header.time_ns);
        self.lost.push(lost.clone());
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

pub(crate) fn entry(id: u64, t: u64) -> EntrySpec {
    EntrySpec {
        call_id: id,
        time_ns: t,
        pid: 9,
        tid: 9,
        args: args(0, 0, -1, -1, 0),
        ..Default::default()
    }
}

pub(crate) fn exit(id: u64, t: u64, ret: i64) -> ExitSpec {
    ExitSpec {
        call_id: id,
        time_ns: t,
        pid: 9,
        tid: 9,
        ret,
        duration_ns: 5,
        ..Default::default()
    }
}

#[test]
fn calls_pair_across_cpus() {
    // Each call enters on CPU n and exits on CPU (n + 1) % 3.
    let mut rings: Vec<RingBuilder> = (0..3).map(|c| RingBuilder::new(c, 8192)).collect();
    for id in 1..=12u64 {
        let c = usize::try_from(id % 3).unwrap();
        rings[c].entry(&entry(id, id * 100));
        let c = usize::try_from((id + 1) % 3).unwrap();
        rings[c].exit(&exit(id, id * 100 + 50, i64::try_from(id).unwrap()));
    }
    let images: Vec<_> = rings.iter().map(RingBuilder::image).collect();
    let rings = consumers(&images);
    let mut sink = Collect::default();
    let summary = pipeline::run(
        rings,
        Mode::Once,
        Assembler::new(&[0, 1, 2], 0, &mut sink),
        None,
    )
    .unwrap();
    assert_eq!(summary.complete, 12);
    assert_eq!(
        summary.unfinished + summary.entry_missing + summary.entry_lost,
        0
    );
    for c in &sink.calls {
        assert_eq!(c.state, CallState::Complete);
        assert_eq!(c.ret(), Some(i64::try_from(c.call_id).unwrap()));
        assert_eq!(c.exit_cpu(), Some((c.cpu() + 1) % 3));
    }
    // Output in EXIT order, which is time order here.
    let ids: Vec<u64> = sink.calls.iter().map(|c| c.call_id).collect();
    assert_eq!(ids, (1..=12).collect::<Vec<_>>());
    for cpu in summary.cpus.values() {
        assert_eq!(cpu.balanced(), Some(true));
    }
}

#[test]
fn the_merge_is_in_time_order_whatever_the_arrival_order() {
    let recs = |cpu: u32, times: &[u64]| {
        let mut b = RingBuilder::new(cpu, 8192);
        for &t in times {
            b.exit(&exit(t, t, 0));
        }
        let img = b.image();
        pipeline::drain_once(vec![ImageRing::from_bytes(img).unwrap()])
    };
    let a = recs(0, &[1, 4, 7, 10]);
    let b = recs(1, &[2, 3, 8, 9]);
    // Interleave the two rings' messages in several orders.
    let mut orders = vec![a.iter().chain(&b).cloned().collect::<Vec<_>>()];
    orders.push(b.iter().chain(&a).cloned().collect());
    for msgs in orders {
        let mut sink = Collect::default();
        pipeline::replay(msgs, Assembler::new(&[0, 1], 0, &mut sink)).unwrap();
        assert_eq!(sink.order, vec![1, 2, 3, 4, 7, 8, 9, 10]);
    }
}

#[test]
fn an_idle_ring_holds_the_merge_back_only_for_the_window() {
    let mut m = Merger::new(&[0, 1], 1_000);
    let mut b = RingBuilder::new(0, 4096);
    b.exit(&exit(1, 5_000, 0));
    let msgs = pipeline::drain_once(vec![ImageRing::from_bytes(b.image()).unwrap()]);
    assert!(matches!(
        msgs[0],
        DrainMsg::Start {
            cpu: 0,
            start_pos: 0
        }
    ));
    let DrainMsg::Records { bytes, .. } = msgs[1].clone() else {
        panic!("{msgs:?}")
    };
    let mut errors = Vec::new();
    m.push_batch(0, bytes, &mut errors);
    assert!(errors.is_empty(), "{errors:?}");
    // CPU 1 has said nothing: hold.
    assert!(m.pop(false).is_none());
    // CPU 1 was idle at 5_500: a record from before 4_500 could still come.
    m.idle(1, 5_500);
    assert!(m.pop(false).is_none());
    // Idle at 6_500: nothing before 5_500 can come.
    m.idle(1, 6_500);
    assert!(m.pop(false).is_some());
}

#[test]
fn unfinished_and_entry_lost_calls_are_shown() {
    let (_, summary) = show_images(&scenario_images(), Format::Text, &PmuTypes::none());
    assert_eq!(summary.unfinished, 2);
    assert_eq!(summary.unfinished_maybe_lost, 1);
    assert_eq!(summary.entry_lost, 1);
    assert_eq!(summary.entry_missing, 1);
    assert_eq!(summary.entry_read_earlier, 1);
    assert_eq!(summary.complete, 14);
    assert_eq!(summary.calls(), 19);
}

#[test]
fn lost_records_appear_in_the_stream_and_the_summary() {
    let (text, summary) = show_images(&scenario_images(), Format::Text, &PmuTypes::none());
    let lost_lines: Vec<&str> = text.lines().filter(|l| l.contains("--- lost")).collect();
    assert_eq!(lost_lines.len(), 3, "{text}");
    assert!(
        lost_lines[1].contains(&format!(
            "cpu=1 --- lost 2 records (ring_full=2), call ids {id}..{id}",
            id = (1u64 << abi::CALL_ID_SEQ_BITS) + 11
        )),
        "{}",
        lost_lines[1]
    );
    assert_eq!(summary.lost_reported(), 4);
    assert_eq!(summary.cpus[&0].lost_reported[abi::LOST_RING_FULL], 2);
    assert_eq!(summary.cpus[&1].lost_reported[abi::LOST_RING_FULL], 2);
    // Fresh rings, fully drained: produced = consumed, lost = reported.
    // CPU 1 started mid-ring (for wrap-around), so only CPU 0 is exact.
    assert_eq!(summary.cpus[&0].balanced(), Some(true));
    let c1 = &summary.cpus[&1];
    let k = c1.counters.unwrap();
    assert_eq!(k.produced, c1.consumed());
    assert_eq!(k.lost, c1.lost_reported);
    let table = summary.to_text();
    assert!(
        table.contains("ok: produced = consumed, lost = reported"),
        "{table}"
    );
    // The LOST line sits where it occurred: between call 10 and call 13.
    let pos = |needle: &str| text.lines().position(|l| l.contains(needle)).unwrap();
    assert!(pos("call ids 281474976710667..") > pos("group_fd=3"));
}

#[test]
fn unreported_losses_show_as_a_mismatch() {
    let mut b = RingBuilder::new(0, 4096);
    b.entry(&entry(1, 10));
    b.exit(&exit(1, 20, 3));
    // A drop not yet reported by a LOST record (none written after it).
    b.drop_record(abi::LOST_RING_FULL, 2, 30);
    let (_, summary) = show_images(&[b.image()], Format::Text, &PmuTypes::none());
    assert_eq!(summary.cpus[&0].balanced(), Some(false));
    assert!(
        summary.to_text().contains("1 ring_full not yet reported"),
        "{}",
        summary.to_text()
    );
}

/// A waker that ticks `n` times, then stops.
pub(crate) struct Script(pub(crate) u32);

impl Waker for Script {
    fn wait(&mut self) -> Tick {
        if self.0 == 0 {
            Tick::Stop
        } else {
            self.0 -= 1;
            Tick::Drain
        }
    }
}

#[test]
fn follow_mode_drains_until_stopped() {
    let images = scenario_images();
    let (_, once) = run_images(&images, Format::Text, &PmuTypes::none(), None);
    // A queue that holds one message at a time delivers the same.
    for queue_bytes in [pipeline::DEFAULT_QUEUE_BYTES, 1] {
        let rings = consumers(&images);
        let mut sink = Collect::default();
        let summary = pipeline::run(
            rings,
            Mode::Follow {
                waker: Box::new(Script(3)),
                queue_bytes,
                threads_started: None,
            },
            Assembler::new(&[0, 1], pipeline::DEFAULT_WINDOW_NS, &mut sink),
            None,
        )
        .unwrap();
        assert_eq!(summary, once, "queue of {queue_bytes} bytes");
        assert_eq!(sink.calls.len(), 19);
    }
}

/// Every message the drain sent, as (ring, kind) in order.
#[derive(Default)]
struct Kinds(Vec<(u32, &'static str)>);

impl pipeline::Recorder for Kinds {
    fn record(&mut self, msg: &DrainMsg) -> std::io::Result<()> {
        self.0.push(match msg {
            DrainMsg::Start { cpu, .. } => (*cpu, "start"),
            DrainMsg::Records { cpu, .. } => (*cpu, "records"),
            DrainMsg::Idle { cpu, .. } => (*cpu, "idle"),
            DrainMsg::Corrupt(e) => (e.cpu, "corrupt"),
            DrainMsg::Done { cpu, .. } => (*cpu, "done"),
        });
        Ok(())
    }
}

#[test]
fn a_followed_drain_starts_every_ring_first_and_ends_each_with_its_done() {
    let images = scenario_images();
    let ticks = 3;
    let mut kinds = Kinds::default();
    let mut sink = Collect::default();
    pipeline::run(
        consumers(&images),
        Mode::Follow {
            waker: Box::new(Script(ticks)),
            queue_bytes: pipeline::DEFAULT_QUEUE_BYTES,
            threads_started: None,
        },
        Assembler::new(&[0, 1], pipeline::DEFAULT_WINDOW_NS, &mut sink),
        Some(&mut kinds),
    )
    .unwrap();
    let msgs = kinds.0;
    let starts = msgs.iter().take_while(|(_, k)| *k == "start").count();
    assert_eq!(starts, 2, "every ring's START before any pass: {msgs:?}");
    for cpu in [0, 1] {
        let of_ring: Vec<_> = msgs
            .iter()
            .filter(|(c, _)| *c == cpu)
            .map(|m| m.1)
            .collect();
        assert_eq!(of_ring.first(), Some(&"start"), "cpu {cpu}: {of_ring:?}");
        assert_eq!(of_ring.last(), Some(&"done"), "cpu {cpu}: {of_ring:?}");
        assert_eq!(of_ring.iter().filter(|k| **k == "done").count(), 1);
        // An IDLE per Drain tick; the Stop tick's last pass promises nothing.
        let idles = of_ring.iter().filter(|k| **k == "idle").count();
        assert_eq!(
            idles,
            usize::try_from(ticks).unwrap(),
            "cpu {cpu}: {of_ring:?}"
        );
    }
    assert_eq!(sink.calls.len(), 19);
}

#[test]
fn an_earlier_readers_trace_replays_the_rings_that_joined_or_were_not_read() {
    // A reader whose kernel gave a CPU its ring when it came online read
    // such a ring from then on (its frames come after the others', the CPU
    // not in the header's list) and named one that came too late by its
    // DONE alone. Its traces replay as it summed them up.
    let mut builders = scenario();
    let mut joined = RingBuilder::new(2, 8192);
    joined.entry(&entry(100, 1 << 40));
    joined.exit(&exit(100, (1 << 40) + 50, 7));
    builders.push(joined);
    let images: Vec<_> = builders.iter().map(RingBuilder::image).collect();
    let (_, once) = run_images(&images, Format::Text, &PmuTypes::none(), None);
    let rings = images
        .iter()
        .map(|i| ImageRing::from_bytes(i.clone()).unwrap())
        .collect();
    let mut msgs = pipeline::drain_once(rings);
    let not_read = RingCounters {
        producer_pos: 96,
        produced: 2,
        ..RingCounters::default()
    };
    msgs.push(DrainMsg::Done {
        cpu: 3,
        start_pos: 0,
        counters: not_read,
        stats: ConsumerStats::default(),
    });
    let mut sink = Collect::default();
    let replayed = pipeline::replay(
        msgs,
        Assembler::new(&[0, 1], pipeline::DEFAULT_WINDOW_NS, &mut sink),
    )
    .unwrap();
    assert_eq!(sink.calls.len(), 20);
    let mut expected = once.clone();
    expected.cpus.get_mut(&2).unwrap().joined = true;
    expected.cpus.insert(
        3,
        CpuSummary {
            start_pos: Some(0),
            counters: Some(not_read),
            not_read: true,
            ..CpuSummary::default()
        },
    );
    assert_eq!(replayed, expected);
    assert_eq!(replayed.cpus[&2].balanced(), Some(true));
    let text = replayed.to_text();
    assert!(
        text.lines()
            .next()
            .unwrap()
            .ends_with("not read: the ring of cpu 3, which came online during the run"),
        "{text}"
    );
    assert!(
        text.contains("(its CPU came online during the run)"),
        "{text}"
    );
}

/// A sink whose reader went away.
struct Broken;

impl Sink for Broken {
    fn call(&mut self, _: &antinomie_reader::call::Call) -> std::io::Result<()> {
        Err(std::io::ErrorKind::BrokenPipe.into())
    }
    fn lost(&mut self, _: &LostRecord) -> std::io::Result<()> {
        Err(std::io::ErrorKind::BrokenPipe.into())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_broken_pipe_ends_the_run_quietly() {
    let images = scenario_images();
    for follow in [false, true] {
        let rings = consumers(&images);
        let mut sink = Broken;
        let mode = if follow {
            Mode::Follow {
                waker: Box::new(Script(1000)),
                queue_bytes: pipeline::DEFAULT_QUEUE_BYTES,
                threads_started: None,
            }
        } else {
            Mode::Once
        };
        let summary =
            pipeline::run(rings, mode, Assembler::new(&[0, 1], 0, &mut sink), None).unwrap();
        assert!(summary.broken_pipe);
    }
}

/// A waker that notes its thread's nice value, then stops.
struct NiceProbe(std::sync::mpsc::Sender<i32>);

impl Waker for NiceProbe {
    fn wait(&mut self) -> Tick {
        let me = Some(rustix::thread::gettid());
        let _ = self
            .0
            .send(rustix::process::getpriority_process(me).unwrap());
        Tick::Stop
    }
}

#[test]
fn threads_started_runs_on_the_calling_thread_after_the_spawns() {
    // On a thread of its own: the nice value stays raised after the run.
    std::thread::spawn(|| {
        let me = Some(rustix::thread::gettid());
        let before = rustix::process::getpriority_process(me).unwrap();
        let images = scenario_images();
        let (tx, rx) = std::sync::mpsc::channel();
        let mut sink = Collect::default();
        let lower = move || {
            rustix::process::setpriority_process(me, (before + 3).min(19)).unwrap();
        };
        pipeline::run(
            consumers(&images),
            Mode::Follow {
                waker: Box::new(NiceProbe(tx)),
                queue_bytes: pipeline::DEFAULT_QUEUE_BYTES,
                threads_started: Some(Box::new(lower)),
            },
            Assembler::new(&[0, 1], pipeline::DEFAULT_WINDOW_NS, &mut sink),
            None,
        )
        .unwrap();
        assert_eq!(sink.calls.len(), 19, "every call still printed");
        let after = rustix::process::getpriority_process(me).unwrap();
        assert_eq!(after, (before + 3).min(19), "the calling thread");
        assert_eq!(rx.recv().unwrap(), before, "the drain thread, which polls");
    })
    .join()
    .unwrap();
}
