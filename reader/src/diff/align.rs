//! Threads paired as they appear, calls aligned per thread within the
//! window as they arrive, and aligned calls compared on their outcomes.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::path::Path;

use super::load::{Arrived, Item, Source};
use super::{
    DiffCall, DiffError, Difference, InputKey, Kind, Matching, Options, Outcome, Role, Summary,
    Thread,
};

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

/// One of the two runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Run A.
    A,
    /// Run B.
    B,
}

/// One thread's calls of one run, waiting to be aligned.
#[derive(Debug, Default)]
struct Queue {
    thread: Option<Thread>,
    /// Its first call's key.
    first: Option<InputKey>,
    /// The index in its thread of the next call to arrive.
    next_index: usize,
    calls: VecDeque<(usize, DiffCall)>,
}

/// A thread of A and its counterpart in B (either may not have appeared).
#[derive(Debug, Default)]
struct ThreadPair {
    a: Queue,
    b: Queue,
    /// The indexes of the cause's calls, once the thread has diverged.
    cause: Option<(Option<usize>, Option<usize>)>,
    /// How many calls were queued at the last search for a common call
    /// that decided nothing (0 after a decision).
    searched_at: usize,
}

/// The streaming comparison: calls go in with [`Differ::push`] in each
/// run's time order, differences come out through `out` as soon as they
/// are decided, the counts at [`Differ::finish`].
#[derive(Debug)]
pub struct Differ {
    opts: Options,
    pairs: Vec<ThreadPair>,
    /// Each run's threads, with the index of their pair.
    slots: [HashMap<Thread, usize>; 2],
    /// By tid: the pair of each thread.
    by_tid_pairs: HashMap<Thread, usize>,
    /// Each run's processes by rank of first appearance.
    processes: [HashMap<i64, usize>; 2],
    /// By order: the pairs of each process rank, in order of creation.
    by_process_rank: HashMap<usize, Vec<usize>>,
    /// Calls waiting in each run's queues.
    queued: [usize; 2],
    summary: Summary,
}

fn at(side: Side) -> usize {
    match side {
        Side::A => 0,
        Side::B => 1,
    }
}

impl Differ {
    /// A comparison pairing threads as `opts.matching` says: by tid, by
    /// order of first appearance, or (auto) by order with the same tid
    /// preferred, reported as by tid when every thread found its own tid
    /// in the other run.
    #[must_use]
    pub fn new(opts: Options) -> Self {
        Differ {
            opts,
            pairs: Vec::new(),
            slots: [HashMap::new(), HashMap::new()],
            by_tid_pairs: HashMap::new(),
            processes: [HashMap::new(), HashMap::new()],
            by_process_rank: HashMap::new(),
            queued: [0, 0],
            summary: Summary {
                matched_by: if opts.matching == Matching::Tid {
                    "tid"
                } else {
                    "order"
                },
                window: opts.window.max(1),
                duration_shown: opts.duration_ratio.is_some(),
                ..Summary::default()
            },
        }
    }

    /// Calls of `side` waiting for their counterpart.
    #[must_use]
    pub fn queued(&self, side: Side) -> usize {
        self.queued[at(side)]
    }

    /// Counts a LOST record of `side`.
    pub fn lost(&mut self, side: Side) {
        match side {
            Side::A => self.summary.lost_records.0 += 1,
            Side::B => self.summary.lost_records.1 += 1,
        }
    }

    /// The pair of `side`'s thread, found or made on its first call
    /// (`first`). By tid: the other run's same (pid, tid). Otherwise, in
    /// the process of the same rank, a thread of the other run still
    /// without a counterpart: auto, the same tid, else the same place in
    /// the process's spawn order; order, the same first call; else one
    /// that has waited a window of calls (with the same first call if
    /// there is one); else none yet.
    fn pair_of(&mut self, side: Side, thread: Thread, first: &InputKey) -> usize {
        let s = at(side);
        if let Some(&p) = self.slots[s].get(&thread) {
            return p;
        }
        let window = self.summary.window;
        let pairs = &mut self.pairs;
        let p = if self.opts.matching == Matching::Tid {
            *self.by_tid_pairs.entry(thread).or_insert_with(|| {
                pairs.push(ThreadPair::default());
                pairs.len() - 1
            })
        } else {
            let next = self.processes[s].len();
            let rank = *self.processes[s].entry(thread.0).or_insert(next);
            let of_rank = self.by_process_rank.entry(rank).or_default();
            let waiting = |p: &usize| {
                let pair = &pairs[*p];
                match side {
                    Side::A => (pair.a.thread.is_none()).then_some(&pair.b),
                    Side::B => (pair.b.thread.is_none()).then_some(&pair.a),
                }
            };
            // Which thread calls first is a race, so a thread waits for
            // its own counterpart. Auto: the other run's thread with the
            // same (pid, tid), else the one at the same place in its
            // process's spawn order (tid - pid: a process's threads get
            // consecutive tids in the order it starts them; every
            // thread may begin with the same call, a group leader).
            // Order: the first with the same first call. Either way,
            // once the other run's thread has waited a window of calls,
            // one with the same first call, then any, will do.
            let spawn_offset = |t: Thread| t.1 - t.0;
            let find = |fits: &dyn Fn(&Queue) -> bool| {
                of_rank.iter().find(|p| waiting(p).is_some_and(fits))
            };
            let same_first = |q: &Queue| q.first.as_ref() == Some(first);
            let same_tid = |q: &Queue| q.thread == Some(thread);
            let same_offset = |q: &Queue| {
                q.thread
                    .is_some_and(|t| spawn_offset(t) == spawn_offset(thread))
            };
            let waited_same_first = |q: &Queue| same_first(q) && q.next_index >= window;
            let waited = |q: &Queue| q.next_index >= window;
            let found = if self.opts.matching == Matching::Auto {
                find(&same_tid).or_else(|| find(&same_offset))
            } else {
                find(&same_first)
            }
            .or_else(|| find(&waited_same_first))
            .or_else(|| find(&waited));
            if let Some(&p) = found {
                p
            } else {
                pairs.push(ThreadPair::default());
                of_rank.push(pairs.len() - 1);
                pairs.len() - 1
            }
        };
        let pair = &mut self.pairs[p];
        let (queue, other) = match side {
            Side::A => (&mut pair.a, &pair.b),
            Side::B => (&mut pair.b, &pair.a),
        };
        queue.thread = Some(thread);
        queue.first = Some(first.clone());
        if other.thread.is_some() {
            self.summary.threads.2 += 1;
        }
        match side {
            Side::A => self.summary.threads.0 += 1,
            Side::B => self.summary.threads.1 += 1,
        }
        self.slots[s].insert(thread, p);
        p
    }

    /// Takes the next call of `side` (in that run's time order).
    ///
    /// # Errors
    /// What `out` returns.
    pub fn push(
        &mut self,
        side: Side,
        call: DiffCall,
        out: &mut dyn FnMut(&Difference) -> io::Result<()>,
    ) -> io::Result<()> {
        let p = self.pair_of(side, (call.pid, call.tid), &call.key);
        let pair = &mut self.pairs[p];
        let queue = match side {
            Side::A => {
                self.summary.calls.0 += 1;
                &mut pair.a
            }
            Side::B => {
                self.summary.calls.1 += 1;
                &mut pair.b
            }
        };
        queue.calls.push_back((queue.next_index, call));
        queue.next_index += 1;
        self.queued[at(side)] += 1;
        self.advance(p, false, out)
    }

    /// At the end, the threads of a process that found no counterpart
    /// and have had none of their calls reported yet: paired in spawn
    /// order (by tid) with those of the other run's process of the same
    /// rank, as a thread that made fewer calls than a window never
    /// qualifies for the waited-a-window pairing.
    fn pair_the_rest_by_spawn_order(&mut self) {
        let untouched = |q: &Queue| q.thread.is_some() && q.calls.len() == q.next_index;
        for of_rank in self.by_process_rank.values() {
            let mut alone: [Vec<(i64, usize)>; 2] = [Vec::new(), Vec::new()];
            for &p in of_rank {
                let pair = &self.pairs[p];
                match (untouched(&pair.a), untouched(&pair.b)) {
                    (true, false) if pair.b.thread.is_none() => {
                        alone[0].push((pair.a.thread.map_or(0, |t| t.1), p));
                    }
                    (false, true) if pair.a.thread.is_none() => {
                        alone[1].push((pair.b.thread.map_or(0, |t| t.1), p));
                    }
                    _ => {}
                }
            }
            alone[0].sort_unstable();
            alone[1].sort_unstable();
            for (&(_, pa), &(_, pb)) in alone[0].iter().zip(&alone[1]) {
                self.pairs[pa].b = std::mem::take(&mut self.pairs[pb].b);
                self.summary.threads.2 += 1;
            }
        }
    }

    /// Ends both runs: aligns what is left and returns the counts.
    ///
    /// # Errors
    /// What `out` returns.
    pub fn finish(
        mut self,
        out: &mut dyn FnMut(&Difference) -> io::Result<()>,
    ) -> io::Result<Summary> {
        self.pair_the_rest_by_spawn_order();
        for p in 0..self.pairs.len() {
            self.advance(p, true, out)?;
            match (&self.pairs[p].a.thread, &self.pairs[p].b.thread) {
                (Some(_), None) => self.summary.threads_only.0 += 1,
                (None, Some(_)) => self.summary.threads_only.1 += 1,
                _ => {}
            }
        }
        if self.opts.matching == Matching::Auto
            && self
                .pairs
                .iter()
                .all(|pair| pair.a.thread.is_some() && pair.a.thread == pair.b.thread)
        {
            self.summary.matched_by = "tid";
        }
        Ok(self.summary)
    }

    /// Reports a difference of pair `p` (its thread's cause, or a
    /// consequence of it).
    fn report(
        &mut self,
        p: usize,
        kinds: Vec<Kind>,
        a: Option<(usize, DiffCall)>,
        b: Option<(usize, DiffCall)>,
        out: &mut dyn FnMut(&Difference) -> io::Result<()>,
    ) -> io::Result<()> {
        if kinds.is_empty() {
            return Ok(());
        }
        let pair = &mut self.pairs[p];
        let role = if let Some((ca, cb)) = pair.cause {
            self.summary.consequences += 1;
            Role::Consequence { a: ca, b: cb }
        } else {
            pair.cause = Some((a.as_ref().map(|x| x.0), b.as_ref().map(|x| x.0)));
            self.summary.causes += 1;
            Role::Cause
        };
        self.summary.differing += 1;
        for k in &kinds {
            *self.summary.kinds.entry(*k).or_default() += 1;
        }
        out(&Difference {
            kinds,
            thread: (pair.a.thread, pair.b.thread),
            a,
            b,
            role,
        })
    }

    /// Takes the head calls of pair `p`: `paired` of each run compared
    /// (flagged "input differs" when their keys differ), then the rest of
    /// the `from_a` and `from_b` heads as one run's only.
    fn take(
        &mut self,
        p: usize,
        (from_a, from_b): (usize, usize),
        out: &mut dyn FnMut(&Difference) -> io::Result<()>,
    ) -> io::Result<()> {
        let paired = from_a.min(from_b);
        self.queued[0] -= from_a;
        self.queued[1] -= from_b;
        for _ in 0..paired {
            let pair = &mut self.pairs[p];
            let (Some(a), Some(b)) = (pair.a.calls.pop_front(), pair.b.calls.pop_front()) else {
                unreachable!("`take` is given at most the queued calls");
            };
            let mut kinds = compare(&a.1.outcome, &b.1.outcome, &self.opts);
            if a.1.key != b.1.key {
                kinds.push(Kind::Input);
            }
            self.summary.compared += 1;
            self.report(p, kinds, Some(a), Some(b), out)?;
        }
        for _ in paired..from_a {
            let a = self.pairs[p].a.calls.pop_front();
            self.report(p, vec![Kind::OnlyInA], a, None, out)?;
        }
        for _ in paired..from_b {
            let b = self.pairs[p].b.calls.pop_front();
            self.report(p, vec![Kind::OnlyInB], None, b, out)?;
        }
        Ok(())
    }

    /// Aligns what pair `p` holds, as far as can be decided (at the
    /// `end` of both runs, everything).
    fn advance(
        &mut self,
        p: usize,
        end: bool,
        out: &mut dyn FnMut(&Difference) -> io::Result<()>,
    ) -> io::Result<()> {
        loop {
            let pair = &self.pairs[p];
            let (la, lb) = (pair.a.calls.len(), pair.b.calls.len());
            if la == 0 || lb == 0 {
                // A lead of one run: its counterpart may still come,
                // within the window.
                if end {
                    self.take(p, (la, lb), out)?;
                } else if la.max(lb) >= self.summary.window {
                    self.summary.window_overflows += 1;
                    self.take(p, (la, lb), out)?;
                }
                return Ok(());
            }
            if pair.a.calls[0].1.key == pair.b.calls[0].1.key {
                self.take(p, (1, 1), out)?;
                continue;
            }
            let window = self.summary.window;
            // A search costs the queued calls: searching again only once
            // they have doubled (or at the window, or the end) keeps a
            // divergent stretch linear. The nearest common call is the
            // same, found later: calls only join the queues meanwhile.
            if !end && la.max(lb) < window && la + lb < 2 * pair.searched_at {
                return Ok(());
            }
            let anchor = nearest_common(&pair.a.calls, &pair.b.calls);
            let stretch = match anchor {
                // No nearer common call can arrive.
                Some((i, j)) if end || la.min(lb) >= i + j || la.max(lb) >= window => (i, j),
                None if end => (la, lb),
                None if la.max(lb) >= window => {
                    self.summary.window_overflows += 1;
                    (la, lb)
                }
                _ => {
                    self.pairs[p].searched_at = la + lb;
                    return Ok(());
                }
            };
            self.pairs[p].searched_at = 0;
            self.take(p, stretch, out)?;
        }
    }
}

/// The pair of queued calls with equal keys and the least i + j.
fn nearest_common(
    a: &VecDeque<(usize, DiffCall)>,
    b: &VecDeque<(usize, DiffCall)>,
) -> Option<(usize, usize)> {
    let mut first_in_b: HashMap<&InputKey, usize> = HashMap::with_capacity(b.len());
    for (j, (_, c)) in b.iter().enumerate() {
        first_in_b.entry(&c.key).or_insert(j);
    }
    let mut best: Option<(usize, usize)> = None;
    for (i, (_, c)) in a.iter().enumerate() {
        if best.is_some_and(|(bi, bj)| i >= bi + bj) {
            break;
        }
        if let Some(&j) = first_in_b.get(&c.key) {
            if best.map_or(true, |(bi, bj)| i + j < bi + bj) {
                best = Some((i, j));
            }
        }
    }
    best
}

/// Compares run A with run B, read as streams: each difference goes to
/// `out` as soon as it is decided, the counts are returned.
///
/// # Errors
/// An unreadable run, or what `out` returns (as [`DiffError::Output`]).
pub fn diff(
    path_a: &Path,
    path_b: &Path,
    opts: &Options,
    out: &mut dyn FnMut(&Difference) -> io::Result<()>,
) -> Result<Summary, DiffError> {
    let mut arrived = [Arrived::default(), Arrived::default()];
    let [arrived_a, arrived_b] = &mut arrived;
    let mut runs = [
        Source::open(path_a, arrived_a)?,
        Source::open(path_b, arrived_b)?,
    ];
    let mut differ = Differ::new(*opts);
    let mut ended = [false, false];
    let mut feed = |differ: &mut Differ, side: Side, item: Item| match item {
        Item::Call(c) => differ.push(side, c, out).map_err(DiffError::Output),
        Item::Lost => {
            differ.lost(side);
            Ok(())
        }
    };
    while !(ended[0] && ended[1]) {
        // Read from the run that is behind: the one with fewer calls
        // waiting for their counterpart.
        let side = match ended {
            [true, _] => Side::B,
            [_, true] => Side::A,
            _ if differ.queued(Side::B) < differ.queued(Side::A) => Side::B,
            _ => Side::A,
        };
        let s = at(side);
        match runs[s].next()? {
            Some(item) => feed(&mut differ, side, item)?,
            None => ended[s] = true,
        }
    }
    differ.finish(out).map_err(DiffError::Output)
}
