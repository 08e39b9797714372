//! How member values render as text: names, hex, comments.

use std::fmt::Write as _;

use super::names::{self, Names};
use super::PmuTypes;

pub(super) fn hex(v: u64) -> String {
    if v == 0 {
        "0".to_owned()
    } else {
        format!("{v:#x}")
    }
}

pub(super) fn render_enum(t: Names, v: u64, unknown: &str) -> String {
    match names::lookup(t, v) {
        Some(n) => n.to_owned(),
        None => format!("{} /* {unknown} */", hex(v)),
    }
}

pub(super) fn render_type(v: u64, pmus: &PmuTypes) -> String {
    if let Some(n) = names::lookup(names::PERF_TYPE, v) {
        return n.to_owned();
    }
    match u32::try_from(v).ok().and_then(|t| pmus.name(t)) {
        Some(pmu) => format!("{v} /* {pmu} */"),
        None => format!("{} /* PERF_TYPE_??? */", hex(v)),
    }
}

/// Renders a `size` value: `PERF_ATTR_SIZE_VER*`, or hex with a comment.
#[must_use]
pub fn render_size(v: u64) -> String {
    match (v, names::lookup(names::PERF_ATTR_SIZE, v)) {
        (_, Some(n)) => n.to_owned(),
        (0, None) => "0 /* PERF_ATTR_SIZE_VER0 */".to_owned(),
        (144, None) => "0x90 /* PERF_ATTR_SIZE_VER9, unknown to 6.12 */".to_owned(),
        (v, None) => format!("{v:#x} /* PERF_ATTR_SIZE_??? */"),
    }
}

pub(super) fn render_config(ty: u64, c: u64) -> String {
    match ty {
        names::TYPE_HARDWARE => {
            let low = c & 0xffff_ffff;
            let mut s = String::new();
            if c >> 32 != 0 {
                let _ = write!(s, "{:#x}<<32|", c >> 32);
            }
            s.push_str(&render_enum(names::PERF_HW_ID, low, "PERF_COUNT_HW_???"));
            s
        }
        names::TYPE_SOFTWARE => render_enum(names::PERF_SW_ID, c, "PERF_COUNT_SW_???"),
        names::TYPE_TRACEPOINT => c.to_string(),
        names::TYPE_HW_CACHE => {
            let mut parts = Vec::new();
            if c >> 32 != 0 {
                parts.push(format!("{:#x}<<32", c >> 32));
            }
            if (c >> 24) & 0xff != 0 {
                parts.push(format!("{:#x}<<24", (c >> 24) & 0xff));
            }
            parts.push(format!(
                "{}<<16",
                render_enum(
                    names::PERF_HW_CACHE_RESULT,
                    (c >> 16) & 0xff,
                    "PERF_COUNT_HW_CACHE_RESULT_???"
                )
            ));
            parts.push(format!(
                "{}<<8",
                render_enum(
                    names::PERF_HW_CACHE_OP,
                    (c >> 8) & 0xff,
                    "PERF_COUNT_HW_CACHE_OP_???"
                )
            ));
            parts.push(render_enum(
                names::PERF_HW_CACHE_ID,
                c & 0xff,
                "PERF_COUNT_HW_CACHE_???",
            ));
            parts.join("|")
        }
        _ => hex(c),
    }
}
