// SPDX-License-Identifier: GPL-2.0-only
//! The `e2e` script's calls: the main thread's case list, a change of the attr
//! made with userfaultfd, the group that ends in `E2BIG`, and the pinned
//! threads on every CPU.

use std::sync::atomic::AtomicU64;

use crate::call::{
    Attr, AttrMemory, LoggedCall, CLOCK_MONOTONIC_RAW, DISABLED, EXCLUDE_HV, EXCLUDE_KERNEL, FREQ,
    GROUP_MAX_SIBLINGS, HW_BREAKPOINT_LEN_8, HW_BREAKPOINT_W, PAGE, PERF_COUNT_HW_CPU_CYCLES,
    PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_DUMMY, PERF_COUNT_SW_TASK_CLOCK, PERF_FLAG_FD_CLOEXEC,
    PERF_FORMAT_GROUP, PERF_FORMAT_ID, PERF_FORMAT_LOST, PERF_FORMAT_TOTAL_TIME_ENABLED,
    PERF_FORMAT_TOTAL_TIME_RUNNING, PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME,
    PERF_TYPE_BREAKPOINT, PERF_TYPE_HARDWARE, RESERVED_1_BIT, USE_CLOCKID, WATERMARK,
};
use crate::caller::{close, hex, Caller, Ptr};
use crate::system::{ioctl_with, uffd, Guarded};

/// A watched variable for the breakpoint case.
static BREAKPOINT_TARGET: AtomicU64 = AtomicU64::new(0);

/// The main thread's single-threaded cases: a list, long by nature.
#[allow(clippy::too_many_lines)]
pub(super) fn main_cases(c: &mut Caller) {
    let sw_clock = Attr::sw(PERF_COUNT_SW_CPU_CLOCK);
    close(c.simple("sw-cpu-clock", &sw_clock, 0));
    close(c.call("null-attr", &Ptr::Null, 0, -1, -1, 0));
    // Flags are checked before the attr is read: not applicable.
    close(c.call("invalid-flags-null", &Ptr::Null, 0, -1, -1, 1 << 20));
    close(c.simple("invalid-flags", &sw_clock, (1 << 20) | PERF_FLAG_FD_CLOEXEC));
    // The pointer is the first byte of an unmapped page.
    close(c.call(
        "attr-unmapped",
        &Ptr::Guarded {
            bytes: sw_clock.build(),
            readable: 0,
        },
        0,
        -1,
        -1,
        0,
    ));
    // Only bytes 0..6 are mapped: the size word straddles the guard page.
    close(c.call(
        "attr-size-word-unmapped",
        &Ptr::Guarded {
            bytes: sw_clock.build(),
            readable: 6,
        },
        0,
        -1,
        -1,
        0,
    ));
    // size = 136 but only 40 bytes are mapped before the guard page.
    close(c.call(
        "attr-crosses-into-unmapped",
        &Ptr::Guarded {
            bytes: sw_clock.build(),
            readable: 40,
        },
        0,
        -1,
        -1,
        0,
    ));

    // Sizes: the attr buffer is exactly what the size says the kernel may
    // read (64 for size 0), ending at the guard page, so a capture that
    // read one byte more would fault.
    for size in [0u32, 64, 72, 80, 96, 104, 109, 112, 120, 128, 136] {
        let mut a = sw_clock.clone();
        if size == 109 {
            // sample_max_stack's low byte is the last byte: 1 of 2 captured.
            a.u16_at(108, 0x10);
        }
        let len = if size == 0 { 64 } else { size as usize };
        a.size(size).len(len);
        close(c.simple(&format!("size-{size}"), &a, 0));
    }
    // Below VER0: E2BIG, the kernel writes 136 back.
    close(c.simple("size-1", sw_clock.clone().size(1), 0));
    let mut s63 = sw_clock.clone();
    s63.size(63).len(8);
    close(c.simple("size-63-only-size-word-mapped", &s63, 0));
    // Beyond 136: the tail must be zero.
    close(c.simple("size-137-zero-tail", sw_clock.clone().size(137).len(137), 0));
    let mut nz = sw_clock.clone();
    nz.size(200).len(200);
    nz.0[160] = 0x5a;
    close(c.simple("size-200-nonzero-tail", &nz, 0));
    close(c.call(
        "size-200-tail-unmapped",
        &Ptr::Guarded {
            bytes: sw_clock.clone().size(200).len(200).build(),
            readable: 150,
        },
        0,
        -1,
        -1,
        0,
    ));
    close(c.simple(
        "size-4096-zero-tail",
        sw_clock.clone().size(4096).len(4096),
        0,
    ));
    close(c.simple("size-4097", sw_clock.clone().size(4097), 0));
    // A reserved bit: perf_copy_attr() copies, then rejects it (EINVAL).
    close(c.simple(
        "reserved-bit-38",
        sw_clock.clone().or_flags(RESERVED_1_BIT),
        0,
    ));

    // Groups.
    let mut leader = Attr::sw(PERF_COUNT_SW_TASK_CLOCK);
    leader.read_format(PERF_FORMAT_GROUP | PERF_FORMAT_ID);
    let l = c.simple("group-leader", &leader, 0);
    let mut member = Attr::sw(PERF_COUNT_SW_CPU_CLOCK);
    member.read_format(PERF_FORMAT_ID).flags(EXCLUDE_KERNEL);
    let gfd = i32::try_from(l).unwrap_or(-1);
    let m1 = c.call(
        "group-member",
        &Ptr::at_page_end(member.build()),
        0,
        -1,
        gfd,
        0,
    );
    let m2 = c.call(
        "group-member-cloexec",
        &Ptr::at_page_end(member.build()),
        0,
        -1,
        gfd,
        PERF_FLAG_FD_CLOEXEC,
    );
    for fd in [m2, m1, l] {
        close(fd);
    }
    close(c.simple("cloexec", &sw_clock, PERF_FLAG_FD_CLOEXEC));
    close(c.call(
        "bad-group-fd",
        &Ptr::at_page_end(member.build()),
        0,
        -1,
        9999,
        0,
    ));
    close(c.call(
        "no-such-pid",
        &Ptr::at_page_end(sw_clock.build()),
        999_999,
        -1,
        -1,
        0,
    ));
    close(c.call(
        "cpu-out-of-range",
        &Ptr::at_page_end(sw_clock.build()),
        -1,
        4096,
        -1,
        0,
    ));
    close(c.simple("unknown-type", &Attr::new(999, 0), 0));
    // With a dynamic PMU's type, config1 and config2 read as kprobe_func,
    // uprobe_path, probe_offset, … The filter's end-to-end test names 999
    // `kprobe` and 998 `uprobe` (`reader show --pmu`); the guest has neither.
    let mut probe = Attr::new(998, 0);
    probe.u64_at(56, 0x1000).u64_at(64, 0x10);
    close(c.simple("probe-words", &probe, 0));
    // The ints are the low 32 bits of their registers: -1 zero-extended,
    // and -1 under garbage upper bits, are still -1.
    close(c.call_words(
        "int-args-zero-extended",
        &Ptr::at_page_end(sw_clock.build()),
        [0, 0xffff_ffff, 0xffff_ffff],
        0,
    ));
    close(c.call_words(
        "int-args-upper-garbage",
        &Ptr::at_page_end(sw_clock.build()),
        [
            0xdead_beef_0000_0000,
            0x1234_5678_ffff_ffff,
            0xffff_ffff_ffff_ffff,
        ],
        0,
    ));
    let mut cycles = Attr::new(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
    cycles.flags(DISABLED | EXCLUDE_KERNEL);
    close(c.simple("hw-cpu-cycles", &cycles, 0));

    // Union aliases: sample_freq (freq=1), wakeup_watermark (watermark=1),
    // bp_addr/bp_len (breakpoint), clockid.
    let mut freq = Attr::sw(PERF_COUNT_SW_CPU_CLOCK);
    freq.sample(1000, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME)
        .or_flags(FREQ | WATERMARK)
        .u32_at(48, 4096);
    close(c.simple("sample-freq-watermark", &freq, PERF_FLAG_FD_CLOEXEC));
    let mut period = Attr::sw(PERF_COUNT_SW_TASK_CLOCK);
    period.sample(100_000, PERF_SAMPLE_IP).u32_at(48, 3);
    close(c.simple("sample-period-wakeup-events", &period, 0));
    let mut bp = Attr::new(PERF_TYPE_BREAKPOINT, 0);
    bp.flags(DISABLED | EXCLUDE_KERNEL | EXCLUDE_HV)
        .sample(1, 0)
        .u32_at(52, HW_BREAKPOINT_W)
        .u64_at(56, BREAKPOINT_TARGET.as_ptr() as u64)
        .u64_at(64, HW_BREAKPOINT_LEN_8);
    close(c.simple("breakpoint-w8", &bp, 0));
    let mut clk = Attr::sw(PERF_COUNT_SW_DUMMY);
    clk.or_flags(USE_CLOCKID)
        .u32_at(92, u32::from_le_bytes(CLOCK_MONOTONIC_RAW.to_le_bytes()));
    close(c.simple("clockid-monotonic-raw", &clk, 0));
    clk.u32_at(92, u32::from_le_bytes((-5i32).to_le_bytes()));
    close(c.simple("clockid-negative", &clk, 0));
}

/// User memory changed during the call, after the kernel read it, made
/// deterministic with userfaultfd: the attr's first 40 bytes end page A,
/// the rest starts page B, which is registered for missing-page faults.
/// `perf_copy_attr()`'s copy reads A, then faults on B, and the handler
/// thread changes `config` in A (`CPU_CLOCK` to `TASK_CLOCK`) before it
/// fills B; the copy goes on from B. So the kernel used the old `config`,
/// and the capture, which is the kernel's own copy (there is one read of
/// the attr, the kernel's), must hold exactly what was passed, logged as
/// the memory at the call, not the changed bytes.
/// `sample_max_stack` is non-zero so that the kernel's copy, taken before
/// `perf_copy_attr()` replaces a zero one, is the bytes passed, and so
/// that a filter can find this call.
pub(super) fn change_during_the_call(c: &mut Caller) -> Result<(), String> {
    const IN_A: usize = 40;
    let mut attr = Attr::sw(PERF_COUNT_SW_CPU_CLOCK);
    attr.u16_at(108, 0x10);
    let before = attr.build();

    // SAFETY: userfaultfd(2) takes flags only.
    let raw = unsafe { libc::syscall(libc::SYS_userfaultfd, libc::O_CLOEXEC) };
    let fd = i32::try_from(raw)
        .ok()
        .filter(|fd| *fd >= 0)
        .ok_or_else(|| format!("userfaultfd: {}", std::io::Error::last_os_error()))?;
    // SAFETY: fd is a new descriptor nothing else owns.
    let owned = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    let mut api = uffd::Api {
        api: uffd::API,
        features: 0,
        ioctls: 0,
    };
    // SAFETY: UFFDIO_API takes a struct uffdio_api.
    unsafe { ioctl_with(fd, uffd::IOC_API, &mut api) }?;

    // Pages A and B, then the guard page; nothing touches B before the call.
    let mapping = Guarded::new(2 * PAGE);
    let page_b = mapping.base as usize + PAGE;
    let attr_addr = page_b - IN_A;
    // SAFETY: the IN_A bytes before page B are in page A, mapped read-write.
    unsafe { std::ptr::copy_nonoverlapping(before.as_ptr(), attr_addr as *mut u8, IN_A) };
    let mut register = uffd::Register {
        start: page_b as u64,
        len: PAGE as u64,
        mode: uffd::MODE_MISSING,
        ioctls: 0,
    };
    // SAFETY: UFFDIO_REGISTER takes a struct uffdio_register; page B is
    // part of `mapping`.
    unsafe { ioctl_with(fd, uffd::IOC_REGISTER, &mut register) }?;
    let mut b_contents = vec![0u8; PAGE];
    b_contents[..before.len() - IN_A].copy_from_slice(&before[IN_A..]);

    let mut seen = before[..IN_A].to_vec();
    seen.extend_from_slice(&b_contents);
    let handler = std::thread::spawn(move || -> Result<(), String> {
        // SAFETY: PageFault is plain data; zeroed is a valid value.
        let mut msg: uffd::PageFault = unsafe { std::mem::zeroed() };
        // SAFETY: msg is 32 writable bytes; fd stays open until the join.
        let n = unsafe { libc::read(fd, std::ptr::from_mut(&mut msg).cast(), 32) };
        if n != 32 || msg.event != uffd::EVENT_PAGEFAULT {
            return Err(format!(
                "userfaultfd read {n} bytes, event {:#x}: {}",
                msg.event,
                std::io::Error::last_os_error()
            ));
        }
        if msg.address & !(PAGE as u64 - 1) != page_b as u64 {
            return Err(format!("fault at {:#x}, not in page B", msg.address));
        }
        // SAFETY: config (bytes 8..16 of the attr) lies in page A, which
        // is mapped read-write; the kernel's copy has already read it.
        unsafe {
            std::ptr::write_unaligned(
                (attr_addr + 8) as *mut u64,
                PERF_COUNT_SW_TASK_CLOCK.to_le(),
            );
        }
        let mut copy = uffd::Copy {
            dst: page_b as u64,
            src: b_contents.as_ptr() as u64,
            len: PAGE as u64,
            mode: 0,
            copy: 0,
        };
        // SAFETY: UFFDIO_COPY takes a struct uffdio_copy; src is a page of
        // b_contents, dst the registered page B.
        unsafe { ioctl_with(fd, uffd::IOC_COPY, &mut copy) }?;
        if usize::try_from(copy.copy).ok() != Some(PAGE) {
            return Err(format!("UFFDIO_COPY copied {}", copy.copy));
        }
        Ok(())
    });

    let memory = AttrMemory {
        hex: hex(&seen),
        readable: seen.len(),
        page_offset: attr_addr % PAGE,
    };
    let any = u64::MAX; // -1 as a register word
                        // SAFETY: the attr's readable bytes run to the guard page of
                        // `mapping`; reading page B faults into `handler`, which fills it.
    let ret = unsafe {
        c.issue(
            "changed-during-the-call-uffd",
            attr_addr as *mut u8,
            Some(memory),
            [0, any, any],
            0,
        )
    };
    let fault_served = handler
        .join()
        .map_err(|_| "the userfaultfd handler panicked".to_owned())?;
    drop(owned);
    fault_served?;
    close(ret);
    if ret < 0 {
        return Err(format!("changed-during-the-call-uffd failed with {ret}"));
    }
    Ok(())
}

/// A group leader whose `read_format` makes `read()` of the group grow by
/// 24 bytes per member: 8 (`GROUP`) + 16 (`TOTAL_TIME_*`) + 24 per event
/// (value, `ID`, `LOST`). `perf_event_validate_size()` refuses a group
/// whose read size exceeds 16 KiB: adding the sibling that would make
/// `nr_siblings + 2` members reach 682 (24 + 24 * 682 = 16392 > 16384)
/// fails with `E2BIG` after `perf_copy_attr()` succeeded, so the kernel
/// writes no size back. Siblings are VER0 attrs (64 bytes) to keep the
/// records small; the one expected to fail has size 128 (VER7), so that
/// the size read back (128) tells "not written" apart from 136.
pub(super) fn big_group(c: &mut Caller) -> Result<(), String> {
    let mut leader = Attr::sw(PERF_COUNT_SW_CPU_CLOCK);
    leader.read_format(
        PERF_FORMAT_GROUP
            | PERF_FORMAT_ID
            | PERF_FORMAT_LOST
            | PERF_FORMAT_TOTAL_TIME_ENABLED
            | PERF_FORMAT_TOTAL_TIME_RUNNING,
    );
    let l = c.simple("big-group-leader", &leader, PERF_FLAG_FD_CLOEXEC);
    if l < 0 {
        return Err(format!("big-group-leader failed with {l}"));
    }
    let gfd = i32::try_from(l).expect("fd fits in i32");
    let mut sibling = Attr::sw(PERF_COUNT_SW_CPU_CLOCK);
    sibling.size(64).len(64);
    let mut last = sibling.clone();
    last.size(128).len(128);
    let mut fds = vec![l];
    let mut result = Err(format!(
        "no E2BIG after {GROUP_MAX_SIBLINGS} siblings of the big group"
    ));
    for n in 1..=GROUP_MAX_SIBLINGS {
        // 24 + 24 * (siblings + 1 + 1) > 16384 from 680 siblings on.
        let (case, attr) = if n == 681 {
            ("big-group-e2big-sibling", &last)
        } else {
            ("big-group-sibling", &sibling)
        };
        let fd = c.call(
            case,
            &Ptr::at_page_end(attr.build()),
            0,
            -1,
            gfd,
            PERF_FLAG_FD_CLOEXEC,
        );
        if fd >= 0 {
            fds.push(fd);
            continue;
        }
        result = if fd == -i64::from(libc::E2BIG) && n == 681 {
            Ok(())
        } else {
            Err(format!(
                "big group: sibling {n} failed with {fd}, expected E2BIG at 681"
            ))
        };
        break;
    }
    for fd in fds.into_iter().rev() {
        close(fd);
    }
    result
}

/// Per CPU, one thread pinned to it issuing a few calls.
pub(super) fn per_cpu_cases(script: &'static str, script_id: u64, cpus: &[u32]) -> Vec<LoggedCall> {
    let handles: Vec<_> = cpus
        .iter()
        .enumerate()
        .map(|(i, &cpu)| {
            std::thread::spawn(move || {
                let thread = u32::try_from(i + 1).expect("few threads");
                let mut c = Caller::new(script, script_id, thread, Some(cpu));
                let clock = Attr::sw(PERF_COUNT_SW_TASK_CLOCK);
                close(c.simple("thread-task-clock", &clock, PERF_FLAG_FD_CLOEXEC));
                let mut wide = Attr::sw(PERF_COUNT_SW_CPU_CLOCK);
                wide.flags(DISABLED);
                close(c.call(
                    "thread-cpu-wide",
                    &Ptr::at_page_end(wide.build()),
                    -1,
                    i32::try_from(cpu).unwrap_or(-1),
                    -1,
                    0,
                ));
                close(c.simple("thread-size-1", clock.clone().size(1), 0));
                close(c.call("thread-null-attr", &Ptr::Null, 0, -1, -1, 0));
                c.records
            })
        })
        .collect();
    handles
        .into_iter()
        .flat_map(|h| h.join().expect("a workload thread panicked"))
        .collect()
}
