// SPDX-License-Identifier: GPL-2.0-only
//! What the fuzz targets share: the whole `reader show` path after the
//! input is decoded, into a sink that formats every call and LOST record
//! both as text and as JSON and keeps nothing.

use std::io;

use antinomie_reader::call::Call;
use antinomie_reader::decode::PmuTypes;
use antinomie_reader::output::{call_json, call_text, lost_json, lost_text};
use antinomie_reader::pipeline::{self, Assembler, DrainMsg, Sink};
use antinomie_reader::record::LostRecord;

/// Formats everything both ways, keeps nothing.
struct Both {
    pmus: PmuTypes,
    line: Vec<u8>,
}

impl Sink for Both {
    fn call(&mut self, c: &Call) -> io::Result<()> {
        let _ = call_text(c, &self.pmus);
        self.line.clear();
        call_json(c, &self.pmus, &mut self.line)
    }
    fn lost(&mut self, l: &LostRecord) -> io::Result<()> {
        let _ = lost_text(l);
        self.line.clear();
        lost_json(l, &mut self.line)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Merges, pairs, decodes and formats `msgs` as `reader show` does.
pub fn show<I: IntoIterator<Item = DrainMsg>>(cpus: &[u32], window_ns: u64, msgs: I) {
    let mut sink = Both {
        pmus: PmuTypes::from_pairs([(6, "kprobe".to_owned()), (7, "uprobe".to_owned())]),
        line: Vec::new(),
    };
    let summary = pipeline::replay(msgs, Assembler::new(cpus, window_ns, &mut sink))
        .expect("a sink that cannot fail");
    let _ = summary.to_text();
}
