// SPDX-License-Identifier: GPL-2.0-only
//! Runs the decisions workload's plan: each case's steps in order, its
//! calls logged as they are made, then everything it opened closed before
//! the next case starts.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::sync::mpsc;

use super::table::CASES;
use super::{strings_layout, Env, Group, Open, Pid, Place, Step, STRINGS_AT};
use crate::call::{AttrMemory, LoggedCall, PAGE};
use crate::caller::{close, hex, Caller, Ptr};
use crate::random::BAD_FD;
use crate::system::Guarded;

/// Maps the strings kprobe and uprobe attrs point to, followed by an
/// unmapped page: at [`STRINGS_AT`] where that range is free (the address
/// is part of the attrs, which `reader diff` compares), else where the
/// kernel puts it. Returns where; the mapping lives as long as the process.
///
/// # Errors
/// The mapping failed.
pub(super) fn map_strings() -> Result<u64, String> {
    let (offsets, pages) = strings_layout();
    let len = (pages + 1) * PAGE;
    let map = |at: u64, flags: i32| {
        // SAFETY: a new anonymous mapping; MAP_FIXED_NOREPLACE never
        // replaces an existing one, and a hint alone moves nothing.
        let p = unsafe {
            libc::mmap(
                at as *mut libc::c_void,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | flags,
                -1,
                0,
            )
        };
        (p != libc::MAP_FAILED).then_some(p.cast::<u8>())
    };
    let base = map(STRINGS_AT, libc::MAP_FIXED_NOREPLACE)
        .or_else(|| map(0, 0))
        .ok_or_else(|| format!("mmap of the strings: {}", std::io::Error::last_os_error()))?;
    for (s, at) in offsets {
        let bytes = s.bytes();
        // SAFETY: the layout keeps every string inside the first `pages`
        // pages of the new mapping, which is writable.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), base.add(at), bytes.len()) };
    }
    // SAFETY: the last page lies inside the mapping just made, which
    // nothing else refers to.
    let rc = unsafe { libc::mprotect(base.add(pages * PAGE).cast(), PAGE, libc::PROT_NONE) };
    if rc != 0 {
        return Err(format!(
            "mprotect of the strings' guard page: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(base as u64)
}

/// The results of the walk, for its summary line.
#[derive(Debug, Default)]
pub(super) struct Tally {
    calls: usize,
    /// By result: 0 for success, else the errno.
    results: BTreeMap<i32, usize>,
}

impl Tally {
    fn add(&mut self, rec: &LoggedCall) {
        self.calls += 1;
        *self.results.entry(rec.errno.unwrap_or(0)).or_default() += 1;
    }
}

/// The errnos `perf_event_open` returns, by name.
fn errno_name(e: i32) -> String {
    let name = match e {
        0 => "success",
        libc::E2BIG => "E2BIG",
        libc::EACCES => "EACCES",
        libc::EADDRNOTAVAIL => "EADDRNOTAVAIL",
        libc::EBADF => "EBADF",
        libc::EBUSY => "EBUSY",
        libc::EFAULT => "EFAULT",
        libc::EILSEQ => "EILSEQ",
        libc::EINVAL => "EINVAL",
        libc::EMFILE => "EMFILE",
        libc::ENODEV => "ENODEV",
        libc::ENOENT => "ENOENT",
        libc::ENOSPC => "ENOSPC",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::EOVERFLOW => "EOVERFLOW",
        libc::EPERM => "EPERM",
        libc::ESRCH => "ESRCH",
        _ => return format!("errno {e}"),
    };
    name.to_owned()
}

impl fmt::Display for Tally {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ok = self.results.get(&0).copied().unwrap_or(0);
        write!(
            f,
            "{} calls, {ok} succeeded, {} distinct results:",
            self.calls,
            self.results.len()
        )?;
        for (e, n) in &self.results {
            write!(f, " {} {n}", errno_name(*e))?;
        }
        Ok(())
    }
}

/// A call the helper thread makes on its own task.
struct Request {
    case: String,
    ptr: Ptr,
    pid: i32,
    cpu: i32,
    group_fd: i32,
    flags: u64,
}

/// The second thread: "another task" of the same process.
struct Helper {
    requests: Option<mpsc::Sender<Request>>,
    records: mpsc::Receiver<LoggedCall>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Helper {
    fn start(script_id: u64, cpu: Option<u32>) -> Result<Helper, String> {
        let (requests, inbox) = mpsc::channel::<Request>();
        let (outbox, records) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("helper".to_owned())
            .spawn(move || {
                let mut c = Caller::new("decisions", script_id, 2, cpu);
                for r in inbox {
                    c.call(&r.case, &r.ptr, r.pid, r.cpu, r.group_fd, r.flags);
                    let rec = c.records.pop().expect("a call was logged");
                    if outbox.send(rec).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| format!("cannot start the helper thread: {e}"))?;
        Ok(Helper {
            requests: Some(requests),
            records,
            thread: Some(thread),
        })
    }

    fn call(&self, r: Request) -> LoggedCall {
        self.requests
            .as_ref()
            .expect("the helper runs until dropped")
            .send(r)
            .expect("the helper thread is alive");
        self.records.recv().expect("the helper thread answers")
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        // Closing the channel ends the thread's loop.
        self.requests = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What a case holds until it ends.
#[derive(Debug, Default)]
struct Held {
    /// Each slot's fds (negative: the `-errno` of a failed open), and
    /// whether they are still open.
    slots: BTreeMap<usize, (Vec<i64>, bool)>,
    /// Mapped rings: address and length.
    rings: Vec<(usize, usize)>,
    /// `RLIMIT_NOFILE` to restore.
    nofile: Option<libc::rlimit>,
}

impl Held {
    /// The first fd of `slot` as an argument: the fd (open or closed since),
    /// or [`BAD_FD`] if it could not be opened.
    fn fd(&self, slot: usize) -> i32 {
        self.slots
            .get(&slot)
            .and_then(|(fds, _)| fds.first())
            .and_then(|&fd| i32::try_from(fd).ok())
            .filter(|&fd| fd >= 0)
            .unwrap_or(BAD_FD)
    }

    fn keep(&mut self, slot: usize, fd: i64) {
        let entry = self.slots.entry(slot).or_insert((Vec::new(), true));
        entry.0.push(fd);
    }

    fn close(&mut self, slot: usize) {
        if let Some((fds, open)) = self.slots.get_mut(&slot) {
            if std::mem::take(open) {
                fds.iter().rev().copied().for_each(close);
            }
        }
    }

    /// Undoes everything, so that the next case starts from what this one
    /// found.
    fn release(&mut self) {
        if let Some(old) = self.nofile.take() {
            // SAFETY: setrlimit reads a valid rlimit.
            unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raw const old) };
        }
        for (at, len) in self.rings.drain(..) {
            // SAFETY: a ring mapping this case made and nothing refers to.
            unsafe { libc::munmap(at as *mut libc::c_void, len) };
        }
        let slots: Vec<usize> = self.slots.keys().rev().copied().collect();
        for slot in slots {
            self.close(slot);
        }
        self.slots.clear();
    }
}

/// The word the kernel reads an int argument from: sign-extended.
fn word(v: i32) -> u64 {
    u64::from_ne_bytes(i64::from(v).to_ne_bytes())
}

/// A call with its attr in a read-only mapping, before an unmapped page.
fn call_read_only(c: &mut Caller, case: &str, bytes: &[u8], ints: [i32; 3], flags: u64) -> i64 {
    let mapping = Guarded::new(bytes.len());
    // SAFETY: the bytes.len() bytes before the guard page are mapped
    // read-write until the mprotect below.
    let p = unsafe { mapping.guard().sub(bytes.len()) };
    // SAFETY: p..p+len lies in that writable range.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
    let readable_from_base = mapping.guard() as usize - mapping.base as usize;
    // SAFETY: base..guard is the readable part of `mapping`, ours alone.
    let rc = unsafe { libc::mprotect(mapping.base.cast(), readable_from_base, libc::PROT_READ) };
    assert_eq!(rc, 0, "mprotect of a fresh mapping failed");
    let attr = AttrMemory {
        hex: hex(bytes),
        readable: bytes.len(),
        page_offset: p as usize % PAGE,
    };
    // SAFETY: p points at bytes.len() readable bytes of `mapping`, which
    // lives until the call returns, up to its unmapped guard page; the
    // kernel's write of the size word faults and changes nothing.
    unsafe { c.issue(case, p, Some(attr), ints.map(word), flags) }
}

/// The main thread's calling context and where its lines go.
struct Runner<'w> {
    caller: Caller,
    helper: Helper,
    out: &'w mut dyn Write,
    tally: Tally,
}

impl Runner<'_> {
    /// Makes one call and logs it; `None` when the output went away.
    fn open(&mut self, case: &str, o: &Open, held: &mut Held) -> Option<()> {
        let pid = match o.pid {
            Pid::Value(v) => v,
            // SAFETY: getpid has no preconditions.
            Pid::Own => unsafe { libc::getpid() },
            Pid::Slot(s) => held.fd(s),
        };
        let group_fd = match o.group {
            Group::None => -1,
            Group::Slot(s) => held.fd(s),
        };
        let name = if o.label.is_empty() {
            case.to_owned()
        } else {
            format!("{case}/{}", o.label)
        };
        let ptr = match &o.place {
            Place::Null => Some(Ptr::Null),
            Place::Readable(bytes) => Some(Ptr::at_page_end(bytes.clone())),
            Place::Cut { bytes, readable } => Some(Ptr::Guarded {
                bytes: bytes.clone(),
                readable: *readable,
            }),
            Place::ReadOnly(_) => None,
        };
        let rec = match (ptr, &o.place) {
            (Some(ptr), _) if o.helper => self.helper.call(Request {
                case: name,
                ptr,
                pid,
                cpu: o.cpu,
                group_fd,
                flags: o.flags,
            }),
            (Some(ptr), _) => {
                self.caller.call(&name, &ptr, pid, o.cpu, group_fd, o.flags);
                self.caller.records.pop().expect("a call was logged")
            }
            (None, Place::ReadOnly(bytes)) => {
                call_read_only(
                    &mut self.caller,
                    &name,
                    bytes,
                    [pid, o.cpu, group_fd],
                    o.flags,
                );
                self.caller.records.pop().expect("a call was logged")
            }
            (None, _) => unreachable!("only a read-only attr has no Ptr"),
        };
        match o.keep {
            Some(slot) => held.keep(slot, rec.ret),
            None => close(rec.ret),
        }
        self.tally.add(&rec);
        let line = serde_json::to_string(&rec).expect("a LoggedCall always serializes");
        writeln!(self.out, "{line}").ok()
    }

    /// One case's steps; `None` when the output went away.
    fn case(&mut self, case: &str, steps: &[Step]) -> Option<()> {
        let mut held = Held::default();
        let mut result = Some(());
        for step in steps {
            match step {
                Step::Open(o) => result = self.open(case, o, &mut held),
                Step::File { path, slot } => {
                    let file = std::ffi::CString::new(*path).expect("no NUL in a path");
                    // SAFETY: a NUL-terminated path; the new fd is the case's.
                    let fd = unsafe { libc::open(file.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
                    held.keep(*slot, i64::from(fd));
                }
                Step::Close(slot) => held.close(*slot),
                Step::Mmap(slot) => {
                    let len = 2 * PAGE;
                    // SAFETY: a new shared mapping of a perf fd's ring (or a
                    // failure, for a bad fd); no existing memory changes.
                    let p = unsafe {
                        libc::mmap(
                            std::ptr::null_mut(),
                            len,
                            libc::PROT_READ | libc::PROT_WRITE,
                            libc::MAP_SHARED,
                            held.fd(*slot),
                            0,
                        )
                    };
                    if p != libc::MAP_FAILED {
                        held.rings.push((p as usize, len));
                    }
                }
                Step::Fork => {
                    // SAFETY: the child calls only _exit, which is
                    // async-signal-safe; the parent reaps it at once.
                    unsafe {
                        match libc::fork() {
                            0 => libc::_exit(0),
                            child if child > 0 => {
                                libc::waitpid(child, std::ptr::null_mut(), 0);
                            }
                            _ => {}
                        }
                    }
                }
                Step::NoFiles => {
                    let mut old = libc::rlimit {
                        rlim_cur: 0,
                        rlim_max: 0,
                    };
                    // SAFETY: getrlimit fills a valid rlimit; setrlimit
                    // reads one (lowering the soft limit needs no
                    // privilege).
                    unsafe {
                        if libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut old) == 0 {
                            let none = libc::rlimit {
                                rlim_cur: 0,
                                rlim_max: old.rlim_max,
                            };
                            if libc::setrlimit(libc::RLIMIT_NOFILE, &raw const none) == 0 {
                                held.nofile = Some(old);
                            }
                        }
                    }
                }
            }
            if result.is_none() {
                break;
            }
        }
        held.release();
        result
    }
}

/// Runs every case of `walk` in order on this thread, pinned to the first
/// online CPU, with a helper thread pinned to the next. Returns the tally,
/// `None` when stdout went away.
///
/// # Errors
/// The helper thread could not start.
pub(super) fn walk(
    walk: &[(usize, Vec<Step>)],
    script_id: u64,
    env: &Env,
) -> Result<Option<Tally>, String> {
    let first = env.cpus.first().copied();
    let second = env.cpus.get(1).copied().or(first);
    let helper = Helper::start(script_id, second)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut r = Runner {
        caller: Caller::new("decisions", script_id, 1, first),
        helper,
        out: &mut out,
        tally: Tally::default(),
    };
    for (i, steps) in walk {
        if r.case(CASES[*i].name, steps).is_none() {
            return Ok(None);
        }
    }
    let tally = std::mem::take(&mut r.tally);
    drop(r);
    Ok(out.flush().is_ok().then_some(tally))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counts_results_by_name() {
        let mut t = Tally::default();
        for errno in [None, Some(libc::EINVAL), Some(libc::EINVAL), Some(1234)] {
            t.calls += 1;
            *t.results.entry(errno.unwrap_or(0)).or_default() += 1;
        }
        assert_eq!(
            t.to_string(),
            "4 calls, 1 succeeded, 3 distinct results: success 1 EINVAL 2 errno 1234 1"
        );
    }
}
