// SPDX-License-Identifier: GPL-2.0-only
//! The library's errors.

use std::io;
use std::path::PathBuf;

/// What can go wrong outside a single record (see
/// [`crate::ring::CorruptRecord`] for those).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The device node does not exist.
    #[error("{}: no such device (is this a kernel built with CONFIG_ANTINOMIE=y?)", path.display())]
    DeviceMissing {
        /// The device path.
        path: PathBuf,
    },
    /// Opening or mapping the device was refused.
    #[error("{}: permission denied (reading the capture needs CAP_PERFMON or CAP_SYS_ADMIN: run as root)", path.display())]
    AccessDenied {
        /// The device path.
        path: PathBuf,
    },
    /// The device is held by another reader.
    #[error("{}: device busy (another reader has it open)", path.display())]
    Busy {
        /// The device path.
        path: PathBuf,
    },
    /// The kernel, a ring image or a trace file is of another ABI
    /// version than this reader's: its records cannot be decoded.
    #[error("{}", abi_version_message(*of, *found, *reader))]
    AbiVersion {
        /// What is of another version.
        of: AbiOf,
        /// Its version.
        found: u32,
        /// This reader's, [`antinomie_abi::ABI_VERSION`].
        reader: u32,
    },
    /// A CPU without a ring: the device refuses its mapping with `ENODEV`.
    /// The kernel gives every possible CPU a ring, so the CPU is not one of
    /// its possible CPUs, whatever the sysfs the reader was given says.
    #[error("the device has no ring for cpu {cpu}: the kernel gives one to each CPU in /sys/devices/system/cpu/possible, and does not count cpu {cpu} among them")]
    NoRing {
        /// The CPU.
        cpu: u32,
    },
    /// The device reported a geometry the reader cannot use.
    #[error("unusable device geometry: {0}")]
    Geometry(String),
    /// A system call or file operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// A golden ring image is malformed.
    #[error("bad ring image: {0}")]
    BadImage(String),
    /// A trace file is malformed.
    #[error("bad trace file: {0}")]
    BadTrace(String),
}

/// What [`Error::AbiVersion`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AbiOf {
    /// The running kernel (its device, or a ring mapped from it).
    Kernel,
    /// A ring image (`reader dump-rings`).
    RingImage,
    /// A trace file (`reader -w`).
    Trace,
}

fn abi_version_message(of: AbiOf, found: u32, reader: u32) -> String {
    match of {
        AbiOf::Kernel => format!(
            "the kernel's Antinomie ABI version is {found}, this reader's is {reader}: use a reader built for the running kernel"
        ),
        AbiOf::RingImage => format!(
            "the ring image is of Antinomie ABI version {found}, this reader's is {reader}: use a reader of ABI version {found}"
        ),
        AbiOf::Trace => format!(
            "the trace file's records are of Antinomie ABI version {found}, this reader's is {reader}: use a reader of ABI version {found}"
        ),
    }
}

impl Error {
    /// An [`Error::Io`] with context.
    pub fn io(what: impl Into<String>, source: io::Error) -> Self {
        Error::Io {
            what: what.into(),
            source,
        }
    }
}
