// SPDX-License-Identifier: GPL-2.0-only
//! Text and JSON Lines output.
//!
//! # Text
//!
//! One strace-like line per call:
//!
//! ```text
//! 12.000001000 cpu=0 pid=100 tid=101 perf_event_open({type=PERF_TYPE_SOFTWARE, size=PERF_ATTR_SIZE_VER8, config=PERF_COUNT_SW_CPU_CLOCK, disabled=1, exclude_kernel=1}, pid=0, cpu=-1, group_fd=-1, flags=PERF_FLAG_FD_CLOEXEC) = 3 <0.000012>
//! ```
//!
//! The time is when the call began, `CLOCK_MONOTONIC` in seconds: the
//! ENTRY's `start_ns` (without ENTRY, the EXIT's time minus the duration,
//! the same clock read); `cpu=0>1` says
//! the EXIT came from another CPU. As strace's default (abbreviated) mode,
//! the attr shows `type`, `size` and `config` always and every other member
//! only when it is non-zero; unlike strace, members are shown whatever the
//! flags that make them meaningful, so nothing non-zero hides, and only the
//! union alias that applies is named (`sample_freq` with `freq=1`,
//! `bp_addr` for breakpoints, `kprobe_func` for a kprobe PMU known from
//! sysfs, else `config1`). Values use the uapi names; unknown bits follow
//! in hex, unknown values carry a `/* …??? */` comment. Captures that did
//! not yield the whole attr say so: `NULL`, `0x… /* the size field is
//! unreadable: fault at offset 4 */`, `0x… /* size=…: the kernel's copy
//! faulted, at an offset it does not report */`, `/* bytes 136..200:
//! nonzero */`, `size=0x20 => PERF_ATTR_SIZE_VER8` (the size the kernel
//! wrote back after E2BIG). Errors print as `= -1 E2BIG (Argument list
//! too long)`; an ENTRY without EXIT as `= ? <unfinished>`; an EXIT
//! without ENTRY as `perf_event_open(/* entry lost */) = …`. LOST records
//! print as `--- lost … ---` lines where they occur in time.
//!
//! # JSON Lines
//!
//! One object per line, keys always present (`null` when not applicable)
//! and always in the same order: for calls the keys of
//! [`crate::call::call_fields`] for their syscall, for LOST records those of
//! [`crate::call::LOST_FIELDS`]; the `event` key tells them apart. The
//! schema is documented in `reader/README.md`. That is the full schema,
//! the default; [`JsonSchema::Compact`] leaves out nulls, duplicates and
//! zero attr members (`jsonl::call_compact` says exactly what).

use std::fmt::Write as _;
use std::io::{self, Write};

use antinomie_abi as abi;

use crate::call::{fault_offset, lost_reason, Call, CallState};
use crate::decode::{attr, names, AttrMember, AttrView, PmuTypes};
use crate::jsonl;
pub use crate::jsonl::JsonSchema;
use crate::pipeline::Sink;
use crate::record::LostRecord;
use crate::syscall::{Arg, ArgDecode};

/// The output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// strace-like text.
    Text,
    /// JSON Lines.
    Json,
}

// `write!` into a `String` cannot fail: the results are ignored below.

fn time(ns: u64) -> String {
    let mut s = String::new();
    time_into(&mut s, ns);
    s
}

fn time_into(out: &mut String, ns: u64) {
    let _ = write!(out, "{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000);
}

/// How a text line shows its time: strace's `-t`, `-tt`, `-ttt` and `-r`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimeStyle {
    /// The record's `CLOCK_MONOTONIC` time, `seconds.nanoseconds`.
    #[default]
    Monotonic,
    /// Local wall-clock time of day, `HH:MM:SS` (`-t`).
    WallSeconds,
    /// Local wall-clock time of day, `HH:MM:SS.microseconds` (`-tt`).
    WallMicros,
    /// Seconds since the epoch, `seconds.microseconds` (`-ttt`).
    Epoch,
    /// Seconds since the previous line's time, `seconds.microseconds`
    /// (`-r`); negative when lines print out of time order (calls print as
    /// they complete, stamped with their entry time).
    Relative,
}

impl TimeStyle {
    /// Whether the style needs the wall clock (`CLOCK_REALTIME`).
    #[must_use]
    pub fn needs_wall_clock(self) -> bool {
        matches!(self, Self::WallSeconds | Self::WallMicros | Self::Epoch)
    }
}

/// Turns record times into the text of a [`TimeStyle`].
#[derive(Debug, Clone)]
struct Stamper {
    style: TimeStyle,
    /// `CLOCK_REALTIME` − `CLOCK_MONOTONIC`, ns.
    realtime_offset_ns: i64,
    /// The previous line's time, for [`TimeStyle::Relative`].
    last_ns: Option<u64>,
}

impl Stamper {
    fn stamp_into(&mut self, out: &mut String, ns: u64) {
        let micros = |out: &mut String, total_ns: i128| {
            let sign = if total_ns < 0 { "-" } else { "" };
            let us = total_ns.unsigned_abs() / 1000;
            let _ = write!(out, "{sign}{}.{:06}", us / 1_000_000, us % 1_000_000);
        };
        let wall_ns = || i128::from(ns) + i128::from(self.realtime_offset_ns);
        match self.style {
            TimeStyle::Monotonic => time_into(out, ns),
            TimeStyle::Epoch => micros(out, wall_ns()),
            TimeStyle::Relative => {
                let prev = self.last_ns.replace(ns).unwrap_or(ns);
                micros(out, i128::from(ns) - i128::from(prev));
            }
            TimeStyle::WallSeconds | TimeStyle::WallMicros => {
                let wall = wall_ns();
                let secs = libc::time_t::try_from(wall.div_euclid(1_000_000_000)).unwrap_or(0);
                // SAFETY: tm is plain data; localtime_r fills it from secs
                // and returns NULL (tm untouched) on failure.
                let mut tm: libc::tm = unsafe { std::mem::zeroed() };
                // SAFETY: both pointers are valid for the call.
                unsafe { libc::localtime_r(&raw const secs, &raw mut tm) };
                let _ = write!(out, "{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec);
                if self.style == TimeStyle::WallMicros {
                    let _ = write!(out, ".{:06}", wall.rem_euclid(1_000_000_000) / 1000);
                }
            }
        }
    }
}
/// What the kernel did to `size` on an E2BIG.
#[derive(Debug, Clone, Copy)]
enum SizeAfter {
    /// `perf_copy_attr()`'s size checks stored this size there.
    Stored(u32),
    /// They tried to store this size; the store faulted.
    StoreFaulted(u32),
    /// A check after `perf_copy_attr()` failed the call; nothing stored.
    Untouched,
}

impl SizeAfter {
    fn of(call: &Call) -> Option<Self> {
        if call.errno() != Some(libc::E2BIG.unsigned_abs().into()) {
            return None;
        }
        Some(match (call.required_size(), call.size_written()) {
            (Some(size), Some(true)) => Self::Stored(size),
            (Some(size), _) => Self::StoreFaulted(size),
            (None, _) => Self::Untouched,
        })
    }
}

/// One attr member as `name=value`; after an E2BIG, `size=OLD => NEW`
/// as strace shows it when the kernel wrote the size back, else a note
/// that nothing was written, and why.
fn member_into(out: &mut String, m: &AttrMember, rendered: &str, after: Option<SizeAfter>) {
    out.push_str(m.name);
    out.push('=');
    out.push_str(rendered);
    match (m.name, after) {
        ("size", Some(SizeAfter::Stored(size))) => {
            out.push_str(" => ");
            attr::size_into(out, u64::from(size));
        }
        ("size", Some(SizeAfter::StoreFaulted(size))) => {
            out.push_str(" /* the kernel's store of ");
            attr::size_into(out, u64::from(size));
            out.push_str(" faulted */");
        }
        ("size", Some(SizeAfter::Untouched)) => out.push_str(" /* not written back */"),
        _ => {}
    }
}

/// The attr's members as [`member_into`] shows them, joined by `, `.
/// Returns whether there was any.
fn attr_members_into(
    out: &mut String,
    scratch: &mut String,
    view: &AttrView<'_>,
    pmus: &PmuTypes,
    after: Option<SizeAfter>,
) -> bool {
    let mut first = true;
    view.each_text_member(pmus, scratch, |m, s| {
        if !first {
            out.push_str(", ");
        }
        first = false;
        member_into(out, m, s, after);
    });
    !first
}

/// The attr argument (`arg`, argument `index`) as text: its pointee,
/// decoded from the capture, or else the pointer.
fn attr_text_into(
    out: &mut String,
    scratch: &mut String,
    call: &Call,
    pmus: &PmuTypes,
    (index, arg): (usize, &Arg),
) {
    let ptr = |out: &mut String| arg.text_into(out, call.arg(index));
    let Some(cap) = call.attr_capture() else {
        return ptr(out);
    };
    let h = &cap.header;
    let required = SizeAfter::of(call);
    match h.status {
        abi::STATUS_NULL_PTR => out.push_str("NULL"),
        abi::STATUS_NOT_APPLICABLE => {
            ptr(out);
            out.push_str(" /* not read: the flags were rejected first */");
        }
        abi::STATUS_INVALID_SIZE => {
            out.push('{');
            size_only_into(out, scratch, h.declared_size, pmus, required);
            out.push_str(" /* invalid size: not read further */}");
        }
        abi::STATUS_FAULT if h.flags & abi::CAPTURE_F_SIZE_FAULT != 0 => {
            ptr(out);
            out.push_str(" /* the size field is unreadable: fault at offset 4 */");
        }
        abi::STATUS_FAULT if cap.data.is_empty() => {
            ptr(out);
            out.push_str(" /* ");
            size_only_into(out, scratch, h.declared_size, pmus, required);
            match fault_offset(h) {
                Some(at) => {
                    let _ = write!(out, ": unreadable, fault at offset {at} */");
                }
                None => {
                    out.push_str(": the kernel's copy faulted, at an offset it does not report */");
                }
            }
        }
        abi::STATUS_TRUNCATED if cap.data.is_empty() => {
            // A non-zero tail: the kernel copied nothing, only the size
            // is known.
            out.push('{');
            size_only_into(out, scratch, h.declared_size, pmus, required);
            tail_into(out, ", ", h);
            out.push('}');
        }
        _ => {
            let view = AttrView::new(cap.data);
            out.push('{');
            let any = attr_members_into(out, scratch, &view, pmus, required);
            let sep = if any { ", " } else { "" };
            match h.status {
                abi::STATUS_FAULT => match fault_offset(h) {
                    Some(at) => {
                        let _ = write!(out, "{sep}/* fault at offset {at} */");
                    }
                    None => {
                        let _ = write!(out, "{sep}/* then a fault, at an unreported offset */");
                    }
                },
                abi::STATUS_TRUNCATED => tail_into(out, sep, h),
                abi::STATUS_COMPLETE => {}
                other => {
                    let _ = write!(out, "{sep}/* capture status {other} */");
                }
            }
            out.push('}');
        }
    }
}

/// The attr's `size` member alone, for a capture that holds no bytes but
/// the size the kernel read (`declared_size`).
fn size_only_into(
    out: &mut String,
    scratch: &mut String,
    declared_size: u32,
    pmus: &PmuTypes,
    required: Option<SizeAfter>,
) {
    let mut b = [0u8; 8];
    b[4..8].copy_from_slice(&declared_size.to_le_bytes());
    AttrView::new(&b).each_text_member(pmus, scratch, |m, s| {
        if m.name == "size" {
            member_into(out, m, s, required);
        }
    });
}

/// A TRUNCATED capture's note on the bytes beyond the kernel's struct.
fn tail_into(out: &mut String, sep: &str, h: &abi::Capture) {
    let tail = if h.flags & abi::CAPTURE_F_TAIL_NONZERO != 0 {
        "nonzero"
    } else if h.flags & abi::CAPTURE_F_TAIL_ZERO != 0 {
        "zero"
    } else {
        "not checked"
    };
    let _ = write!(
        out,
        "{sep}/* bytes {}..{}: {tail} */",
        attr::ATTR_SIZE_MAX,
        h.declared_size
    );
}

#[cfg(test)]
fn ret_text(call: &Call) -> String {
    let mut s = String::new();
    ret_text_into(&mut s, call);
    s
}

fn ret_text_into(out: &mut String, call: &Call) {
    let Some(ret) = call.ret() else {
        return out.push_str(if call.exit_maybe_lost {
            "= ? <unfinished: its exit may be lost>"
        } else {
            "= ? <unfinished>"
        });
    };
    let dur = call.duration_ns().unwrap_or(0);
    let (secs, micros) = (dur / 1_000_000_000, dur % 1_000_000_000 / 1000);
    match call.errno() {
        Some(e) => match u32::try_from(e).ok().and_then(names::errno) {
            Some(e) => {
                let _ = write!(out, "= -1 {} ({}) <{secs}.{micros:06}>", e.name, e.message);
            }
            None => {
                let _ = write!(out, "= -1 E??? (errno {e}) <{secs}.{micros:06}>");
            }
        },
        None => {
            let _ = write!(out, "= {ret} <{secs}.{micros:06}>");
        }
    }
}

/// A call as one text line (without the newline).
#[must_use]
pub fn call_text(call: &Call, pmus: &PmuTypes) -> String {
    call_text_stamped(call, pmus, &time(call.time_ns()))
}

/// A call as one text line (without the newline), its time shown as
/// `stamp`.
#[must_use]
fn call_text_stamped(call: &Call, pmus: &PmuTypes, stamp: &str) -> String {
    let mut s = stamp.to_owned();
    call_text_into(&mut s, &mut String::new(), call, pmus);
    s
}

/// Appends a call's text line after its stamp (without the newline);
/// `scratch` is room for renderings, reused from line to line.
fn call_text_into(s: &mut String, scratch: &mut String, call: &Call, pmus: &PmuTypes) {
    let h = call.header();
    let _ = write!(s, " cpu={}", h.cpu);
    if let Some(x) = call.exit_cpu().filter(|&x| x != h.cpu) {
        let _ = write!(s, ">{x}");
    }
    let _ = write!(s, " pid={} tid={} ", h.pid, h.tid);
    if call.compat() {
        s.push_str("/* compat */ ");
    }
    let syscall = call.syscall();
    s.push_str(syscall.name);
    s.push('(');
    match call.state {
        CallState::EntryLost => s.push_str("/* entry lost */"),
        CallState::EntryMissing => s.push_str("/* entry not seen */"),
        CallState::EntryGone => s.push_str("/* entry in rings replaced during the call */"),
        CallState::EntryReadEarlier => s.push_str("/* entry read by an earlier reader */"),
        CallState::Complete | CallState::Unfinished => {
            // Each argument as its rule decodes it; a captured pointer
            // as its pointee.
            for (i, arg) in syscall.args.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                if let ArgDecode::CapturedPointer { .. } = arg.decode {
                    attr_text_into(s, scratch, call, pmus, (i, arg));
                } else {
                    s.push_str(arg.name);
                    s.push('=');
                    arg.text_into(s, call.arg(i));
                }
            }
        }
    }
    s.push_str(") ");
    ret_text_into(s, call);
}

/// A LOST record as one text line.
#[must_use]
pub fn lost_text(l: &LostRecord) -> String {
    lost_text_stamped(l, &time(l.header.time_ns))
}

/// A LOST record as one text line, its own time shown as `stamp` (the
/// range of the lost records' times stays in monotonic seconds).
#[must_use]
fn lost_text_stamped(l: &LostRecord, stamp: &str) -> String {
    let by_reason: Vec<String> = l
        .body
        .lost
        .iter()
        .enumerate()
        .filter(|(_, &n)| n != 0)
        .map(|(i, n)| format!("{}={n}", lost_reason(i)))
        .collect();
    // Counts from the kernel or a file: saturate, never wrap.
    let total = l.body.lost.iter().fold(0u64, |a, &n| a.saturating_add(n));
    format!(
        "{stamp} cpu={} --- lost {total} records ({}), call ids {}..{}, times {}..{} ---",
        l.header.cpu,
        by_reason.join(", "),
        l.body.min_call_id,
        l.body.max_call_id,
        time(l.body.first_time_ns),
        time(l.body.last_time_ns),
    )
}

/// Appends a call as one JSON line (with the newline).
///
/// # Errors
/// Only if writing to `out` fails.
pub fn call_json<W: Write>(call: &Call, pmus: &PmuTypes, out: &mut W) -> io::Result<()> {
    let mut line = Vec::with_capacity(2048);
    jsonl::call(&mut line, &mut String::new(), call, pmus);
    out.write_all(&line)
}

/// Appends a LOST record as one JSON line.
///
/// # Errors
/// Only if writing to `out` fails.
pub fn lost_json<W: Write>(l: &LostRecord, out: &mut W) -> io::Result<()> {
    let mut line = Vec::with_capacity(512);
    jsonl::lost(&mut line, l);
    out.write_all(&line)
}

/// A [`Sink`] writing text or JSON Lines.
#[derive(Debug)]
pub struct WriterSink<W: Write> {
    out: W,
    format: Format,
    json_schema: JsonSchema,
    pmus: PmuTypes,
    flush_each: bool,
    line: Vec<u8>,
    /// The text line being built.
    text: String,
    /// Room for one rendering, reused from member to member.
    scratch: String,
    stamper: Stamper,
}

impl<W: Write> WriterSink<W> {
    /// Writes `format` to `out`, naming dynamic PMUs from `pmus`. With
    /// `flush_each`, the output is flushed at the end of every batch the
    /// assembler takes (`--follow`: once per drain pass, not per line).
    pub fn new(out: W, format: Format, pmus: PmuTypes, flush_each: bool) -> Self {
        WriterSink {
            out,
            format,
            json_schema: JsonSchema::Full,
            pmus,
            flush_each,
            line: Vec::with_capacity(1024),
            text: String::with_capacity(1024),
            scratch: String::with_capacity(128),
            stamper: Stamper {
                style: TimeStyle::Monotonic,
                realtime_offset_ns: 0,
                last_ns: None,
            },
        }
    }

    /// Shows text lines' times in `style`; `realtime_offset_ns`
    /// (`CLOCK_REALTIME` − `CLOCK_MONOTONIC`) converts them to wall-clock
    /// time.
    #[must_use]
    pub fn with_time_style(mut self, style: TimeStyle, realtime_offset_ns: i64) -> Self {
        self.stamper = Stamper {
            style,
            realtime_offset_ns,
            last_ns: None,
        };
        self
    }

    /// Writes JSON call lines in `schema` (the default is
    /// [`JsonSchema::Full`]); LOST lines and text are the same in both.
    #[must_use]
    pub fn with_json_schema(mut self, schema: JsonSchema) -> Self {
        self.json_schema = schema;
        self
    }

    /// The writer.
    pub fn into_inner(self) -> W {
        self.out
    }

    fn put(&mut self) -> io::Result<()> {
        self.out.write_all(&self.line)?;
        self.line.clear();
        Ok(())
    }
}

impl<W: Write> Sink for WriterSink<W> {
    fn call(&mut self, call: &Call) -> io::Result<()> {
        self.line.clear();
        match self.format {
            Format::Text => {
                self.text.clear();
                self.stamper.stamp_into(&mut self.text, call.time_ns());
                call_text_into(&mut self.text, &mut self.scratch, call, &self.pmus);
                self.text.push('\n');
                self.line.extend_from_slice(self.text.as_bytes());
            }
            Format::Json => match self.json_schema {
                JsonSchema::Full => {
                    jsonl::call(&mut self.line, &mut self.scratch, call, &self.pmus);
                }
                JsonSchema::Compact => {
                    jsonl::call_compact(&mut self.line, &mut self.scratch, call, &self.pmus);
                }
            },
        }
        self.put()
    }

    fn lost(&mut self, lost: &LostRecord) -> io::Result<()> {
        self.line.clear();
        match self.format {
            Format::Text => {
                let mut stamp = String::new();
                self.stamper.stamp_into(&mut stamp, lost.header.time_ns);
                self.line
                    .extend_from_slice(lost_text_stamped(lost, &stamp).as_bytes());
                self.line.push(b'\n');
            }
            Format::Json => jsonl::lost(&mut self.line, lost),
        }
        self.put()
    }

    fn end_batch(&mut self) -> io::Result<()> {
        if self.flush_each {
            self.out.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::ExitRecord;

    fn exit_only(ret: i64, duration_ns: u64) -> Call {
        Call {
            call_id: 1,
            entry: None,
            exit: Some(ExitRecord::new(
                abi::RecordHeader {
                    time_ns: 1_500_000_123,
                    cpu: 2,
                    pid: 7,
                    tid: 8,
                    syscall_nr: 298,
                    ..Default::default()
                },
                abi::Exit {
                    ret,
                    duration_ns,
                    ..Default::default()
                },
            )),
            state: CallState::EntryMissing,
            exit_maybe_lost: false,
        }
    }

    #[test]
    fn returns_render_like_strace() {
        let c = exit_only(-7, 12_345);
        assert_eq!(
            call_text(&c, &PmuTypes::none()),
            // Stamped when the call began: the EXIT's time less the duration.
            "1.499987778 cpu=2 pid=7 tid=8 perf_event_open(/* entry not seen */) = -1 E2BIG (Argument list too long) <0.000012>"
        );
        assert!(ret_text(&exit_only(3, 1_000_000_000)).ends_with("= 3 <1.000000>"));
        assert!(ret_text(&exit_only(-600, 0)).starts_with("= -1 E??? (errno 600)"));
        assert!(ret_text(&exit_only(-5000, 0)).starts_with("= -5000 "));
    }

    #[test]
    fn json_nulls_what_does_not_apply() {
        let mut out = Vec::new();
        call_json(&exit_only(-22, 5), &PmuTypes::none(), &mut out).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["syscall.errno"], 22);
        assert_eq!(v["syscall.errno_name"], "EINVAL");
        assert_eq!(v["syscall.success"], false);
        assert!(v["args.0"].is_null() && v["arg0.perf_event_attr"].is_null());
        assert_eq!(v["state"], "entry_missing");
    }
}
