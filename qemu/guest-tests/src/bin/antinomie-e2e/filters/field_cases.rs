// SPDX-License-Identifier: GPL-2.0-only
//! The cases of every field `reader fields` lists: presence, comparisons,
//! bit and truth tests and equality by the field's type, and its named
//! constants as the model renders them.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::{select, value, Call, Case, Field, Ids, ATTR};

/// Fields whose string values are also constants of the field (written
/// bare: `state == complete`).
const BARE_STRINGS: &[&str] = &["state", "arg0.status", "syscall.errno_name"];

/// The model's symbolic rendering of `field`, split into its `|` parts.
fn name_parts(line: &Map<String, Value>, field: &str) -> Option<Vec<String>> {
    let rendered = match field.strip_prefix(ATTR) {
        Some(member) => line
            .get("arg0.perf_event_attr_names")?
            .as_object()?
            .get(member)?,
        None => match field {
            "args.flags" => line.get("args.flags_names")?,
            "syscall.errno" | "ret" => line.get("syscall.errno_name")?,
            "arg0.capture_flags" => {
                let parts = line.get(field)?.as_array()?;
                return Some(
                    parts
                        .iter()
                        .filter_map(|p| p.as_str().map(str::to_owned))
                        .collect(),
                );
            }
            _ => return None,
        },
    };
    Some(rendered.as_str()?.split('|').map(str::to_owned).collect())
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A JSON number as i128 (u64 and i64 both fit).
fn number(v: &Value) -> Option<i128> {
    v.as_u64()
        .map(i128::from)
        .or_else(|| v.as_i64().map(i128::from))
}

/// Numbers as the filter writes them: negative with a sign, some in hex
/// so that both notations are exercised.
fn literal(n: i128, hex: bool) -> String {
    if n < 0 {
        format!("-{}", -n)
    } else if hex {
        format!("{n:#x}")
    } else {
        n.to_string()
    }
}

/// The cases of every field: presence, then by type, then named constants.
pub(super) fn field_cases(
    calls: &[Call],
    fields: &[Field],
    size_names: &BTreeMap<i128, String>,
) -> Vec<Case> {
    let mut cases = Vec::new();
    for f in fields {
        let mut field = typed_cases(calls, f);
        field.extend(named_cases(calls, &f.name, &f.ty, size_names));
        cases.extend(field.into_iter().map(|(filter, expect)| Case {
            about: f.name.clone(),
            filter,
            expect,
        }));
    }
    cases
}

/// `exists()` both ways, then by the field's type: comparisons around a
/// value the run holds and `in` (numbers), a test per set bit (bits),
/// truth tests (bools), equality (strings).
fn typed_cases(calls: &[Call], f: &Field) -> Vec<(String, Ids)> {
    let name = f.name.as_str();
    let mut cases = Vec::new();
    let mut push = |filter: String, expect: Ids| cases.push((filter, expect));
    let present = |c: &Call| value(&c.line, name).is_some();
    push(format!("exists({name})"), select(calls, present));
    push(format!("!exists({name})"), select(calls, |c| !present(c)));
    match f.ty.as_str() {
        "unsigned" | "signed" | "bits" => {
            let num = |c: &Call| value(&c.line, name).and_then(number);
            let distinct: BTreeSet<i128> = calls.iter().filter_map(num).collect();
            let distinct: Vec<i128> = distinct.into_iter().collect();
            if let Some(&pivot) = distinct.get(distinct.len() / 2) {
                let cmp = |op: &str, hex: bool, test: fn(i128, i128) -> bool| {
                    (
                        format!("{name} {op} {}", literal(pivot, hex)),
                        select(calls, |c| num(c).is_some_and(|v| test(v, pivot))),
                    )
                };
                for (filter, expect) in [
                    cmp("==", true, |v, p| v == p),
                    cmp("!=", false, |v, p| v != p),
                    cmp("<", false, |v, p| v < p),
                    cmp("<=", true, |v, p| v <= p),
                    cmp(">", false, |v, p| v > p),
                    cmp(">=", false, |v, p| v >= p),
                ] {
                    push(filter, expect);
                }
                if let (Some(&lo), Some(&hi)) = (distinct.first(), distinct.last()) {
                    push(
                        format!(
                            "{name} in {{{}, {}}}",
                            literal(lo, false),
                            literal(hi, true)
                        ),
                        select(calls, |c| num(c).is_some_and(|v| v == lo || v == hi)),
                    );
                }
            }
            if f.ty == "bits" {
                let all = calls
                    .iter()
                    .filter_map(num)
                    .fold(0u64, |acc, v| acc | u64::try_from(v).unwrap_or(0));
                for bit in (0..64).map(|b| 1u64 << b).filter(|b| all & b != 0) {
                    push(
                        format!("{name} & {bit:#x}"),
                        select(calls, |c| {
                            num(c).is_some_and(|v| u64::try_from(v).unwrap_or(0) & bit != 0)
                        }),
                    );
                }
            }
        }
        "bool" => {
            let truth = |c: &Call| value(&c.line, name).and_then(Value::as_bool);
            push(name.to_owned(), select(calls, |c| truth(c) == Some(true)));
            push(
                format!("!{name}"),
                select(calls, |c| truth(c) != Some(true)),
            );
            push(
                format!("{name} == false"),
                select(calls, |c| truth(c) == Some(false)),
            );
            push(
                format!("{name} != true"),
                select(calls, |c| truth(c) == Some(false)),
            );
        }
        "string" => {
            fn text<'c>(c: &'c Call, name: &str) -> Option<&'c str> {
                value(&c.line, name).and_then(Value::as_str)
            }
            let distinct: BTreeSet<&str> = calls.iter().filter_map(|c| text(c, name)).collect();
            for s in distinct {
                push(
                    format!("{name} == {}", Value::from(s)),
                    select(calls, |c| text(c, name) == Some(s)),
                );
                push(
                    format!("{name} != {}", Value::from(s)),
                    select(calls, |c| text(c, name).is_some_and(|t| t != s)),
                );
                if BARE_STRINGS.contains(&name) && is_identifier(s) {
                    push(
                        format!("{name} == {s}"),
                        select(calls, |c| text(c, name) == Some(s)),
                    );
                }
            }
        }
        // Objects are only tested for presence.
        _ => {}
    }
    cases
}

/// The field's named constants, from the model's rendering of the same
/// values (`args.flags_names`, `syscall.errno_name`, the attr's `_names`).
fn named_cases(
    calls: &[Call],
    name: &str,
    ty: &str,
    size_names: &BTreeMap<i128, String>,
) -> Vec<(String, Ids)> {
    let mut cases = Vec::new();
    let mut push = |filter: String, expect: Ids| cases.push((filter, expect));
    let parts = |c: &Call| name_parts(&c.line, name);
    let mut names: BTreeSet<String> = BTreeSet::new();
    for c in calls {
        names.extend(
            parts(c)
                .unwrap_or_default()
                .into_iter()
                .filter(|n| is_identifier(n)),
        );
    }
    let has = |c: &Call, n: &str| parts(c).is_some_and(|p| p.iter().any(|x| x == n));
    let whole = |c: &Call, n: &str| parts(c).is_some_and(|p| p.len() == 1 && p[0] == n);
    match name {
        "args.flags" | "arg0.capture_flags" => {
            for n in &names {
                push(format!("{name} & {n}"), select(calls, |c| has(c, n)));
            }
        }
        "syscall.errno" | "ret" => {
            let sign = if name == "ret" { "-" } else { "" };
            for n in &names {
                push(
                    format!("{name} == {sign}{n}"),
                    select(calls, |c| whole(c, n)),
                );
            }
            if let (Some(a), Some(b)) = (names.first(), names.last()) {
                push(
                    format!("{name} in {{{sign}{a}, {sign}{b}}}"),
                    select(calls, |c| whole(c, a) || whole(c, b)),
                );
            }
        }
        "arg0.declared_size" | "arg0.required_size" => {
            for (v, n) in size_names {
                push(
                    format!("{name} == {n}"),
                    select(calls, |c| value(&c.line, name).and_then(number) == Some(*v)),
                );
            }
        }
        _ if name.starts_with(ATTR) && ty == "bits" => {
            for n in &names {
                push(format!("{name} & {n}"), select(calls, |c| has(c, n)));
            }
        }
        _ if name.starts_with(ATTR) => {
            for n in &names {
                push(format!("{name} == {n}"), select(calls, |c| whole(c, n)));
            }
            if let (Some(a), Some(b)) = (names.first(), names.last()) {
                push(
                    format!("{name} in {{{a}, {b}}}"),
                    select(calls, |c| whole(c, a) || whole(c, b)),
                );
            }
        }
        _ => {}
    }
    cases
}

/// `PERF_ATTR_SIZE_VER*` by value, as the model names the attrs' sizes.
pub(super) fn size_names(calls: &[Call]) -> BTreeMap<i128, String> {
    let mut names = BTreeMap::new();
    for c in calls {
        if let (Some(v), Some(n)) = (
            value(&c.line, "args.attr_uptr.size").and_then(number),
            name_parts(&c.line, "args.attr_uptr.size"),
        ) {
            if n.len() == 1 && is_identifier(&n[0]) {
                names.insert(v, n[0].clone());
            }
        }
    }
    names
}
