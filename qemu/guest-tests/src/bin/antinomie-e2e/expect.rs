// SPDX-License-Identifier: GPL-2.0-only
//! What the reader must print for one workload call: the schema's keys in
//! order and, per key, the value (or range) the model derives from what
//! the workload passed and got back.

use serde_json::{Map, Value};

use crate::model::{self, AttrBytes, Outcome, Pmus, E2BIG};
use antinomie_workloads::log::LoggedCall;

/// The keys of a call line, in order: the schema of `reader/README.md`.
pub(crate) const CALL_KEYS: &[&str] = &[
    "event",
    "state",
    "time_ns",
    "cpu",
    "exit_cpu",
    "pid",
    "tid",
    "call_id",
    "syscall.nr",
    "compat",
    "args.0",
    "args.1",
    "args.2",
    "args.3",
    "args.4",
    "args.5",
    "args.attr_uptr",
    "args.pid",
    "args.cpu",
    "args.group_fd",
    "args.flags",
    "args.flags_names",
    "arg0.status",
    "arg0.capture_flags",
    "arg0.declared_size",
    "arg0.copied_len",
    "arg0.fault_offset",
    "arg0.perf_event_attr",
    "arg0.perf_event_attr_names",
    "arg0.required_size",
    "arg0.size_written",
    "arg0.attr_copied",
    "ret",
    "syscall.errno",
    "syscall.errno_name",
    "syscall.success",
    "syscall.duration_ns",
    "exit_maybe_lost",
];

/// What one key must hold.
#[derive(Debug, Clone)]
pub(crate) enum Exp {
    Eq(Value),
    /// An unsigned number in this closed range.
    Range(u64, u64),
    /// An object compared member by member.
    Object(Map<String, Value>),
}

fn hex_bytes(s: &str) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err("odd hex length".into());
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|e| e.to_string()))
        .collect()
}

#[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
fn low_i32(w: u64) -> i64 {
    i64::from(w as u32 as i32)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    Complete,
    Unfinished,
    EntryLost,
    /// An EXIT whose ENTRY a reader before this one read.
    EntryReadEarlier,
}

/// A workload call's expected line, or why the model cannot give one.
pub(crate) struct Derived {
    pub(crate) keys: Vec<(&'static str, Exp)>,
    /// The workload's own result disagrees with the model of the kernel.
    pub(crate) kernel_model_errors: Vec<String>,
}

fn cpu_exp(w: &LoggedCall) -> Exp {
    match w.pinned_cpu {
        Some(c) => Exp::Eq(Value::from(c)),
        None => Exp::Range(0, 4095),
    }
}

fn opt<T: Into<Value>>(v: Option<T>) -> Value {
    v.map_or(Value::Null, Into::into)
}

#[allow(clippy::too_many_lines)]
pub(crate) fn derive(
    w: &LoggedCall,
    state: State,
    maybe_lost: bool,
    pmus: &Pmus,
    kernel_access: bool,
) -> Result<Derived, String> {
    let (mem, readable) = match &w.attr {
        Some(a) => (hex_bytes(&a.hex)?, a.readable),
        None => (Vec::new(), 0),
    };
    if mem.len() != readable {
        return Err(format!(
            "attr hex holds {} bytes, readable says {readable}",
            mem.len()
        ));
    }
    let cap = model::capture(w.args[4], w.args[0], &mem, readable);
    let outcome = model::outcome(&cap, kernel_access);
    let mut kme = Vec::new();
    let errno = w.errno;
    // The kernel's answer against the model of perf_event_open() up to
    // perf_copy_attr().
    let size_written = match outcome {
        Outcome::Fails(e, written) => {
            if errno != Some(e) {
                kme.push(format!(
                    "capture {} predicts errno {e}, the call got {:?}",
                    cap.status.name(),
                    errno
                ));
            }
            if e == E2BIG && w.required_size != Some(136) {
                kme.push(format!(
                    "E2BIG from perf_copy_attr() writes 136 back, the workload read {:?}",
                    w.required_size
                ));
            }
            written
        }
        Outcome::Copied => {
            // The size word as passed (0 stays 0: the kernel rewrites its
            // own copy only).
            let passed = mem
                .get(4..8)
                .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")));
            if errno == Some(E2BIG) && w.required_size != passed {
                kme.push(format!(
                    "E2BIG after perf_copy_attr() succeeded (perf_event_validate_size) writes nothing, \
                     but size changed from {passed:?} to {:?}",
                    w.required_size
                ));
            }
            false
        }
        Outcome::Unknown => {
            return Err("the model cannot decide perf_copy_attr() for this attr".into())
        }
    };
    let copied = outcome == Outcome::Copied;
    let entry = matches!(state, State::Complete | State::Unfinished);
    let exit = state != State::Unfinished;
    let ev = |b: bool, v: Value| if b { Exp::Eq(v) } else { Exp::Eq(Value::Null) };
    let mut k: Vec<(&'static str, Exp)> = Vec::new();
    k.push(("event", Exp::Eq("call".into())));
    k.push((
        "state",
        Exp::Eq(
            match state {
                State::Complete => "complete",
                State::Unfinished => "unfinished",
                State::EntryLost => "entry_lost",
                State::EntryReadEarlier => "entry_read_earlier",
            }
            .into(),
        ),
    ));
    // When the call began (the ENTRY's start_ns, or the EXIT's time less
    // its duration): within the workload's clock reads around the call.
    k.push(("time_ns", Exp::Range(w.time_before_ns, w.time_after_ns)));
    k.push(("cpu", cpu_exp(w)));
    k.push((
        "exit_cpu",
        if exit {
            cpu_exp(w)
        } else {
            Exp::Eq(Value::Null)
        },
    ));
    k.push(("pid", Exp::Eq(w.pid.into())));
    k.push(("tid", Exp::Eq(w.tid.into())));
    k.push(("call_id", Exp::Range(1, u64::MAX)));
    k.push(("syscall.nr", Exp::Eq(298.into())));
    k.push(("compat", Exp::Eq(false.into())));
    for (i, key) in ["args.0", "args.1", "args.2", "args.3", "args.4", "args.5"]
        .into_iter()
        .enumerate()
    {
        k.push((key, ev(entry, w.args[i].into())));
    }
    k.push(("args.attr_uptr", ev(entry, w.args[0].into())));
    k.push(("args.pid", ev(entry, low_i32(w.args[1]).into())));
    k.push(("args.cpu", ev(entry, low_i32(w.args[2]).into())));
    k.push(("args.group_fd", ev(entry, low_i32(w.args[3]).into())));
    k.push(("args.flags", ev(entry, w.args[4].into())));
    k.push((
        "args.flags_names",
        ev(entry, model::perf_flags_names(w.args[4]).into()),
    ));
    k.push(("arg0.status", ev(entry, cap.status.name().into())));
    k.push(("arg0.capture_flags", ev(entry, cap.flags.clone().into())));
    k.push(("arg0.declared_size", ev(entry, cap.declared_size.into())));
    k.push(("arg0.copied_len", ev(entry, cap.data.len().into())));
    k.push(("arg0.fault_offset", ev(entry, opt(cap.fault_offset))));
    let attr = AttrBytes(&cap.data);
    if entry && !cap.data.is_empty() {
        k.push(("arg0.perf_event_attr", Exp::Object(attr.members_json(pmus))));
        k.push((
            "arg0.perf_event_attr_names",
            Exp::Object(attr.names_json(pmus)),
        ));
    } else {
        k.push(("arg0.perf_event_attr", Exp::Eq(Value::Null)));
        k.push(("arg0.perf_event_attr_names", Exp::Eq(Value::Null)));
    }
    let e2big = w.ret == -i64::from(E2BIG);
    k.push((
        "arg0.required_size",
        ev(exit && e2big && size_written, opt(w.required_size)),
    ));
    k.push((
        "arg0.size_written",
        ev(exit, (e2big && size_written).into()),
    ));
    k.push(("arg0.attr_copied", ev(exit, copied.into())));
    k.push(("ret", ev(exit, w.ret.into())));
    k.push(("syscall.errno", ev(exit, opt(errno))));
    k.push((
        "syscall.errno_name",
        ev(
            exit,
            opt(errno.map(|e| model::errno_name(u64::from(e.unsigned_abs())))),
        ),
    ));
    k.push(("syscall.success", ev(exit, (w.ret >= 0).into())));
    k.push((
        "syscall.duration_ns",
        if exit {
            Exp::Range(0, w.time_after_ns - w.time_before_ns)
        } else {
            Exp::Eq(Value::Null)
        },
    ));
    k.push(("exit_maybe_lost", Exp::Eq(maybe_lost.into())));
    // The workload's view of the fd flag, against the flags it passed.
    if let Some(cloexec) = w.cloexec {
        if cloexec != (w.args[4] & 8 != 0) {
            kme.push(format!(
                "FD_CLOEXEC is {cloexec} on the new fd, flags were {:#x}",
                w.args[4]
            ));
        }
    }
    Ok(Derived {
        keys: k,
        kernel_model_errors: kme,
    })
}
