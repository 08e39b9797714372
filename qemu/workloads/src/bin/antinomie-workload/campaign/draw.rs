// SPDX-License-Identifier: GPL-2.0-only
//! What one call is: its size, attr bytes, where they lie, pid, cpu, group
//! fd and flags, drawn from the seed, and how a call and a difference are
//! described.

use crate::call::{Attr, PAGE, PERF_FLAG_FD_CLOEXEC};
use crate::random::{
    attr_bytes, kernel_reads, AttrKind, Rng, BAD_CPU, BOUNDARY_SIZES, NO_SUCH_PID,
};

use super::thread::Outcome;

/// Where the attr lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Place {
    Null,
    /// `readable` bytes, then the unmapped page N7.
    Guarded {
        readable: usize,
    },
    /// The first `k` bytes at the end of the userfaultfd page U0, the rest
    /// in R1 and R2.
    UffdBefore {
        k: usize,
    },
    /// `j` bytes at the end of R2, the rest in the userfaultfd page U3,
    /// then the unmapped page N4.
    UffdAfter {
        j: usize,
    },
    /// `readable` bytes before N9, in the page the racing writer rewrites.
    Racy {
        readable: usize,
    },
    /// The first `k` bytes at the end of the first page of a fresh memfd
    /// of two pages (written with `pwrite()`), the rest in its second
    /// page, a hole: those bytes are zero (the call's bytes say so), and
    /// the first read of one allocates the page.
    MemfdHole {
        k: usize,
    },
    /// At the start of an untouched `MAP_SHARED|MAP_ANONYMOUS` page: an
    /// attr of zeros (size 0, read as 64) whose first read allocates the
    /// page.
    SharedPage,
}

/// The placements whose first read allocates, counted apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, PartialOrd, Ord)]
pub(super) enum Allocating {
    #[default]
    No,
    MemfdHole,
    SharedPage,
}

impl Place {
    pub(super) fn allocating(self) -> Allocating {
        match self {
            Place::MemfdHole { .. } => Allocating::MemfdHole,
            Place::SharedPage => Allocating::SharedPage,
            _ => Allocating::No,
        }
    }
}

/// Which fd the call passes as `group_fd`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Group {
    None,
    Own,
    /// The leader of thread (this + n) mod T.
    Other(usize),
    Bad,
    /// This thread's userfaultfd: an fd that is no perf event.
    NotPerf,
}

/// One drawn call; drawing has no side effect, so a call can be drawn
/// again to describe it.
#[derive(Debug, Clone)]
pub(super) struct Call {
    size: u32,
    kind: AttrKind,
    /// The bytes placed at the pointer (`Null`: none).
    pub(super) bytes: Vec<u8>,
    pub(super) place: Place,
    pub(super) pid: i32,
    pub(super) cpu: i32,
    pub(super) group: Group,
    pub(super) flags: u64,
}

impl Call {
    /// The kind of call and of difference, to sum differences up by.
    pub(super) fn class(&self, a: &Outcome, b: &Outcome) -> String {
        let reads = kernel_reads(self.size);
        let place = match self.place {
            Place::Null => "NULL".to_owned(),
            Place::Guarded { readable } if readable < reads => "guarded, cut short".to_owned(),
            Place::Guarded { .. } => "guarded".to_owned(),
            Place::UffdBefore { k } if k <= 4 => "uffd page before, k <= 4".to_owned(),
            Place::UffdBefore { k } if k <= 8 => "uffd page before, k 5..=8".to_owned(),
            Place::UffdBefore { .. } => "uffd page before, k > 8".to_owned(),
            Place::UffdAfter { j } if j == reads => "uffd page after, at the end".to_owned(),
            Place::UffdAfter { .. } => "uffd page after".to_owned(),
            Place::Racy { .. } => "racy".to_owned(),
            Place::MemfdHole { k } if k <= 4 => "memfd hole, k <= 4".to_owned(),
            Place::MemfdHole { k } if k <= 8 => "memfd hole, k 5..=8".to_owned(),
            Place::MemfdHole { k } if k == reads => "memfd hole, at the end".to_owned(),
            Place::MemfdHole { .. } => "memfd hole, k > 8".to_owned(),
            Place::SharedPage => "untouched shared page".to_owned(),
        };
        let size = match self.size {
            0 => "0",
            1..=63 => "1..=63",
            64..=136 => "64..=136",
            137..=4096 => "137..=4096",
            _ => "> 4096",
        };
        let tail = if reads > 136
            && self.bytes.len() >= reads
            && self.bytes[136..reads].iter().any(|&b| b != 0)
        {
            ", non-zero tail"
        } else {
            ""
        };
        let what = |x: u64, y: u64, name: &str| {
            if x == y {
                String::new()
            } else {
                format!(", {name} {x} -> {y}")
            }
        };
        format!(
            "[{place}, size {size}{tail}: ret {} -> {}{}{}{}]",
            a.ret,
            b.ret,
            what(a.uffd_faults, b.uffd_faults, "uffd faults"),
            what(
                u64::from(a.fail_nth_left),
                u64::from(b.fail_nth_left),
                "fail-nth left"
            ),
            if a.memory == b.memory {
                ""
            } else {
                ", memory differs"
            }
        )
    }

    pub(super) fn describe(&self) -> String {
        format!(
            "size {} {:?} attr at {:?}, pid {}, cpu {}, group {:?}, flags {:#x}",
            self.size, self.kind, self.place, self.pid, self.cpu, self.group, self.flags
        )
    }
}

/// Where the attr lies, and its size word as placed: `bytes` may grow
/// (junk after a guarded attr) or change (zeros where a hole or an
/// untouched page holds the attr, the size word's bytes among them).
fn draw_place(rng: &mut Rng, size: u32, bytes: &mut Vec<u8>) -> (Place, u32) {
    let reads = kernel_reads(size);
    let place = match rng.below(100) {
        0..=2 => Place::Null,
        3..=39 => {
            let readable = match rng.below(4) {
                0 if reads > 8 => 8 + rng.index(reads - 8),
                1 => rng.index(8),
                2 => {
                    // Junk after the last byte the kernel reads.
                    let extra = 1 + rng.index(64);
                    for _ in 0..extra {
                        bytes.push(u8::try_from(1 + rng.below(255)).expect("1..=255"));
                    }
                    reads + extra
                }
                _ => reads,
            };
            Place::Guarded { readable }
        }
        40..=55 => {
            let k = match rng.below(3) {
                // Only the type field in U0: the size word is not.
                0 => 1 + rng.index(4),
                1 => 5 + rng.index(4),
                _ => 1 + rng.index(reads.min(PAGE)),
            };
            Place::UffdBefore { k }
        }
        56..=79 => {
            let j = match rng.below(3) {
                // U3 starts exactly where the kernel stops reading.
                0 => reads,
                1 => rng.index(9),
                _ => rng.index(reads + 1),
            };
            Place::UffdAfter { j }
        }
        80..=89 => {
            let k = match rng.below(4) {
                // The size word in the hole: 0, read as 64.
                0 => 1 + rng.index(4),
                // The size word across the two pages.
                1 => 5 + rng.index(4),
                // All the kernel reads in the first page: only a longer
                // read than the kernel's would allocate the second.
                2 => reads,
                _ => 1 + rng.index(reads),
            };
            Place::MemfdHole { k }
        }
        90..=94 => Place::SharedPage,
        _ => Place::Racy {
            readable: [136, 256, 4096][rng.index(3)],
        },
    };
    let size = match place {
        // Past k, a hole reads as zeros, the size word's bytes too; the
        // kernel reads as many bytes as that size says.
        Place::MemfdHole { k } => {
            bytes[k..].fill(0);
            let size = u32::from_le_bytes(bytes[4..8].try_into().expect("4 bytes"));
            bytes.resize(kernel_reads(size), 0);
            size
        }
        Place::SharedPage => {
            *bytes = vec![0; kernel_reads(0)];
            0
        }
        _ => size,
    };
    (place, size)
}

pub(super) fn draw(rng: &mut Rng, cpus: &[u32]) -> Call {
    let size = if rng.percent(70) {
        BOUNDARY_SIZES[rng.index(BOUNDARY_SIZES.len())]
    } else {
        u32::try_from(rng.below(4098)).expect("<= 4097")
    };
    let nonzero_tail = size > 136 && rng.percent(40);
    let kind = rng.weighted(&[
        (70, AttrKind::Software),
        (10, AttrKind::OtherType),
        (20, AttrKind::RandomBytes),
    ]);
    let mut attr: Attr = attr_bytes(rng, kind);
    let reads = kernel_reads(size);
    attr.size(size).len(reads);
    if nonzero_tail && reads > 136 {
        let at = 136 + rng.index(reads - 136);
        attr.0[at] = u8::try_from(1 + rng.below(255)).expect("1..=255");
    }
    let mut bytes = attr.build();
    let (place, size) = draw_place(rng, size, &mut bytes);
    let pid = rng.weighted(&[(76, 0), (8, -1), (8, 1), (8, NO_SUCH_PID)]);
    let cpu = match rng.weighted(&[(75, 0), (20, 1), (5, 2)]) {
        0 => -1,
        1 => i32::try_from(cpus[rng.index(cpus.len())]).unwrap_or(BAD_CPU),
        _ => BAD_CPU,
    };
    let group = match rng.below(100) {
        0..=69 => Group::None,
        70..=84 => Group::Own,
        85..=89 => Group::Other(1 + rng.index(3)),
        90..=94 => Group::Bad,
        _ => Group::NotPerf,
    };
    let flags = match rng.weighted(&[(45, 0), (40, 1), (10, 2), (5, 3)]) {
        0 => 0,
        1 => PERF_FLAG_FD_CLOEXEC,
        // Any combination of FD_NO_GROUP, FD_OUTPUT, PID_CGROUP, FD_CLOEXEC.
        2 => rng.below(16),
        _ => rng.u64(),
    };
    Call {
        size,
        kind,
        bytes,
        place,
        pid,
        cpu,
        group,
        flags,
    }
}

#[cfg(test)]
mod tests {
    use super::super::STREAM_BASE;
    use super::*;

    #[test]
    fn draws_repeat_with_the_seed_and_cover_every_place() {
        let cpus = [0, 1, 2, 3];
        let mut a = Rng::new(7, STREAM_BASE + 1);
        let mut b = Rng::new(7, STREAM_BASE + 1);
        let mut places = std::collections::HashSet::new();
        for _ in 0..5000 {
            let (x, y) = (draw(&mut a, &cpus), draw(&mut b, &cpus));
            assert_eq!(x.describe(), y.describe());
            assert_eq!(x.bytes, y.bytes);
            places.insert(std::mem::discriminant(&x.place));
        }
        assert_eq!(places.len(), 7);
    }

    #[test]
    fn an_attr_in_a_hole_or_an_untouched_page_reads_as_zeros() {
        let cpus = [0, 1];
        let mut rng = Rng::new(11, STREAM_BASE + 1);
        let (mut holes, mut size_in_hole, mut shared) = (0, 0, 0);
        for _ in 0..20000 {
            let call = draw(&mut rng, &cpus);
            let size_word = u32::from_le_bytes(call.bytes[4..8].try_into().unwrap());
            match call.place {
                Place::MemfdHole { k } => {
                    holes += 1;
                    assert!((1..=call.bytes.len()).contains(&k), "{}", call.describe());
                    assert!(call.bytes[k..].iter().all(|&b| b == 0));
                    assert_eq!(call.size, size_word);
                    assert_eq!(call.bytes.len(), kernel_reads(call.size));
                    size_in_hole += usize::from(k <= 4);
                }
                Place::SharedPage => {
                    shared += 1;
                    assert_eq!((call.size, call.bytes.clone()), (0, vec![0; 64]));
                }
                _ => {}
            }
        }
        assert!(holes > 1000 && shared > 500 && size_in_hole > 100);
    }
}
