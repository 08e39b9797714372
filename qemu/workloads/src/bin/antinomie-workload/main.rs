// SPDX-License-Identifier: GPL-2.0-only
//! `antinomie-workload`: issues a named script of `perf_event_open(2)` calls
//! and prints, as one JSON line per call, exactly what it passed and what the
//! kernel gave back. Tests compare Antinomie's capture of the same calls with
//! these lines; `--check` also compares each result with what Linux 6.12
//! documents for that case, so the guest's smoke test fails on a kernel that
//! behaves differently.
//!
//! usage: `antinomie-workload [--check] smoke` or
//! `antinomie-workload e2e|e2e-small|burst [N]|flush` or
//! `antinomie-workload random --seed S --calls N [--threads T]` (`random.rs`) or
//! `antinomie-workload dependent --seed S --rounds R [--threads T]`
//! (`dependent.rs`: calls that depend on earlier results) or
//! `antinomie-workload decisions --seed S` (`decisions.rs`: a case for
//! every decision of the open path) or
//! `antinomie-workload campaign --seed S --calls N [--threads T] [--burst B]
//! [--passes off,on]` (`campaign.rs`, the debug kernel's randomized campaign)
//!
//! `smoke`: four calls, checked with `--check` against Linux 6.12.94.
//! The end-to-end scripts (`e2e.rs`) log more per call, for the
//! comparator `antinomie-e2e`: `e2e` is the full case list (sizes, faults,
//! flags, groups, `FD_CLOEXEC`, an `E2BIG` from `perf_event_validate_size()`
//! with a 681-sibling group, an attr changed during the call with
//! userfaultfd, pinned threads on every CPU); `e2e-small` is the same
//! without the big group and the change during the call; `burst N` is N calls from one pinned thread per CPU;
//! `flush` one call per CPU. Exit status 1 when a script's own precondition
//! failed (the big group did not end in `E2BIG`, userfaultfd did not work).

mod call;
mod caller;
mod campaign;
mod decisions;
mod dependent;
mod e2e;
mod random;
mod system;

use std::io::Write;
use std::process::ExitCode;

use serde::Serialize;

/// `sizeof(struct perf_event_attr)` in the pinned 6.12.94 uapi (`PERF_ATTR_SIZE_VER8`).
const ATTR_SIZE_VER8: usize = 136;
const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_COUNT_SW_CPU_CLOCK: u64 = 0;
const PERF_FLAG_FD_CLOEXEC: u64 = 1 << 3;
/// Bit 0 (`disabled`) and bit 5 (`exclude_kernel`) of the flags word at offset 40.
const ATTR_DISABLED: u64 = 1 << 0;
const ATTR_EXCLUDE_KERNEL: u64 = 1 << 5;

/// What the kernel should answer, per case.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// A new file descriptor.
    Fd,
    /// `-errno`, and for `E2BIG` the size the kernel writes back into `attr.size`.
    Errno(i32, Option<u32>),
}

/// The user memory a call's `attr_uptr` points to.
#[derive(Debug)]
enum AttrArg {
    Null,
    /// `struct perf_event_attr` bytes; at least [`ATTR_SIZE_VER8`] long.
    Bytes(Vec<u8>),
}

#[derive(Debug)]
struct Case {
    name: &'static str,
    attr: AttrArg,
    pid: i32,
    cpu: i32,
    group_fd: i32,
    flags: u64,
    expect: Expect,
}

/// One line of output: the call as issued and its outcome.
#[derive(Debug, Serialize)]
struct CallRecord {
    case: &'static str,
    tid: i32,
    /// The six raw argument words as the syscall received them.
    args: [u64; 6],
    /// The attr bytes at the time of the call (absent for a NULL pointer).
    attr_hex: Option<String>,
    ret: i64,
    errno: Option<i32>,
    /// `attr.size` read back after an `E2BIG`.
    required_size: Option<u32>,
}

fn attr(size: u32, type_: u32, config: u64, flags: u64) -> Vec<u8> {
    let mut bytes = vec![0u8; ATTR_SIZE_VER8];
    bytes[0..4].copy_from_slice(&type_.to_ne_bytes());
    bytes[4..8].copy_from_slice(&size.to_ne_bytes());
    bytes[8..16].copy_from_slice(&config.to_ne_bytes());
    bytes[40..48].copy_from_slice(&flags.to_ne_bytes());
    bytes
}

fn sw_clock(size: u32) -> AttrArg {
    AttrArg::Bytes(attr(
        size,
        PERF_TYPE_SOFTWARE,
        PERF_COUNT_SW_CPU_CLOCK,
        ATTR_DISABLED | ATTR_EXCLUDE_KERNEL,
    ))
}

fn smoke_script() -> Vec<Case> {
    let this_task = |name, attr, flags, expect| Case {
        name,
        attr,
        pid: 0,
        cpu: -1,
        group_fd: -1,
        flags,
        expect,
    };
    vec![
        this_task(
            "sw-cpu-clock",
            sw_clock(136),
            PERF_FLAG_FD_CLOEXEC,
            Expect::Fd,
        ),
        // Flags are checked before the attr is read.
        this_task(
            "invalid-flags",
            AttrArg::Null,
            1 << 20,
            Expect::Errno(libc::EINVAL, None),
        ),
        this_task(
            "null-attr",
            AttrArg::Null,
            0,
            Expect::Errno(libc::EFAULT, None),
        ),
        // Below PERF_ATTR_SIZE_VER0: the kernel writes back the size it wants.
        this_task(
            "size-1",
            sw_clock(1),
            0,
            Expect::Errno(libc::E2BIG, Some(136)),
        ),
    ]
}

fn run(case: &Case) -> CallRecord {
    let mut attr_buf = match &case.attr {
        AttrArg::Null => None,
        AttrArg::Bytes(b) => Some(b.clone()),
    };
    let attr_hex = attr_buf.as_ref().map(|b| hex(b));
    let attr_ptr = attr_buf
        .as_mut()
        .map_or(std::ptr::null_mut(), Vec::as_mut_ptr);
    // The words exactly as the kernel sees them: ints are sign-extended.
    #[allow(clippy::cast_sign_loss)]
    let args = [
        attr_ptr as u64,
        i64::from(case.pid) as u64,
        i64::from(case.cpu) as u64,
        i64::from(case.group_fd) as u64,
        case.flags,
        0,
    ];
    // SAFETY: perf_event_open reads at most `attr.size` (or PAGE_SIZE) bytes
    // from attr_ptr, which is NULL or points to a live buffer of at least
    // ATTR_SIZE_VER8 bytes whose size field is <= ATTR_SIZE_VER8, and may
    // write back the u32 size field inside that buffer. No other memory is
    // touched.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr_ptr,
            case.pid,
            case.cpu,
            case.group_fd,
            case.flags,
        )
    };
    let errno = (ret < 0).then(|| std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
    let required_size = match (&attr_buf, errno) {
        (Some(b), Some(libc::E2BIG)) => Some(u32::from_ne_bytes([b[4], b[5], b[6], b[7]])),
        _ => None,
    };
    if ret >= 0 {
        // SAFETY: ret is a file descriptor this process just received and owns.
        unsafe { libc::close(i32::try_from(ret).expect("fd fits in i32")) };
    }
    CallRecord {
        case: case.name,
        // SAFETY: gettid has no preconditions.
        tid: unsafe { libc::gettid() },
        args,
        attr_hex,
        ret: if ret < 0 {
            -i64::from(errno.unwrap_or(0))
        } else {
            ret
        },
        errno,
        required_size,
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn check(case: &Case, rec: &CallRecord) -> Result<(), String> {
    match case.expect {
        Expect::Fd if rec.ret >= 0 => Ok(()),
        Expect::Errno(e, size) if rec.errno == Some(e) && rec.required_size == size => Ok(()),
        expect => Err(format!(
            "{}: expected {expect:?}, got ret={} errno={:?} required_size={:?}",
            case.name, rec.ret, rec.errno, rec.required_size
        )),
    }
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: antinomie-workload [--check] smoke\n       antinomie-workload e2e|e2e-small|burst [N]|flush\n       antinomie-workload random --seed S --calls N [--threads T]\n       antinomie-workload dependent --seed S --rounds R [--threads T]\n       antinomie-workload decisions --seed S\n       antinomie-workload campaign --seed S --calls N [--threads T] [--burst B] [--passes off,on]"
    );
    ExitCode::from(2)
}

/// Runs an end-to-end script and prints its records as JSON Lines.
fn run_e2e(name: &str, count: Option<usize>) -> ExitCode {
    let (records, status) = match e2e::run(name, count) {
        Ok(r) => r,
        Err(why) => {
            eprintln!("antinomie-workload: {why}");
            return usage();
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for rec in &records {
        let line = serde_json::to_string(rec).expect("a LoggedCall always serializes");
        if writeln!(out, "{line}").is_err() {
            return ExitCode::SUCCESS;
        }
    }
    if out.flush().is_err() {
        return ExitCode::SUCCESS;
    }
    match status {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("antinomie-workload: {name}: {why}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1).collect::<Vec<_>>();
    if args.first().is_some_and(|a| a == "random") {
        return random::main(&args);
    }
    if args.first().is_some_and(|a| a == "dependent") {
        return dependent::main(&args);
    }
    if args.first().is_some_and(|a| a == "decisions") {
        return decisions::main(&args);
    }
    if args.first().is_some_and(|a| a == "campaign") {
        return campaign::main(&args);
    }
    let check_results = args.first().is_some_and(|a| a == "--check");
    if check_results {
        args.remove(0);
    }
    let script = match args.as_slice() {
        [name] if name == "smoke" => smoke_script(),
        [name, rest @ ..] if !check_results && rest.len() <= 1 && name != "smoke" => {
            let count = match rest.first().map(|n| n.parse::<usize>()) {
                None => None,
                Some(Ok(n)) => Some(n),
                Some(Err(_)) => return usage(),
            };
            return run_e2e(name, count);
        }
        _ => return usage(),
    };
    let mut failed = 0;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for case in &script {
        let rec = run(case);
        let line = serde_json::to_string(&rec).expect("a CallRecord always serializes");
        if writeln!(out, "{line}").is_err() {
            // Broken pipe: the consumer went away; nothing left to report to.
            return ExitCode::SUCCESS;
        }
        if check_results {
            if let Err(why) = check(case, &rec) {
                eprintln!("antinomie-workload: {why}");
                failed += 1;
            }
        }
    }
    if failed > 0 {
        eprintln!(
            "antinomie-workload: {failed} of {} calls differ from the expected result",
            script.len()
        );
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
