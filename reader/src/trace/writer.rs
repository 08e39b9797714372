// SPDX-License-Identifier: GPL-2.0-only
//! Writing a trace file: [`TraceWriter`].

use std::io::{self, IoSlice, Write};

use super::{
    TraceHeader, FRAME_CORRUPT, FRAME_DONE, FRAME_END, FRAME_IDLE, FRAME_RECORDS, FRAME_START,
    OFFSET_UNKNOWN, TRACE_MAGIC, TRACE_VERSION,
};
use crate::pipeline::{DrainMsg, Recorder};

/// Writes a trace file; a [`Recorder`] for [`crate::pipeline::run`].
#[derive(Debug)]
pub struct TraceWriter<W: Write> {
    out: W,
}

fn u32_len(n: usize) -> io::Result<u32> {
    u32::try_from(n).map_err(|_| io::Error::other("trace field too large"))
}

impl<W: Write> TraceWriter<W> {
    /// Writes the header.
    ///
    /// # Errors
    /// An I/O error.
    pub fn new(mut out: W, header: &TraceHeader) -> io::Result<Self> {
        let mut h = Vec::new();
        h.extend_from_slice(TRACE_MAGIC);
        h.extend_from_slice(&TRACE_VERSION.to_le_bytes());
        h.extend_from_slice(&header.abi_version.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes()); // header_len, below
        h.extend_from_slice(&u32_len(header.cpus.len())?.to_le_bytes());
        h.extend_from_slice(&header.window_ns.to_le_bytes());
        for c in &header.cpus {
            h.extend_from_slice(&c.to_le_bytes());
        }
        let pmus: Vec<_> = header.pmus.pairs().collect();
        h.extend_from_slice(&u32_len(pmus.len())?.to_le_bytes());
        for (t, name) in pmus {
            h.extend_from_slice(&t.to_le_bytes());
            h.extend_from_slice(&u32_len(name.len())?.to_le_bytes());
            h.extend_from_slice(name.as_bytes());
        }
        if let Some(offset) = header.realtime_offset_ns {
            h.extend_from_slice(&offset.to_le_bytes());
        }
        let len = u32_len(h.len())?.to_le_bytes();
        h[16..20].copy_from_slice(&len);
        out.write_all(&h)?;
        Ok(TraceWriter { out })
    }

    /// One frame, its header and payload in one vectored write, so that
    /// a buffered writer passes a large payload (a drain pass's records)
    /// straight through instead of copying it into its buffer.
    fn frame(&mut self, kind: u32, cpu: u32, payload: &[u8]) -> io::Result<()> {
        let mut f = [0u8; 16];
        f[..4].copy_from_slice(&kind.to_le_bytes());
        f[4..8].copy_from_slice(&cpu.to_le_bytes());
        f[8..].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        let mut bufs = [IoSlice::new(&f), IoSlice::new(payload)];
        let mut bufs = &mut bufs[..];
        while !bufs.is_empty() {
            match self.out.write_vectored(bufs) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => IoSlice::advance_slices(&mut bufs, n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Flushes what is written so far (whole frames).
    ///
    /// # Errors
    /// An I/O error.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// The writer the file goes to.
    pub fn get_ref(&self) -> &W {
        &self.out
    }

    /// Writes the END frame and flushes.
    ///
    /// # Errors
    /// An I/O error.
    pub fn finish(mut self) -> io::Result<W> {
        self.frame(FRAME_END, 0, &[])?;
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: Write> Recorder for TraceWriter<W> {
    fn record(&mut self, msg: &DrainMsg) -> io::Result<()> {
        match msg {
            DrainMsg::Start { cpu, start_pos } => {
                self.frame(FRAME_START, *cpu, &start_pos.to_le_bytes())
            }
            DrainMsg::Records { cpu, bytes } => self.frame(FRAME_RECORDS, *cpu, bytes),
            DrainMsg::Idle { cpu, time_ns } => self.frame(FRAME_IDLE, *cpu, &time_ns.to_le_bytes()),
            DrainMsg::Corrupt(c) => {
                let msg = c.error.to_string();
                let mut p = Vec::new();
                p.extend_from_slice(&c.pos.to_le_bytes());
                p.extend_from_slice(&c.offset.unwrap_or(OFFSET_UNKNOWN).to_le_bytes());
                p.extend_from_slice(&u32::from(c.fatal).to_le_bytes());
                p.extend_from_slice(&u32_len(msg.len())?.to_le_bytes());
                p.extend_from_slice(msg.as_bytes());
                self.frame(FRAME_CORRUPT, c.cpu, &p)
            }
            DrainMsg::Done {
                cpu,
                start_pos,
                counters,
                stats,
            } => {
                let mut p = Vec::new();
                for v in [
                    *start_pos,
                    counters.producer_pos,
                    counters.consumer_pos,
                    counters.produced,
                ]
                .into_iter()
                .chain(counters.lost)
                .chain([stats.records, stats.skipped, stats.bytes])
                .chain(
                    counters
                        .lossless
                        .map(|l| [u64::from(l.on), l.waits, l.wait_ns])
                        .into_iter()
                        .flatten(),
                ) {
                    p.extend_from_slice(&v.to_le_bytes());
                }
                self.frame(FRAME_DONE, *cpu, &p)
            }
        }
    }
}
