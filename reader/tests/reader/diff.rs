// SPDX-License-Identifier: GPL-2.0-only
//! The streaming comparison ([`antinomie_reader::diff::Differ`]) fed
//! call by call: threads that diverge after a changed result, equal
//! runs, a divergence longer than the alignment window, and threads
//! paired by rank in their process's tid order.

use serde_json::{json, Value};

use antinomie_reader::diff::{
    DiffCall, Differ, Difference, Kind, Matching, Options, Role, Side, Summary, Thread,
};

use crate::support::data_dir;

/// The first call of the guest's basic run (a software event that
/// succeeded), as a JSON line.
fn template() -> Value {
    let text = std::fs::read_to_string(data_dir().join("guest/basic/expected.jsonl")).unwrap();
    serde_json::from_str(text.lines().next().unwrap()).unwrap()
}

/// A call of `thread` whose attr has `config`, returning `ret` (`-22`
/// for EINVAL).
fn call(template: &Value, (pid, tid): Thread, config: u64, ret: i64) -> DiffCall {
    let mut v = template.clone();
    v["pid"] = json!(pid);
    v["tid"] = json!(tid);
    v["arg0.perf_event_attr"]["config"] = json!(config);
    v["ret"] = json!(ret);
    v["syscall.success"] = json!(ret >= 0);
    let (errno, name) = if ret < 0 {
        (json!(-ret), json!("EINVAL"))
    } else {
        (Value::Null, Value::Null)
    };
    v["syscall.errno"] = errno;
    v["syscall.errno_name"] = name;
    DiffCall::from_json(&v).unwrap()
}

/// One reported difference: its role, kinds, tid (of A, else of B) and
/// the indexes of its calls in A and B.
type Reported = (Role, Vec<Kind>, i64, Option<usize>, Option<usize>);

/// What one comparison reported: its differences and its counts.
struct Compared {
    differences: Vec<Reported>,
    summary: Summary,
}

/// Compares two runs given as (tid, config, ret) per call, each run in
/// its time order, fed alternately one call of A, one of B.
fn compare(a: &[(i64, u64, i64)], b: &[(i64, u64, i64)], window: usize) -> Compared {
    compare_by(a, b, window, true)
}

/// [`compare`], threads paired by tid or by order.
fn compare_by(
    a: &[(i64, u64, i64)],
    b: &[(i64, u64, i64)],
    window: usize,
    by_tid: bool,
) -> Compared {
    let t = template();
    let opts = Options {
        matching: if by_tid {
            Matching::Tid
        } else {
            Matching::Order
        },
        duration_ratio: None,
        window,
    };
    let mut differ = Differ::new(opts);
    let mut differences = Vec::new();
    let mut out = |d: &Difference| {
        let tid = d.thread.0.or(d.thread.1).unwrap().1;
        differences.push((
            d.role,
            d.kinds.clone(),
            tid,
            d.a.as_ref().map(|x| x.0),
            d.b.as_ref().map(|x| x.0),
        ));
        Ok(())
    };
    for k in 0..a.len().max(b.len()) {
        for (side, run) in [(Side::A, a), (Side::B, b)] {
            if let Some(&(tid, config, ret)) = run.get(k) {
                differ
                    .push(side, call(&t, (100, tid), config, ret), &mut out)
                    .unwrap();
            }
        }
    }
    let summary = differ.finish(&mut out).unwrap();
    Compared {
        differences,
        summary,
    }
}

/// Two threads, 40 calls each, interleaved; call k of thread `tid` has
/// config k and returns fd k + 3.
fn workload() -> Vec<(i64, u64, i64)> {
    (0..40i64)
        .flat_map(|k| {
            let config = k.unsigned_abs();
            [(101, config, 3 + k), (102, config, 3 + k)]
        })
        .collect()
}

#[test]
fn equal_runs_have_no_difference() {
    let c = compare(&workload(), &workload(), 16);
    assert!(c.differences.is_empty());
    assert!(c.summary.equal());
    assert_eq!(c.summary.compared, 80);
    assert_eq!(c.summary.causes, 0);
    assert_eq!(c.summary.window_overflows, 0);
}

/// In B, thread 101's call 10 fails; the program then probes three other
/// configs and skips calls 11 and 12; later its call 30 fails too. Thread
/// 102's call 20 fails and is retried once. Each thread has exactly one
/// cause, its first changed result; everything after it in that thread
/// is its consequence.
#[test]
fn a_changed_result_is_the_one_cause_of_its_thread() {
    let a = workload();
    let mut b = Vec::new();
    for &(tid, k, ret) in &a {
        match (tid, k) {
            (101, 10) => {
                b.push((tid, k, -22));
                for probe in 0..3 {
                    b.push((tid, 500 + probe, 90));
                }
            }
            (101, 11 | 12) => {}
            (101, 30) => b.push((tid, k, -22)),
            (102, 20) => {
                b.push((tid, k, -22));
                b.push((tid, k, ret));
            }
            _ => b.push((tid, k, ret)),
        }
    }
    let c = compare(&a, &b, 16);
    let of = |tid| -> Vec<_> { c.differences.iter().filter(|d| d.2 == tid).collect() };
    let t101 = of(101);
    assert_eq!(t101[0].0, Role::Cause);
    assert_eq!(t101[0].1, [Kind::Ret]);
    assert_eq!((t101[0].3, t101[0].4), (Some(10), Some(10)));
    let after: Vec<(Role, &[Kind])> = t101[1..].iter().map(|d| (d.0, &d.1[..])).collect();
    let consequence = Role::Consequence {
        a: Some(10),
        b: Some(10),
    };
    // The probes against calls 11 and 12 of A (a replaced stretch), the
    // third probe B's only, then call 30's failure.
    assert_eq!(
        after,
        [
            (consequence, &[Kind::Input][..]),
            (consequence, &[Kind::Input][..]),
            (consequence, &[Kind::OnlyInB][..]),
            (consequence, &[Kind::Ret][..]),
        ]
    );
    let t102 = of(102);
    assert_eq!(t102[0].0, Role::Cause);
    assert_eq!((t102[0].3, t102[0].4), (Some(20), Some(20)));
    assert_eq!(t102.len(), 2);
    assert_eq!(
        (t102[1].0, &t102[1].1[..], t102[1].4),
        (
            Role::Consequence {
                a: Some(20),
                b: Some(20)
            },
            &[Kind::OnlyInB][..],
            Some(21)
        )
    );
    assert_eq!(c.summary.causes, 2);
    assert_eq!(c.summary.consequences, 5);
    assert_eq!(c.summary.differing, 7);
    assert_eq!(c.summary.window_overflows, 0);
}

/// B's thread makes 20 calls A never makes, then goes on as A: within a
/// window of 32 they are B's only and the rest aligns; with a window of
/// 8 the queues fill first, and the queued calls are reported as a
/// replaced stretch (compared position by position, the rest one run's
/// only) until the runs meet again. No call is lost either way.
#[test]
fn past_the_window_the_queued_calls_are_reported_as_a_stretch() {
    let a: Vec<(i64, u64, i64)> = (0..30).map(|k| (101, k, 3)).collect();
    let mut b = a.clone();
    let detour: Vec<(i64, u64, i64)> = (0..20).map(|k| (101, 1000 + k, 3)).collect();
    b.splice(5..5, detour);

    let wide = compare(&a, &b, 32);
    assert_eq!(wide.summary.window_overflows, 0);
    assert_eq!(wide.summary.kinds.get(&Kind::OnlyInB), Some(&20));
    assert_eq!(wide.summary.compared, 30);
    assert_eq!(wide.summary.differing, 20);
    assert_eq!(wide.summary.causes, 1);
    assert_eq!(wide.differences[0].4, Some(5));

    let narrow = compare(&a, &b, 8);
    let s = &narrow.summary;
    assert!(s.window_overflows >= 1, "{s:?}");
    // Every call of both runs is compared or reported once.
    let only = |k| s.kinds.get(&k).copied().unwrap_or(0);
    assert_eq!(s.compared + only(Kind::OnlyInA), 30);
    assert_eq!(s.compared + only(Kind::OnlyInB), 50);
    // The stretch pairs calls that are not the same call.
    assert!(only(Kind::Input) > 0, "{s:?}");
    // One thread, one cause: the first call of the detour.
    assert_eq!(s.causes, 1);
    assert_eq!(s.consequences, s.differing - 1);
    assert_eq!(narrow.differences[0].4, Some(5));
}

/// Configs of A's calls, B's refusal, the cause's kinds, A's call that B
/// does not make.
type Case<'a> = ([u64; 6], &'a [(&'a str, Value)], &'a [Kind], usize);

/// A call of thread 101 that a kernel refused before copying its attr
/// (no members): the fields `how` sets on top.
fn refused(t: &Value, how: &[(&str, Value)]) -> DiffCall {
    let mut v = t.clone();
    v["pid"] = json!(100);
    v["tid"] = json!(101);
    v["arg0.copied_len"] = json!(0);
    v["arg0.perf_event_attr"] = Value::Null;
    v["arg0.perf_event_attr_names"] = Value::Null;
    v["arg0.attr_copied"] = json!(false);
    v["syscall.success"] = json!(false);
    for (k, x) in how {
        v[*k] = x.clone();
    }
    DiffCall::from_json(&v).unwrap()
}

/// Runs A (6 calls of thread 101 with `configs`, all opening fd 3) and B
/// (the same, but call 2 `refused` and call 3 not made, as a program that
/// gives up on that attr would) through the comparison.
fn kernel_read_less(configs: [u64; 6], refused_call: DiffCall) -> Vec<Reported> {
    let t = template();
    let a: Vec<DiffCall> = configs
        .iter()
        .map(|&k| call(&t, (100, 101), k, 3))
        .collect();
    let mut b = a.clone();
    b[2] = refused_call;
    b.remove(3);
    let mut differ = Differ::new(Options {
        matching: Matching::Tid,
        duration_ratio: None,
        window: 16,
    });
    let mut got = Vec::new();
    let mut out = |d: &Difference| {
        got.push((
            d.role,
            d.kinds.clone(),
            101,
            d.a.as_ref().map(|x| x.0),
            d.b.as_ref().map(|x| x.0),
        ));
        Ok(())
    };
    for (k, c) in a.iter().enumerate() {
        differ.push(Side::A, c.clone(), &mut out).unwrap();
        if let Some(c) = b.get(k) {
            differ.push(Side::B, c.clone(), &mut out).unwrap();
        }
    }
    differ.finish(&mut out).unwrap();
    got
}

/// The record holds the attr as the kernel read it: a kernel that
/// refuses a size at its size check, or the flags before reading the
/// attr, records the same call with another status and no members (and
/// for invalid flags no size). That is the call's outcome, not another
/// call: its pair is the cause, with the result's kinds and no "input",
/// whether the program's calls all differ or repeat one attr.
#[test]
fn what_the_kernel_did_not_read_is_no_input_difference() {
    let t = template();
    let invalid_size = [
        ("arg0.status", json!("invalid_size")),
        ("arg0.required_size", json!(136)),
        ("arg0.size_written", json!(true)),
        ("ret", json!(-7)),
        ("syscall.errno", json!(7)),
        ("syscall.errno_name", json!("E2BIG")),
    ];
    let invalid_flags = [
        ("arg0.status", json!("not_applicable")),
        ("arg0.declared_size", json!(0)),
        ("ret", json!(-22)),
        ("syscall.errno", json!(22)),
        ("syscall.errno_name", json!("EINVAL")),
    ];
    let e2big = [
        Kind::Ret,
        Kind::RequiredSize,
        Kind::SizeWritten,
        Kind::Status,
    ];
    let einval = [Kind::Ret, Kind::Status];
    let cases: [Case; 4] = [
        ([0, 1, 2, 3, 4, 5], &invalid_size, &e2big, 3),
        ([7; 6], &invalid_size, &e2big, 5),
        ([0, 1, 2, 3, 4, 5], &invalid_flags, &einval, 3),
        ([7; 6], &invalid_flags, &einval, 5),
    ];
    for (configs, how, kinds, only_in_a) in cases {
        let got = kernel_read_less(configs, refused(&t, how));
        assert_eq!(got.len(), 2, "{configs:?} {how:?}: {got:?}");
        assert_eq!(
            (got[0].0, &got[0].1[..], got[0].3, got[0].4),
            (Role::Cause, kinds, Some(2), Some(2)),
            "{configs:?} {how:?}"
        );
        // A's call that B does not make (with one attr repeated, the last).
        assert_eq!(
            (got[1].0, &got[1].1[..], got[1].3, got[1].4),
            (
                Role::Consequence {
                    a: Some(2),
                    b: Some(2)
                },
                &[Kind::OnlyInA][..],
                Some(only_in_a),
                None
            ),
            "{configs:?} {how:?}"
        );
    }
}

/// Two runs of one program with other tids, whose threads reach their
/// first call in another order: by order, each thread is paired with the
/// one that makes the same calls, not with the one that called first.
#[test]
fn by_order_threads_are_paired_by_their_calls_not_who_calls_first() {
    let thread = |tid: i64, base: u64| (0..10u64).map(move |k| (tid, base + k, 3));
    // A: thread 201 (configs 100…) calls first; B: thread 300 (0…).
    let a: Vec<_> = thread(201, 100).chain(thread(200, 0)).collect();
    let b: Vec<_> = thread(300, 0).chain(thread(301, 100)).collect();
    let c = compare_by(&a, &b, 16, false);
    assert!(c.summary.equal(), "{:?}", c.summary);
    assert_eq!(c.summary.matched_by, "order");
    assert_eq!(c.summary.threads, (2, 2, 2));
    assert_eq!(c.summary.compared, 20);
}

/// A call of a run: its thread, config and result.
type RunCall = (Thread, u64, i64);

/// One difference of an auto comparison: its kinds, the thread of each
/// run and the indexes of its calls in them.
type Attributed = (
    Vec<Kind>,
    (Option<Thread>, Option<Thread>),
    Option<usize>,
    Option<usize>,
);

/// What an auto comparison reported, and the most calls each run had
/// queued at once.
struct ComparedAuto {
    differences: Vec<Attributed>,
    summary: Summary,
    most_queued: (usize, usize),
}

/// Compares two runs with `--match auto`, fed alternately one call of
/// A, one of B.
fn compare_auto(a: &[RunCall], b: &[RunCall], window: usize) -> ComparedAuto {
    let mut fed = Vec::new();
    for k in 0..a.len().max(b.len()) {
        fed.extend(a.get(k).map(|&c| (Side::A, c)));
        fed.extend(b.get(k).map(|&c| (Side::B, c)));
    }
    compare_fed(&fed, window)
}

/// Compares two runs with `--match auto`, their calls fed in the order
/// of `fed`.
fn compare_fed(fed: &[(Side, RunCall)], window: usize) -> ComparedAuto {
    let t = template();
    let mut differ = Differ::new(Options {
        matching: Matching::Auto,
        duration_ratio: None,
        window,
    });
    let mut differences = Vec::new();
    let mut out = |d: &Difference| {
        differences.push((
            d.kinds.clone(),
            d.thread,
            d.a.as_ref().map(|x| x.0),
            d.b.as_ref().map(|x| x.0),
        ));
        Ok(())
    };
    let mut most_queued = (0, 0);
    for &(side, (thread, config, ret)) in fed {
        differ
            .push(side, call(&t, thread, config, ret), &mut out)
            .unwrap();
        most_queued.0 = most_queued.0.max(differ.queued(Side::A));
        most_queued.1 = most_queued.1.max(differ.queued(Side::B));
    }
    let summary = differ.finish(&mut out).unwrap();
    ComparedAuto {
        differences,
        summary,
        most_queued,
    }
}

/// A run of process `pid` whose threads, in the order the process starts
/// them, have `tids`; `schedule` gives the spawn index of each call's
/// thread in time order. The i-th call of the thread started k-th has
/// config 1000 k + i and returns fd 3 + i, so a thread paired with
/// another spawn's thread differs from its first call.
fn run(pid: i64, tids: &[i64], schedule: &[usize]) -> Vec<RunCall> {
    let mut made = vec![0i64; tids.len()];
    schedule
        .iter()
        .map(|&k| {
            let i = made[k];
            made[k] += 1;
            let config = 1000 * u64::try_from(k).unwrap() + i.unsigned_abs();
            ((pid, tids[k]), config, 3 + i)
        })
        .collect()
}

/// `rounds` rounds of calls, one per thread in `order` (spawn indexes).
fn rounds(order: &[usize], rounds: usize) -> Vec<usize> {
    order
        .iter()
        .copied()
        .cycle()
        .take(order.len() * rounds)
        .collect()
}

/// Four threads started in one order; in B another task took a tid
/// between the first and second thread's (202), and the threads reach
/// their first calls in another order. The spawn offset (tid − pid)
/// differs from the second thread on, the rank in tid order does not.
fn foreign_tid_runs() -> (Vec<RunCall>, Vec<RunCall>) {
    let a = run(100, &[101, 102, 103, 104], &rounds(&[0, 1, 2, 3], 20));
    let b = run(200, &[201, 203, 204, 205], &rounds(&[2, 0, 3, 1], 20));
    (a, b)
}

#[test]
fn auto_pairs_threads_by_rank_in_tid_order_despite_a_foreign_tid() {
    let (a, b) = foreign_tid_runs();
    let c = compare_auto(&a, &b, 16);
    assert!(c.differences.is_empty(), "{:?}", c.differences);
    assert!(c.summary.equal());
    assert_eq!(c.summary.matched_by, "order");
    assert_eq!(c.summary.threads, (4, 4, 4));
    assert_eq!(c.summary.compared, 80);
    assert_eq!(c.summary.window_overflows, 0);
    // A replay pairs by the same tids.
    let replay = compare_auto(&a, &a, 16);
    assert!(replay.summary.equal());
    assert_eq!(replay.summary.matched_by, "tid");
    assert_eq!(replay.summary.threads, (4, 4, 4));
}

#[test]
fn a_changed_result_is_reported_in_the_pair_of_the_same_rank() {
    let (a, mut b) = foreign_tid_runs();
    let third = (200, 204);
    let changed = b
        .iter_mut()
        .filter(|c| c.0 == third)
        .nth(5)
        .expect("the third thread makes 20 calls");
    changed.2 = -22;
    let c = compare_auto(&a, &b, 16);
    assert_eq!(
        c.differences,
        [(
            vec![Kind::Ret],
            (Some((100, 103)), Some(third)),
            Some(5),
            Some(5)
        )]
    );
    assert_eq!(c.summary.differing, 1);
    assert_eq!(c.summary.causes, 1);
    assert_eq!(c.summary.compared, 80);
}

/// Two threads make 60 calls, more than a window, before two more start;
/// in B the later two have tids with gaps and call first in the other
/// order.
#[test]
fn threads_that_start_late_still_pair_by_rank() {
    let window = 8;
    let mut schedule_a = rounds(&[0, 1], 30);
    let mut schedule_b = schedule_a.clone();
    schedule_a.extend(rounds(&[0, 1, 2, 3], 10));
    schedule_b.extend(rounds(&[0, 1, 3, 2], 10));
    let a = run(100, &[101, 102, 103, 104], &schedule_a);
    let b = run(200, &[201, 202, 204, 206], &schedule_b);
    let c = compare_auto(&a, &b, window);
    assert!(c.differences.is_empty(), "{:?}", c.differences);
    assert_eq!(c.summary.threads, (4, 4, 4));
    assert_eq!(c.summary.compared, 100);
    assert_eq!(c.summary.window_overflows, 0);
}

/// A starts four threads, B three (another task took a tid between its
/// first two): the first three pair by rank and compare equal, A's
/// fourth is A's only, every one of its calls reported as such.
#[test]
fn a_thread_without_a_counterpart_of_its_rank_is_one_runs_only() {
    let a = run(100, &[101, 102, 103, 104], &rounds(&[0, 1, 2, 3], 20));
    let b = run(200, &[201, 203, 204], &rounds(&[1, 0, 2], 20));
    let c = compare_auto(&a, &b, 16);
    assert_eq!(c.summary.threads, (4, 3, 3));
    assert_eq!(c.summary.threads_only, (1, 0));
    assert_eq!(c.summary.compared, 60);
    assert_eq!(c.summary.kinds.get(&Kind::OnlyInA), Some(&20));
    assert_eq!(c.summary.differing, 20);
    assert!(
        c.differences
            .iter()
            .all(|d| d.1 == (Some((100, 104)), None) && d.0 == [Kind::OnlyInA]),
        "{:?}",
        c.differences
    );
}

/// Threads that call in the reverse of their tid order, each five calls
/// after the one before: each has to be ranked before the next (smaller)
/// tid shows up, so the ranks follow first calls, in both runs alike,
/// and the runs still compare equal. Meanwhile no thread waits unpaired
/// for more than half a window of its process's calls: with no B at all,
/// what A holds stays within a window per thread, every call reported.
#[test]
fn threads_waiting_for_their_rank_hold_at_most_a_window() {
    let window = 8;
    let mut schedule = Vec::new();
    for started in 1..=5 {
        let order: Vec<usize> = (5 - started..5).rev().collect();
        schedule.extend(rounds(&order, 5));
    }
    let a = run(100, &[101, 102, 103, 104, 105], &schedule);
    let b = run(200, &[201, 204, 206, 207, 209], &schedule);
    let c = compare_auto(&a, &b, window);
    assert!(c.differences.is_empty(), "{:?}", c.differences);
    assert_eq!(c.summary.threads, (5, 5, 5));

    let alone = compare_auto(&a, &[], window);
    assert!(alone.most_queued.0 <= 5 * window, "{}", alone.most_queued.0);
    assert_eq!(alone.summary.kinds.get(&Kind::OnlyInA), Some(&a.len()));
    assert_eq!(alone.summary.threads, (5, 0, 0));
}

/// Two runs of one process id. A's thread 102 is ranked first, alone,
/// before B's 102 calls, which then pairs with it by tid; so when B's
/// thread 103 is ranked first in B, its place is taken. It pairs, as by
/// order, with the thread of A that has waited a window of calls without
/// a counterpart and began with the same call: A's 105, whose first
/// window of calls was by then reported as A's only.
#[test]
fn a_thread_whose_rank_was_taken_by_tid_pairs_with_one_that_waited() {
    let window = 8;
    let a_102 = run(100, &[102], &rounds(&[0], 5));
    let b_102 = run(100, &[102], &rounds(&[0], 5));
    let a_105 = run(100, &[101, 105], &rounds(&[1], 10));
    let b_103 = run(100, &[101, 103], &rounds(&[1], 10));
    let fed: Vec<(Side, RunCall)> = a_102
        .into_iter()
        .map(|c| (Side::A, c))
        .chain(b_102.into_iter().map(|c| (Side::B, c)))
        .chain(a_105.into_iter().map(|c| (Side::A, c)))
        .chain(b_103.into_iter().map(|c| (Side::B, c)))
        .collect();
    let c = compare_fed(&fed, window);
    assert_eq!(c.summary.threads, (2, 2, 2));
    // A's 105 alone for a window: its first 8 calls A's only. Then B's
    // 103 fills the window with no common call in sight: A's last 2
    // calls against its first 2, its next 6 and last 2 B's only.
    assert_eq!(c.summary.window_overflows, 2);
    let in_105: Vec<_> = c
        .differences
        .iter()
        .filter(|d| d.1 .0 == Some((100, 105)))
        .collect();
    assert_eq!(in_105.len(), 18, "{:?}", c.differences);
    assert!(in_105[..8]
        .iter()
        .all(|d| d.1 .1.is_none() && d.0 == [Kind::OnlyInA]));
    assert!(in_105[8..].iter().all(|d| d.1 .1 == Some((100, 103))));
    assert_eq!(c.summary.compared, 5 + 2);
}
