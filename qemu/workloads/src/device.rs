// SPDX-License-Identifier: GPL-2.0-only
//! `/dev/antinomie` driven through its ioctls (`abi/antinomie.h`): the
//! reader has no switch to disable capture or resize the rings, and the
//! tests need the kernel's own counters to check the reader's accounting.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::Path;

use antinomie_abi as abi;

/// The device, open for reading and writing. The device allows one open
/// at a time, so callers keep it open only for the ioctls they make.
#[derive(Debug)]
pub struct Device(File);

impl Device {
    /// Opens the device at `path` (normally `/dev/antinomie`).
    ///
    /// # Errors
    ///
    /// `"PATH: REASON"` when the open fails (no device, or already open).
    pub fn open(path: &Path) -> Result<Self, String> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map(Device)
            .map_err(|e| format!("{}: {e}", path.display()))
    }

    /// `ANTINOMIE_IOC_GET_INFO`: the device geometry.
    ///
    /// # Errors
    ///
    /// `"ANTINOMIE_IOC_GET_INFO: REASON"` when the ioctl fails.
    pub fn info(&self) -> Result<abi::Info, String> {
        let mut info = abi::Info::default();
        self.ioctl(
            abi::IOC_GET_INFO,
            std::ptr::from_mut(&mut info).cast(),
            "ANTINOMIE_IOC_GET_INFO",
        )?;
        Ok(info)
    }

    /// `ANTINOMIE_IOC_ENABLE`: capture on.
    ///
    /// # Errors
    ///
    /// `"ANTINOMIE_IOC_ENABLE: REASON"` when the ioctl fails.
    pub fn enable(&self) -> Result<(), String> {
        self.ioctl(
            abi::IOC_ENABLE,
            std::ptr::null_mut(),
            "ANTINOMIE_IOC_ENABLE",
        )
    }

    /// `ANTINOMIE_IOC_DISABLE`: capture off.
    ///
    /// # Errors
    ///
    /// `"ANTINOMIE_IOC_DISABLE: REASON"` when the ioctl fails.
    pub fn disable(&self) -> Result<(), String> {
        self.ioctl(
            abi::IOC_DISABLE,
            std::ptr::null_mut(),
            "ANTINOMIE_IOC_DISABLE",
        )
    }

    /// `ANTINOMIE_IOC_SET_RING_SIZE`: bytes of each ring's data area. The
    /// kernel requires capture off and the rings unmapped, and restarts
    /// every ring's positions and counters.
    ///
    /// # Errors
    ///
    /// `"ANTINOMIE_IOC_SET_RING_SIZE: REASON"` when the ioctl fails.
    pub fn set_ring_size(&self, mut size: u64) -> Result<(), String> {
        self.ioctl(
            abi::IOC_SET_RING_SIZE,
            std::ptr::from_mut(&mut size).cast(),
            "ANTINOMIE_IOC_SET_RING_SIZE",
        )
    }

    /// `ANTINOMIE_IOC_GET_COUNTERS` of every possible CPU (below
    /// `info.cpu_id_limit`), in CPU order.
    ///
    /// # Errors
    ///
    /// `"ANTINOMIE_IOC_GET_INFO: REASON"` when the geometry cannot be read.
    pub fn counters(&self) -> Result<Vec<abi::Counters>, String> {
        let info = self.info()?;
        let mut out = Vec::new();
        for cpu in 0..info.cpu_id_limit {
            let mut counters = abi::Counters {
                cpu,
                ..abi::Counters::default()
            };
            // A CPU that is not possible has no ring: ENODEV.
            if self
                .ioctl(
                    abi::IOC_GET_COUNTERS,
                    std::ptr::from_mut(&mut counters).cast(),
                    "ANTINOMIE_IOC_GET_COUNTERS",
                )
                .is_ok()
            {
                out.push(counters);
            }
        }
        Ok(out)
    }

    fn ioctl(&self, cmd: u32, arg: *mut libc::c_void, what: &str) -> Result<(), String> {
        // SAFETY: cmd is one of the device's ioctls and arg points to the
        // argument type its _IOC_SIZE names (or is unused for _IO).
        let rc = unsafe { libc::ioctl(self.0.as_raw_fd(), libc::Ioctl::from(cmd), arg) };
        if rc < 0 {
            Err(format!("{what}: {}", std::io::Error::last_os_error()))
        } else {
            Ok(())
        }
    }
}
