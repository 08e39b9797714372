// SPDX-License-Identifier: GPL-2.0-only
//! What the guest programs share with the end-to-end comparator.
//! `antinomie-workload` (its randomized campaign resizes the rings,
//! switches capture off and reads the counters between bursts) and
//! `antinomie-e2e device` (in `antinomie-guest-tests`) both drive
//! `/dev/antinomie` through its ioctls, so the ioctl calls, their argument
//! types and their error messages live here once ([`device`]), and so
//! does the log line the workload writes and the comparator reads
//! ([`log`]).
//!
//! Each binary's own code is a module tree under `src/bin/NAME/`.

pub mod device;
pub mod log;
