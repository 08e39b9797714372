// SPDX-License-Identifier: GPL-2.0-only
//! The scenario cases, the questions a user asks of a trace (by errno, by
//! flag bit, by attr member, by duration, precedence, by an attr changed
//! during the call),
//! their expected subsets taken straight from the workload's log.

use serde_json::Value;

use crate::model;

use super::{select, value, Call, Case};

/// The scenario cases, expected subsets from the workload's log (and, for
/// what was captured of the attr, the model's reading of it).
pub(super) fn scenario_cases(calls: &[Call]) -> Vec<Case> {
    let errno = |c: &Call| c.work.errno;
    let flags = |c: &Call| c.work.args[4];
    let copied = |c: &Call| {
        value(&c.line, "arg0.copied_len")
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let attr_size = |c: &Call| value(&c.line, "args.attr_uptr.size").and_then(Value::as_u64);
    let mut durations: Vec<u64> = calls
        .iter()
        .filter_map(|c| value(&c.line, "syscall.duration_ns").and_then(Value::as_u64))
        .collect();
    durations.sort_unstable();
    let median = durations.get(durations.len() / 2).copied().unwrap_or(0);
    let slowest = durations.last().copied().unwrap_or(0);
    let duration = |c: &Call| value(&c.line, "syscall.duration_ns").and_then(Value::as_u64);
    let case = |about: &str, filter: &str, pred: &dyn Fn(&Call) -> bool| {
        case_of(calls, about, filter, pred)
    };
    let mut cases = vec![
        case("by errno", "syscall.errno == E2BIG", &|c| {
            errno(c) == Some(model::E2BIG)
        }),
        case("by errno", "ret in {-EINVAL, -EFAULT}", &|c| {
            c.work.ret == -i64::from(model::EINVAL) || c.work.ret == -i64::from(model::EFAULT)
        }),
        case("by flag bit", "args.flags & PERF_FLAG_FD_CLOEXEC", &|c| {
            flags(c) & 8 != 0
        }),
        case("by flag bit", "args.flags & PERF_FLAG_FD_CLOEXEC == 0", &|c| {
            flags(c) & 8 == 0
        }),
        case("by flag bit", "args.flags & 0x100000", &|c| {
            flags(c) & 0x10_0000 != 0
        }),
        case(
            "by attr member, sized down",
            "exists(args.attr_uptr.config1) && !exists(args.attr_uptr.config2)",
            &|c| (57..=64).contains(&copied(c)),
        ),
        case(
            "by attr member, sized down",
            "exists(args.attr_uptr.sample_max_stack) && !exists(args.attr_uptr.__reserved_2)",
            &|c| (109..=110).contains(&copied(c)),
        ),
        case(
            "by attr member, sized down",
            "args.attr_uptr.size == PERF_ATTR_SIZE_VER3 && !exists(args.attr_uptr.sample_regs_intr)",
            &|c| attr_size(c) == Some(96) && copied(c) <= 96,
        ),
        // A non-zero tail fails the call before the kernel reads the head,
        // so the capture holds only the size word: arg0.declared_size.
        case(
            "by capture, sized down",
            "syscall.errno == E2BIG && arg0.declared_size > 136 && !exists(args.attr_uptr.type)",
            &|c| {
                errno(c) == Some(model::E2BIG)
                    && value(&c.line, "arg0.declared_size")
                        .and_then(Value::as_u64)
                        .is_some_and(|s| s > 136)
                    && copied(c) == 0
            },
        ),
        case(
            "by attr member",
            "args.attr_uptr.type == PERF_TYPE_BREAKPOINT && args.attr_uptr.bp_len == HW_BREAKPOINT_LEN_8",
            &|c| c.work.case == "breakpoint-w8",
        ),
        case(
            "by duration",
            &format!("syscall.duration_ns > {median}"),
            &|c| duration(c).is_some_and(|d| d > median),
        ),
        case(
            "by duration",
            &format!("syscall.duration_ns >= {slowest}"),
            &|c| duration(c) == Some(slowest),
        ),
        case(
            "precedence",
            "syscall.success || syscall.errno == EINVAL && args.flags & PERF_FLAG_FD_CLOEXEC",
            &|c| c.work.ret >= 0 || (errno(c) == Some(model::EINVAL) && flags(c) & 8 != 0),
        ),
        case(
            "live",
            "ret in {-EINVAL, -E2BIG} && !(args.flags & PERF_FLAG_FD_CLOEXEC)",
            &|c| {
                (c.work.ret == -i64::from(model::EINVAL) || c.work.ret == -i64::from(model::E2BIG))
                    && flags(c) & 8 == 0
            },
        ),
    ];
    cases.extend(e2e_only_cases(calls));
    cases
}

fn case_of(calls: &[Call], about: &str, filter: &str, pred: &dyn Fn(&Call) -> bool) -> Case {
    Case {
        about: about.to_owned(),
        filter: filter.to_owned(),
        expect: select(calls, pred),
    }
}

/// The cases only the `e2e` script's calls make non-empty: (workload case,
/// about, filter). Each selects exactly its workload case, and is said to
/// be skipped when the workload has no such call.
const E2E_ONLY_CASES: &[(&str, &str, &str)] = &[
    // The big group's E2BIG comes after perf_copy_attr() succeeded.
    (
        BIG_GROUP_E2BIG,
        "by errno",
        "syscall.errno == E2BIG && !arg0.size_written",
    ),
    // The attr changed during the call, after the kernel read it: the
    // capture is the kernel's copy, with the config passed.
    (
        CHANGED_DURING_THE_CALL,
        "by an attr changed during the call",
        "args.attr_uptr.config == PERF_COUNT_SW_CPU_CLOCK && args.attr_uptr.sample_max_stack == 16 && args.attr_uptr.size == PERF_ATTR_SIZE_VER8",
    ),
];

fn e2e_only_cases(calls: &[Call]) -> Vec<Case> {
    let mut cases = Vec::new();
    for &(workload_case, about, filter) in E2E_ONLY_CASES {
        if calls.iter().any(|c| c.work.case == workload_case) {
            cases.push(case_of(calls, about, filter, &|c| {
                c.work.case == workload_case
            }));
        } else {
            println!(
                "antinomie-e2e: filters: no `{workload_case}` call in this workload: `{filter}` is not checked"
            );
        }
    }
    cases
}

/// The workload case that gets E2BIG from `perf_event_validate_size()`.
const BIG_GROUP_E2BIG: &str = "big-group-e2big-sibling";
/// The workload case whose attr changes during the call, after the
/// kernel's copy read it.
const CHANGED_DURING_THE_CALL: &str = "changed-during-the-call-uffd";
