// SPDX-License-Identifier: GPL-2.0-only
//! One pass: the plan of its epochs, the calling threads, and between
//! their bursts the device changes and checks the plan asks for.

use std::path::PathBuf;
use std::sync::atomic::AtomicI32;
use std::sync::{Barrier, RwLock};

use antinomie_workloads::device::Device;

use crate::random::{Rng, BAD_FD};
use crate::system::pin;

use super::arena::Arena;
use super::capture::{check_epoch, counters, Reader, Tally};
use super::contender::Contender;
use super::draw::{draw, Place};
use super::fidelity::{capture_calls, contender_calls, CaptureCall, Compared, Fidelity};
use super::inject::{Allocators, FaultInjection};
use super::thread::{calls_of_thread, epoch_calls, thread_pass, Outcome, Shared};
use super::{Args, PassKind, STREAM_BASE};
/// The ring sizes an epoch picks from, with their weights.
const RING_SIZES: [(u64, u64); 4] = [(30, 4096), (20, 16384), (30, 65536), (20, 1 << 20)];

/// What the device does during one burst of a pass `on`, and the
/// allocators' fault-injection setting of the burst in every pass.
#[derive(Debug, Clone, Copy)]
pub(super) struct Epoch {
    capture: bool,
    ring_size: u64,
    pub(super) allocators: Allocators,
}

/// What every pass of a campaign shares.
#[derive(Clone, Copy)]
pub(super) struct Setting<'a> {
    /// The device plan, one entry per epoch.
    pub epochs: &'a [Epoch],
    /// The online CPUs the threads are pinned to, round robin.
    pub cpus: &'a [u32],
    /// Fault injection, set up: calls may be armed with `fail-nth`; with
    /// the allocators' too, each epoch applies its setting.
    pub injection: Option<&'a FaultInjection>,
}

pub(super) fn plan(seed: u64, epochs: usize) -> Vec<Epoch> {
    let mut rng = Rng::new(seed, STREAM_BASE);
    let mut plan: Vec<Epoch> = Vec::with_capacity(epochs);
    for e in 0..epochs {
        let off = rng.percent(20);
        let ring_size = rng.weighted(&RING_SIZES);
        let mut allocators = Allocators::ALL[rng.index(Allocators::ALL.len())];
        // The second epoch takes the setting the first did not: a run of
        // two epochs or more has calls under both.
        if e == 1 && allocators == plan[0].allocators {
            allocators = Allocators::ALL[usize::from(allocators == Allocators::ALL[0])];
        }
        plan.push(Epoch {
            capture: e == 0 || !off,
            ring_size,
            allocators,
        });
    }
    plan
}

/// Runs one pass; returns every thread's outcomes.
#[allow(clippy::too_many_lines)]
pub(super) fn run_pass(
    args: &Args,
    kind: PassKind,
    arenas: &[Arena],
    setting: &Setting,
    break_accounting: bool,
    tally: &mut Tally,
) -> Result<Vec<Vec<Outcome>>, String> {
    let threads = args.threads;
    let Setting {
        epochs,
        cpus,
        injection,
    } = *setting;
    // The allocators' settings, where they are injection points.
    let allocators = injection.filter(|fi| fi.allocators.is_ok());
    let shared = Shared {
        seed: args.seed,
        fault_injection: injection.is_some(),
        allocators: epochs
            .iter()
            .map(|e| allocators.map(|_| e.allocators))
            .collect(),
        cpus: cpus.to_vec(),
        leaders: (0..threads).map(|_| AtomicI32::new(BAD_FD)).collect(),
        barrier: Barrier::new(threads + 1),
        alone: RwLock::new(()),
        burst: args.burst,
        epochs: epochs.len(),
    };
    let device_present = args.device.exists();
    let capturing = matches!(kind, PassKind::On | PassKind::OnBpf);
    // Capture off before the leaders are opened; in a pass `off`, the
    // counters must not move (if there is a device). The file stays open
    // through a pass `off`, so that its rings exist for a stray record to
    // land in (the last close frees drained rings); a pass that captures
    // closes it for the reader's.
    let off_device = if device_present {
        let dev = Device::open(&args.device)?;
        dev.disable()?;
        let before = counters(&dev)?;
        Some((dev, before))
    } else if capturing {
        return Err(format!(
            "{} is missing: a pass {kind:?} needs it",
            args.device.display()
        ));
    } else {
        None
    };
    let off_device = off_device.filter(|_| !capturing);
    let err_path = PathBuf::from(format!("/tmp/campaign-reader.{}.err", std::process::id()));
    let id = std::process::id();
    let records_path = PathBuf::from(format!("/tmp/campaign-bpf.{id}.records"));
    // A pass `on+bpf`: each capture epoch's trace, kept for the comparison.
    let trace_path = PathBuf::from(format!("/tmp/campaign-capture.{id}.trace"));
    let mut captured: Vec<CaptureCall> = Vec::new();
    // A pass `bpf` or `on+bpf`: attached before the leaders are opened, so
    // that every call of the pass is traced.
    let contender = if matches!(kind, PassKind::Bpf | PassKind::OnBpf) {
        Some(Contender::start(
            &args.bpf,
            &args.bpf_variant,
            &records_path,
            &PathBuf::from(format!("/tmp/campaign-bpf.{id}.err")),
        )?)
    } else {
        None
    };
    let thread_cpu = |t: usize| cpus[t % cpus.len()];
    let mut result = Ok(());
    let (tids, outcomes): (Vec<u32>, Vec<Vec<Outcome>>) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let shared = &shared;
                let arena = &arenas[t];
                let calls = calls_of_thread(args.calls, threads, t);
                let cpu = thread_cpu(t);
                s.spawn(move || {
                    let pinned = pin(cpu).is_some();
                    let (tid, out) = thread_pass(shared, arena, t, calls);
                    (pinned, tid, out)
                })
            })
            .collect();
        shared.barrier.wait(); // the leaders are open
        let mut accounting_broken = !break_accounting;
        for (e, epoch) in epochs.iter().enumerate() {
            let mut reader = None;
            // An epoch with capture off: the device held open through the
            // burst (so that its rings exist), and its counters before.
            let mut off_epoch = None;
            // Every thread waits: the burst's allocator setting, the same
            // in every pass.
            if let (Ok(()), Some(fi)) = (&result, allocators) {
                if let Err(why) = fi.apply(epoch.allocators) {
                    result = Err(format!("epoch {e}: {why}"));
                }
            }
            if result.is_ok() && capturing {
                let step = || -> Result<_, String> {
                    let dev = Device::open(&args.device)?;
                    dev.disable()?;
                    // A pass `on+bpf` captures every epoch: each call needs
                    // the kernel's attr from capture's records.
                    if epoch.capture || kind == PassKind::OnBpf {
                        dev.set_ring_size(epoch.ring_size)?;
                        drop(dev);
                        let trace = (kind == PassKind::OnBpf).then_some(trace_path.as_path());
                        let reader =
                            Reader::start(&args.reader, &err_path, trace, args.cgroup.as_deref())?;
                        Ok((Some(reader), None))
                    } else {
                        let before = counters(&dev)?;
                        Ok((None, Some((dev, before))))
                    }
                };
                match step() {
                    Ok((r, o)) => (reader, off_epoch) = (r, o),
                    Err(why) => result = Err(format!("epoch {e}: {why}")),
                }
            }
            shared.barrier.wait(); // the burst starts
            shared.barrier.wait(); // the burst is over
            if result.is_err() {
                continue;
            }
            if let Some(r) = reader {
                tally.capture_epochs += 1;
                let mut calls_on_cpu: Vec<(u32, u64)> = (0..threads)
                    .map(|t| {
                        let n = epoch_calls(calls_of_thread(args.calls, threads, t), args.burst, e);
                        (thread_cpu(t), n as u64)
                    })
                    .collect();
                tally.calls_captured += calls_on_cpu.iter().map(|(_, n)| n).sum::<u64>();
                if !accounting_broken && calls_on_cpu[0].1 > 0 {
                    calls_on_cpu[0].1 -= 1;
                    accounting_broken = true;
                }
                let step = || -> Result<_, String> {
                    let rows = r.stop()?;
                    let dev = Device::open(&args.device)?;
                    dev.disable()?;
                    Ok((rows, counters(&dev)?))
                };
                match step() {
                    Ok((rows, after)) => check_epoch(e, &calls_on_cpu, &rows, &after, tally),
                    Err(why) => result = Err(format!("epoch {e}: {why}")),
                }
                if kind == PassKind::OnBpf && result.is_ok() {
                    match std::fs::read(&trace_path)
                        .map_err(|e| format!("{}: {e}", trace_path.display()))
                        .and_then(|t| capture_calls(&t))
                    {
                        Ok(calls) => captured.extend(calls),
                        Err(why) => result = Err(format!("epoch {e}: the trace: {why}")),
                    }
                    let _ = std::fs::remove_file(&trace_path);
                }
            } else if let Some((dev, b)) = off_epoch {
                tally.off_epochs += 1;
                match counters(&dev) {
                    Ok(after) if after == b => {}
                    Ok(after) => tally.mismatches.push(format!(
                        "epoch {e}: capture was off, yet the counters moved from {b:?} to {after:?}"
                    )),
                    Err(why) => result = Err(format!("epoch {e}: {why}")),
                }
            }
        }
        handles
            .into_iter()
            .enumerate()
            .map(|(t, h)| {
                let (pinned, tid, out) = h.join().expect("a campaign thread panicked");
                if !pinned {
                    result = Err(format!(
                        "thread {t} could not pin itself to cpu {}",
                        thread_cpu(t)
                    ));
                }
                (tid, out)
            })
            .unzip()
    });
    if let Some(c) = contender {
        match c.stop() {
            Ok(summary) => {
                // Every call of the pass and the leaders, an entry and an
                // exit each, all consumed.
                let calls = (args.calls + threads) as u64;
                if summary.lost != 0
                    || summary.produced != summary.consumed
                    || summary.entries != calls
                    || summary.exits != calls
                {
                    tally.mismatches.push(format!(
                        "pass {kind:?}: {calls} calls, but the contender says {summary:?}"
                    ));
                }
                tally.contender = Some(summary);
            }
            Err(why) => result = result.and(Err(why)),
        }
    }
    result?;
    if kind == PassKind::OnBpf {
        let records =
            std::fs::read(&records_path).map_err(|e| format!("{}: {e}", records_path.display()))?;
        let fidelity = compare(
            args,
            cpus,
            &tids,
            &outcomes,
            captured,
            &contender_calls(&records)?,
        );
        tally
            .mismatches
            .extend(fidelity.errors.iter().take(20).cloned());
        if fidelity.errors.len() > 20 {
            tally.mismatches.push(format!(
                "{} more fidelity errors",
                fidelity.errors.len() - 20
            ));
        }
        tally.fidelity = Some(fidelity);
    }
    let _ = std::fs::remove_file(&records_path);
    if let Some((dev, before)) = off_device {
        let after = counters(&dev)?;
        if after != before {
            tally.mismatches.push(format!(
                "pass {kind:?}: capture was off, yet the counters moved from {before:?} to {after:?}"
            ));
        }
    }
    let _ = std::fs::remove_file(&err_path);
    Ok(outcomes)
}

/// A pass `on+bpf`: pairs each thread's calls as capture and the contender
/// recorded them (both in call order: a thread stays on its CPU, and its
/// records are in time order there), draws the calls again for the bytes
/// placed, and counts the fidelity of both tracers.
fn compare(
    args: &Args,
    cpus: &[u32],
    tids: &[u32],
    outcomes: &[Vec<Outcome>],
    mut captured: Vec<CaptureCall>,
    contender: &[super::fidelity::ContenderCall],
) -> Fidelity {
    let mut fidelity = Fidelity::default();
    captured.sort_by_key(|c| (c.tid, c.time_ns));
    let pid = std::process::id();
    for (t, (&tid, out)) in tids.iter().zip(outcomes).enumerate() {
        let by_capture: Vec<&CaptureCall> = captured.iter().filter(|c| c.tid == tid).collect();
        // The first is the thread's leader, opened with capture off.
        let by_contender: Vec<_> = contender
            .iter()
            .filter(|c| c.pid == pid && c.tid == tid)
            .skip(1)
            .collect();
        if by_capture.len() != out.len() || by_contender.len() != out.len() {
            fidelity.errors.push(format!(
                "thread {t} (tid {tid}) made {} calls, capture recorded {}, the contender {} after the leader",
                out.len(),
                by_capture.len(),
                by_contender.len()
            ));
            continue;
        }
        let mut rng = Rng::new(
            args.seed,
            STREAM_BASE + 1 + u32::try_from(t).expect("few threads"),
        );
        for (k, (capture, contender)) in by_capture.into_iter().zip(by_contender).enumerate() {
            let call = draw(&mut rng, cpus);
            let placed: &[u8] = if call.place == Place::Null {
                &[]
            } else {
                &call.bytes
            };
            fidelity.add(
                &Compared {
                    capture,
                    contender,
                    racy: !out[k].compared,
                    placed,
                },
                &format!("thread {t} call {k} ({})", call.describe()),
            );
        }
    }
    fidelity
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_repeats_with_its_seed_and_has_both_settings() {
        for seed in 0..200 {
            let (a, b) = (plan(seed, 5), plan(seed, 5));
            let settings = |p: &[Epoch]| p.iter().map(|e| e.allocators).collect::<Vec<_>>();
            assert_eq!(settings(&a), settings(&b));
            for s in Allocators::ALL {
                assert!(a.iter().any(|e| e.allocators == s), "seed {seed}");
            }
            assert!(a[0].capture);
        }
    }
}
