// SPDX-License-Identifier: GPL-2.0-only
//! Fuzz target: a trace file, streamed and shown as `reader show FILE`
//! does.

use antinomie_reader::trace::TraceReader;

fn main() {
    afl::fuzz!(|data: &[u8]| {
        if let Ok(mut t) = TraceReader::new(data) {
            let h = t.header().clone();
            let msgs: Vec<_> = t.by_ref().map_while(Result::ok).collect();
            let _ = (t.complete(), t.truncated_at());
            antinomie_reader_fuzz::show(&h.cpus, h.window_ns, msgs);
        }
    });
}
