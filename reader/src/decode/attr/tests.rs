// SPDX-License-Identifier: GPL-2.0-only
//! The table and the views against the reference and each other.

use super::render::render_config;
use super::*;

fn attr(len: usize) -> Vec<u8> {
    vec![0u8; len]
}

#[test]
fn since_matches_the_reference_table() {
    let since = |n| member(n).unwrap().since;
    assert_eq!(since("type"), 64);
    assert_eq!(since("config1"), 64);
    assert_eq!(since("kprobe_func"), 64);
    assert_eq!(since("bp_len"), 72);
    assert_eq!(since("branch_sample_type"), 80);
    assert_eq!(since("clockid"), 96);
    assert_eq!(since("sample_regs_intr"), 104);
    assert_eq!(since("__reserved_2"), 112);
    assert_eq!(since("aux_resume"), 120);
    assert_eq!(since("sig_data"), 128);
    assert_eq!(since("config3"), 136);
}

#[test]
fn flag_word_bits_are_contiguous_and_cover_64_bits() {
    let mut covered = 0u64;
    for m in ATTR_MEMBERS.iter().filter(|m| m.offset == 40) {
        assert_eq!(covered & m.mask(), 0, "{} overlaps", m.name);
        covered |= m.mask();
    }
    assert_eq!(covered, u64::MAX);
    let mut aux = 0u64;
    for m in ATTR_MEMBERS
        .iter()
        .filter(|m| m.offset == 116 && m.bits.is_some())
    {
        aux |= m.mask();
    }
    assert_eq!(aux, 0xffff_ffff);
}

#[test]
fn absent_members_have_no_value() {
    let mut b = attr(64);
    b[4] = 64;
    let v = AttrView::new(&b);
    assert_eq!(v.get("config1"), Some(0));
    assert_eq!(v.get("bp_len"), None);
    assert_eq!(v.presence(member("config2").unwrap()), Presence::Absent);
}

#[test]
fn partial_members_are_zero_extended() {
    let mut b = attr(109);
    b[108] = 0x7f;
    let v = AttrView::new(&b);
    let m = member("sample_max_stack").unwrap();
    assert_eq!(v.presence(m), Presence::Partial(1));
    assert_eq!(v.raw(m), Some(0x7f));
    assert_eq!(v.get("__reserved_2"), None);
}

#[test]
fn signed_clockid() {
    let mut b = attr(136);
    b[92..96].copy_from_slice(&(-1i32).to_le_bytes());
    let v = AttrView::new(&b);
    let m = member("clockid").unwrap();
    assert_eq!(v.signed(m), Some(-1));
    assert_eq!(
        v.render(m, &PmuTypes::none()).unwrap(),
        "-1 /* CLOCK_??? */"
    );
}

#[test]
fn config_by_type() {
    assert_eq!(
        render_config(3, 0x1_0002),
        "PERF_COUNT_HW_CACHE_RESULT_MISS<<16|PERF_COUNT_HW_CACHE_OP_READ<<8|PERF_COUNT_HW_CACHE_LL"
    );
    assert_eq!(
        render_config(0, 0x8_0000_0000),
        "0x8<<32|PERF_COUNT_HW_CPU_CYCLES"
    );
    assert_eq!(render_config(1, 99), "0x63 /* PERF_COUNT_SW_??? */");
    assert_eq!(render_config(2, 99), "99");
    assert_eq!(render_config(4, 0xc0), "0xc0");
}

#[test]
fn aliases_follow_type_and_bits() {
    let pmus = PmuTypes::from_pairs([(8, "uprobe".to_owned()), (9, "kprobe".to_owned())]);
    let mut b = attr(136);
    b[0] = 8;
    b[56] = 0x10;
    let v = AttrView::new(&b);
    let shown: Vec<_> = v
        .text_members(&pmus)
        .into_iter()
        .map(|(m, s)| format!("{}={s}", m.name))
        .collect();
    assert!(shown.contains(&"uprobe_path=0x10".to_owned()), "{shown:?}");
    assert!(!shown.iter().any(|s| s.starts_with("config1=")));
    assert!(v.applies(member("probe_offset").unwrap(), &pmus));
    assert!(!v.applies(member("bp_addr").unwrap(), &pmus));
    b[0] = 5;
    let v = AttrView::new(&b);
    assert!(v.applies(member("bp_addr").unwrap(), &pmus));
    // Without sysfs names, the generic alias only.
    b[0] = 8;
    let v = AttrView::new(&b);
    let shown: Vec<_> = v
        .text_members(&PmuTypes::none())
        .into_iter()
        .map(|(m, _)| m.name)
        .collect();
    assert!(shown.contains(&"config1"));
    assert!(shown.contains(&"type"));
}
