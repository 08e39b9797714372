// SPDX-License-Identifier: GPL-2.0-only
//! `antinomie-e2e`: the end-to-end test's comparator and device helper,
//! run in the guest next to `reader` and `antinomie-workload`.
//!
//! ```text
//! antinomie-e2e compare --workload W.jsonl [--workload W2.jsonl] --reader R.jsonl
//!                       [--lossy --counters C.json | --subset] [--sysfs /sys]
//! antinomie-e2e device info|enable|disable|counters|ring-size BYTES
//! antinomie-e2e diff-check --workload-a A --workload-b B --diff DIFF.json  # diffcheck.rs
//! antinomie-e2e cause-check --workload-a A --workload-b B --diff DIFF.json # causecheck.rs
//! ```
//!
//! `compare` derives, for every call the workload logged (`antinomie-workload
//! e2e`, `burst`, …), every key of the reader's JSON line from what the
//! workload passed and got back — argument words, the attr bytes and how
//! many were readable, thread, pinned CPU, clock, return value, errno, the
//! size read back after `E2BIG` — through its own model of the capture
//! rules and of `struct perf_event_attr` (`model.rs`, written from the
//! uapi headers, not from the reader), and compares field by field, attr
//! member by member. Each captured call names its workload call by the tag
//! the workload puts in argument word 5. Without `--lossy` every workload
//! call must be captured complete and every reader line must be one of
//! them. With `--lossy` (a reader that was stalled) lines may be LOST
//! records or half calls; then records shown + records lost must equal two
//! per workload call, and the kernel's own counters (`device counters`,
//! read after the reader exited) must agree: produced = shown, lost =
//! reported by LOST records, per CPU. With `--subset` (a ring image that
//! lost records, decoded on the host) the same lines are allowed and each
//! shown call is still compared field by field, without the accounting.
//!
//! `device` drives `/dev/antinomie` directly (the reader has no switch to
//! disable capture or resize the rings): `ring-size` needs capture off and
//! the rings unmapped, and restarts every ring's positions and counters.

mod causecheck;
mod compare;
mod device;
mod diffcheck;
mod diffreport;
mod expect;
mod filters;
#[allow(dead_code)]
mod model;
mod worklog;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use compare::{compare, Lossy};
use device::device;

/// The end-to-end comparator and device helper.
#[derive(Debug, Parser)]
#[command(name = "antinomie-e2e")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Compare the reader's JSON Lines with the workload's log.
    Compare {
        /// A workload log (JSON Lines); repeat for several runs.
        #[arg(long, required = true)]
        workload: Vec<PathBuf>,
        /// The reader's `--format json` output.
        #[arg(long)]
        reader: PathBuf,
        /// The reader was stalled: allow LOST records and half calls, and
        /// check the accounting instead.
        #[arg(long)]
        lossy: bool,
        /// With --lossy: `device counters` output read after the reader exited.
        #[arg(long)]
        counters: Option<PathBuf>,
        /// Allow what --lossy allows, without the accounting: the reader's
        /// calls are some of the workload's (golden ring images that lost
        /// records).
        #[arg(long, conflicts_with = "lossy")]
        subset: bool,
        /// With --lossy: require at least one unfinished call (EXIT lost)
        /// and one entry-lost call (ENTRY lost), not only whole calls lost.
        #[arg(long)]
        require_half_calls: bool,
        /// Where sysfs is mounted (dynamic PMU types).
        #[arg(long, default_value = "/sys")]
        sysfs: PathBuf,
        /// The workload ran without access to kernel data
        /// (`perf_event_paranoid` above 1, neither `CAP_PERFMON` nor
        /// `CAP_SYS_ADMIN`): `perf_copy_attr()` refuses a branch stack's
        /// kernel and hypervisor levels with EACCES.
        #[arg(long)]
        no_kernel_access: bool,
        /// Print every field compared.
        #[arg(long, short)]
        verbose: bool,
    },
    /// Check that `reader show FILES --filter …` selects exactly the
    /// expected calls, for every field `reader fields` lists.
    Filters {
        /// The workload's log (JSON Lines); repeat for several runs.
        #[arg(long, required = true)]
        workload: Vec<PathBuf>,
        /// The `reader` binary to run.
        #[arg(long, default_value = "reader")]
        reader: PathBuf,
        /// Name a dynamic PMU type (NAME=TYPE), for `reader show` and the
        /// model alike (instead of sysfs's).
        #[arg(long, value_name = "NAME=TYPE")]
        pmu: Vec<String>,
        /// The output of `reader --follow --format json --filter EXPR`.
        #[arg(long, requires = "live_filter")]
        live: Option<PathBuf>,
        /// The EXPR of --live: one of the scenario cases.
        #[arg(long, requires = "live")]
        live_filter: Option<String>,
        /// The trace is a stalled reader's: LOST records and half calls
        /// are allowed (the scenario cases are not run).
        #[arg(long, conflicts_with = "live")]
        lossy: bool,
        /// Where sysfs is mounted (dynamic PMU types).
        #[arg(long, default_value = "/sys")]
        sysfs: PathBuf,
        /// Print every filter and its count.
        #[arg(long, short)]
        verbose: bool,
        /// What `reader show` reads: a trace file, or ring images.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Check `reader diff --format json` against two workload logs.
    DiffCheck(diffreport::Args),
    /// Check the causes and consequences of `reader diff --format json`
    /// against two logs of a workload that reacts to results.
    CauseCheck(diffreport::Args),
    /// Drive /dev/antinomie.
    Device {
        /// info, enable, disable, counters, or ring-size BYTES.
        op: String,
        /// For ring-size: bytes of each ring's data area.
        arg: Option<u64>,
        /// The device.
        #[arg(long, default_value = "/dev/antinomie")]
        device: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Compare {
            workload,
            reader,
            lossy,
            counters,
            subset,
            require_half_calls,
            sysfs,
            no_kernel_access,
            verbose,
        } => compare(
            &workload,
            &reader,
            Lossy {
                on: lossy,
                subset,
                counters: counters.as_deref(),
                half_calls: require_half_calls,
            },
            &sysfs,
            !no_kernel_access,
            verbose,
        ),
        Cmd::Filters {
            workload,
            reader,
            pmu,
            live,
            live_filter,
            lossy,
            sysfs,
            verbose,
            files,
        } => filters::run(&filters::Args {
            workload: &workload,
            reader: &reader,
            files: &files,
            pmu: &pmu,
            live: live.as_deref(),
            live_filter: live_filter.as_deref(),
            lossy,
            sysfs: &sysfs,
            verbose,
        }),
        Cmd::DiffCheck(args) => diffcheck::run(&args),
        Cmd::CauseCheck(args) => causecheck::run(&args),
        Cmd::Device { op, arg, device: d } => device(&op, arg, &d).map(|()| true),
    };
    match r {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("antinomie-e2e: error: {e}");
            ExitCode::from(2)
        }
    }
}
