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
const KERNEL_COPY: u8 = 2;
const MAYBE_LOST: u8 = 4;
const WITH_PMUS: u8 = 8;

/// A random call, as producer specs.
#[derive(Debug, Clone)]
pub(super) struct CallGen {
    /// 0 ENTRY and EXIT, 1 ENTRY only, 2 EXIT only.
    records: u8,
    /// `COMPAT`, `KERNEL_COPY`, `MAYBE_LOST`, `WITH_PMUS`.
    switches: u8,
    declared: u32,
    /// 0 none, 1 complete/truncated (by size), 2 null, 3 not applicable,
    /// 4 invalid size, 5 fault.
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
            0u8..16,
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
            0u32..32,
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
            1 if (137..=4096).contains(&eff) => {
                let mut c = CaptureSpec::complete(&a);
                c.status = abi::STATUS_TRUNCATED;
                c.flags = if self.on(KERNEL_COPY) {
                    abi::CAPTURE_F_TAIL_NONZERO
                } else {
                    abi::CAPTURE_F_TAIL_ZERO | 0x40
                };
                c.declared_size = self.declared;
                Some(c)
            }
            1 | 4 => Some(CaptureSpec::empty(abi::STATUS_INVALID_SIZE, self.declared)),
            2 => Some(CaptureSpec::empty(abi::STATUS_NULL_PTR, 0)),
            3 => Some(CaptureSpec::empty(abi::STATUS_NOT_APPLICABLE, 0)),
            _ => {
                let len = self.fault_at.min(eff.min(136));
                Some(CaptureSpec {
                    arg: 0,
                    kind: abi::KIND_PERF_EVENT_ATTR,
                    status: abi::STATUS_FAULT,
                    flags: if len == 0 {
                        abi::CAPTURE_F_SIZE_FAULT
                    } else {
                        0
                    },
                    declared_size: self.declared,
                    fault_offset: u32::try_from(len).unwrap(),
                    data: a[..len].to_vec(),
                })
            }
        };
        let e = EntrySpec {
            call_id: 1,
            time_ns: 1_000,
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
        let mut exit_items = Vec::new();
        if self.on(KERNEL_COPY) && self.exit_flags & abi::EXIT_F_ATTR_MISMATCH != 0 {
            let mut k = CaptureSpec::complete(&self.attr_bytes(0x5a)[..eff.clamp(64, 136)]);
            k.flags = abi::CAPTURE_F_KERNEL_COPY;
            exit_items.push(k);
        }
        let x = ExitSpec {
            call_id: 1,
            time_ns: 2_000,
            pid: 100,
            tid: 101,
            ret: self.ret,
            duration_ns: self.duration,
            flags: self.exit_flags,
            required_size: self.required,
            items: exit_items,
        };
        let (has_entry, has_exit) = (self.records != 2, self.records != 1);
        let state = match (has_entry, has_exit) {
            (true, true) => CallState::Complete,
            (true, false) => CallState::Unfinished,
            _ if self.exit_flags & abi::EXIT_F_ENTRY_GONE != 0 => CallState::EntryGone,
            _ if self.exit_flags & abi::EXIT_F_ENTRY_LOST != 0 => CallState::EntryLost,
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
