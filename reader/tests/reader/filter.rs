// SPDX-License-Identifier: GPL-2.0-only
//! The Syscall Trace filter end to end: every field reachable and seeing
//! what the JSON output shows, and evaluation agreeing with a
//! straightforward reference evaluator (over the JSON line) on random calls
//! and random filters. (`--filter` on the `reader` binary, `reader fields`
//! and the checked-in reference page are the binary crate's tests.)
//!
//! `fields`: every field on the golden scenario's calls; `random_calls` and
//! `random_filters`: random calls, random filters and the reference
//! evaluator. This file holds what they share: calls from builder specs,
//! and their JSON lines as the reference sees them.

mod fields;
mod random_calls;
mod random_filters;

use antinomie_reader::call::{Call, CAPTURE_FLAGS};
use antinomie_reader::decode::{names, PmuTypes};
use antinomie_reader::output::call_json;
use antinomie_reader::record::{self, Record};
use antinomie_reader::ring::builder::{entry_record, exit_record, EntrySpec, ExitSpec};
use serde_json::Value;

use crate::support::calls_of;

fn entry(spec: &EntrySpec) -> record::EntryRecord {
    let bytes = entry_record(0, spec);
    match Record::from(record::parse(&bytes).unwrap()) {
        Record::Entry(e) => e,
        other => panic!("{other:?}"),
    }
}

fn exit(spec: &ExitSpec) -> record::ExitRecord {
    let bytes = exit_record(1, spec);
    match Record::from(record::parse(&bytes).unwrap()) {
        Record::Exit(x) => x,
        other => panic!("{other:?}"),
    }
}

fn pmus() -> PmuTypes {
    PmuTypes::from_pairs([(8, "uprobe".to_owned()), (9, "kprobe".to_owned())])
}

fn json(c: &Call, pmus: &PmuTypes) -> Value {
    let mut out = Vec::new();
    call_json(c, pmus, &mut out).unwrap();
    serde_json::from_slice(&out).unwrap()
}

/// A field's value in a JSON line, `None` when null or missing.
fn json_get<'a>(line: &'a Value, key: &str) -> Option<&'a Value> {
    let v = match key.strip_prefix("args.attr_uptr.") {
        Some(member) => line.get("arg0.perf_event_attr")?.get(member)?,
        None => line.get(key)?,
    };
    (!v.is_null()).then_some(v)
}

/// A JSON value as the reference evaluator sees it.
#[derive(Debug, Clone, PartialEq)]
enum Jv {
    Int(i128),
    Bool(bool),
    Str(String),
    Obj,
}

fn jv(v: &Value) -> Jv {
    match v {
        Value::Number(n) => Jv::Int(
            n.as_i64()
                .map(i128::from)
                .or_else(|| n.as_u64().map(i128::from))
                .unwrap(),
        ),
        Value::Bool(b) => Jv::Bool(*b),
        Value::String(s) => Jv::Str(s.clone()),
        // arg0.capture_flags: names, unknown bits in hex.
        Value::Array(list) => Jv::Int(i128::from(list.iter().fold(0u64, |acc, n| {
            let n = n.as_str().unwrap();
            acc | names::value_of(CAPTURE_FLAGS, n)
                .or_else(|| u64::from_str_radix(n.trim_start_matches("0x"), 16).ok())
                .unwrap()
        }))),
        Value::Object(_) => Jv::Obj,
        Value::Null => unreachable!(),
    }
}
