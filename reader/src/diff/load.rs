//! Reading a run: a raw trace decoded into the JSON line form, or the
//! reader's JSON Lines; each call reduced to a [`DiffCall`].

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use serde_json::{Map, Value};

use super::{ArgKey, DiffCall, DiffError, InputKey, Outcome, PidArg, Run};
use crate::call::{call_fields, Call};
use crate::output::call_json;
use crate::pipeline::{self, Assembler, Sink};
use crate::record::LostRecord;
use crate::syscall::{self, ArgDecode, CaptureKeys, Compare};
use crate::trace;

fn u64_of(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

fn i64_of(v: &Value, key: &str) -> Option<i64> {
    v.get(key).and_then(Value::as_i64)
}

fn str_of(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn bool_of(v: &Value, key: &str) -> Option<bool> {
    v.get(key).and_then(Value::as_bool)
}

/// An object member as compact JSON, `None` when null or absent.
fn json_of(v: &Value, key: &str) -> Option<String> {
    v.get(key).filter(|x| !x.is_null()).map(Value::to_string)
}

/// The attr's members as `{type=…, size=…, config=…, …}`: those three
/// always, every other one when non-zero, by name where the JSON names it,
/// in the uapi's declaration order (any key the table does not know last).
fn attr_compact(attr: &Map<String, Value>, names: Option<&Map<String, Value>>) -> String {
    let known = crate::decode::ATTR_MEMBERS.iter().map(|m| m.name);
    let unknown = attr
        .keys()
        .map(String::as_str)
        .filter(|k| !crate::decode::ATTR_MEMBERS.iter().any(|m| m.name == *k));
    let mut parts = Vec::new();
    for k in known.chain(unknown) {
        let Some(v) = attr.get(k) else { continue };
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
fn captured_text(v: &Value, keys: &CaptureKeys) -> String {
    let status = v.get(keys.status).and_then(Value::as_str).unwrap_or("?");
    let fault = u64_of(v, keys.fault_offset);
    let attr = v.get(keys.decoded).and_then(Value::as_object);
    let names = v.get(keys.decoded_names).and_then(Value::as_object);
    match (status, attr) {
        ("null_ptr", _) => "NULL".to_owned(),
        ("not_applicable", _) => "/* attr not read: flags rejected first */".to_owned(),
        ("invalid_size", _) => format!(
            "{{size={} /* invalid size */}}",
            u64_of(v, keys.declared_size).unwrap_or(0)
        ),
        (_, Some(a)) => {
            let mut s = attr_compact(a, names);
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
        let nr = u64_of(v, "syscall.nr").ok_or("a call line without `syscall.nr`")?;
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
        let state = str_of(v, "state").ok_or("a call line without `state`")?;
        let pid = i64_of(v, "pid").ok_or("a call line without `pid`")?;
        let tid = i64_of(v, "tid").ok_or("a call line without `tid`")?;
        let has_entry = matches!(state.as_str(), "complete" | "unfinished");
        let has_exit = v.get("ret").is_some_and(|r| !r.is_null());
        let args = sc
            .args
            .iter()
            .map(|a| match a.compare {
                Compare::Value => ArgKey::Value(json_of(v, a.field)),
                Compare::OwnPid => ArgKey::Pid(i64_of(v, a.field).map(|p| {
                    if p > 0 && (p == pid || p == tid) {
                        PidArg::Own
                    } else {
                        PidArg::Value(p)
                    }
                })),
                Compare::IsFd => ArgKey::IsFd(i64_of(v, a.field).map(|g| g >= 0)),
                Compare::Ignored => ArgKey::Ignored,
            })
            .collect();
        let keys = sc.capture_keys();
        // A key of the captured struct, when the syscall has one.
        let capture = |key: fn(&CaptureKeys) -> &'static str| keys.map(key);
        let key = InputKey {
            nr: Some(nr),
            args,
            status: capture(|k| k.status).and_then(|k| str_of(v, k)),
            declared_size: capture(|k| k.declared_size).and_then(|k| u64_of(v, k)),
            attr: capture(|k| k.decoded).and_then(|k| json_of(v, k)),
        };
        let text = if has_entry {
            // Each argument as the rule table decodes it, from its keys.
            let args: Vec<String> = sc
                .args
                .iter()
                .map(|a| match a.decode {
                    // `keys` are those of this argument: a syscall has
                    // them exactly when it has a captured pointer.
                    ArgDecode::CapturedPointer { .. } => {
                        keys.map_or_else(|| "?".to_owned(), |k| captured_text(v, k))
                    }
                    ArgDecode::Int => format!(
                        "{}={}",
                        a.name,
                        i64_of(v, a.field).map_or_else(|| "?".to_owned(), |x| x.to_string())
                    ),
                    ArgDecode::Flags { names_field, .. } => format!(
                        "{}={}",
                        a.name,
                        str_of(v, names_field).unwrap_or_else(|| "?".to_owned())
                    ),
                })
                .collect();
            format!("{}({})", sc.name, args.join(", "))
        } else {
            format!("{}(/* entry lost */)", sc.name)
        };
        let outcome = Outcome {
            has_entry,
            has_exit,
            state,
            ret: i64_of(v, "ret"),
            errno: i64_of(v, "syscall.errno"),
            errno_name: str_of(v, "syscall.errno_name"),
            required_size: capture(|k| k.required_size).and_then(|k| u64_of(v, k)),
            size_written: capture(|k| k.size_written).and_then(|k| bool_of(v, k)),
            status: key.status.clone(),
            fault_offset: capture(|k| k.fault_offset).and_then(|k| u64_of(v, k)),
            double_fetch: capture(|k| k.double_fetch).and_then(|k| bool_of(v, k)),
            kernel_attr: capture(|k| k.kernel_attr).and_then(|k| json_of(v, k)),
            duration_ns: u64_of(v, "syscall.duration_ns"),
        };
        Ok(DiffCall {
            pid,
            tid,
            call_id: u64_of(v, "call_id"),
            time_ns: u64_of(v, "time_ns"),
            word5: u64_of(v, "args.5"),
            key,
            text,
            outcome,
            capture_keys: keys,
        })
    }
}

/// A sink that keeps each call as the JSON line would show it.
struct Collect<'r> {
    run: &'r mut Run,
    line: Vec<u8>,
    pmus: crate::decode::PmuTypes,
}

impl Sink for Collect<'_> {
    fn call(&mut self, call: &Call) -> io::Result<()> {
        self.line.clear();
        call_json(call, &self.pmus, &mut self.line)?;
        let v: Value = serde_json::from_slice(&self.line).map_err(io::Error::other)?;
        self.run.push_json(&v).map_err(io::Error::other)
    }

    fn lost(&mut self, _: &LostRecord) -> io::Result<()> {
        self.run.lost_records += 1;
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Reads a run: a raw trace file, or the reader's JSON Lines (read line
/// by line: only the reduced calls stay in memory).
///
/// # Errors
/// An unreadable file, a trace that does not decode, a line that is not
/// the reader's JSON.
pub fn load(path: &Path) -> Result<Run, DiffError> {
    let read_err = |source| DiffError::Read {
        path: path.to_owned(),
        source,
    };
    let mut input = BufReader::new(File::open(path).map_err(read_err)?);
    let mut run = Run::default();
    if trace::is_trace(input.fill_buf().map_err(read_err)?) {
        let mut bytes = Vec::new();
        input.read_to_end(&mut bytes).map_err(read_err)?;
        let t = trace::read_trace(&bytes).map_err(|source| DiffError::Trace {
            path: path.to_owned(),
            source,
        })?;
        drop(bytes);
        if !t.complete {
            tracing::warn!(
                "{}: the trace file has no END frame: the recording was cut short",
                path.display()
            );
        }
        let mut sink = Collect {
            run: &mut run,
            line: Vec::with_capacity(4096),
            pmus: t.header.pmus.clone(),
        };
        let assembler = Assembler::new(&t.header.cpus, t.header.window_ns, &mut sink);
        pipeline::replay(t.msgs, assembler).map_err(read_err)?;
        return Ok(run);
    }
    let mut line = String::new();
    for n in 1.. {
        line.clear();
        let err = |why: String| DiffError::Json {
            path: path.to_owned(),
            line: n,
            why,
        };
        match input.read_line(&mut line) {
            Ok(0) => break,
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
        let v: Value = serde_json::from_str(&line).map_err(|e| {
            err(format!(
                "neither a trace file nor the reader's JSON Lines: {e}"
            ))
        })?;
        run.push_json(&v).map_err(err)?;
    }
    Ok(run)
}
