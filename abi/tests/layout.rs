// SPDX-License-Identifier: GPL-2.0-only
//! Compares the Rust mirror with the C header it mirrors.
//!
//! The struct members and `#define`s are read from `antinomie.h` itself, so
//! a field or constant added there without a Rust counterpart fails this
//! test. A C shim generated from them is compiled with the system compiler
//! (`$CC`, else `cc`) and prints every size, alignment, offset, member size
//! and constant value; each is compared with what this crate says.
//!
//! `<linux/types.h>` and `<linux/ioctl.h>` come from the compiler's default
//! include path (Debian: linux-libc-dev), or from `$ANTINOMIE_UAPI_INCLUDE`,
//! e.g. the `usr/include` of a kernel build's `headers_install`. Missing
//! headers fail the test; they never skip it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::mem::offset_of;
use std::path::{Path, PathBuf};
use std::process::Command;

use antinomie_abi::{
    Capture, Consumer, Counters, Entry, Exit, Info, Lost, Meta, RecordHeader, Scope, ABI_VERSION,
    CALL_ID_SEQ_BITS, CALL_ID_SEQ_MASK, CAPTURE_F_SIZE_FAULT, CAPTURE_F_TAIL_NONZERO,
    CAPTURE_F_TAIL_ZERO, EXIT_F_ATTR_COPIED, EXIT_F_ENTRY_GONE, EXIT_F_ENTRY_LOST,
    EXIT_F_SIZE_STORE_FAULT, EXIT_F_SIZE_WRITTEN, EXIT_F_WAITED, INFO_F_ENABLED, INFO_F_LOSSLESS,
    INFO_F_SCOPED, INFO_F_SCOPE_CAPTURE, IOC_DISABLE, IOC_ENABLE, IOC_GET_COUNTERS, IOC_GET_INFO,
    IOC_MAGIC, IOC_SET_LOSSLESS, IOC_SET_RING_SIZE, IOC_SET_SCOPE, IOC_SET_WATERMARK,
    KIND_PERF_EVENT_ATTR, LOSSLESS_TIMEOUT_MAX_MS, LOST_BAD_CONSUMER, LOST_NR_SLOTS,
    LOST_RING_BROKEN, LOST_RING_FULL, MAGIC, META_F_LOSSLESS, RECORD_ALIGN, RECORD_ENTRY,
    RECORD_EXIT, RECORD_F_COMPAT, RECORD_LOST, SCOPE_F_CAPTURE, STATUS_COMPLETE, STATUS_FAULT,
    STATUS_INVALID_SIZE, STATUS_NOT_APPLICABLE, STATUS_NULL_PTR, STATUS_TRUNCATED,
};

const HEADER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/antinomie.h");

/// A measured quantity, keyed like `offsetof antinomie_exit.ret` or
/// `const ANTINOMIE_MAGIC`, so that a mismatch names what moved.
type Facts = BTreeMap<String, u64>;

/// The structs and their members, in declaration order, as the header
/// declares them.
struct Header {
    structs: Vec<(String, Vec<String>)>,
    defines: Vec<String>,
}

fn parse_header(text: &str) -> Header {
    let mut structs = Vec::new();
    let mut defines = Vec::new();
    let mut current: Option<(String, Vec<String>)> = None;
    for line in text.lines() {
        if let Some((name, members)) = current.as_mut() {
            if line == "};" {
                structs.push(current.take().unwrap());
                continue;
            }
            // Members are written `\t__u64\tname;` or `\t__u64\tname[N];`;
            // refuse anything else, so a new construct cannot slip past.
            let member = line
                .strip_prefix('\t')
                .and_then(|l| l.split_once('\t'))
                .filter(|(ty, _)| matches!(*ty, "__u32" | "__s32" | "__u64" | "__s64"))
                .and_then(|(_, rest)| rest.strip_suffix(';'))
                .map(|decl| decl.split('[').next().unwrap());
            match member {
                Some(field) => members.push(field.to_owned()),
                None => panic!("struct {name}: cannot parse member line {line:?}"),
            }
        } else if let Some(rest) = line.strip_prefix("struct antinomie_") {
            if let Some(name) = rest.strip_suffix(" {") {
                current = Some((format!("antinomie_{name}"), Vec::new()));
            }
        } else if let Some(rest) = line.strip_prefix("#define ANTINOMIE_") {
            let name = rest.split_whitespace().next().unwrap();
            assert!(!name.contains('('), "function-like macro ANTINOMIE_{name}");
            defines.push(format!("ANTINOMIE_{name}"));
        }
    }
    assert!(current.is_none(), "unterminated struct in {HEADER}");
    assert!(
        !structs.is_empty() && !defines.is_empty(),
        "nothing parsed from {HEADER}"
    );
    Header { structs, defines }
}

fn c_shim(header: &Header) -> String {
    let mut c = String::from(
        "#include <stdio.h>\n#include <stddef.h>\n#include \"antinomie.h\"\n\n\
         #define P(key, val) printf(\"%s %llu\\n\", key, (unsigned long long)(val))\n\n\
         int main(void)\n{\n",
    );
    for (name, members) in &header.structs {
        writeln!(c, "\tP(\"sizeof {name}\", sizeof(struct {name}));").unwrap();
        writeln!(c, "\tP(\"alignof {name}\", _Alignof(struct {name}));").unwrap();
        for m in members {
            writeln!(
                c,
                "\tP(\"offsetof {name}.{m}\", offsetof(struct {name}, {m}));"
            )
            .unwrap();
            writeln!(
                c,
                "\tP(\"sizeof {name}.{m}\", sizeof(((struct {name} *)0)->{m}));"
            )
            .unwrap();
        }
    }
    for d in &header.defines {
        writeln!(c, "\tP(\"const {d}\", {d});").unwrap();
    }
    c.push_str("\treturn 0;\n}\n");
    c
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    String::from_utf8(out.stdout).expect("shim output is ASCII")
}

fn compiler(dir: &Path) -> Command {
    let mut cmd = Command::new(std::env::var_os("CC").unwrap_or_else(|| "cc".into()));
    cmd.arg("-I").arg(dir);
    if let Some(inc) = std::env::var_os("ANTINOMIE_UAPI_INCLUDE") {
        cmd.arg("-I").arg(inc);
    }
    cmd
}

/// Compiles and runs the shim against a copy of the header.
fn c_facts(header: &Header) -> Facts {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("abi-layout");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(HEADER, dir.join("antinomie.h")).unwrap();

    // Checked apart so that a missing package reads as such, not as a
    // compile error in the shim.
    let probe = dir.join("probe.c");
    std::fs::write(
        &probe,
        "#include <linux/types.h>\n#include <linux/ioctl.h>\n",
    )
    .unwrap();
    let probed = compiler(&dir).args(["-fsyntax-only"]).arg(&probe).output();
    match probed {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "Linux uapi headers (<linux/types.h>, <linux/ioctl.h>) not found: install \
             linux-libc-dev or set ANTINOMIE_UAPI_INCLUDE\n{}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!("no C compiler (set CC or install gcc): {e}"),
    }

    let src = dir.join("shim.c");
    let exe = dir.join("shim");
    std::fs::write(&src, c_shim(header)).unwrap();
    // -Wpadded: C must agree that there is no implicit padding, as
    // bytemuck's Pod derive does for the Rust side.
    run(
        compiler(&dir)
            .args(["-std=c11", "-Wall", "-Wextra", "-Wpadded", "-Werror", "-o"])
            .arg(&exe)
            .arg(&src),
        "compiling the C shim",
    );
    run(&mut Command::new(&exe), "running the C shim")
        .lines()
        .map(|line| {
            let (key, val) = line.rsplit_once(' ').expect("`key value` line");
            (key.to_owned(), val.parse().expect("decimal value"))
        })
        .collect()
}

fn field_size<T, F>(_: impl Fn(&T) -> &F) -> usize {
    size_of::<F>()
}

fn n(v: impl TryInto<u64>) -> u64 {
    v.try_into().ok().expect("fits in u64")
}

/// Records a mirror's size, alignment and members under its C names.
macro_rules! mirror {
    ($facts:ident, $ty:ty = $c:literal { $($field:ident),+ $(,)? }) => {
        $facts.insert(concat!("sizeof ", $c).into(), n(size_of::<$ty>()));
        $facts.insert(concat!("alignof ", $c).into(), n(align_of::<$ty>()));
        $(
            let field = stringify!($field).trim_start_matches("r#");
            $facts.insert(format!("offsetof {}.{field}", $c), n(offset_of!($ty, $field)));
            $facts.insert(format!("sizeof {}.{field}", $c), n(field_size(|s: &$ty| &s.$field)));
        )+
    };
}

/// Records constants under their C names, `ANTINOMIE_` + the Rust name.
macro_rules! constants {
    ($facts:ident, $($name:ident),+ $(,)?) => {
        $($facts.insert(concat!("const ANTINOMIE_", stringify!($name)).into(), n($name));)+
    };
}

fn rust_facts() -> Facts {
    let mut f = Facts::new();
    mirror!(f, Meta = "antinomie_meta" {
        magic, abi_version, meta_size, cpu, data_size, consumer_offset, data_offset,
        producer_pos, produced, lost, flags, reserved, waits, wait_ns,
    });
    mirror!(f, Consumer = "antinomie_consumer" { consumer_pos });
    mirror!(f, RecordHeader = "antinomie_record_header" {
        size, r#type, hdr_size, flags, call_id, time_ns, pid, tid, cpu, syscall_nr,
    });
    mirror!(f, Entry = "antinomie_entry" { size, nr_items, args, start_ns });
    mirror!(f, Capture = "antinomie_capture" {
        size, hdr_size, arg, kind, status, flags, declared_size, copied_len, fault_offset,
        reserved,
    });
    mirror!(f, Exit = "antinomie_exit" {
        size, flags, ret, duration_ns, required_size, nr_items, entry_pos,
    });
    mirror!(f, Lost = "antinomie_lost" {
        size, reserved, first_time_ns, last_time_ns, min_call_id, max_call_id, lost,
    });
    mirror!(f, Info = "antinomie_info" {
        size, abi_version, cpu_id_limit, page_size, flags, reserved, data_size, watermark,
        mmap_stride, mmap_size, consumer_offset, data_offset,
    });
    mirror!(f, Counters = "antinomie_counters" {
        size, cpu, producer_pos, consumer_pos, produced, lost,
    });
    mirror!(f, Scope = "antinomie_scope" { flags, cgroup_fd });
    constants!(
        f,
        ABI_VERSION,
        MAGIC,
        LOST_RING_FULL,
        LOST_BAD_CONSUMER,
        LOST_RING_BROKEN,
        LOST_NR_SLOTS,
        RECORD_ALIGN,
        CALL_ID_SEQ_BITS,
        CALL_ID_SEQ_MASK,
        RECORD_ENTRY,
        RECORD_EXIT,
        RECORD_LOST,
        RECORD_F_COMPAT,
        KIND_PERF_EVENT_ATTR,
        STATUS_COMPLETE,
        STATUS_NULL_PTR,
        STATUS_FAULT,
        STATUS_TRUNCATED,
        STATUS_INVALID_SIZE,
        STATUS_NOT_APPLICABLE,
        CAPTURE_F_TAIL_ZERO,
        CAPTURE_F_TAIL_NONZERO,
        CAPTURE_F_SIZE_FAULT,
        EXIT_F_SIZE_STORE_FAULT,
        EXIT_F_SIZE_WRITTEN,
        EXIT_F_ATTR_COPIED,
        EXIT_F_ENTRY_LOST,
        EXIT_F_ENTRY_GONE,
        EXIT_F_WAITED,
        META_F_LOSSLESS,
        LOSSLESS_TIMEOUT_MAX_MS,
        INFO_F_ENABLED,
        INFO_F_LOSSLESS,
        INFO_F_SCOPED,
        INFO_F_SCOPE_CAPTURE,
        SCOPE_F_CAPTURE,
        IOC_MAGIC,
        IOC_GET_INFO,
        IOC_ENABLE,
        IOC_DISABLE,
        IOC_GET_COUNTERS,
        IOC_SET_RING_SIZE,
        IOC_SET_WATERMARK,
        IOC_SET_LOSSLESS,
        IOC_SET_SCOPE,
    );
    f
}

/// Every difference between the two sides, one line each.
fn differences(c: &Facts, rust: &Facts) -> Vec<String> {
    let mut diffs = Vec::new();
    for (key, &cv) in c {
        match rust.get(key) {
            Some(&rv) if rv == cv => {}
            Some(&rv) => diffs.push(format!("{key}: C {cv}, Rust {rv}")),
            None => diffs.push(format!("{key}: C {cv}, missing in Rust")),
        }
    }
    for (key, rv) in rust {
        if !c.contains_key(key) {
            diffs.push(format!("{key}: Rust {rv}, missing in C"));
        }
    }
    diffs
}

#[test]
fn rust_mirror_matches_c_header() {
    let text = std::fs::read_to_string(HEADER).expect("read antinomie.h");
    let c = c_facts(&parse_header(&text));
    let diffs = differences(&c, &rust_facts());
    assert!(
        diffs.is_empty(),
        "abi/antinomie.h and the antinomie-abi crate disagree:\n  {}",
        diffs.join("\n  ")
    );
}

#[test]
fn parser_reads_members_and_constants() {
    let h = parse_header(
        "struct antinomie_x {\n\t__u32\ta;\n\t__u64\tb[ANTINOMIE_N];\n};\n\
         #define ANTINOMIE_N\t\t2\n#define OTHER 1\n",
    );
    assert_eq!(
        h.structs,
        [(
            "antinomie_x".to_owned(),
            vec!["a".to_owned(), "b".to_owned()]
        )]
    );
    assert_eq!(h.defines, ["ANTINOMIE_N"]);
}

#[test]
#[should_panic(expected = "cannot parse member line")]
fn parser_refuses_unknown_member_syntax() {
    parse_header("struct antinomie_x {\n\tunion {\n};\n");
}

#[test]
fn a_moved_field_is_reported_by_name() {
    let mut c = rust_facts();
    c.insert("offsetof antinomie_exit.ret".into(), 16);
    c.remove("const ANTINOMIE_MAGIC");
    let diffs = differences(&c, &rust_facts());
    assert_eq!(
        diffs,
        [
            "offsetof antinomie_exit.ret: C 16, Rust 8",
            "const ANTINOMIE_MAGIC: Rust 1230261825, missing in C",
        ]
    );
}
