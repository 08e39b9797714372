// SPDX-License-Identifier: GPL-2.0-only
//! The workload's log as the comparator reads it: one [`LoggedCall`] per call
//! `antinomie-workload` made, found again by the tag in argument word 5.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use antinomie_workloads::log::LoggedCall;
use serde_json::{Map, Value};

/// The workload's calls, from one or more logs.
pub(crate) struct Works {
    pub(crate) calls: Vec<LoggedCall>,
    /// Each call's index by the tag in its argument word 5.
    pub(crate) by_tag: HashMap<u64, usize>,
}

impl Works {
    pub(crate) fn read(paths: &[PathBuf]) -> Result<Works, String> {
        let mut calls: Vec<LoggedCall> = Vec::new();
        let mut by_tag = HashMap::new();
        for path in paths {
            for record in read_jsonl(path)? {
                let work: LoggedCall = serde_json::from_value(record)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                if by_tag.insert(work.args[5], calls.len()).is_some() {
                    return Err(format!("two workload calls carry tag {:#x}", work.args[5]));
                }
                calls.push(work);
            }
        }
        Ok(Works { calls, by_tag })
    }

    /// Which workload call a reader line is: by the tag in argument word 5,
    /// or, for an EXIT without ENTRY, the first call not yet `taken` with
    /// the same thread and return value.
    pub(crate) fn index_of(
        calls: &[LoggedCall],
        by_tag: &HashMap<u64, usize>,
        line: &Map<String, Value>,
        free: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        if let Some(tag) = line.get("args.5").and_then(Value::as_u64) {
            return by_tag.get(&tag).copied();
        }
        let tid = line.get("tid").and_then(Value::as_i64);
        let ret = line.get("ret").and_then(Value::as_i64);
        calls
            .iter()
            .enumerate()
            .position(|(j, w)| free(j) && Some(i64::from(w.tid)) == tid && Some(w.ret) == ret)
    }
}

pub(crate) fn read_jsonl(path: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))
        })
        .collect()
}
