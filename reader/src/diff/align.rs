// SPDX-License-Identifier: GPL-2.0-only
//! Threads paired (by tid, by first call, or by rank in their process's
//! tid order), calls aligned per thread within the window as they arrive,
//! and aligned calls compared on their outcomes.

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

impl Side {
    fn other(self) -> Side {
        match self {
            Side::A => Side::B,
            Side::B => Side::A,
        }
    }
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

impl Queue {
    /// The queue of `thread`, whose first call has key `first`, before
    /// that call is pushed.
    fn of(thread: Thread, first: &InputKey) -> Self {
        Queue {
            thread: Some(thread),
            first: Some(first.clone()),
            ..Queue::default()
        }
    }

    fn push(&mut self, call: DiffCall) {
        self.calls.push_back((self.next_index, call));
        self.next_index += 1;
    }
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

impl ThreadPair {
    fn of(&self, side: Side) -> &Queue {
        match side {
            Side::A => &self.a,
            Side::B => &self.b,
        }
    }

    fn of_mut(&mut self, side: Side) -> &mut Queue {
        match side {
            Side::A => &mut self.a,
            Side::B => &mut self.b,
        }
    }
}

/// A thread of [`Matching::Auto`] whose rank in its process's tid order
/// is not settled yet, with its calls so far.
#[derive(Debug)]
struct Unsettled {
    tid: i64,
    /// How many calls its process had made before its first call.
    first_at: usize,
    queue: Queue,
}

/// A process of one run.
#[derive(Debug)]
struct Process {
    /// Its rank among its run's processes, by first appearance.
    rank: usize,
    /// The calls it has made so far ([`Matching::Auto`]).
    calls: usize,
    /// Its threads not yet paired whose rank is not settled
    /// ([`Matching::Auto`]).
    unsettled: Vec<Unsettled>,
    /// How many of its threads have been given a rank ([`Matching::Auto`]).
    ranked: usize,
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
    /// Each run's processes, by pid.
    processes: [HashMap<i64, Process>; 2],
    /// The pairs of each process rank, in order of creation.
    by_process_rank: HashMap<usize, Vec<usize>>,
    /// Auto: the pair of each (process rank, thread rank).
    by_thread_rank: HashMap<(usize, usize), usize>,
    /// Calls waiting in each run's queues (paired or not).
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
    /// order of first appearance, or (auto) by rank in their process's
    /// tid order with the same tid preferred, reported as by tid when
    /// every thread found its own tid in the other run.
    #[must_use]
    pub fn new(opts: Options) -> Self {
        Differ {
            opts,
            pairs: Vec::new(),
            slots: [HashMap::new(), HashMap::new()],
            by_tid_pairs: HashMap::new(),
            processes: [HashMap::new(), HashMap::new()],
            by_process_rank: HashMap::new(),
            by_thread_rank: HashMap::new(),
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

    /// `side`'s process `pid`, ranked on its first call.
    fn process(&mut self, side: Side, pid: i64) -> &mut Process {
        let run = &mut self.processes[at(side)];
        let rank = run.len();
        run.entry(pid).or_insert_with(|| Process {
            rank,
            calls: 0,
            unsettled: Vec::new(),
            ranked: 0,
        })
    }

    /// A new pair in the process of rank `rank`.
    fn new_pair(&mut self, rank: usize) -> usize {
        self.pairs.push(ThreadPair::default());
        let p = self.pairs.len() - 1;
        self.by_process_rank.entry(rank).or_default().push(p);
        p
    }

    /// In the process of rank `rank`, the first pair still without a
    /// thread of `side` whose thread of the other run `fits`.
    fn find_waiting(
        &self,
        side: Side,
        rank: usize,
        fits: &dyn Fn(&Queue) -> bool,
    ) -> Option<usize> {
        self.by_process_rank.get(&rank)?.iter().copied().find(|&p| {
            let pair = &self.pairs[p];
            pair.of(side).thread.is_none() && fits(pair.of(side.other()))
        })
    }

    /// Puts `side`'s thread `thread`, with what it has queued, into pair
    /// `p`.
    fn install(&mut self, side: Side, p: usize, thread: Thread, queue: Queue) {
        let pair = &mut self.pairs[p];
        *pair.of_mut(side) = queue;
        if pair.of(side.other()).thread.is_some() {
            self.summary.threads.2 += 1;
        }
        match side {
            Side::A => self.summary.threads.0 += 1,
            Side::B => self.summary.threads.1 += 1,
        }
        self.slots[at(side)].insert(thread, p);
    }

    /// The pair of `side`'s thread with [`Matching::Tid`] or
    /// [`Matching::Order`], found or made on its first call (`first`).
    /// By tid: the other run's same (pid, tid). By order: in the process
    /// of the same rank, a thread of the other run still without a
    /// counterpart with the same first call, else one that has waited a
    /// window of calls (with the same first call if there is one); else
    /// none yet.
    fn pair_of(&mut self, side: Side, thread: Thread, first: &InputKey) -> usize {
        if let Some(&p) = self.slots[at(side)].get(&thread) {
            return p;
        }
        let p = if self.opts.matching == Matching::Tid {
            let pairs = &mut self.pairs;
            *self.by_tid_pairs.entry(thread).or_insert_with(|| {
                pairs.push(ThreadPair::default());
                pairs.len() - 1
            })
        } else {
            // Which thread calls first is a race, so a thread waits for
            // the one that makes the same calls: the first with the same
            // first call. Once the other run's thread has waited a
            // window of calls, one with the same first call, then any,
            // will do.
            let rank = self.process(side, thread.0).rank;
            let window = self.summary.window;
            let same_first = |q: &Queue| q.first.as_ref() == Some(first);
            let waited_same_first = |q: &Queue| same_first(q) && q.next_index >= window;
            let waited = |q: &Queue| q.next_index >= window;
            self.find_waiting(side, rank, &same_first)
                .or_else(|| self.find_waiting(side, rank, &waited_same_first))
                .or_else(|| self.find_waiting(side, rank, &waited))
                .unwrap_or_else(|| self.new_pair(rank))
        };
        self.install(side, p, thread, Queue::of(thread, first));
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
        match side {
            Side::A => self.summary.calls.0 += 1,
            Side::B => self.summary.calls.1 += 1,
        }
        self.queued[at(side)] += 1;
        if self.opts.matching == Matching::Auto {
            return self.push_by_rank(side, call, out);
        }
        let p = self.pair_of(side, (call.pid, call.tid), &call.key);
        self.pairs[p].of_mut(side).push(call);
        self.advance(p, false, out)
    }

    /// How many calls a process makes after a thread's first call before
    /// that thread's rank is settled: half a window, so that a settled
    /// thread's queue leaves the other half of the window for its
    /// counterpart, settled the same way in the other run, to arrive
    /// before the queue overflows.
    fn settle_after(&self) -> usize {
        (self.summary.window / 2).max(1)
    }

    /// [`Matching::Auto`]: takes the next call of `side`.
    ///
    /// A thread pairs with the other run's thread of the same (pid, tid)
    /// in the process of the same rank if it is still without a
    /// counterpart (a replay, or two runs in freshly booted guests whose
    /// ids agree). Otherwise it pairs by rank in its process's tid order:
    /// the k-th thread by ascending tid of A with the k-th of B. A
    /// process's threads get increasing tids in the order it starts them,
    /// whatever other tasks take tids in between, so the rank is the same
    /// in both runs where the spawn offset (tid − pid) is not. (After a
    /// pid wrap-around a later thread has a smaller tid: not handled, the
    /// wrap is rare within one process.) Which thread calls first is a
    /// race, and a thread's rank is only known once the threads with
    /// smaller tids have called, so a thread's calls wait, unpaired,
    /// until its rank is settled ([`Differ::settle`]).
    fn push_by_rank(
        &mut self,
        side: Side,
        call: DiffCall,
        out: &mut dyn FnMut(&Difference) -> io::Result<()>,
    ) -> io::Result<()> {
        let thread = (call.pid, call.tid);
        let process = self.process(side, thread.0);
        process.calls += 1;
        let rank = process.rank;
        let unsettled = process.unsettled.iter().position(|u| u.tid == thread.1);
        if let Some(&p) = self.slots[at(side)].get(&thread) {
            self.pairs[p].of_mut(side).push(call);
            self.advance(p, false, out)?;
        } else if let Some(i) = unsettled {
            self.process(side, thread.0).unsettled[i].queue.push(call);
        } else if let Some(p) = self.same_tid(side, rank, thread) {
            let mut queue = Queue::of(thread, &call.key);
            queue.push(call);
            self.install(side, p, thread, queue);
            self.advance(p, false, out)?;
        } else {
            let process = self.process(side, thread.0);
            let mut queue = Queue::of(thread, &call.key);
            queue.push(call);
            process.unsettled.push(Unsettled {
                tid: thread.1,
                first_at: process.calls - 1,
                queue,
            });
        }
        self.settle(side, thread.0, false, out)
    }

    /// The pair for `side`'s new thread `thread` (of the process of rank
    /// `rank`) by the same (pid, tid) in the other run's process of the
    /// same rank, if that thread is still without a counterpart: its
    /// pair, or a new one if its rank is not settled yet (it then takes
    /// no rank).
    fn same_tid(&mut self, side: Side, rank: usize, thread: Thread) -> Option<usize> {
        let other = side.other();
        let process = self.processes[at(other)].get_mut(&thread.0)?;
        if process.rank != rank {
            return None;
        }
        if let Some(i) = process.unsettled.iter().position(|u| u.tid == thread.1) {
            let found = process.unsettled.swap_remove(i);
            let p = self.new_pair(rank);
            self.install(other, p, thread, found.queue);
            return Some(p);
        }
        let &p = self.slots[at(other)].get(&thread)?;
        self.pairs[p].of(side).thread.is_none().then_some(p)
    }

    /// Settles the ranks of `side`'s threads of process `pid` that can be
    /// settled, and pairs them: once the process has made
    /// [`Differ::settle_after`] calls since a thread's first call (or at
    /// the `end`), a thread with a smaller tid that has not called yet
    /// is taken not to come, so that thread and the unsettled ones with
    /// smaller tids get the next ranks in tid order. An unsettled
    /// thread's queue thus never exceeds half a window. A thread with a
    /// smaller tid that calls later still (started long before its first
    /// call) gets the next rank free, decided by what is known then:
    /// the same rank as its counterpart if the other run's thread came
    /// as late.
    fn settle(
        &mut self,
        side: Side,
        pid: i64,
        end: bool,
        out: &mut dyn FnMut(&Difference) -> io::Result<()>,
    ) -> io::Result<()> {
        let settle_after = self.settle_after();
        loop {
            let Some(process) = self.processes[at(side)].get_mut(&pid) else {
                return Ok(());
            };
            let Some(oldest) = process.unsettled.iter().min_by_key(|u| u.first_at) else {
                return Ok(());
            };
            if !end && process.calls - oldest.first_at < settle_after {
                return Ok(());
            }
            let bound = oldest.tid;
            let (mut ready, rest): (Vec<Unsettled>, Vec<Unsettled>) =
                std::mem::take(&mut process.unsettled)
                    .into_iter()
                    .partition(|u| u.tid <= bound);
            process.unsettled = rest;
            ready.sort_unstable_by_key(|u| u.tid);
            let (rank, first_thread_rank) = (process.rank, process.ranked);
            process.ranked += ready.len();
            for (thread_rank, u) in (first_thread_rank..).zip(ready) {
                self.pair_by_rank(side, (rank, thread_rank), (pid, u.tid), u.queue, out)?;
            }
        }
    }

    /// Pairs `side`'s thread `thread`, of rank `ranks` (process, thread),
    /// with the other run's thread of the same ranks. If a thread paired
    /// by tid has taken that place, with one of the other run that has
    /// waited a window of calls without a counterpart (with the same
    /// first call if there is one); else it waits alone.
    fn pair_by_rank(
        &mut self,
        side: Side,
        ranks: (usize, usize),
        thread: Thread,
        queue: Queue,
        out: &mut dyn FnMut(&Difference) -> io::Result<()>,
    ) -> io::Result<()> {
        let p = match self.by_thread_rank.get(&ranks) {
            Some(&p) if self.pairs[p].of(side).thread.is_none() => p,
            Some(_) => {
                let window = self.summary.window;
                let first = queue.first.clone();
                let waited_same_first = |q: &Queue| q.first == first && q.next_index >= window;
                let waited = |q: &Queue| q.next_index >= window;
                self.find_waiting(side, ranks.0, &waited_same_first)
                    .or_else(|| self.find_waiting(side, ranks.0, &waited))
                    .unwrap_or_else(|| self.new_pair(ranks.0))
            }
            None => {
                let p = self.new_pair(ranks.0);
                self.by_thread_rank.insert(ranks, p);
                p
            }
        };
        self.install(side, p, thread, queue);
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

    /// Ends `side`'s run: none of its threads calls any more, so those
    /// still waiting for their rank ([`Matching::Auto`]) are ranked now,
    /// and the other run's threads of the same ranks find them while
    /// that run is still read.
    ///
    /// # Errors
    /// What `out` returns.
    pub fn end(
        &mut self,
        side: Side,
        out: &mut dyn FnMut(&Difference) -> io::Result<()>,
    ) -> io::Result<()> {
        // In process order, so that the pairs, and so the report, come in
        // the same order every time.
        let mut pending: Vec<(usize, i64)> = self.processes[at(side)]
            .iter()
            .filter(|(_, process)| !process.unsettled.is_empty())
            .map(|(&pid, process)| (process.rank, pid))
            .collect();
        pending.sort_unstable();
        for (_, pid) in pending {
            self.settle(side, pid, true, out)?;
        }
        Ok(())
    }

    /// Ends both runs: aligns what is left and returns the counts.
    ///
    /// # Errors
    /// What `out` returns.
    pub fn finish(
        mut self,
        out: &mut dyn FnMut(&Difference) -> io::Result<()>,
    ) -> io::Result<Summary> {
        self.end(Side::A, out)?;
        self.end(Side::B, out)?;
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
    /// (flagged "input differs" unless they are the same call as made:
    /// [`InputKey::same_input`]), then the rest of
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
            if !a.1.key.same_input(&b.1.key) {
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
            // The same call as its caller made it, whatever each kernel
            // read of it: a pair, not a stretch to align around.
            if pair.a.calls[0].1.key.same_input(&pair.b.calls[0].1.key) {
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
            if best.is_none_or(|(bi, bj)| i + j < bi + bj) {
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
    let mut feed = |differ: &mut Differ, side: Side, item: Option<Item>| match item {
        Some(Item::Call(c)) => differ.push(side, c, out).map_err(DiffError::Output),
        Some(Item::Lost) => {
            differ.lost(side);
            Ok(())
        }
        None => differ.end(side, out).map_err(DiffError::Output),
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
        let item = runs[s].next()?;
        ended[s] = item.is_none();
        feed(&mut differ, side, item)?;
    }
    differ.finish(out).map_err(DiffError::Output)
}
