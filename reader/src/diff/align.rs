//! Threads paired (by tid or by spawn order), calls aligned within each
//! pair (Myers), and aligned calls compared on their outcomes.

use std::collections::{BTreeMap, BTreeSet};

use super::{
    DiffCall, Difference, InputKey, Kind, Matching, Options, Outcome, Report, Run, Summary, Thread,
    ThreadPair,
};

/// Threads paired by spawn order: rank of the process by pid, rank of the
/// thread by tid within it.
fn order_ranks(run: &Run) -> BTreeMap<(usize, usize), (i64, i64)> {
    let mut by_pid: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for &(pid, tid) in run.threads.keys() {
        by_pid.entry(pid).or_default().push(tid);
    }
    let mut out = BTreeMap::new();
    for (p, (pid, mut tids)) in by_pid.into_iter().enumerate() {
        tids.sort_unstable();
        for (t, tid) in tids.into_iter().enumerate() {
            out.insert((p, t), (pid, tid));
        }
    }
    out
}

/// Pairs the threads of the two runs. By tid, a thread is its (pid, tid)
/// (the same thing, unless a run reused a tid in another process: then
/// those are two threads, not one whose calls would be lost).
fn pair_threads(a: &Run, b: &Run, m: Matching) -> (&'static str, Vec<ThreadPair>) {
    let by_tid = match m {
        Matching::Tid => true,
        Matching::Order => false,
        Matching::Auto => a.threads.keys().eq(b.threads.keys()),
    };
    if by_tid {
        let all: BTreeSet<Thread> = a.threads.keys().chain(b.threads.keys()).copied().collect();
        let pairs = all
            .into_iter()
            .map(|t| {
                (
                    a.threads.contains_key(&t).then_some(t),
                    b.threads.contains_key(&t).then_some(t),
                )
            })
            .collect();
        return ("tid", pairs);
    }
    let (ra, rb) = (order_ranks(a), order_ranks(b));
    let all: BTreeSet<(usize, usize)> = ra.keys().chain(rb.keys()).copied().collect();
    let pairs = all
        .into_iter()
        .map(|k| (ra.get(&k).copied(), rb.get(&k).copied()))
        .collect();
    ("order", pairs)
}

/// What differs between two paired calls.
fn compare(a: &Outcome, b: &Outcome, opts: &Options) -> Vec<Kind> {
    let mut kinds = Vec::new();
    if a.has_exit && b.has_exit {
        // A success is a success whatever the fd; a failure is its errno.
        let class = |o: &Outcome| o.errno.or(o.ret.filter(|r| *r < 0));
        if class(a) != class(b) {
            kinds.push(Kind::Ret);
        }
        if a.required_size != b.required_size {
            kinds.push(Kind::RequiredSize);
        }
        if a.size_written != b.size_written {
            kinds.push(Kind::SizeWritten);
        }
    }
    if a.has_entry && b.has_entry {
        if a.status != b.status {
            kinds.push(Kind::Status);
        }
        if a.fault_offset != b.fault_offset {
            kinds.push(Kind::FaultOffset);
        }
    }
    if a.has_exit
        && b.has_exit
        && (a.double_fetch != b.double_fetch || a.kernel_attr != b.kernel_attr)
    {
        kinds.push(Kind::DoubleFetch);
    }
    if let (Some(r), Some(x), Some(y)) = (opts.duration_ratio, a.duration_ns, b.duration_ns) {
        #[allow(clippy::cast_precision_loss)]
        let (lo, hi) = (x.min(y).max(1) as f64, x.max(y) as f64);
        if hi > lo * r {
            kinds.push(Kind::Duration);
        }
    }
    kinds
}

/// Compares run A with run B.
#[must_use]
pub fn diff<'r>(a: &'r Run, b: &'r Run, opts: &Options) -> Report<'r> {
    let (matched_by, pairs) = pair_threads(a, b, opts.matching);
    let mut summary = Summary {
        matched_by,
        threads: (a.threads.len(), b.threads.len(), 0),
        calls: (a.calls(), b.calls()),
        lost_records: (a.lost_records, b.lost_records),
        ..Summary::default()
    };
    let mut differences = Vec::new();
    for (ta, tb) in pairs {
        let ca: &'r [DiffCall] = ta
            .and_then(|t| a.threads.get(&t))
            .map_or(&[], Vec::as_slice);
        let cb: &'r [DiffCall] = tb
            .and_then(|t| b.threads.get(&t))
            .map_or(&[], Vec::as_slice);
        match (ta, tb) {
            (Some(_), Some(_)) => summary.threads.2 += 1,
            (Some(_), None) => summary.threads_only.0 += 1,
            (None, _) => summary.threads_only.1 += 1,
        }
        let ka: Vec<&InputKey> = ca.iter().map(|c| &c.key).collect();
        let kb: Vec<&InputKey> = cb.iter().map(|c| &c.key).collect();
        let hunks = similar::capture_diff_slices(similar::Algorithm::Myers, &ka, &kb);
        let mut push = |kinds: Vec<Kind>, ia: Option<usize>, ib: Option<usize>| {
            if kinds.is_empty() {
                return;
            }
            differences.push(Difference {
                kinds,
                thread: (ta, tb),
                a: ia.map(|i| (i, &ca[i])),
                b: ib.map(|i| (i, &cb[i])),
            });
        };
        for hunk in hunks {
            let (ia, la, ib, lb) = match hunk {
                similar::DiffOp::Equal {
                    old_index,
                    new_index,
                    len,
                } => (old_index, len, new_index, len),
                similar::DiffOp::Delete {
                    old_index, old_len, ..
                } => (old_index, old_len, 0, 0),
                similar::DiffOp::Insert {
                    new_index, new_len, ..
                } => (0, 0, new_index, new_len),
                similar::DiffOp::Replace {
                    old_index,
                    old_len,
                    new_index,
                    new_len,
                } => (old_index, old_len, new_index, new_len),
            };
            let paired = la.min(lb);
            for k in 0..paired {
                let (i, j) = (ia + k, ib + k);
                let mut kinds = compare(&ca[i].outcome, &cb[j].outcome, opts);
                if ca[i].key != cb[j].key {
                    kinds.push(Kind::Input);
                }
                summary.compared += 1;
                push(kinds, Some(i), Some(j));
            }
            for i in ia + paired..ia + la {
                push(vec![Kind::OnlyInA], Some(i), None);
            }
            for j in ib + paired..ib + lb {
                push(vec![Kind::OnlyInB], None, Some(j));
            }
        }
    }
    summary.differing = differences.len();
    for d in &differences {
        for k in &d.kinds {
            *summary.kinds.entry(*k).or_default() += 1;
        }
    }
    Report {
        differences,
        summary,
        duration_shown: opts.duration_ratio.is_some(),
    }
}
