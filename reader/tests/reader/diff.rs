//! The streaming comparison ([`antinomie_reader::diff::Differ`]) fed
//! call by call: threads that diverge after a changed result, equal
//! runs, and a divergence longer than the alignment window.

use serde_json::{json, Value};

use antinomie_reader::diff::{
    DiffCall, Differ, Difference, Kind, Matching, Options, Role, Side, Summary,
};

use crate::support::data_dir;

/// The first call of the guest's basic run (a software event that
/// succeeded), as a JSON line.
fn template() -> Value {
    let text = std::fs::read_to_string(data_dir().join("guest/basic/expected.jsonl")).unwrap();
    serde_json::from_str(text.lines().next().unwrap()).unwrap()
}

/// A call of thread `tid` of process 100 whose attr has `config`,
/// returning `ret` (`-22` for EINVAL).
fn call(template: &Value, tid: i64, config: u64, ret: i64) -> DiffCall {
    let mut v = template.clone();
    v["pid"] = json!(100);
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
                    .push(side, call(&t, tid, config, ret), &mut out)
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
