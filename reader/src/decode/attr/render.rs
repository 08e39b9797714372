// SPDX-License-Identifier: GPL-2.0-only
//! How member values render as text: names, hex, comments. Each renderer
//! appends to a caller's `String` (the output reuses one per line, so no
//! rendering allocates); the `String`-returning forms are for tests and
//! one-off uses.

use std::fmt::Write as _;

use super::names::{self, Names};
use super::PmuTypes;

// `write!` into a `String` cannot fail: its results are ignored below.

pub(super) fn hex_into(out: &mut String, v: u64) {
    if v == 0 {
        out.push('0');
    } else {
        names::push_hex(out, v);
    }
}

pub(super) fn enum_into(out: &mut String, t: Names, v: u64, unknown: &str) {
    if let Some(n) = names::lookup(t, v) {
        out.push_str(n);
    } else {
        hex_into(out, v);
        out.push_str(" /* ");
        out.push_str(unknown);
        out.push_str(" */");
    }
}

pub(super) fn type_into(out: &mut String, v: u64, pmus: &PmuTypes) {
    if let Some(n) = names::lookup(names::PERF_TYPE, v) {
        out.push_str(n);
        return;
    }
    if let Some(pmu) = u32::try_from(v).ok().and_then(|t| pmus.name(t)) {
        let _ = write!(out, "{v} /* {pmu} */");
    } else {
        hex_into(out, v);
        out.push_str(" /* PERF_TYPE_??? */");
    }
}

/// Appends a `size` value: `PERF_ATTR_SIZE_VER*`, or hex with a comment.
pub(crate) fn size_into(out: &mut String, v: u64) {
    match (v, names::lookup(names::PERF_ATTR_SIZE, v)) {
        (_, Some(n)) => out.push_str(n),
        (0, None) => out.push_str("0 /* PERF_ATTR_SIZE_VER0 */"),
        (144, None) => out.push_str("0x90 /* PERF_ATTR_SIZE_VER9, unknown to 6.12 */"),
        (v, None) => {
            names::push_hex(out, v);
            out.push_str(" /* PERF_ATTR_SIZE_??? */");
        }
    }
}

pub(super) fn config_into(out: &mut String, ty: u64, c: u64) {
    match ty {
        names::TYPE_HARDWARE => {
            if c >> 32 != 0 {
                names::push_hex(out, c >> 32);
                out.push_str("<<32|");
            }
            enum_into(out, names::PERF_HW_ID, c & 0xffff_ffff, "PERF_COUNT_HW_???");
        }
        names::TYPE_SOFTWARE => enum_into(out, names::PERF_SW_ID, c, "PERF_COUNT_SW_???"),
        names::TYPE_TRACEPOINT => {
            let _ = write!(out, "{c}");
        }
        names::TYPE_HW_CACHE => {
            if c >> 32 != 0 {
                names::push_hex(out, c >> 32);
                out.push_str("<<32|");
            }
            if (c >> 24) & 0xff != 0 {
                names::push_hex(out, (c >> 24) & 0xff);
                out.push_str("<<24|");
            }
            enum_into(
                out,
                names::PERF_HW_CACHE_RESULT,
                (c >> 16) & 0xff,
                "PERF_COUNT_HW_CACHE_RESULT_???",
            );
            out.push_str("<<16|");
            enum_into(
                out,
                names::PERF_HW_CACHE_OP,
                (c >> 8) & 0xff,
                "PERF_COUNT_HW_CACHE_OP_???",
            );
            out.push_str("<<8|");
            enum_into(
                out,
                names::PERF_HW_CACHE_ID,
                c & 0xff,
                "PERF_COUNT_HW_CACHE_???",
            );
        }
        _ => hex_into(out, c),
    }
}

#[cfg(test)]
pub(super) fn render_config(ty: u64, c: u64) -> String {
    let mut s = String::new();
    config_into(&mut s, ty, c);
    s
}
