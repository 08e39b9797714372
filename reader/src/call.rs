//! A paired, decoded call, and the tables of record keys.
//!
//! [`Call`] is what the pipeline hands to the output (and to issue 5's
//! filter): the ENTRY and EXIT records of one `call_id`, either possibly
//! missing. [`CALL_FIELDS`] lists every record key of a call line in the
//! JSON output's fixed order, with its type, meaning and accessor; the JSON
//! writer walks it, so the keys a filter can name and the keys the output
//! prints come from one place. The attr's members are the nested keys
//! `args.attr_uptr.<member>` of [`crate::decode::ATTR_MEMBERS`], printed
//! inside `arg0.perf_event_attr`. [`LOST_FIELDS`] does the same for LOST
//! lines.

use std::borrow::Cow;

use antinomie_abi as abi;

use crate::decode::names::{self, Names};
use crate::decode::AttrView;
use crate::record::{CaptureData, EntryRecord, ExitRecord, LostRecord};

/// How complete a call's records are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallState {
    /// ENTRY and EXIT.
    Complete,
    /// ENTRY without EXIT: the call was still running when the reader
    /// stopped, or its EXIT was lost (see [`Call::exit_maybe_lost`]).
    Unfinished,
    /// EXIT flagged `ENTRY_LOST`: the kernel dropped the ENTRY (and counted
    /// it).
    EntryLost,
    /// EXIT whose ENTRY was never seen and is not flagged lost: consumed
    /// before this reader started, or in a ring that stopped.
    EntryMissing,
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

/// The values of `state`, as [`CallState::as_str`] spells them (the
/// numbers are only the table's order: `state` is a string).
pub static CALL_STATES: Names = &[
    (0, "complete"),
    (1, "unfinished"),
    (2, "entry_lost"),
    (3, "entry_missing"),
];

/// Capture status names, `ANTINOMIE_STATUS_*` in lower case.
pub static CAPTURE_STATUS: Names = &[
    (abi::STATUS_COMPLETE as u64, "complete"),
    (abi::STATUS_NULL_PTR as u64, "null_ptr"),
    (abi::STATUS_FAULT as u64, "fault"),
    (abi::STATUS_TRUNCATED as u64, "truncated"),
    (abi::STATUS_INVALID_SIZE as u64, "invalid_size"),
    (abi::STATUS_NOT_APPLICABLE as u64, "not_applicable"),
];

/// What each capture status means, by name (the `abi/antinomie.h`
/// STATUS comment; a test checks it covers [`CAPTURE_STATUS`]).
pub static CAPTURE_STATUS_DOC: &[(&str, &str)] = &[
    (
        "complete",
        "64 <= effective size <= 136: the whole attr was read (copied_len = effective size)",
    ),
    ("null_ptr", "attr_uptr was NULL: nothing was read"),
    (
        "fault",
        "a read faulted at arg0.fault_offset; the bytes before it were kept (none when the size word itself faulted: capture flag size_fault)",
    ),
    (
        "truncated",
        "136 < effective size <= PAGE_SIZE: 136 bytes were kept, and tail_zero or tail_nonzero says whether the rest was zero (non-zero means E2BIG)",
    ),
    (
        "invalid_size",
        "effective size < 64 or > PAGE_SIZE: perf_copy_attr() reads nothing more and fails with E2BIG, so only the size was read",
    ),
    (
        "not_applicable",
        "the kernel does not read the attr in this call (flags outside PERF_FLAG_ALL fail with EINVAL first): nothing was read",
    ),
];

/// Capture flag names, `ANTINOMIE_CAPTURE_F_*` in lower case.
pub static CAPTURE_FLAGS: Names = &[
    (abi::CAPTURE_F_TAIL_ZERO as u64, "tail_zero"),
    (abi::CAPTURE_F_TAIL_NONZERO as u64, "tail_nonzero"),
    (abi::CAPTURE_F_SIZE_FAULT as u64, "size_fault"),
    (abi::CAPTURE_F_KERNEL_COPY as u64, "kernel_copy"),
];

/// Loss reason names, by `ANTINOMIE_LOST_*` index.
pub static LOST_REASONS: &[&str] = &["ring_full", "bad_consumer"];

/// The name of loss reason `i` (`slot<i>` for slots the ABI has not named).
#[must_use]
pub fn lost_reason(i: usize) -> Cow<'static, str> {
    LOST_REASONS
        .get(i)
        .map_or_else(|| Cow::Owned(format!("slot{i}")), |s| Cow::Borrowed(*s))
}

// The kernel takes an int argument from the low 32 bits of the register:
// truncating and reinterpreting them is the point.
#[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
fn low_i32(word: u64) -> i64 {
    i64::from(word as u32 as i32)
}

fn attr_item(items: &[CaptureData], kernel: bool) -> Option<&CaptureData> {
    items.iter().find(|c| {
        c.header.arg == 0
            && c.header.kind == abi::KIND_PERF_EVENT_ATTR
            && (c.header.flags & abi::CAPTURE_F_KERNEL_COPY != 0) == kernel
    })
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

    /// `time_ns` of the ENTRY, else of the EXIT.
    #[must_use]
    pub fn time_ns(&self) -> u64 {
        self.header().time_ns
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

    /// Argument `i` (0-5) as the raw word.
    #[must_use]
    pub fn arg(&self, i: usize) -> Option<u64> {
        self.args().and_then(|a| a.get(i).copied())
    }

    /// `pid` as the syscall sees it (an `int`).
    #[must_use]
    pub fn arg_pid(&self) -> Option<i64> {
        self.arg(1).map(low_i32)
    }

    /// `cpu` as the syscall sees it.
    #[must_use]
    pub fn arg_cpu(&self) -> Option<i64> {
        self.arg(2).map(low_i32)
    }

    /// `group_fd` as the syscall sees it.
    #[must_use]
    pub fn arg_group_fd(&self) -> Option<i64> {
        self.arg(3).map(low_i32)
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

    /// The call's duration as the kernel measured it.
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

    /// The entry capture of `attr_uptr`.
    #[must_use]
    pub fn attr_capture(&self) -> Option<&CaptureData> {
        self.entry.as_ref().and_then(|e| attr_item(&e.items, false))
    }

    /// The captured attr bytes, decoded (absent when nothing was copied).
    #[must_use]
    pub fn attr(&self) -> Option<AttrView<'_>> {
        self.attr_capture()
            .filter(|c| !c.data.is_empty())
            .map(|c| AttrView::new(&c.data))
    }

    /// The kernel's own copy of the attr, carried by the EXIT after a
    /// double fetch.
    #[must_use]
    pub fn kernel_attr(&self) -> Option<AttrView<'_>> {
        self.exit
            .as_ref()
            .and_then(|x| attr_item(&x.items, true))
            .map(|c| AttrView::new(&c.data))
    }

    /// `attr_uptr->size` read back after E2BIG (`arg0.required_size`).
    #[must_use]
    pub fn required_size(&self) -> Option<u32> {
        self.exit
            .as_ref()
            .filter(|x| x.body.flags & abi::EXIT_F_SIZE_READ != 0)
            .map(|x| x.body.required_size)
    }

    /// Whether the kernel wrote `size` back (E2BIG from `perf_copy_attr()`).
    #[must_use]
    pub fn size_written(&self) -> Option<bool> {
        self.exit_flag(abi::EXIT_F_SIZE_WRITTEN)
    }

    /// Whether `perf_copy_attr()` succeeded and was compared.
    #[must_use]
    pub fn attr_copied(&self) -> Option<bool> {
        self.exit_flag(abi::EXIT_F_ATTR_COPIED)
    }

    /// Whether user memory changed between the capture and the kernel's
    /// copy (`ANTINOMIE_EXIT_F_ATTR_MISMATCH`).
    #[must_use]
    pub fn double_fetch(&self) -> Option<bool> {
        self.exit_flag(abi::EXIT_F_ATTR_MISMATCH)
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

/// A field's value, as the JSON output prints it.
#[derive(Debug, Clone)]
pub enum Value<'a> {
    /// Absent: JSON `null`.
    Null,
    /// An unsigned number.
    U64(u64),
    /// A signed number.
    I64(i64),
    /// A boolean.
    Bool(bool),
    /// A string.
    Str(Cow<'a, str>),
    /// A list of names.
    Names(Vec<Cow<'static, str>>),
    /// A decoded attr: an object of its present, applicable members'
    /// values.
    Attr(AttrView<'a>),
    /// A decoded attr: an object of its symbolic members' names.
    AttrNames(AttrView<'a>),
}

/// The type of a field, for docs and the filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// Unsigned integer.
    U64,
    /// Signed integer.
    I64,
    /// Boolean.
    Bool,
    /// String.
    Str,
    /// List of names.
    Names,
    /// The attr object (members are fields `args.attr_uptr.<member>`).
    Attr,
}

/// Which symbolic constants a field's values take (for the filter).
#[derive(Debug, Clone, Copy)]
pub enum Constants {
    /// None.
    None,
    /// Errno names (`E2BIG`, …) of [`crate::decode::ERRNO`], as the
    /// positive errno (or, for a string field, the name itself).
    Errno,
    /// Errno names negated (`-E2BIG`), as the raw return value holds them.
    NegErrno,
    /// Names of this table.
    Table(Names),
}

/// One record key of a call line.
#[derive(Debug, Clone, Copy)]
pub struct CallField {
    /// The key, e.g. `syscall.errno`.
    pub key: &'static str,
    /// Its type.
    pub ty: FieldType,
    /// Its named constants.
    pub constants: Constants,
    /// What it means.
    pub doc: &'static str,
    /// Its value for a call.
    pub get: for<'a> fn(&'a Call) -> Value<'a>,
}

fn opt_u64(v: Option<u64>) -> Value<'static> {
    v.map_or(Value::Null, Value::U64)
}

fn opt_i64(v: Option<i64>) -> Value<'static> {
    v.map_or(Value::Null, Value::I64)
}

fn opt_bool(v: Option<bool>) -> Value<'static> {
    v.map_or(Value::Null, Value::Bool)
}

fn capture_field(c: &Call, f: impl Fn(&abi::Capture) -> Value<'static>) -> Value<'static> {
    c.attr_capture().map_or(Value::Null, |cap| f(&cap.header))
}

macro_rules! arg_word {
    ($i:literal) => {
        CallField {
            key: concat!("args.", $i),
            ty: FieldType::U64,
            constants: Constants::None,
            doc: concat!("argument word ", $i, " as the syscall received it"),
            get: |c| opt_u64(c.arg($i)),
        }
    };
}

/// Every key of a call line, in output order.
pub static CALL_FIELDS: &[CallField] = &[
    CallField {
        key: "event",
        ty: FieldType::Str,
        constants: Constants::None,
        doc: "\"call\" for a call line",
        get: |_| Value::Str(Cow::Borrowed("call")),
    },
    CallField {
        key: "state",
        ty: FieldType::Str,
        constants: Constants::Table(CALL_STATES),
        doc: "complete, unfinished (no EXIT), entry_lost (ENTRY dropped) or entry_missing (ENTRY not seen)",
        get: |c| Value::Str(Cow::Borrowed(c.state.as_str())),
    },
    CallField {
        key: "time_ns",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "CLOCK_MONOTONIC time of the ENTRY (of the EXIT without ENTRY)",
        get: |c| Value::U64(c.time_ns()),
    },
    CallField {
        key: "cpu",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "CPU of the ENTRY (of the EXIT without ENTRY)",
        get: |c| Value::U64(u64::from(c.cpu())),
    },
    CallField {
        key: "exit_cpu",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "CPU of the EXIT (the task may migrate)",
        get: |c| opt_u64(c.exit_cpu().map(u64::from)),
    },
    CallField {
        key: "pid",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "thread-group id of the caller (initial pid namespace)",
        get: |c| Value::U64(u64::from(c.header().pid)),
    },
    CallField {
        key: "tid",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "thread id of the caller (initial pid namespace)",
        get: |c| Value::U64(u64::from(c.header().tid)),
    },
    CallField {
        key: "call_id",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "the kernel's per-call id shared by ENTRY and EXIT",
        get: |c| Value::U64(c.call_id),
    },
    CallField {
        key: "syscall.nr",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "the syscall number (298 on x86-64, 336 from ia32)",
        get: |c| Value::U64(u64::from(c.header().syscall_nr)),
    },
    CallField {
        key: "compat",
        ty: FieldType::Bool,
        constants: Constants::None,
        doc: "the call came through a compat (ia32/x32) entry",
        get: |c| Value::Bool(c.compat()),
    },
    arg_word!(0),
    arg_word!(1),
    arg_word!(2),
    arg_word!(3),
    arg_word!(4),
    arg_word!(5),
    CallField {
        key: "args.attr_uptr",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "argument 0: the user pointer to struct perf_event_attr",
        get: |c| opt_u64(c.arg(0)),
    },
    CallField {
        key: "args.pid",
        ty: FieldType::I64,
        constants: Constants::None,
        doc: "argument 1 as the syscall's int: 0 this task, -1 any, else a pid (or cgroup fd)",
        get: |c| opt_i64(c.arg_pid()),
    },
    CallField {
        key: "args.cpu",
        ty: FieldType::I64,
        constants: Constants::None,
        doc: "argument 2 as the syscall's int: -1 any CPU",
        get: |c| opt_i64(c.arg_cpu()),
    },
    CallField {
        key: "args.group_fd",
        ty: FieldType::I64,
        constants: Constants::None,
        doc: "argument 3 as the syscall's int: the group leader's fd, or -1",
        get: |c| opt_i64(c.arg_group_fd()),
    },
    CallField {
        key: "args.flags",
        ty: FieldType::U64,
        constants: Constants::Table(names::PERF_FLAG),
        doc: "argument 4 (unsigned long): PERF_FLAG_* bits",
        get: |c| opt_u64(c.arg(4)),
    },
    CallField {
        key: "args.flags_names",
        ty: FieldType::Str,
        constants: Constants::None,
        doc: "args.flags by name, unknown bits in hex",
        get: |c| {
            c.arg(4).map_or(Value::Null, |f| {
                Value::Str(Cow::Owned(names::format_flags(names::PERF_FLAG, f, "PERF_FLAG_???")))
            })
        },
    },
    CallField {
        key: "arg0.status",
        ty: FieldType::Str,
        constants: Constants::Table(CAPTURE_STATUS),
        doc: "how the attr capture at entry went: complete, null_ptr, fault, truncated, invalid_size, not_applicable",
        get: |c| {
            capture_field(c, |h| {
                Value::Str(names::lookup(CAPTURE_STATUS, u64::from(h.status)).map_or_else(
                    || Cow::Owned(format!("status_{}", h.status)),
                    Cow::Borrowed,
                ))
            })
        },
    },
    CallField {
        key: "arg0.capture_flags",
        ty: FieldType::Names,
        constants: Constants::Table(CAPTURE_FLAGS),
        doc: "tail_zero / tail_nonzero (bytes beyond 136), size_fault, kernel_copy",
        get: |c| {
            capture_field(c, |h| {
                let (known, rest) = names::split_flags(CAPTURE_FLAGS, u64::from(h.flags));
                let mut v: Vec<Cow<'static, str>> = known.into_iter().map(Cow::Borrowed).collect();
                if rest != 0 {
                    v.push(Cow::Owned(format!("{rest:#x}")));
                }
                Value::Names(v)
            })
        },
    },
    CallField {
        key: "arg0.declared_size",
        ty: FieldType::U64,
        constants: Constants::Table(names::PERF_ATTR_SIZE),
        doc: "the attr's size field as read at entry (0 means 64)",
        get: |c| capture_field(c, |h| Value::U64(u64::from(h.declared_size))),
    },
    CallField {
        key: "arg0.copied_len",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "bytes of the attr captured",
        get: |c| capture_field(c, |h| Value::U64(u64::from(h.copied_len))),
    },
    CallField {
        key: "arg0.fault_offset",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "with status fault: offset of the first unreadable byte",
        get: |c| {
            capture_field(c, |h| {
                if h.status == abi::STATUS_FAULT {
                    Value::U64(u64::from(h.fault_offset))
                } else {
                    Value::Null
                }
            })
        },
    },
    CallField {
        key: "arg0.perf_event_attr",
        ty: FieldType::Attr,
        constants: Constants::None,
        doc: "the captured attr: its present, applicable members (fields args.attr_uptr.<member>)",
        get: |c| c.attr().map_or(Value::Null, Value::Attr),
    },
    CallField {
        key: "arg0.perf_event_attr_names",
        ty: FieldType::Attr,
        constants: Constants::None,
        doc: "the captured attr's symbolic members by name (as the text output shows them)",
        get: |c| c.attr().map_or(Value::Null, Value::AttrNames),
    },
    CallField {
        key: "arg0.required_size",
        ty: FieldType::U64,
        constants: Constants::Table(names::PERF_ATTR_SIZE),
        doc: "after E2BIG: attr_uptr->size read back (136 when the kernel wrote it)",
        get: |c| opt_u64(c.required_size().map(u64::from)),
    },
    CallField {
        key: "arg0.size_written",
        ty: FieldType::Bool,
        constants: Constants::None,
        doc: "the E2BIG came from perf_copy_attr(), which writes size back",
        get: |c| opt_bool(c.size_written()),
    },
    CallField {
        key: "arg0.attr_copied",
        ty: FieldType::Bool,
        constants: Constants::None,
        doc: "perf_copy_attr() succeeded and its copy was compared with the capture",
        get: |c| opt_bool(c.attr_copied()),
    },
    CallField {
        key: "arg0.double_fetch",
        ty: FieldType::Bool,
        constants: Constants::None,
        doc: "user memory changed between the capture and the kernel's copy",
        get: |c| opt_bool(c.double_fetch()),
    },
    CallField {
        key: "arg0.kernel_attr",
        ty: FieldType::Attr,
        constants: Constants::None,
        doc: "after a double fetch: the attr the kernel actually used",
        get: |c| c.kernel_attr().map_or(Value::Null, Value::Attr),
    },
    CallField {
        key: "ret",
        ty: FieldType::I64,
        constants: Constants::NegErrno,
        doc: "the raw return value: a new fd, or a negative errno",
        get: |c| opt_i64(c.ret()),
    },
    CallField {
        key: "syscall.errno",
        ty: FieldType::U64,
        constants: Constants::Errno,
        doc: "the positive errno of a failed call; null on success",
        get: |c| opt_u64(c.errno()),
    },
    CallField {
        key: "syscall.errno_name",
        ty: FieldType::Str,
        constants: Constants::Errno,
        doc: "syscall.errno by name",
        get: |c| {
            c.errno().map_or(Value::Null, |e| {
                let name = u32::try_from(e).ok().and_then(names::errno).map(|e| e.name);
                Value::Str(name.map_or_else(|| Cow::Owned(format!("E{e}")), Cow::Borrowed))
            })
        },
    },
    CallField {
        key: "syscall.success",
        ty: FieldType::Bool,
        constants: Constants::None,
        doc: "the call returned a file descriptor",
        get: |c| opt_bool(c.success()),
    },
    CallField {
        key: "syscall.duration_ns",
        ty: FieldType::U64,
        constants: Constants::None,
        doc: "time in the syscall as the kernel measured it: exit time_ns minus entry time_ns",
        get: |c| opt_u64(c.duration_ns()),
    },
    CallField {
        key: "exit_maybe_lost",
        ty: FieldType::Bool,
        constants: Constants::None,
        doc: "unfinished, and a LOST record's call id range holds its id, with records dropped at or after its ENTRY's time",
        get: |c| Value::Bool(c.exit_maybe_lost),
    },
];

/// One key of a LOST line.
#[derive(Debug, Clone, Copy)]
pub struct LostField {
    /// The key.
    pub key: &'static str,
    /// What it means.
    pub doc: &'static str,
    /// Its value.
    pub get: fn(&LostRecord) -> Value<'static>,
}

macro_rules! lost_slot {
    ($i:literal, $key:literal) => {
        LostField {
            key: $key,
            doc: "records dropped for this reason since the previous LOST record",
            get: |l| Value::U64(l.body.lost[$i]),
        }
    };
}

/// Every key of a LOST line, in output order.
pub static LOST_FIELDS: &[LostField] = &[
    LostField {
        key: "event",
        doc: "\"lost\" for a LOST line",
        get: |_| Value::Str(Cow::Borrowed("lost")),
    },
    LostField {
        key: "time_ns",
        doc: "time of the LOST record",
        get: |l| Value::U64(l.header.time_ns),
    },
    LostField {
        key: "cpu",
        doc: "the ring that dropped records",
        get: |l| Value::U64(u64::from(l.header.cpu)),
    },
    lost_slot!(0, "lost.ring_full"),
    lost_slot!(1, "lost.bad_consumer"),
    LostField {
        key: "lost.other",
        doc: "records dropped for reasons this reader does not know",
        get: |l| Value::U64(l.body.lost[2..].iter().fold(0, |a, &n| a.saturating_add(n))),
    },
    LostField {
        key: "lost.first_time_ns",
        doc: "time the first dropped record would have had",
        get: |l| Value::U64(l.body.first_time_ns),
    },
    LostField {
        key: "lost.last_time_ns",
        doc: "time the last dropped record would have had",
        get: |l| Value::U64(l.body.last_time_ns),
    },
    LostField {
        key: "lost.min_call_id",
        doc: "smallest call id among the dropped records",
        get: |l| Value::U64(l.body.min_call_id),
    },
    LostField {
        key: "lost.max_call_id",
        doc: "largest call id among the dropped records",
        get: |l| Value::U64(l.body.max_call_id),
    },
];

/// The call field with this key.
#[must_use]
pub fn call_field(key: &str) -> Option<&'static CallField> {
    CALL_FIELDS.iter().find(|f| f.key == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_tables_match_what_they_name() {
        for state in [
            CallState::Complete,
            CallState::Unfinished,
            CallState::EntryLost,
            CallState::EntryMissing,
        ] {
            assert!(names::value_of(CALL_STATES, state.as_str()).is_some());
        }
        assert_eq!(CALL_STATES.len(), 4);
        let documented: Vec<&str> = CAPTURE_STATUS_DOC.iter().map(|(n, _)| *n).collect();
        let named: Vec<&str> = CAPTURE_STATUS.iter().map(|(_, n)| *n).collect();
        assert_eq!(documented, named);
    }
}
