// SPDX-License-Identifier: GPL-2.0-only
//! Fuzz target: a golden ring image (meta page, consumer page, data
//! area), drained and shown as `reader show cpu0.ring` does.

use antinomie_reader::pipeline;
use antinomie_reader::ring::ImageRing;

fn main() {
    afl::fuzz!(|data: &[u8]| {
        if let Ok(ring) = ImageRing::from_bytes(data.to_vec()) {
            let cpu = ring.meta().cpu;
            let msgs = pipeline::drain_once(vec![ring]);
            antinomie_reader_fuzz::show(&[cpu], 0, msgs);
        }
    });
}
