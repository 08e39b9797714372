// SPDX-License-Identifier: GPL-2.0-only
//! Reading a run as a stream: a raw trace decoded call by call (the
//! library's call assembly), or the reader's JSON Lines line by line;
//! each call reduced to a [`DiffCall`] on arrival, so that only the calls
//! waiting in the alignment window stay in memory.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{ArgKey, CallText, DiffCall, DiffError, InputKey, Outcome, PidArg};
use crate::call::{call_fields, Call, CallField};
use crate::decode::PmuTypes;
use crate::field;
use crate::pipeline::{Assembler, Sink};
use crate::record::LostRecord;
use crate::syscall::{self, ArgDecode, CaptureKeys, Compare, PerSyscall, Syscall};
use crate::trace::{self, TraceReader};

/// The keys of one call line, read either from a parsed JSON line or
/// straight from a decoded call: the two give the same values, so a
/// trace and its JSON Lines compare alike.
trait Line {
    fn u64(&self, key: &str) -> Option<u64>;
    fn i64(&self, key: &str) -> Option<i64>;
    fn bool(&self, key: &str) -> Option<bool>;
    fn string(&self, key: &str) -> Option<String>;
    /// The value as JSON, `None` when null or absent.
    fn json(&self, key: &str) -> Option<Value>;
    /// The decoded struct at `key` as JSON text, its members in the
    /// attr table's order (as the JSON line writes them), `None` when
    /// null or absent: the same text from both inputs.
    fn struct_text(&self, key: &str) -> Option<String>;
}

impl Line for Value {
    fn u64(&self, key: &str) -> Option<u64> {
        self.get(key).and_then(Value::as_u64)
    }

    fn i64(&self, key: &str) -> Option<i64> {
        self.get(key).and_then(Value::as_i64)
    }

    fn bool(&self, key: &str) -> Option<bool> {
        self.get(key).and_then(Value::as_bool)
    }

    fn string(&self, key: &str) -> Option<String> {
        self.get(key).and_then(Value::as_str).map(str::to_owned)
    }

    fn json(&self, key: &str) -> Option<Value> {
        self.get(key).filter(|x| !x.is_null()).cloned()
    }

    fn struct_text(&self, key: &str) -> Option<String> {
        match self.get(key)? {
            Value::Null => None,
            Value::Object(members) => {
                // A line re-serialized by another JSON library may hold
                // the members in another order: this is the writer's.
                let mut text = String::from("{");
                for (k, v) in in_attr_order(members) {
                    if text.len() > 1 {
                        text.push(',');
                    }
                    let _ = write!(text, "{}:{v}", Value::from(k));
                }
                text.push('}');
                Some(text)
            }
            other => Some(other.to_string()),
        }
    }
}

/// A decoded call, read through its syscall's call fields.
struct Decoded<'c> {
    call: &'c Call,
    syscall: &'static Syscall,
    pmus: &'c PmuTypes,
}

/// Each syscall's call fields by key: a call is read through a dozen of
/// them, and a hash lookup is cheaper than a search of the row's keys.
static FIELDS_BY_KEY: PerSyscall<HashMap<&'static str, CallField>> =
    PerSyscall::new(|sc| call_fields(sc).iter().map(|f| (f.key, *f)).collect());

impl Decoded<'_> {
    fn field(&self, key: &str) -> field::Value<'_> {
        FIELDS_BY_KEY
            .get(self.syscall)
            .get(key)
            .map_or(field::Value::Null, |f| (f.get)(self.call))
    }
}

impl Line for Decoded<'_> {
    fn u64(&self, key: &str) -> Option<u64> {
        match self.field(key) {
            field::Value::U64(x) => Some(x),
            field::Value::I64(x) => u64::try_from(x).ok(),
            _ => None,
        }
    }

    fn i64(&self, key: &str) -> Option<i64> {
        match self.field(key) {
            field::Value::I64(x) => Some(x),
            field::Value::U64(x) => i64::try_from(x).ok(),
            _ => None,
        }
    }

    fn bool(&self, key: &str) -> Option<bool> {
        match self.field(key) {
            field::Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    fn string(&self, key: &str) -> Option<String> {
        match self.field(key) {
            field::Value::Str(s) => Some(s.into_owned()),
            _ => self.json(key).and_then(|v| v.as_str().map(str::to_owned)),
        }
    }

    fn json(&self, key: &str) -> Option<Value> {
        match self.field(key) {
            field::Value::Null => None,
            field::Value::U64(x) => Some(x.into()),
            field::Value::I64(x) => Some(x.into()),
            field::Value::Bool(b) => Some(b.into()),
            field::Value::Str(s) => Some(s.into_owned().into()),
            // Names and the decoded struct: as the JSON line writes them,
            // read back, so that both inputs hold the same value.
            other => serde_json::from_slice(&self.rendered(&other)).ok(),
        }
    }

    fn struct_text(&self, key: &str) -> Option<String> {
        match self.field(key) {
            field::Value::Null => None,
            other => String::from_utf8(self.rendered(&other)).ok(),
        }
    }
}

impl Decoded<'_> {
    /// A field as the JSON line writes it.
    fn rendered(&self, v: &field::Value<'_>) -> Vec<u8> {
        let mut buf = Vec::with_capacity(512);
        crate::jsonl::value(&mut buf, &mut String::new(), v, self.pmus);
        buf
    }
}

/// A copy of `call` that owns its capture items (the decoded call shares
/// its drain pass's bytes, which a waiting call must not hold on to).
fn detached(call: &Call) -> Call {
    let items = |i: &crate::record::SharedItems| -> Vec<crate::record::CaptureData> {
        i.iter().map(Into::into).collect()
    };
    Call {
        call_id: call.call_id,
        entry: call.entry.as_ref().map(|e| {
            crate::record::EntryRecord::new(e.header, e.args, e.start_ns, &items(&e.items))
        }),
        exit: call.exit.clone(),
        state: call.state,
        exit_maybe_lost: call.exit_maybe_lost,
    }
}

/// The members of a decoded attr in the uapi's declaration order, then
/// any the table does not know (looked for only when there are some).
fn in_attr_order(members: &Map<String, Value>) -> Vec<(&str, &Value)> {
    let mut out: Vec<(&str, &Value)> = crate::decode::ATTR_MEMBERS
        .iter()
        .filter_map(|m| members.get_key_value(m.name))
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    if out.len() < members.len() {
        let unknown = members
            .iter()
            .filter(|(k, _)| !crate::decode::ATTR_MEMBERS.iter().any(|m| m.name == *k));
        out.extend(unknown.map(|(k, v)| (k.as_str(), v)));
    }
    out
}

/// The attr's members as `{type=…, size=…, config=…, …}`: those three
/// always, every other one when non-zero, by name where the JSON names it,
/// in the uapi's declaration order (any key the table does not know last).
fn attr_compact(attr: &Map<String, Value>, names: Option<&Map<String, Value>>) -> String {
    let mut parts = Vec::new();
    for (k, v) in in_attr_order(attr) {
        let always = matches!(k, "type" | "size" | "config");
        let zero = matches!(v, Value::Bool(false)) || v.as_u64() == Some(0) || v.is_null();
        if zero && !always {
            continue;
        }
        let shown = match (names.and_then(|n| n.get(k)).and_then(Value::as_str), v) {
            (Some(name), _) => name.to_owned(),
            (None, Value::Bool(b)) => u8::from(*b).to_string(),
            (None, v) => v.to_string(),
        };
        parts.push(format!("{k}={shown}"));
    }
    format!("{{{}}}", parts.join(", "))
}

/// The captured pointer argument as text: the attr, or what became of it.
fn captured_text(
    line: &impl Line,
    keys: &CaptureKeys,
    attr: Option<&Map<String, Value>>,
) -> String {
    let status = line.string(keys.status);
    let status = status.as_deref().unwrap_or("?");
    let fault = line.u64(keys.fault_offset);
    match (status, attr) {
        ("null_ptr", _) => "NULL".to_owned(),
        ("not_applicable", _) => "/* attr not read: flags rejected first */".to_owned(),
        ("invalid_size", _) => format!(
            "{{size={} /* invalid size */}}",
            line.u64(keys.declared_size).unwrap_or(0)
        ),
        (_, Some(a)) => {
            let names = line.json(keys.decoded_names);
            let mut s = attr_compact(a, names.as_ref().and_then(Value::as_object));
            match status {
                "fault" => {
                    let _ = write!(s, " /* fault at offset {} */", fault.unwrap_or(0));
                }
                "truncated" => s.push_str(" /* truncated */"),
                _ => {}
            }
            s
        }
        ("fault", None) => format!("/* unreadable: fault at offset {} */", fault.unwrap_or(0)),
        (other, None) => format!("/* {other} */"),
    }
}

impl DiffCall {
    /// Reduces one call line of the reader's JSON.
    ///
    /// # Errors
    /// A line without the keys every call line has.
    pub fn from_json(v: &Value) -> Result<Self, String> {
        let nr = v
            .u64("syscall.nr")
            .ok_or("a call line without `syscall.nr`")?;
        let sc = u32::try_from(nr)
            .ok()
            .and_then(syscall::by_nr)
            .ok_or_else(|| format!("a call line of syscall number {nr}, which this reader has no capture table for"))?;
        // A full line has every key; a compact one (`--json-schema
        // compact`) leaves out nulls, zeros and the names this reads.
        if let Some(f) = call_fields(sc).iter().find(|f| v.get(f.key).is_none()) {
            return Err(format!(
                "a call line without `{}`: `reader diff` reads the full JSON schema \
                 (the default), not `--json-schema compact`; write the run with \
                 `--json-schema full`, or diff the trace files (`-w`)",
                f.key
            ));
        }
        Self::build(v, sc, None)
    }

    /// Reduces a decoded call, reading its fields directly (no JSON line
    /// is written for it).
    ///
    /// # Errors
    /// A call without the keys every call line has.
    pub fn from_call(call: &Call, pmus: &Arc<PmuTypes>) -> Result<Self, String> {
        let line = Decoded {
            call,
            syscall: call.syscall(),
            pmus,
        };
        // The text is for the few calls reported: made when asked for.
        let text = CallText::Decoded(Box::new((detached(call), Arc::clone(pmus))));
        Self::build(&line, line.syscall, Some(text))
    }

    /// The call as text: `perf_event_open({…}, pid=…, cpu=…, group_fd=…,
    /// flags=…)`.
    #[must_use]
    pub fn text(&self) -> Cow<'_, str> {
        match &self.text {
            CallText::Ready(text) => Cow::Borrowed(text),
            CallText::Decoded(deferred) => {
                let (call, pmus) = &**deferred;
                let line = Decoded {
                    call,
                    syscall: call.syscall(),
                    pmus,
                };
                Cow::Owned(text_of(&line, line.syscall))
            }
        }
    }

    fn build(v: &impl Line, sc: &'static Syscall, text: Option<CallText>) -> Result<Self, String> {
        let state = v.string("state").ok_or("a call line without `state`")?;
        let pid = v.i64("pid").ok_or("a call line without `pid`")?;
        let tid = v.i64("tid").ok_or("a call line without `tid`")?;
        let has_entry = matches!(state.as_str(), "complete" | "unfinished");
        let has_exit = v.i64("ret").is_some();
        let args = sc
            .args
            .iter()
            .map(|a| match a.compare {
                Compare::Value => ArgKey::Value(v.json(a.field).map(|x| x.to_string())),
                Compare::OwnPid => ArgKey::Pid(v.i64(a.field).map(|p| {
                    if p > 0 && (p == pid || p == tid) {
                        PidArg::Own
                    } else {
                        PidArg::Value(p)
                    }
                })),
                Compare::IsFd => ArgKey::IsFd(v.i64(a.field).map(|g| g >= 0)),
                Compare::Ignored => ArgKey::Ignored,
            })
            .collect();
        let keys = sc.capture_keys();
        // A key of the captured struct, when the syscall has one.
        let capture = |key: fn(&CaptureKeys) -> &'static str| keys.map(key);
        let status = capture(|k| k.status).and_then(|k| v.string(k));
        let text = text.unwrap_or_else(|| CallText::Ready(text_of(v, sc)));
        let key = InputKey {
            nr: v.u64("syscall.nr"),
            args,
            status: status.clone(),
            declared_size: capture(|k| k.declared_size).and_then(|k| v.u64(k)),
            attr: capture(|k| k.decoded).and_then(|k| v.struct_text(k)),
        };
        let outcome = Outcome {
            has_entry,
            has_exit,
            state,
            ret: v.i64("ret"),
            errno: v.i64("syscall.errno"),
            errno_name: v.string("syscall.errno_name"),
            required_size: capture(|k| k.required_size).and_then(|k| v.u64(k)),
            size_written: capture(|k| k.size_written).and_then(|k| v.bool(k)),
            status,
            fault_offset: capture(|k| k.fault_offset).and_then(|k| v.u64(k)),
            duration_ns: v.u64("syscall.duration_ns"),
        };
        Ok(DiffCall {
            pid,
            tid,
            call_id: v.u64("call_id"),
            time_ns: v.u64("time_ns"),
            word5: v.u64("args.5"),
            key,
            text,
            outcome,
            capture_keys: keys,
        })
    }
}

/// The call as text: each argument as the rule table decodes it.
fn text_of(v: &impl Line, sc: &'static Syscall) -> String {
    let state = v.string("state");
    if !matches!(state.as_deref(), Some("complete" | "unfinished")) {
        return format!("{}(/* entry lost */)", sc.name);
    }
    let keys = sc.capture_keys();
    let args: Vec<String> = sc
        .args
        .iter()
        .map(|a| match a.decode {
            // `keys` are those of this argument: a syscall has them
            // exactly when it has a captured pointer.
            ArgDecode::CapturedPointer { .. } => keys.map_or_else(
                || "?".to_owned(),
                |k| captured_text(v, k, v.json(k.decoded).as_ref().and_then(Value::as_object)),
            ),
            ArgDecode::Int => format!(
                "{}={}",
                a.name,
                v.i64(a.field)
                    .map_or_else(|| "?".to_owned(), |x| x.to_string())
            ),
            ArgDecode::Flags { names_field, .. } => format!(
                "{}={}",
                a.name,
                v.string(names_field).unwrap_or_else(|| "?".to_owned())
            ),
        })
        .collect();
    format!("{}({})", sc.name, args.join(", "))
}

/// What a run yields, in time order.
// Calls are the items: boxing them would add an allocation per call for
// the rare LOST record's sake.
#[allow(clippy::large_enum_variant)]
pub(super) enum Item {
    /// A call.
    Call(DiffCall),
    /// A LOST record.
    Lost,
}

/// Where the assembler puts a trace's calls until the comparison takes
/// them: each call reduced on arrival. It is the caller's, so that it
/// outlives the assembler that borrows it.
#[derive(Default)]
pub(super) struct Arrived {
    items: Rc<RefCell<VecDeque<Item>>>,
    pmus: Arc<PmuTypes>,
}

impl Sink for Arrived {
    fn call(&mut self, call: &Call) -> io::Result<()> {
        let c = DiffCall::from_call(call, &self.pmus).map_err(io::Error::other)?;
        self.items.borrow_mut().push_back(Item::Call(c));
        Ok(())
    }

    fn lost(&mut self, _: &LostRecord) -> io::Result<()> {
        self.items.borrow_mut().push_back(Item::Lost);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A run being read.
pub(super) struct Source<'s> {
    path: PathBuf,
    input: Input<'s>,
}

// One per run.
#[allow(clippy::large_enum_variant)]
enum Input<'s> {
    Trace {
        frames: TraceReader<BufReader<File>>,
        /// The assembler, until the trace's end flushed it.
        assembler: Option<Assembler<'s>>,
        items: Rc<RefCell<VecDeque<Item>>>,
    },
    Json {
        lines: BufReader<File>,
        line: String,
        number: usize,
    },
}

impl<'s> Source<'s> {
    /// Opens a run: a trace file (by its magic), its calls assembled into
    /// `arrived`, else JSON Lines.
    ///
    /// # Errors
    /// An unreadable file or trace header.
    pub(super) fn open(path: &Path, arrived: &'s mut Arrived) -> Result<Self, DiffError> {
        let read_err = |source| DiffError::Read {
            path: path.to_owned(),
            source,
        };
        let mut input = BufReader::with_capacity(1 << 16, File::open(path).map_err(read_err)?);
        let input = if trace::is_trace(input.fill_buf().map_err(read_err)?) {
            let frames = TraceReader::new(input).map_err(|source| DiffError::Trace {
                path: path.to_owned(),
                source,
            })?;
            let items = Rc::clone(&arrived.items);
            arrived.pmus = Arc::new(frames.header().pmus.clone());
            let header = frames.header();
            let assembler = Assembler::new(&header.cpus, header.window_ns, arrived);
            Input::Trace {
                frames,
                assembler: Some(assembler),
                items,
            }
        } else {
            Input::Json {
                lines: input,
                line: String::new(),
                number: 0,
            }
        };
        Ok(Source {
            path: path.to_owned(),
            input,
        })
    }

    /// The next call or LOST record, `None` at the end of the run.
    ///
    /// # Errors
    /// A read error, a trace that does not decode, a line that is not the
    /// reader's JSON.
    pub(super) fn next(&mut self) -> Result<Option<Item>, DiffError> {
        let path = &self.path;
        let read_err = |source| DiffError::Read {
            path: path.clone(),
            source,
        };
        match &mut self.input {
            Input::Trace {
                frames,
                assembler,
                items,
            } => loop {
                if let Some(item) = items.borrow_mut().pop_front() {
                    return Ok(Some(item));
                }
                let Some(asm) = assembler.as_mut() else {
                    return Ok(None);
                };
                match frames.next() {
                    Some(Ok(msg)) => asm.push(msg).map_err(read_err)?,
                    Some(Err(source)) => {
                        return Err(DiffError::Trace {
                            path: path.clone(),
                            source,
                        })
                    }
                    None => {
                        if let Some(asm) = assembler.take() {
                            asm.finish().1.map_err(read_err)?;
                        }
                        if !frames.complete() {
                            tracing::warn!(
                                "{}: the trace file has no END frame: the recording was cut short",
                                path.display()
                            );
                        }
                    }
                }
            },
            Input::Json {
                lines,
                line,
                number,
            } => loop {
                line.clear();
                *number += 1;
                let err = |why: String| DiffError::Json {
                    path: path.clone(),
                    line: *number,
                    why,
                };
                match lines.read_line(line) {
                    Ok(0) => return Ok(None),
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                        return Err(err(
                            "neither a trace file nor JSON Lines (not UTF-8)".to_owned()
                        ))
                    }
                    Err(e) => return Err(read_err(e)),
                }
                if line.trim().is_empty() {
                    continue;
                }
                let v: Value = serde_json::from_str(line).map_err(|e| {
                    err(format!(
                        "neither a trace file nor the reader's JSON Lines: {e}"
                    ))
                })?;
                return match v.get("event").and_then(Value::as_str) {
                    Some("call") => Ok(Some(Item::Call(DiffCall::from_json(&v).map_err(err)?))),
                    Some("lost") => Ok(Some(Item::Lost)),
                    _ => Err(err(
                        "not a call or lost line of `reader --format json`".to_owned()
                    )),
                };
            },
        }
    }
}
