// SPDX-License-Identifier: GPL-2.0-only
//! Random calls for the property tests: [`CallGen`], drawn by proptest and
//! built into a [`Call`] through the ring producer's specs.

use antinomie_abi as abi;
use antinomie_reader::call::{Call, CallState};
use antinomie_reader::decode::{PmuTypes, ATTR_MEMBERS};
use proptest::prelude::*;

use antinomie_reader::ring::builder::{attr, set, CaptureSpec, EntrySpec, ExitSpec};

use super::{entry, exit, pmus};

/// `CallGen::switches` bits.
const COMPAT: u8 = 1;
const TAIL_NONZERO: u8 = 2;
const MAYBE_LOST: u8 = 4;
const WITH_PMUS: u8 = 8;
/// An EXIT alone: its ENTRY read by an earlier reader.
const READ_EARLIER: u8 = 16;

/// A random call, as producer specs.
#[derive(Debug, Clone)]
pub(super) struct CallGen {
    /// 0 ENTRY and EXIT, 1 ENTRY only, 2 EXIT only.
    records: u8,
    /// `COMPAT`, `TAIL_NONZERO`, `MAYBE_LOST`, `WITH_PMUS`, `READ_EARLIER`.
    switches: u8,
    declared: u32,
    /// 0 none, 1 complete/truncated (by size), 2 null, 3 not applicable,
    /// 4 invalid size, 5 fault (of the size word when `fault_at` is 0,
    /// else of the kernel's copy, at no known offset).
    capture: u8,
    fault_at: usize,
    members: Vec<(usize, u64)>,
    ty: u64,
    args: (u64, i32, i32, i32, u64),
    ret: i64,
    duration: u64,
    exit_flags: u32,
    required: u32,
}

pub(super) fn arb_call() -> impl Strategy<Value = CallGen> {
    let sizes = prop::sample::select(vec![
        0u32, 1, 32, 64, 72, 80, 96, 104, 109, 112, 117, 120, 128, 136, 200, 5000,
    ]);
    let members = prop::collection::vec(
        (
            0..ATTR_MEMBERS.len(),
            prop_oneof![Just(0u64), Just(1), 0..20u64, any::<u64>()],
        ),
        0..10,
    );
    let args = (
        prop_oneof![Just(0u64), Just(0x7ffd_1234_5000)],
        prop::sample::select(vec![-1, 0, 1, 4242]),
        prop::sample::select(vec![-1, 0, 3]),
        prop::sample::select(vec![-1, 3]),
        prop_oneof![Just(0u64), Just(8), Just(0x4a), Just(1 << 20), any::<u64>()],
    );
    let rets = prop::sample::select(vec![0i64, 3, 7, -1, -2, -7, -14, -22, -95, -600, -5000]);
    (
        (
            prop::sample::select(vec![0u8, 0, 0, 0, 1, 2]),
            0u8..32,
            sizes,
            0u8..6,
            0usize..137,
        ),
        (
            members,
            prop::sample::select(vec![0u64, 1, 2, 3, 4, 5, 8, 9, 0x1234]),
            args,
        ),
        (
            rets,
            0u64..3_000_000,
            0u32..64,
            prop::sample::select(vec![0u32, 1, 136, 200]),
        ),
    )
        .prop_map(
            |(
                (records, switches, declared, capture, fault_at),
                (members, ty, args),
                (ret, duration, exit_flags, required),
            )| CallGen {
                records,
                switches,
                declared,
                capture,
                fault_at,
                members,
                ty,
                args,
                ret,
                duration,
                exit_flags,
                required,
            },
        )
}

impl CallGen {
    fn on(&self, switch: u8) -> bool {
        self.switches & switch != 0
    }

    fn attr_bytes(&self, tweak: u64) -> Vec<u8> {
        let mut a = attr(self.declared);
        set(&mut a, "type", self.ty);
        for &(i, v) in &self.members {
            let name = ATTR_MEMBERS[i].name;
            if name != "size" && name != "type" {
                set(&mut a, name, v ^ tweak);
            }
        }
        a
    }

    pub(super) fn build(&self) -> Call {
        let (ptr, pid, cpu, group_fd, flags) = self.args;
        let eff = if self.declared == 0 {
            64
        } else {
            self.declared as usize
        };
        let a = self.attr_bytes(0);
        let item = match self.capture {
            0 => None,
            1 if (64..=136).contains(&eff) => Some(CaptureSpec::complete(&a[..eff])),
            1 if (137..=4096).contains(&eff) && self.on(TAIL_NONZERO) => {
                let mut c = CaptureSpec::empty(abi::STATUS_TRUNCATED, self.declared);
                c.flags = abi::CAPTURE_F_TAIL_NONZERO;
                Some(c)
            }
            1 if (137..=4096).contains(&eff) => {
                let mut c = CaptureSpec::complete(&a);
                c.status = abi::STATUS_TRUNCATED;
                c.flags = abi::CAPTURE_F_TAIL_ZERO | 0x40;
                Some(c)
            }
            1 | 4 => Some(CaptureSpec::empty(abi::STATUS_INVALID_SIZE, self.declared)),
            2 => Some(CaptureSpec::empty(abi::STATUS_NULL_PTR, 0)),
            3 => Some(CaptureSpec::empty(abi::STATUS_NOT_APPLICABLE, 0)),
            _ if self.fault_at == 0 => {
                let mut c = CaptureSpec::empty(abi::STATUS_FAULT, 0);
                c.flags = abi::CAPTURE_F_SIZE_FAULT;
                c.fault_offset = 4;
                Some(c)
            }
            _ => Some(CaptureSpec::empty(
                abi::STATUS_FAULT,
                u32::try_from(eff).unwrap(),
            )),
        };
        let e = EntrySpec {
            call_id: 1,
            time_ns: 1_000,
            start_ns: Some(900),
            pid: 100,
            tid: 101,
            flags: if self.on(COMPAT) {
                abi::RECORD_F_COMPAT
            } else {
                0
            },
            args: antinomie_reader::ring::builder::args(ptr, pid, cpu, group_fd, flags),
            items: item.into_iter().collect(),
        };
        let x = ExitSpec {
            call_id: 1,
            time_ns: 2_000,
            pid: 100,
            tid: 101,
            ret: self.ret,
            duration_ns: self.duration,
            flags: self.exit_flags,
            required_size: self.required,
            entry_pos: 0,
        };
        let (has_entry, has_exit) = (self.records != 2, self.records != 1);
        let state = match (has_entry, has_exit) {
            (true, true) => CallState::Complete,
            (true, false) => CallState::Unfinished,
            _ if self.exit_flags & abi::EXIT_F_ENTRY_GONE != 0 => CallState::EntryGone,
            _ if self.exit_flags & abi::EXIT_F_ENTRY_LOST != 0 => CallState::EntryLost,
            _ if self.on(READ_EARLIER) => CallState::EntryReadEarlier,
            _ => CallState::EntryMissing,
        };
        Call {
            call_id: 1,
            entry: has_entry.then(|| entry(&e)),
            exit: has_exit.then(|| exit(&x)),
            state,
            exit_maybe_lost: state == CallState::Unfinished && self.on(MAYBE_LOST),
        }
    }

    pub(super) fn pmus(&self) -> PmuTypes {
        if self.on(WITH_PMUS) {
            pmus()
        } else {
            PmuTypes::none()
        }
    }
}
