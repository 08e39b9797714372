// SPDX-License-Identifier: GPL-2.0-only
//! Fuzz target: a `--filter` expression, parsed, printed back, and
//! evaluated on the golden scenario's calls when it is accepted.

use std::sync::OnceLock;

use antinomie_reader::call::Call;
use antinomie_reader::filter::{self, Filter};
use antinomie_reader::pipeline::{self, Assembler, Sink};
use antinomie_reader::record::LostRecord;

/// The calls of the golden images under `reader/tests/data/synthetic`.
fn calls() -> &'static [Call] {
    static CALLS: OnceLock<Vec<Call>> = OnceLock::new();
    CALLS.get_or_init(|| {
        struct Keep(Vec<Call>);
        impl Sink for Keep {
            fn call(&mut self, c: &Call) -> std::io::Result<()> {
                self.0.push(c.clone());
                Ok(())
            }
            fn lost(&mut self, _: &LostRecord) -> std::io::Result<()> {
                Ok(())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/data/synthetic");
        let rings: Vec<_> = ["cpu0.ring", "cpu1.ring"]
            .iter()
            .map(|f| {
                let bytes = std::fs::read(format!("{dir}/{f}")).expect("golden image");
                antinomie_reader::ring::ImageRing::from_bytes(bytes).expect("golden image")
            })
            .collect();
        let mut keep = Keep(Vec::new());
        pipeline::replay(
            pipeline::drain_once(rings),
            Assembler::new(&[0, 1], 0, &mut keep),
        )
        .expect("a sink that cannot fail");
        keep.0
    })
}

fn main() {
    let calls = calls();
    afl::fuzz!(|data: &[u8]| {
        let Ok(src) = std::str::from_utf8(data) else {
            return;
        };
        let _ = filter::parse_tree(src);
        if let Ok(f) = Filter::parse(src) {
            let _ = f.canonical();
            for c in calls {
                let _ = f.matches(c);
            }
        }
    });
}
