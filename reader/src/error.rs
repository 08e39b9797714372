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
    /// The kernel speaks another ABI version.
    #[error("the kernel's Antinomie ABI version is {kernel}, this reader's is {reader}: use a reader built for the running kernel")]
    AbiVersion {
        /// The kernel's (or the file's) version.
        kernel: u32,
        /// This reader's, [`antinomie_abi::ABI_VERSION`].
        reader: u32,
    },
    /// A CPU without a ring: it has not been online since the rings were
    /// allocated (the device refuses its mapping with `ENODEV`).
    #[error("cpu {cpu} has no ring: it has not been online since the rings were allocated")]
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

impl Error {
    /// An [`Error::Io`] with context.
    pub fn io(what: impl Into<String>, source: io::Error) -> Self {
        Error::Io {
            what: what.into(),
            source,
        }
    }
}
