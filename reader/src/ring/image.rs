// SPDX-License-Identifier: GPL-2.0-only
//! [`ImageRing`]: a ring held as plain bytes.

use std::sync::atomic::{AtomicU64, Ordering};

use antinomie_abi as abi;

use super::shared::copy_wrapped;
use super::{meta_has_lossless, LosslessCounters, RingCounters, RingMemory, META_BASE_SIZE};
use crate::Error;

/// A ring held as plain bytes: a golden ring image, or one a test built.
///
/// # The golden ring image format (`*.ring`)
///
/// The first `data_offset + data_size` bytes of one CPU's ring mapping,
/// with the data pages once: the meta page (`struct antinomie_meta` at
/// offset 0, rest of the page zero), the consumer page (`struct
/// antinomie_consumer` at `meta.consumer_offset`), and the data area at
/// `meta.data_offset`. All values little-endian, as on x86-64. It is what
/// `reader dump-rings DIR` writes from the live device, one `cpuN.ring`
/// per CPU, so a golden image is a byte-exact snapshot of what the reader
/// would have mapped. The records to read are `[consumer_pos,
/// producer_pos)`.
#[derive(Debug)]
pub struct ImageRing {
    image: Vec<u8>,
    meta: abi::Meta,
    data_offset: usize,
    data_size: u64,
    consumer_pos: AtomicU64,
}

impl ImageRing {
    /// Parses and checks an image.
    ///
    /// # Errors
    /// [`Error::BadImage`] when the meta page or the geometry is invalid.
    pub fn from_bytes(image: Vec<u8>) -> Result<Self, Error> {
        let bad = |why: String| Error::BadImage(why);
        if image.len() < size_of::<abi::Meta>() {
            return Err(bad(format!(
                "{} bytes: too short for a meta page",
                image.len()
            )));
        }
        let meta: abi::Meta = bytemuck::pod_read_unaligned(&image[..size_of::<abi::Meta>()]);
        if meta.magic != abi::MAGIC {
            return Err(bad(format!("bad magic {:#x}", meta.magic)));
        }
        if meta.abi_version != abi::ABI_VERSION {
            return Err(Error::AbiVersion {
                of: crate::AbiOf::RingImage,
                found: meta.abi_version,
                reader: abi::ABI_VERSION,
            });
        }
        if (meta.meta_size as usize) < META_BASE_SIZE {
            return Err(bad(format!("meta_size {} is too small", meta.meta_size)));
        }
        // The fields beyond meta_size are not this image's: zero them.
        let mut meta = meta;
        if !meta_has_lossless(meta.meta_size) {
            meta.flags = 0;
            meta.reserved = 0;
            meta.waits = 0;
            meta.wait_ns = 0;
        }
        if !meta.data_size.is_power_of_two() || meta.data_size < u64::from(abi::RECORD_ALIGN) {
            return Err(bad(format!(
                "data_size {} is not a power of two",
                meta.data_size
            )));
        }
        let len = image.len() as u64;
        let consumer_end = meta.consumer_offset.checked_add(8);
        let data_end = meta.data_offset.checked_add(meta.data_size);
        if consumer_end.is_none_or(|e| e > meta.data_offset)
            || meta.consumer_offset < u64::from(meta.meta_size)
            || !meta.consumer_offset.is_multiple_of(8)
            || data_end != Some(len)
        {
            return Err(bad(format!(
                "geometry does not fit: consumer_offset {:#x}, data_offset {:#x}, data_size {:#x}, image {len:#x} bytes",
                meta.consumer_offset, meta.data_offset, meta.data_size
            )));
        }
        // Checked above: all within the image's length.
        #[allow(clippy::cast_possible_truncation)]
        let consumer_offset = meta.consumer_offset as usize;
        let consumer: abi::Consumer =
            bytemuck::pod_read_unaligned(&image[consumer_offset..consumer_offset + 8]);
        #[allow(clippy::cast_possible_truncation)]
        let data_offset = meta.data_offset as usize;
        Ok(ImageRing {
            data_offset,
            data_size: meta.data_size,
            consumer_pos: AtomicU64::new(consumer.consumer_pos),
            meta,
            image,
        })
    }

    /// The meta page's structure.
    #[must_use]
    pub fn meta(&self) -> &abi::Meta {
        &self.meta
    }
}

impl RingMemory for ImageRing {
    fn cpu(&self) -> u32 {
        self.meta.cpu
    }

    fn data_size(&self) -> u64 {
        self.data_size
    }

    fn read_data(&self, offset: usize, out: &mut [u8]) {
        copy_wrapped(&self.image[self.data_offset..], offset, out);
    }

    fn load_producer_pos(&self) -> u64 {
        // ATOMICS: none needed: an image has no concurrent producer.
        self.meta.producer_pos
    }

    fn load_consumer_pos(&self) -> u64 {
        self.consumer_pos.load(Ordering::Relaxed)
    }

    fn store_consumer_pos(&self, pos: u64) {
        // ATOMICS: an image has no producer to pair with; Release keeps the
        // same shape as (C) on the live ring.
        self.consumer_pos.store(pos, Ordering::Release);
    }

    fn counters(&self) -> RingCounters {
        RingCounters {
            producer_pos: self.meta.producer_pos,
            consumer_pos: self.consumer_pos.load(Ordering::Relaxed),
            produced: self.meta.produced,
            lost: self.meta.lost,
            lossless: meta_has_lossless(self.meta.meta_size).then_some(LosslessCounters {
                on: self.meta.flags & abi::META_F_LOSSLESS != 0,
                waits: self.meta.waits,
                wait_ns: self.meta.wait_ns,
            }),
        }
    }
}
