// SPDX-License-Identifier: GPL-2.0-only
//! A run that records a trace file ([`run_to_trace`]): the trace is
//! written as fast as the rings are drained, and decoded behind it.
//!
//! Without a trace file, the assembler takes the drain thread's messages
//! from the queue, and when it falls behind by the queue's limit the
//! drain waits and the rings fill. With one, a spool thread at the
//! drain thread's priority takes the messages instead and writes them
//! down in large writes; the assembler, at the printing thread's lower
//! priority, reads the file back behind it ([`Follower`]). However far
//! the printing falls behind (a slow terminal, a paused pager, a busy
//! CPU), the file holds the backlog, not the reader's memory, and the
//! drain never waits for it: the trace is complete whatever the output
//! does, and what is printed is what `reader show` of the file prints.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;

use crossbeam_channel::Sender;

use super::drain::{conclude, queue_limit, start_drains};
use super::queue::{queue, QueueReceiver};
use super::{Assembler, DrainMsg, Mode, Recorder, Summary};
use crate::ring::{RingConsumer, RingMemory};
use crate::trace::{TraceHeader, TraceReader, TraceWriter};

/// The spool's write buffer: small frames gather there; a frame at least
/// this large (a drain pass under load) goes to the file in one `writev`
/// of its own, never copied (`BufWriter` passes it through).
const SPOOL_BUFFER: usize = 64 << 10;
/// The assembler's read buffer.
const FOLLOW_BUFFER: usize = 256 << 10;

/// How far the spool thread has written the file.
#[derive(Debug, Default)]
struct Written {
    /// Bytes in the file (a frame may go on past them: the reader waits
    /// for the rest).
    bytes: u64,
    /// No more bytes come: the file is complete, or the spool failed.
    closed: bool,
    /// Why the spool failed, if it did.
    failed: Option<(io::ErrorKind, String)>,
}

/// [`Written`], shared between the spool thread and the assembler.
#[derive(Debug, Default)]
struct Progress {
    written: Mutex<Written>,
    grew: Condvar,
}

impl Progress {
    fn lock(&self) -> MutexGuard<'_, Written> {
        // A panicking holder leaves plain values behind: still usable.
        self.written.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn publish(&self, bytes: u64) {
        let mut w = self.lock();
        if w.bytes == bytes {
            return;
        }
        w.bytes = bytes;
        drop(w);
        self.grew.notify_all();
    }

    /// No more bytes come; the first close says why.
    fn close(&self, failed: Option<&io::Error>) {
        let mut w = self.lock();
        if w.closed {
            return;
        }
        w.closed = true;
        w.failed = failed.map(|e| (e.kind(), e.to_string()));
        drop(w);
        self.grew.notify_all();
    }

    /// The spool's error, as the run's.
    fn failure(&self) -> Option<io::Error> {
        let w = self.lock();
        let (kind, msg) = w.failed.as_ref()?;
        Some(io::Error::new(
            *kind,
            format!("writing the trace file: {msg}"),
        ))
    }
}

/// Counts the bytes written through it: around the spool's buffered
/// writer, those it took, of which it may still hold some.
#[derive(Debug)]
struct Counted<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        let n = self.inner.write_vectored(bufs)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The buffered writer is on the file itself, so that a large frame goes
/// to it in one `writev` (`BufWriter` passes vectored writes through
/// only to a writer that says it takes them, which `File` does).
type SpoolWriter<'f> = TraceWriter<Counted<BufWriter<&'f File>>>;

/// Says how far the file is written: what the buffered writer took, less
/// what it still holds.
fn publish(w: &SpoolWriter<'_>, progress: &Progress) {
    let counted = w.get_ref();
    progress.publish(counted.bytes - counted.inner.buffer().len() as u64);
}

/// Closes [`Progress`] however the spool thread ends, a panic included:
/// else the assembler would wait for the file forever.
struct CloseOnDrop<'a>(&'a Progress);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.close(None);
    }
}

/// The spool thread: writes the header, then every message of `rx` as it
/// comes, flushing whenever the queue is empty (a busy queue flushes as
/// the buffer fills), and says how far the file is written after each;
/// then END. On an error it stops the drain (`stop`) and keeps taking
/// messages, so that the drain does not wait on a full queue.
fn spool(
    rx: &QueueReceiver,
    file: &File,
    header: &TraceHeader,
    progress: &Progress,
    stop: &Sender<()>,
) {
    let _close = CloseOnDrop(progress);
    let written = (|| {
        let out = Counted {
            inner: BufWriter::with_capacity(SPOOL_BUFFER, file),
            bytes: 0,
        };
        let mut w = TraceWriter::new(out, header)?;
        w.flush()?;
        publish(&w, progress);
        while let Some(msg) = rx.recv() {
            w.record(&msg)?;
            if let DrainMsg::Records { bytes, .. } = msg {
                rx.recycle(bytes);
            }
            if rx.is_empty() {
                w.flush()?;
            }
            publish(&w, progress);
        }
        let out = w.finish()?;
        progress.publish(out.bytes);
        Ok(())
    })();
    // Closed first: the printing ends while the drain winds down.
    progress.close(written.as_ref().err());
    if written.is_err() {
        let _ = stop.try_send(());
        while rx.recv().is_some() {}
    }
    tracing::info!("drain queue: at most {} bytes held", rx.peak());
}

/// Reads the file as the spool writes it: at the end of what is written,
/// waits until more is, and ends where the spool closed the file.
struct Follower<'a> {
    file: &'a File,
    pos: u64,
    progress: &'a Progress,
}

impl Read for Follower<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let mut w = self.progress.lock();
        while w.bytes <= self.pos && !w.closed {
            w = self
                .progress
                .grew
                .wait(w)
                .unwrap_or_else(PoisonError::into_inner);
        }
        let end = w.bytes;
        drop(w);
        let ready = end.saturating_sub(self.pos);
        if ready == 0 {
            return Ok(0);
        }
        let n = buf.len().min(usize::try_from(ready).unwrap_or(usize::MAX));
        let got = self.file.read_at(&mut buf[..n], self.pos)?;
        if got == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the trace file is shorter than what was written to it",
            ));
        }
        self.pos += got as u64;
        Ok(got)
    }
}

/// Drains `rings` (one thread for all) into the trace file `file`, which
/// must be empty and open for reading and writing, and decodes the file
/// into `assembler` as it grows (see the module documentation). Returns
/// when every ring is done and the file is complete.
///
/// # Errors
/// Writing the file (it then ends where the error struck, without END),
/// or an output error other than `BrokenPipe`, which ends the printing
/// quietly with [`Summary::broken_pipe`] set while the drain and the file
/// still end as told.
pub fn run_to_trace<M: RingMemory + Send>(
    rings: Vec<RingConsumer<M>>,
    mode: Mode,
    mut assembler: Assembler<'_>,
    file: &File,
    header: &TraceHeader,
) -> io::Result<Summary> {
    let (tx, rx) = queue(queue_limit(&mode));
    let (stop_tx, stop_rx) = crossbeam_channel::bounded::<()>(1);
    let progress = Progress::default();
    let outcome = thread::scope(|s| {
        let started = start_drains(s, rings, mode, tx, &stop_rx)?;
        {
            let (progress, stop_tx) = (&progress, stop_tx.clone());
            thread::Builder::new()
                .name("spool".into())
                .spawn_scoped(s, move || spool(&rx, file, header, progress, &stop_tx))
                .map_err(|e| io::Error::other(format!("spawning the spool thread: {e}")))?;
        }
        if let Some(started) = started {
            started();
        }
        let follower = Follower {
            file,
            pos: 0,
            progress: &progress,
        };
        let decoded = decode(
            BufReader::with_capacity(FOLLOW_BUFFER, follower),
            &mut assembler,
        );
        // Done printing, whyever (every ring done, an output error): the
        // drain ends as when told to stop, and the spool completes the
        // file meanwhile.
        let _ = stop_tx.try_send(());
        decoded
    });
    match progress.failure() {
        Some(e) => conclude(assembler, Err(e)),
        None => conclude(assembler, outcome),
    }
}

/// Pushes the messages of the trace `r` into `assembler` until every
/// ring is done or the file ends.
fn decode<R: Read>(r: R, assembler: &mut Assembler<'_>) -> io::Result<()> {
    let to_io = |e: crate::Error| io::Error::other(e.to_string());
    let trace = TraceReader::new(r).map_err(to_io)?;
    for msg in trace {
        assembler.push(msg.map_err(to_io)?)?;
        if assembler.all_done() {
            break;
        }
    }
    Ok(())
}
