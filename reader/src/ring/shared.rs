// SPDX-License-Identifier: GPL-2.0-only
//! Copies out of ring memory: never a `&[u8]` over pages the kernel
//! writes.

use std::mem::MaybeUninit;
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
    // SAFETY: `[u8]` and `[MaybeUninit<u8>]` have the same layout, and
    // copy_shared_uninit stores only initialised bytes, so `out` stays
    // initialised.
    let out = unsafe { &mut *(std::ptr::from_mut::<[u8]>(out) as *mut [MaybeUninit<u8>]) };
    // SAFETY: the caller's contract, passed on.
    unsafe { copy_shared_uninit(src, out) }
}

/// [`copy_shared`] into memory that need not be initialised (a `Vec`'s
/// spare capacity), with no pass that zeroes it first. It stores only
/// initialised bytes, and every byte of `out` once: when it returns, all
/// of `out` is initialised ([`copy_shared`] relies on both).
///
/// # Safety
/// As [`copy_shared`].
pub(crate) unsafe fn copy_shared_uninit(src: *const u8, out: &mut [MaybeUninit<u8>]) {
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
            for (d, b) in w.iter_mut().zip(v.to_ne_bytes()) {
                d.write(b);
            }
            done += 8;
        }
    }
    for (i, b) in out[done..].iter_mut().enumerate() {
        // SAFETY: as above, one byte within the readable range.
        // ATOMICS: Relaxed, as above.
        b.write(
            unsafe { AtomicU8::from_ptr(src.add(done + i).cast_mut()) }.load(Ordering::Relaxed),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length and alignment, word loop and byte tail, into a
    /// `Vec`'s spare capacity as a drain pass copies: the bytes of the
    /// source, all of them initialised.
    #[test]
    fn copies_into_spare_capacity_at_every_alignment() {
        let src: Vec<u8> = (0..64u8).map(|b| b.wrapping_mul(37) ^ 0x5a).collect();
        for start in 0..9 {
            for len in 0..=(src.len() - start) {
                let mut out = vec![0xee_u8; 3];
                out.reserve(len);
                // SAFETY: `src[start..start + len]` is in bounds, and
                // nothing else accesses it during the call.
                unsafe {
                    copy_shared_uninit(
                        src.as_ptr().add(start),
                        &mut out.spare_capacity_mut()[..len],
                    );
                };
                // SAFETY: the call initialised those `len` bytes.
                unsafe { out.set_len(3 + len) };
                assert_eq!(&out[..3], &[0xee; 3]);
                assert_eq!(
                    &out[3..],
                    &src[start..start + len],
                    "start {start}, len {len}"
                );
            }
        }
    }
}
