// SPDX-License-Identifier: GPL-2.0-only
//! The attr table against the real uapi header, and decoding at every
//! size boundary.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

use antinomie_reader::decode::{
    self, names, AttrView, PmuTypes, Presence, ATTR_MEMBERS, ATTR_SIZE_MAX, ATTR_SIZE_VERS,
};

use antinomie_reader::ring::builder::{attr, set};

/// The pinned tree's uapi headers, `$ANTINOMIE_KERNEL_SRC/include/uapi`:
/// the repository holds no copy of the kernel's headers. The test command
/// sets the variable to what `scripts/kernel-source.sh` prints.
fn pinned_uapi() -> PathBuf {
    let src = std::env::var_os("ANTINOMIE_KERNEL_SRC").expect(
        "ANTINOMIE_KERNEL_SRC is not set: run \
         ANTINOMIE_KERNEL_SRC=$(scripts/kernel-source.sh | tail -n 1) cargo test -- --ignored",
    );
    let uapi = PathBuf::from(src).join("include/uapi");
    assert!(
        uapi.join("linux/perf_event.h").is_file(),
        "{} has no linux/perf_event.h: ANTINOMIE_KERNEL_SRC must be the pinned tree",
        uapi.display()
    );
    uapi
}

/// An include directory holding only the pinned tree's `perf_event.h`
/// and `hw_breakpoint.h`, so that everything else they include comes from
/// the host's headers, as for any user-space program.
fn pinned_perf_headers(dir: &std::path::Path) -> PathBuf {
    let uapi = pinned_uapi();
    let inc = dir.join("include");
    std::fs::create_dir_all(inc.join("linux")).unwrap();
    for f in ["perf_event.h", "hw_breakpoint.h"] {
        std::fs::copy(uapi.join("linux").join(f), inc.join("linux").join(f)).unwrap();
    }
    inc
}

/// The 136-byte mask of a member as the table says.
fn table_mask(m: &decode::AttrMember) -> String {
    let mut bytes = [0u8; ATTR_SIZE_MAX];
    let mask = m.mask().to_le_bytes();
    bytes[m.offset..m.offset + m.width].copy_from_slice(&mask[..m.width]);
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Every name table, with the C expression that gives each value.
fn constants() -> Vec<(&'static str, u64)> {
    let tables = [
        names::PERF_TYPE,
        names::PERF_HW_ID,
        names::PERF_HW_CACHE_ID,
        names::PERF_HW_CACHE_OP,
        names::PERF_HW_CACHE_RESULT,
        names::PERF_SW_ID,
        names::PERF_SAMPLE,
        names::PERF_FORMAT,
        names::PERF_SAMPLE_BRANCH,
        names::PERF_FLAG,
        names::CLOCK,
        names::HW_BREAKPOINT_TYPE,
        names::HW_BREAKPOINT_LEN,
        names::PERF_ATTR_SIZE,
    ];
    tables
        .iter()
        .flat_map(|t| t.iter().map(|&(v, n)| (n, v)))
        .collect()
}

/// The C shim's source.
fn c_shim() -> String {
    let mut c = String::from(
        "#include <stdio.h>\n#include <string.h>\n#include <errno.h>\n#include <linux/time.h>\n\
         #include <linux/perf_event.h>\n#include <linux/hw_breakpoint.h>\n\
         static void dump(const char *n, const unsigned char *p) {\n\
           printf(\"member %s \", n);\n\
           for (unsigned i = 0; i < sizeof(struct perf_event_attr); i++) printf(\"%02x\", p[i]);\n\
           printf(\"\\n\");\n}\n\
         int main(void) {\n  struct perf_event_attr a;\n\
           printf(\"sizeof %zu\\n\", sizeof(a));\n",
    );
    for m in ATTR_MEMBERS {
        let _ = writeln!(
            c,
            "  memset(&a, 0, sizeof(a)); a.{0} = ~0ULL; dump(\"{0}\", (const unsigned char *)&a);",
            m.name
        );
    }
    for (name, _) in constants() {
        let _ = writeln!(
            c,
            "  printf(\"const {name} %llu\\n\", (unsigned long long)({name}));"
        );
    }
    for e in names::ERRNO.iter().filter(|e| !e.internal) {
        let _ = writeln!(
            c,
            "  printf(\"errno {0} %d %s\\n\", {0}, strerror({0}));",
            e.name
        );
    }
    c.push_str("  for (int i = 1; i < 134; i++) printf(\"strerror %d %s\\n\", i, strerror(i));\n");
    c.push_str("  return 0;\n}\n");
    c
}

/// Compiles a C shim against the pinned tree's `perf_event.h` that sets
/// each member to all ones in a zeroed struct and dumps
/// the bytes, prints every constant, and every errno's name and
/// `strerror()`; compares all of it with the tables.
#[test]
#[ignore = "needs the pinned Linux tree (scripts/kernel-source.sh); the test command runs it"]
fn the_table_matches_the_c_header() {
    let c = c_shim();
    let dir = std::env::temp_dir().join(format!("antinomie-attr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let include = pinned_perf_headers(&dir);
    let src = dir.join("attr.c");
    let exe = dir.join("attr");
    std::fs::write(&src, &c).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .arg("-Wall")
        .arg("-Wno-overflow")
        .arg("-I")
        .arg(&include)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("running {cc}: {e} (a C compiler is needed)"));
    assert!(
        out.status.success(),
        "{cc} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8(run.stdout).unwrap();
    let mut checked = 0;
    for line in text.lines() {
        let mut w = line.splitn(3, ' ');
        match (w.next(), w.next(), w.next()) {
            (Some("sizeof"), Some(n), None) => {
                assert_eq!(n.parse::<usize>().unwrap(), ATTR_SIZE_MAX);
            }
            (Some("member"), Some(name), Some(mask)) => {
                let m = decode::member(name).unwrap();
                assert_eq!(
                    table_mask(m),
                    mask,
                    "member {name}: offset/width/bits differ from the header"
                );
                checked += 1;
            }
            (Some("const"), Some(name), Some(v)) => {
                let ours = constants().into_iter().find(|(n, _)| *n == name).unwrap().1;
                assert_eq!(ours, v.parse::<u64>().unwrap(), "{name}");
                checked += 1;
            }
            (Some("errno"), Some(name), Some(rest)) => {
                let (v, msg) = rest.split_once(' ').unwrap();
                let e = names::errno_by_name(name).unwrap();
                assert_eq!(e.value, v.parse::<u32>().unwrap(), "{name}");
                assert_eq!(e.message, msg, "{name}'s message");
                checked += 1;
            }
            (Some("strerror"), Some(v), Some(msg)) => {
                // Every errno glibc knows is in the table (41 and 58 are
                // unused on Linux).
                let v: u32 = v.parse().unwrap();
                if !msg.starts_with("Unknown error") {
                    assert!(
                        names::errno(v).is_some(),
                        "errno {v} ({msg}) missing from the table"
                    );
                }
            }
            _ => panic!("unexpected line {line:?}"),
        }
    }
    assert_eq!(
        checked,
        ATTR_MEMBERS.len()
            + constants().len()
            + names::ERRNO.iter().filter(|e| !e.internal).count()
    );
}

#[test]
fn every_member_is_present_exactly_from_its_version() {
    for &size in &ATTR_SIZE_VERS {
        let a = attr(size);
        let view = AttrView::new(&a[..size as usize]);
        for m in ATTR_MEMBERS {
            let present = view.raw(m).is_some();
            assert_eq!(present, m.since <= size, "{} at size {size}", m.name);
            if present {
                assert_eq!(view.presence(m), Presence::Full, "{} at {size}", m.name);
            }
        }
    }
}

#[test]
fn every_member_decodes_at_every_boundary() {
    // Set every member to a distinct value, then cut at each version.
    for &size in &ATTR_SIZE_VERS {
        for m in ATTR_MEMBERS {
            let mut a = attr(136);
            let v = 0x0123_4567_89ab_cdef_u64 & m.mask() >> m.bits.map_or(0, |(s, _)| s);
            set(&mut a, m.name, v);
            let view = AttrView::new(&a[..size as usize]);
            if m.since <= size {
                assert_eq!(view.raw(m), Some(v), "{} at {size}", m.name);
                assert!(view.render(m, &PmuTypes::none()).is_some());
            } else {
                assert_eq!(view.raw(m), None, "{} at {size}", m.name);
                assert_eq!(view.render(m, &PmuTypes::none()), None);
            }
        }
    }
}

#[test]
fn absent_members_are_not_in_the_json() {
    let mut a = attr(72);
    set(&mut a, "bp_len", 4);
    set(&mut a, "branch_sample_type", 1);
    let view = AttrView::new(&a[..72]);
    let shown: Vec<_> = view
        .text_members(&PmuTypes::none())
        .into_iter()
        .map(|(m, _)| m.name)
        .collect();
    assert!(shown.contains(&"config2"), "{shown:?}");
    assert!(!shown.contains(&"branch_sample_type"), "{shown:?}");
}

#[test]
fn unknown_bits_are_listed_separately() {
    let mut a = attr(136);
    set(&mut a, "sample_type", (1 << 0) | (1 << 11) | (1 << 40));
    set(&mut a, "read_format", 1 << 7);
    set(&mut a, "branch_sample_type", (1 << 2) | (1 << 20));
    set(&mut a, "__reserved_1", 3);
    set(&mut a, "__reserved_2", 0x201);
    set(&mut a, "__reserved_3", 5);
    let pmus = PmuTypes::none();
    let view = AttrView::new(&a);
    let text: Vec<String> = view
        .text_members(&pmus)
        .into_iter()
        .map(|(m, s)| format!("{}={s}", m.name))
        .collect();
    for expected in [
        "sample_type=PERF_SAMPLE_IP|PERF_SAMPLE_BRANCH_STACK|0x10000000000",
        "read_format=0x80 /* PERF_FORMAT_??? */",
        "branch_sample_type=PERF_SAMPLE_BRANCH_HV|0x100000",
        "__reserved_1=0x3",
        "__reserved_2=0x201",
        "__reserved_3=0x5",
    ] {
        assert!(
            text.iter().any(|t| t == expected),
            "{expected} not in {text:?}"
        );
    }
    let (known, rest) = names::split_flags(names::PERF_SAMPLE, (1 << 0) | (1 << 40));
    assert_eq!(known, vec!["PERF_SAMPLE_IP"]);
    assert_eq!(rest, 1 << 40);
}

#[test]
fn kprobe_and_uprobe_aliases_need_the_pmu_type() {
    let pmus = PmuTypes::from_pairs([(6, "kprobe".to_owned()), (7, "uprobe".to_owned())]);
    let mut a = attr(136);
    set(&mut a, "type", 6);
    set(&mut a, "config2", 0xffff_ffff_8100_0000);
    let names_of = |a: &[u8], pmus: &PmuTypes| -> Vec<String> {
        AttrView::new(a)
            .text_members(pmus)
            .into_iter()
            .map(|(m, s)| format!("{}={s}", m.name))
            .collect()
    };
    // kprobe_func 0: config2 is the address.
    let t = names_of(&a, &pmus);
    assert!(t.contains(&"type=6 /* kprobe */".to_owned()), "{t:?}");
    assert!(
        t.contains(&"kprobe_addr=0xffffffff81000000".to_owned()),
        "{t:?}"
    );
    set(&mut a, "kprobe_func", 0x5000);
    set(&mut a, "probe_offset", 0x10);
    let t = names_of(&a, &pmus);
    assert!(
        t.contains(&"kprobe_func=0x5000".to_owned()) && t.contains(&"probe_offset=0x10".to_owned()),
        "{t:?}"
    );
    set(&mut a, "type", 7);
    let t = names_of(&a, &pmus);
    assert!(t.contains(&"uprobe_path=0x5000".to_owned()), "{t:?}");
    // No sysfs: the generic names.
    let t = names_of(&a, &PmuTypes::none());
    assert!(
        t.contains(&"config1=0x5000".to_owned()) && t.contains(&"config2=0x10".to_owned()),
        "{t:?}"
    );
    assert!(
        t.contains(&"type=0x7 /* PERF_TYPE_??? */".to_owned()),
        "{t:?}"
    );
}

#[test]
fn members_are_reachable_by_record_key() {
    for m in ATTR_MEMBERS {
        assert_eq!(decode::member_by_key(&m.key()), Some(m));
        assert!(m.key().starts_with("args.attr_uptr."));
    }
    assert_eq!(decode::member_by_key("args.attr_uptr.nope"), None);
    // Unique names.
    let mut names: Vec<_> = ATTR_MEMBERS.iter().map(|m| m.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), ATTR_MEMBERS.len());
}
