// SPDX-License-Identifier: GPL-2.0-only
//! A paired, decoded call, and the tables of record keys.
//!
//! [`Call`] is what the pipeline hands to the output (and to the
//! filter): the ENTRY and EXIT records of one `call_id`, either possibly
//! missing. A call's syscall is the row of [`crate::syscall::SYSCALLS`]
//! whose number its records carry. [`call_fields`] lists every record key
//! of a call line of that syscall, made from its row, in the JSON output's
//! fixed order, with its type, meaning and accessor; the JSON writer walks
//! it, so the keys a filter can name and the keys the output prints come
//! from one place. The attr's members are the nested keys
//! `args.attr_uptr.<member>` of [`crate::decode::ATTR_MEMBERS`], printed
//! inside the captured pointer's decoded struct
//! ([`crate::syscall::CaptureKeys::decoded`]). [`LOST_FIELDS`] does the
//! same for LOST lines.
//!
//! The tables live in their own files: `fields` (the keys of a call
//! line), `lost` (those of a LOST line) and `value_names` (the names of
//! states and loss reasons). The vocabulary of a key ([`Value`],
//! [`FieldType`], [`Constants`]) and the names of a capture's statuses and
//! flags are [`crate::field`]'s.

mod fields;
mod lost;
mod value_names;

use antinomie_abi as abi;

use crate::decode::AttrView;
use crate::record::{CaptureView, EntryRecord, ExitRecord, SharedItems};
use crate::syscall::{self, Syscall};

pub use crate::field::{
    fault_offset, Constants, FieldType, Value, CAPTURE_FLAGS, CAPTURE_STATUS, CAPTURE_STATUS_DOC,
    FAULT_OFFSET_KEY,
};
pub use fields::{call_field, call_fields, compact_omitted, CallField};
pub use lost::{LostField, LOST_FIELDS};
pub use value_names::{lost_reason, CALL_STATES, LOST_REASONS};

/// How complete a call's records are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CallState {
    /// ENTRY and EXIT.
    Complete,
    /// ENTRY without EXIT: the call was still running when the reader
    /// stopped, or its EXIT was lost (see [`Call::exit_maybe_lost`]).
    Unfinished,
    /// EXIT flagged `ENTRY_LOST`: the kernel dropped the ENTRY (and counted
    /// it).
    EntryLost,
    /// EXIT whose ENTRY was never seen, not flagged lost or gone, and not
    /// read by an earlier reader: in a ring this reader did not read, or
    /// that stopped, or printed early by the pending cap.
    EntryMissing,
    /// EXIT flagged `ENTRY_GONE`: its ENTRY (or the count of its loss)
    /// went to rings that were replaced or freed while the call ran.
    EntryGone,
    /// EXIT whose ENTRY lies before the position this reader began
    /// reading its ring at (the EXIT's `entry_pos`): a reader before this
    /// one read it. Not a loss.
    EntryReadEarlier,
}

impl CallState {
    /// The JSON value of `state`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            CallState::Complete => "complete",
            CallState::Unfinished => "unfinished",
            CallState::EntryLost => "entry_lost",
            CallState::EntryMissing => "entry_missing",
            CallState::EntryGone => "entry_gone",
            CallState::EntryReadEarlier => "entry_read_earlier",
        }
    }
}

/// One call: the ENTRY and EXIT records sharing a `call_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The call id.
    pub call_id: u64,
    /// The ENTRY record, if seen.
    pub entry: Option<EntryRecord>,
    /// The EXIT record, if seen.
    pub exit: Option<ExitRecord>,
    /// How complete it is.
    pub state: CallState,
    /// For an unfinished call: its id lies in the `call_id` range of a
    /// LOST record, so its EXIT may have been dropped.
    pub exit_maybe_lost: bool,
}

/// The attr capture item of argument `arg`.
fn attr_item(items: &SharedItems, arg: usize) -> Option<CaptureView<'_>> {
    items
        .iter()
        .find(|c| c.header.arg as usize == arg && c.header.kind == abi::KIND_PERF_EVENT_ATTR)
}

impl Call {
    /// The header of the ENTRY, else of the EXIT.
    #[must_use]
    pub fn header(&self) -> &abi::RecordHeader {
        match (&self.entry, &self.exit) {
            (Some(e), _) => &e.header,
            (None, Some(x)) => &x.header,
            // Never built: a call has at least one record.
            (None, None) => &EMPTY_HEADER,
        }
    }

    /// When the call began: the ENTRY's `start_ns`, the time it entered
    /// the syscall; without ENTRY, the EXIT's `time_ns` minus its
    /// `duration_ns`, which the kernel measures from that same clock read
    /// (also when the ENTRY was dropped). Records are merged by their own
    /// `time_ns` instead, when each was written.
    #[must_use]
    pub fn time_ns(&self) -> u64 {
        match (&self.entry, &self.exit) {
            (Some(e), _) => e.start_ns,
            (None, Some(x)) => x.header.time_ns.saturating_sub(x.body.duration_ns),
            (None, None) => 0,
        }
    }

    /// CPU of the ENTRY, else of the EXIT.
    #[must_use]
    pub fn cpu(&self) -> u32 {
        self.header().cpu
    }

    /// CPU of the EXIT.
    #[must_use]
    pub fn exit_cpu(&self) -> Option<u32> {
        self.exit.as_ref().map(|x| x.header.cpu)
    }

    /// The six raw argument words.
    #[must_use]
    pub fn args(&self) -> Option<[u64; 6]> {
        self.entry.as_ref().map(|e| e.args)
    }

    /// The syscall's row of the table, by the number its records carry.
    ///
    /// # Panics
    /// When no row has that number: [`crate::record::parse`] rejects such
    /// records, so only a call built by hand of records made by hand can
    /// have one.
    #[must_use]
    pub fn syscall(&self) -> &'static Syscall {
        let nr = self.header().syscall_nr;
        syscall::by_nr(nr).unwrap_or_else(|| panic!("syscall number {nr} has no capture table"))
    }

    /// The index of its captured pointer argument, if its syscall has one.
    fn captured_arg(&self) -> Option<usize> {
        self.syscall().capture_keys().map(|k| k.index)
    }

    /// Argument `i` (0-5) as the raw word.
    #[must_use]
    pub fn arg(&self, i: usize) -> Option<u64> {
        self.args().and_then(|a| a.get(i).copied())
    }

    /// The raw return value (negative errno on failure).
    #[must_use]
    pub fn ret(&self) -> Option<i64> {
        self.exit.as_ref().map(|x| x.body.ret)
    }

    /// The positive errno, when the call failed.
    #[must_use]
    pub fn errno(&self) -> Option<u64> {
        self.ret()
            .filter(|r| (-4095..0).contains(r))
            .map(i64::unsigned_abs)
    }

    /// Whether the call succeeded.
    #[must_use]
    pub fn success(&self) -> Option<bool> {
        self.ret().map(|r| !(-4095..0).contains(&r))
    }

    /// The call's duration as the kernel measured it: from its entry into
    /// the syscall (the ENTRY's `start_ns`) to the EXIT's `time_ns`.
    #[must_use]
    pub fn duration_ns(&self) -> Option<u64> {
        self.exit.as_ref().map(|x| x.body.duration_ns)
    }

    /// The EXIT's `ANTINOMIE_EXIT_F_*` flags.
    #[must_use]
    pub fn exit_flags(&self) -> Option<u32> {
        self.exit.as_ref().map(|x| x.body.flags)
    }

    fn exit_flag(&self, flag: u32) -> Option<bool> {
        self.exit_flags().map(|f| f & flag != 0)
    }

    /// The entry capture of the captured pointer's attr.
    #[must_use]
    pub fn attr_capture(&self) -> Option<CaptureView<'_>> {
        let arg = self.captured_arg()?;
        self.entry.as_ref().and_then(|e| attr_item(&e.items, arg))
    }

    /// The captured attr bytes, decoded (absent when nothing was copied).
    #[must_use]
    pub fn attr(&self) -> Option<AttrView<'_>> {
        self.attr_capture()
            .filter(|c| !c.data.is_empty())
            .map(|c| AttrView::new(c.data))
    }

    /// After an E2BIG from `perf_copy_attr()`'s size checks, the size they
    /// stored into the attr's `size` (or tried to: see [`Self::size_written`])
    /// ([`crate::syscall::CaptureKeys::required_size`]).
    #[must_use]
    pub fn required_size(&self) -> Option<u32> {
        self.exit
            .as_ref()
            .filter(|x| x.body.flags & abi::EXIT_F_SIZE_WRITTEN != 0)
            .map(|x| x.body.required_size)
    }

    /// Whether the kernel wrote `size` back: an E2BIG from
    /// `perf_copy_attr()`'s size checks whose store did not fault.
    #[must_use]
    pub fn size_written(&self) -> Option<bool> {
        self.exit_flags()
            .map(|f| f & abi::EXIT_F_SIZE_WRITTEN != 0 && f & abi::EXIT_F_SIZE_STORE_FAULT == 0)
    }

    /// Whether `perf_copy_attr()` succeeded.
    #[must_use]
    pub fn attr_copied(&self) -> Option<bool> {
        self.exit_flag(abi::EXIT_F_ATTR_COPIED)
    }

    /// Whether the call came through a compat entry.
    #[must_use]
    pub fn compat(&self) -> bool {
        self.header().flags & abi::RECORD_F_COMPAT != 0
    }
}

static EMPTY_HEADER: abi::RecordHeader = abi::RecordHeader {
    size: 0,
    r#type: 0,
    hdr_size: 0,
    flags: 0,
    call_id: 0,
    time_ns: 0,
    pid: 0,
    tid: 0,
    cpu: 0,
    syscall_nr: 0,
};
