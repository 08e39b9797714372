// SPDX-License-Identifier: GPL-2.0-only
//! A toy second syscall, registered in the table for tests only: two
//! `int` arguments and a captured `struct perf_event_attr`, at argument 2
//! rather than 0 and with no EXIT checks. Its test proves that a row of
//! the table is all the reader needs to show a syscall: with no other
//! edit, its calls get a text line, a JSON line, filter fields and a
//! reference page, each made from the row.

use super::{Arg, ArgDecode, Capture, Compare, ErrorCase, Syscall, When};

/// `toy(int a, int b, struct perf_event_attr *attr_uptr)`, numbered 500
/// (x86-64) and 501 (ia32), which no real syscall of the pinned kernel
/// uses.
pub static TOY: Syscall = Syscall {
    name: "toy",
    summary: "Takes two numbers and an attr.",
    nr: 500,
    compat_nr: 501,
    prototype: "asmlinkage long sys_toy(int a, int b, struct perf_event_attr __user *attr_uptr);",
    entry_point: "__x64_sys_toy",
    compat_entry_point: "__ia32_sys_toy",
    definition:
        "`SYSCALL_DEFINE3(toy, int, a, int, b, struct perf_event_attr __user *, attr_uptr)`",
    libc: "`syscall(500, a, b, attr)`",
    args: &[
        Arg {
            name: "a",
            c_type: "int",
            register: "rdi",
            field: "args.a",
            field_doc: "argument 0 as the syscall's int",
            decode: ArgDecode::Int,
            meaning: "the first number",
            compare: Compare::Value,
        },
        Arg {
            name: "b",
            c_type: "int",
            register: "rsi",
            field: "args.b",
            field_doc: "argument 1 as the syscall's int",
            decode: ArgDecode::Int,
            meaning: "the second number",
            compare: Compare::Value,
        },
        Arg {
            name: "attr_uptr",
            c_type: "struct perf_event_attr __user *",
            register: "rdx",
            field: "args.attr_uptr",
            field_doc: "argument 2: the user pointer to struct perf_event_attr",
            decode: ArgDecode::CapturedPointer { exit_checks: &[] },
            meaning: "an attr",
            compare: Compare::Ignored,
        },
    ],
    returns: "0, or a negative errno.",
    errors: &[ErrorCase {
        errno: "EINVAL",
        when: "`a` is negative",
    }],
    captures: &[
        Capture {
            what: "the argument registers",
            when: When::Entry,
            how: "as they are",
            keys: &["args.0", "args.1", "args.2", "args.3", "args.4", "args.5"],
            condition: "every captured call",
        },
        Capture {
            what: "the arguments",
            when: When::Entry,
            how: "as the syscall sees them",
            keys: &["args.a", "args.b", "args.attr_uptr"],
            condition: "every captured call",
        },
        Capture {
            what: "`*attr_uptr`",
            when: When::Entry,
            how: "copied",
            keys: &[
                "arg2.status",
                "arg2.capture_flags",
                "arg2.declared_size",
                "arg2.copied_len",
                "arg2.fault_offset",
                "arg2.perf_event_attr",
                "arg2.perf_event_attr_names",
                "args.attr_uptr.<member>",
            ],
            condition: "every captured call",
        },
        Capture {
            what: "the result",
            when: When::Exit,
            how: "the return value and the time taken",
            keys: &[
                "ret",
                "syscall.errno",
                "syscall.errno_name",
                "syscall.success",
                "syscall.duration_ns",
            ],
            condition: "every EXIT",
        },
        Capture {
            what: "who, where, when",
            when: When::Both,
            how: "the record header",
            keys: &[
                "time_ns",
                "cpu",
                "exit_cpu",
                "pid",
                "tid",
                "call_id",
                "syscall.nr",
                "compat",
            ],
            condition: "every record",
        },
        Capture {
            what: "pairing",
            when: When::Reader,
            how: "by call id",
            keys: &["event", "state", "exit_maybe_lost"],
            condition: "every call line",
        },
    ],
    gaps: &["Everything but the above."],
    examples: &[(
        "args.b < 0 && arg2.status == complete",
        "negative b, attr read",
    )],
};

#[cfg(test)]
mod tests {
    use antinomie_abi as abi;

    use super::TOY;
    use crate::call::{Call, CallState};
    use crate::decode::PmuTypes;
    use crate::filter::{fields_of, Filter};
    use crate::record::{CaptureData, EntryRecord, ExitRecord};
    use crate::syscall::{reference_page, PERF_EVENT_OPEN};

    /// A complete toy call, from records carrying the toy's number:
    /// `toy(1, -2, {software CPU clock, 136 bytes})` returning 3 after
    /// 12 µs.
    fn toy_call() -> Call {
        let header = |time_ns| abi::RecordHeader {
            call_id: 9,
            time_ns,
            pid: 7,
            tid: 7,
            syscall_nr: TOY.nr,
            ..Default::default()
        };
        let mut attr = vec![0u8; 136];
        attr[0] = 1; // type: PERF_TYPE_SOFTWARE (config 0: CPU clock)
        attr[4] = 136; // size: PERF_ATTR_SIZE_VER8
        let item = CaptureData {
            header: abi::Capture {
                arg: 2,
                kind: abi::KIND_PERF_EVENT_ATTR,
                status: abi::STATUS_COMPLETE,
                declared_size: 136,
                ..Default::default()
            },
            data: attr,
        };
        let minus_two = (-2i64).cast_unsigned();
        Call {
            call_id: 9,
            entry: Some(EntryRecord::new(
                header(1_000_000_000),
                [1, minus_two, 0x7000, 0, 0, 0],
                1_000_000_000,
                &[item],
            )),
            exit: Some(ExitRecord::new(
                header(1_000_012_000),
                abi::Exit {
                    ret: 3,
                    duration_ns: 12_000,
                    ..Default::default()
                },
            )),
            state: CallState::Complete,
            exit_maybe_lost: false,
        }
    }

    #[test]
    fn the_call_is_the_toy_s_by_its_number() {
        assert!(std::ptr::eq(toy_call().syscall(), &raw const TOY));
    }

    /// The text line: its name, its int arguments by name, its attr
    /// decoded from the capture of argument 2.
    #[test]
    fn its_text_line_comes_from_the_row() {
        let (call, pmus) = (toy_call(), PmuTypes::none());
        assert_eq!(
            crate::output::call_text(&call, &pmus),
            "1.000000000 cpu=0 pid=7 tid=7 toy(a=1, b=-2, {type=PERF_TYPE_SOFTWARE, \
             size=PERF_ATTR_SIZE_VER8, config=PERF_COUNT_SW_CPU_CLOCK}) = 3 <0.000012>"
        );
    }

    /// The JSON line: the row's keys, `arg2.*` for the capture, no key of
    /// `perf_event_open`'s arguments nor of its EXIT checks.
    #[test]
    fn its_json_line_comes_from_the_row() {
        let (call, pmus) = (toy_call(), PmuTypes::none());
        let mut line = Vec::new();
        crate::output::call_json(&call, &pmus, &mut line).unwrap();
        let v: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&line).unwrap();
        let expected = [
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
            "args.a",
            "args.b",
            "args.attr_uptr",
            "arg2.status",
            "arg2.capture_flags",
            "arg2.declared_size",
            "arg2.copied_len",
            "arg2.fault_offset",
            "arg2.perf_event_attr",
            "arg2.perf_event_attr_names",
            "ret",
            "syscall.errno",
            "syscall.errno_name",
            "syscall.success",
            "syscall.duration_ns",
            "exit_maybe_lost",
        ];
        // In this order on the line (the map sorts them).
        let line_text = String::from_utf8(line.clone()).unwrap();
        let at: Vec<usize> = expected
            .iter()
            .map(|k| line_text.find(&format!("\"{k}\":")).unwrap())
            .collect();
        assert!(at.is_sorted(), "{line_text}");
        assert_eq!(v.len(), expected.len(), "{line_text}");
        assert_eq!(v["args.b"], -2);
        assert_eq!(v["arg2.status"], "complete");
        assert_eq!(v["arg2.perf_event_attr"]["size"], 136);
        let mut compact = Vec::new();
        crate::jsonl::call_compact(&mut compact, &mut String::new(), &call, &pmus);
        assert_eq!(
            String::from_utf8(compact).unwrap(),
            "{\"event\":\"call\",\"state\":\"complete\",\"time_ns\":1000000000,\"cpu\":0,\
             \"exit_cpu\":0,\"pid\":7,\"tid\":7,\"call_id\":9,\"syscall.nr\":500,\
             \"compat\":false,\"args.0\":1,\"args.1\":18446744073709551614,\"args.3\":0,\
             \"args.4\":0,\"args.5\":0,\"args.a\":1,\"args.b\":-2,\"args.attr_uptr\":28672,\
             \"arg2.status\":\"complete\",\"arg2.capture_flags\":[],\
             \"arg2.declared_size\":136,\"arg2.copied_len\":136,\
             \"args.attr_uptr.type\":1,\"args.attr_uptr.size\":136,\"ret\":3,\
             \"syscall.success\":true,\"syscall.duration_ns\":12000,\
             \"exit_maybe_lost\":false}\n"
        );
    }

    /// The filter fields: the row's, which select its calls; another
    /// syscall's keys are absent from them.
    #[test]
    fn its_filter_fields_come_from_the_row() {
        let call = toy_call();
        let fields: Vec<&str> = fields_of(&TOY)
            .iter()
            .map(|f| f.key.as_str())
            .filter(|k| !k.starts_with("args.attr_uptr."))
            .collect();
        assert_eq!(&fields[16..19], ["args.a", "args.b", "args.attr_uptr"]);
        assert_eq!(fields[19], "arg2.status");
        assert!(!fields
            .iter()
            .any(|k| k.starts_with("arg0.") || *k == "args.pid"));
        let matches = |f: &str| Filter::parse(f).unwrap().matches(&call);
        assert!(matches(
            "args.a == 1 && args.b == -2 && arg2.status == complete \
             && args.attr_uptr.config == PERF_COUNT_SW_CPU_CLOCK"
        ));
        assert!(!matches("args.b == 2"));
        assert!(!matches("exists(args.pid) || exists(arg0.status)"));
        assert!(matches("syscall.nr == 500"));
    }

    #[test]
    fn its_reference_page_comes_from_the_row() {
        let page = reference_page("toy").unwrap();
        for line in [
            "# toy(2): Antinomie reference",
            "| number | 500 on x86-64 (`__NR_toy`); 501 from the ia32 compat entry |",
            "| 1 | `b` | `int` | `rsi` | `args.b` (raw word: `args.1`) | C `int`: the low 32 bits, sign-extended | the second number |",
            "| 2 | `attr_uptr` | `struct perf_event_attr __user *` | `rdx` | `args.attr_uptr` (raw word: `args.2`) | pointer; its pointee decoded from the capture (`arg2.*`) | an attr |",
            "`arg2.status`, how reading `*attr_uptr` at Entry went (`ANTINOMIE_STATUS_*`):",
            "| `args.a` | signed |  | argument 0 as the syscall's int |",
            "| `arg2.copied_len` | unsigned |  | bytes of the kernel's copy of the attr captured |",
            "| `args.b < 0 && arg2.status == complete` | negative b, attr read |",
        ] {
            assert!(page.contains(line), "no {line:?} in\n{page}");
        }
        assert!(page.contains("(arg2.fault_offset is 4, declared_size 0)"));
        assert!(!page.contains("arg0."));
        assert_ne!(page, reference_page(PERF_EVENT_OPEN.name).unwrap());
    }
}
