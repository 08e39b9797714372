// SPDX-License-Identifier: GPL-2.0-only
//! Copies out of ring memory: never a `&[u8]` over pages the kernel
//! writes.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

/// Copies `buf.len()` bytes of a data area held once from `offset`,
/// wrapping around its end.
pub(super) fn copy_wrapped(data: &[u8], offset: usize, buf: &mut [u8]) {
    let first = buf.len().min(data.len() - offset);
    buf[..first].copy_from_slice(&data[offset..offset + first]);
    let rest = buf.len() - first;
    buf[first..].copy_from_slice(&data[..rest]);
}

/// Copies `out.len()` bytes from `src`, memory that another party (the
/// kernel) may write at the same time, with relaxed atomic loads: a word at
/// a time where `src` is 8-aligned, else a byte at a time. A torn or stale
/// value is possible only if the writer breaks the ring protocol; it is
/// then caught by validation, and it is never undefined behaviour, which
/// a plain `&[u8]` over the same memory would be.
///
/// # Safety
/// `src` must be valid for reads of `out.len()` bytes for the whole call,
/// and this process must access that memory only atomically (the kernel's
/// stores are not Rust accesses).
pub(crate) unsafe fn copy_shared(src: *const u8, out: &mut [u8]) {
    let mut done = 0;
    if (src as usize).is_multiple_of(8) {
        let mut words = out.chunks_exact_mut(8);
        for (i, w) in (&mut words).enumerate() {
            // SAFETY: `src + 8 i` is 8-aligned and within the `out.len()`
            // readable bytes (the caller's contract); only atomic accesses
            // touch it from this process.
            // ATOMICS: Relaxed: the ordering against the producer comes
            // from the caller's Acquire load of producer_pos (B).
            #[allow(clippy::cast_ptr_alignment)]
            let v = unsafe { AtomicU64::from_ptr(src.add(8 * i).cast::<u64>().cast_mut()) }
                .load(Ordering::Relaxed);
            w.copy_from_slice(&v.to_ne_bytes());
            done += 8;
        }
    }
    for (i, b) in out[done..].iter_mut().enumerate() {
        // SAFETY: as above, one byte within the readable range.
        // ATOMICS: Relaxed, as above.
        *b = unsafe { AtomicU8::from_ptr(src.add(done + i).cast_mut()) }.load(Ordering::Relaxed);
    }
}
