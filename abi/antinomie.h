/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Antinomie: capture of perf_event_open(2) calls into per-CPU rings that
 * user space maps from /dev/antinomie.
 *
 * The kernel checks the layouts with BUILD_BUG_ON()s.
 *
 * Conventions: fields are fixed width and naturally aligned, with no
 * implicit padding. Every structure states its own size so that it can
 * grow: records and capture items in hdr_size, bodies and the meta page in
 * a size field, ioctl arguments in _IOC_SIZE(cmd) and their size field.
 * Readers locate what follows a structure by that size, never by sizeof(),
 * and ignore trailing bytes they do not know. A field named reserved is
 * zero when the kernel writes it and must be zero when passed to it.
 * Enumerated values start at 1, so zeroed memory never holds a valid one;
 * loss reasons are array indices and start at 0.
 */
#ifndef _UAPI_LINUX_ANTINOMIE_H
#define _UAPI_LINUX_ANTINOMIE_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define ANTINOMIE_ABI_VERSION		4
/* Reads "ANTI" in a hex dump of a little-endian meta page. */
#define ANTINOMIE_MAGIC			0x49544e41U

/*
 * RINGS AND MAPPINGS
 *
 * Opening /dev/antinomie needs read-write access to the node (mode 0600,
 * owned by root, unless the administrator changes it), CAP_PERFMON or
 * CAP_SYS_ADMIN (else EPERM), and the consent of the LSMs to a CPU-wide
 * perf event on a tracepoint. One consumer has it open at a time (EBUSY),
 * unless the consumer's file was left behind: the process that mapped the
 * rings through it died (or exec'd), nothing maps them any more, and the
 * file is still open (a child inherited it, without the mappings). An
 * open then takes the device over: what the left file switched on goes
 * off as if it were released, and it fails with EBADFD (poll(): EPOLLERR
 * and EPOLLHUP) from then on. A consumer that unmaps the rings itself
 * keeps the device.
 * Each possible CPU has one ring, online or not. A consumer should map
 * the ring of every possible CPU: the device gives no notice of a CPU
 * coming online, and until some part of a ring is mapped (while any ring
 * is), that ring does not make poll() readable, and lossless mode does not
 * wait for room in it (it waits only for a ring some consumer maps).
 * ANTINOMIE_IOC_GET_INFO reports the geometry. The ring of
 * CPU n is at mmap offsets [n * mmap_stride,
 * n * mmap_stride + mmap_size), in this order:
 *
 *   0                meta page      struct antinomie_meta      read-only
 *   consumer_offset  consumer page  struct antinomie_consumer  read-write
 *   data_offset      data pages, then the same pages again     read-only
 *
 * consumer_offset is one page, data_offset two pages and mmap_size is
 * data_offset + 2 * data_size, but use the values reported. Mapping the
 * data pages twice in a row, as BPF ring buffers do, keeps every record
 * contiguous: the record at position pos starts at data_offset +
 * (pos & (data_size - 1)) and never has to be reassembled.
 *
 * A mapping must be MAP_SHARED and lie within one CPU's ring. Only the
 * consumer page may be writable, no page executable, and mprotect() cannot
 * upgrade a read-only mapping. Refused: EPERM for write or exec, EINVAL for
 * a private or out-of-range mapping, ENODEV for a CPU without a ring.
 * fork() does not copy the mappings unless madvise(MADV_DOFORK) asked it
 * to; the child then maps the same rings. Rings are zeroed when allocated,
 * so no stale kernel memory shows. They keep what no reader has read yet,
 * for a later reader, until SET_RING_SIZE replaces them; rings with nothing
 * unread (every record consumed) are freed once no file has the device
 * open, nothing maps them, capture is off and no call captured before is
 * still running, and the next open allocates new ones, positions and
 * produced from 0. Drops that no LOST record reported yet go from freed
 * rings to the next rings, which count them in lost[] and report them in
 * a LOST record before their first record on that CPU.
 *
 * MEMORY ORDERING
 *
 * A ring has one producer, the kernel, and one consumer. The producer runs
 * only in perf_event_open() on the ring's CPU, with preemption disabled
 * from its reservation to (A). Interrupts and NMIs never enter a syscall,
 * so nothing else produces on that CPU meanwhile, and the reservation
 * needs no lock and no atomic read-modify-write. Positions are
 * free-running u64 byte counts that do not wrap in practice; the record
 * at position pos sits at data offset pos & (data_size - 1).
 *
 * (A) Producer: write the whole record, then the meta counters, then
 *     smp_store_release(&meta->producer_pos, pos + size). Pairs with (B).
 * (B) Consumer: load-acquire meta->producer_pos, then read the records in
 *     [consumer_pos, producer_pos). Pairs with (A).
 * (C) Consumer: after its last read of those records' bytes, store-release
 *     the new consumer->consumer_pos. Pairs with (D). poll() compares the
 *     positions itself, so store before sleeping in it.
 * (D) Producer: smp_load_acquire(&consumer->consumer_pos) before writing
 *     into the space it frees. Pairs with (C): the producer never
 *     overwrites bytes the consumer may still be reading. The producer
 *     keeps the bound this gives (consumer_pos + data_size) and reads
 *     consumer_pos again only when the next record would cross it, so a
 *     consumer that keeps up costs no cross-CPU read per record.
 *
 * Wake-ups stay inside the kernel, between the producer and poll(), and
 * cost the producer no barrier:
 *
 * (E) poll(), finding no ring at the watermark, stores a flag "armed",
 *     then, after an RCU grace period, reads the positions again and
 *     wakes the sleepers if a ring has reached it. Pairs with (F).
 * (F) Producer: after (A), still with preemption disabled (an RCU
 *     read-side critical section), loads the flag; if set, clears it and
 *     wakes the sleepers (from irq_work) once its ring has reached the
 *     watermark. Pairs with (E): a producer that began before the grace
 *     period ends before it, so (E) sees its producer_pos; one that began
 *     after it sees the flag.
 *
 * The size word has no BUSY or DISCARD bits, unlike BPF ring buffers: with
 * a single producer a record becomes visible only at (A), once complete,
 * and it is never abandoned after reservation: the capture reads no user
 * memory, and nothing between the reservation and (A) can fail or sleep.
 *
 * The consumer position is untrusted. When read at (D) it is valid iff
 * producer_pos - consumer_pos <= data_size in u64 arithmetic, so a value
 * ahead of producer_pos or more than data_size behind it is invalid; its
 * alignment is not checked, as a misplaced value misleads only the
 * consumer. The kernel never reads the data area back, so no value can
 * make it touch memory outside the ring. While the position is invalid
 * the ring counts as full: records are dropped and counted under
 * ANTINOMIE_LOST_BAD_CONSUMER, with no warning and producer_pos unchanged.
 * The first valid value read ends this; a value is only read once the
 * space known free runs out. The kernel writes consumer_pos
 * only when it reinitialises a ring (ANTINOMIE_IOC_SET_RING_SIZE).
 */

/*
 * LOSSLESS MODE
 *
 * By default the producer never waits: a record that finds its ring full
 * is dropped and counted, and the traced call goes on at once. In lossless
 * mode, meant for test runs that compare captures call by call, a call
 * whose records would not fit waits for the consumer first, once, where
 * its ENTRY is written: before the call has had any effect (where
 * perf_copy_attr() is done reading the attr, or where the call fails on
 * its flags), in process context, with preemption enabled and no lock
 * held, never inside the reservation. It waits for room for the ENTRY,
 * its EXIT and the LOST record due before them if any, on the ring of the
 * CPU it runs on when the wait ends; the task may have moved. The EXIT
 * never waits: the room found for it is kept for it (later calls wait for
 * room beside it), and a call that moved to a full ring by then loses its
 * EXIT, counted as in the default mode. The wait ends early when the consumer
 * calls poll(), or, for a consumer that never does, at its next check, at
 * most 10 ms later.
 *
 * The wait ends, and the records that do not fit are dropped and counted
 * as in the default mode:
 *  - at the timeout, antinomie.lossless_timeout_ms milliseconds (a kernel
 *    parameter, writable in
 *    /sys/module/antinomie/parameters/lossless_timeout_ms; from 1 to
 *    ANTINOMIE_LOSSLESS_TIMEOUT_MAX_MS, half the freezer's default 20 s
 *    timeout, else EINVAL). A timeout latches the ring as stalled: no call
 *    waits on it again until its consumer position moves, so that a
 *    stopped consumer costs the traced calls one timeout per ring, not
 *    one per call;
 *  - on any pending signal: the sleep is interruptible, so SIGSTOP,
 *    ptrace, signal handlers and the cgroup v2 freezer act on a waiting
 *    task as they would without capture, and freezable, so the system
 *    freezer freezes it in place.
 * A call waits only for a ring that some consumer maps: with none (the
 * mode switched on at boot, a consumer that died), nobody waits. A task
 * whose address space maps a part of a ring never waits: it is a reader,
 * and would wait for its own reading.
 *
 * The traced call's result and side effects do not change, nor does what
 * an event the call opens on its own task counts: the wait comes before
 * the event exists. Its duration does, by the wait: an EXIT whose call
 * waited is flagged WAITED, and its duration_ns includes the wait.
 * ANTINOMIE_IOC_SET_LOSSLESS switches the mode for as long as the file
 * that did so stays open; antinomie.lossless=1 at boot switches it on
 * until an ioctl switches it off. Every ring's meta page shows the mode in
 * flags and counts the waits in waits and wait_ns.
 */
#define ANTINOMIE_META_F_LOSSLESS	(1U << 0)

/* The longest antinomie.lossless_timeout_ms may be set to. */
#define ANTINOMIE_LOSSLESS_TIMEOUT_MAX_MS	10000

/*
 * Loss reasons: indices into the lost[] arrays. RING_BROKEN: the kernel
 * found the ring's own state corrupted (a kernel bug, with a warning) and
 * switched capture off; the ring takes no more records, and those offered
 * to it until capture is off are counted here but never in a LOST record.
 */
#define ANTINOMIE_LOST_RING_FULL	0
#define ANTINOMIE_LOST_BAD_CONSUMER	1
#define ANTINOMIE_LOST_RING_BROKEN	2
/* Length of the lost[] arrays; unused slots stay 0. */
#define ANTINOMIE_LOST_NR_SLOTS		8

/**
 * struct antinomie_meta - meta page of a ring, read-only to user space
 * @magic: ANTINOMIE_MAGIC.
 * @abi_version: ANTINOMIE_ABI_VERSION of the kernel.
 * @meta_size: bytes of this structure.
 * @cpu: CPU of this ring.
 * @data_size: bytes of the data area, a power of two and a multiple of
 *	the page size.
 * @consumer_offset: offset of the consumer page in the ring's mapping.
 * @data_offset: offset of the data pages in the ring's mapping.
 * @producer_pos: end of the last complete record; see MEMORY ORDERING
 *	(A) and (B).
 * @produced: ENTRY and EXIT records written to this ring.
 * @lost: ENTRY and EXIT records dropped on this ring, indexed by
 *	ANTINOMIE_LOST_*.
 * @flags: ANTINOMIE_META_F_*, the capture mode; the same on every ring.
 * @reserved: zero.
 * @waits: calls that waited for room before they wrote their ENTRY (or
 *	dropped it, after the wait), counted on the ring of the CPU the
 *	call ran on when the wait ended; see LOSSLESS MODE.
 * @wait_ns: nanoseconds those waits took, in total.
 *
 * @produced is updated before (A), so after (B) it counts at least the
 * records up to @producer_pos. @lost is updated at each drop, which moves
 * no position. Each counter is one u64 store: read it with a relaxed
 * atomic load. All start at 0 when the ring is set up, but @lost, which
 * starts with the drops the rings before had yet to report. @flags and the
 * fields after it exist if @meta_size covers them.
 */
struct antinomie_meta {
	__u32	magic;
	__u32	abi_version;
	__u32	meta_size;
	__u32	cpu;
	__u64	data_size;
	__u64	consumer_offset;
	__u64	data_offset;
	__u64	producer_pos;
	__u64	produced;
	__u64	lost[ANTINOMIE_LOST_NR_SLOTS];
	__u32	flags;
	__u32	reserved;
	__u64	waits;
	__u64	wait_ns;
};

/**
 * struct antinomie_consumer - consumer page of a ring, writable by user
 *	space; the kernel reads nothing else from that page
 * @consumer_pos: end of the last record the consumer is done with; see
 *	MEMORY ORDERING (C) and (D).
 */
struct antinomie_consumer {
	__u64	consumer_pos;
};

/*
 * RECORDS
 *
 * A record starts at an ANTINOMIE_RECORD_ALIGN-aligned position with
 * struct antinomie_record_header; its body starts hdr_size bytes in:
 *
 *   ENTRY  struct antinomie_entry, then nr_items capture items
 *   EXIT   struct antinomie_exit, then nr_items capture items
 *   LOST   struct antinomie_lost
 *
 * The items start size bytes into the body. Each is struct
 * antinomie_capture with copied_len bytes of data at its hdr_size,
 * zero-padded so that the next item starts size bytes after it. A reader
 * skips a record type or capture kind it does not know by its size, and
 * checks that sizes nest and stay within [consumer_pos, producer_pos).
 *
 * A captured call gives one ENTRY and one EXIT with the same call_id, on
 * one ring or two, as the task can migrate between them; both go to the
 * same ring set unless that set is replaced while the call runs (see
 * ENTRY_GONE). Within a ring time_ns never decreases (see @time_ns).
 * ANTINOMIE_IOC_DISABLE stops the capture of new calls; a call that began
 * while capture was on still produces its ENTRY and its EXIT, which may
 * come long after (the call may sleep in a page fault while the kernel
 * reads its attr).
 *
 * No silent loss: a record that does not fit is dropped and counted in the
 * ring's meta lost[reason]. Before the next record written to that ring,
 * the producer writes a LOST record with the counts since the previous
 * LOST record; if that does not fit, the next record is dropped as well.
 * LOST records are not counted themselves. So per ring, each ENTRY and
 * EXIT is counted once: in meta produced (and is in the ring) or in one
 * meta lost[] slot (and is, or will be, in one LOST record, except for
 * RING_BROKEN). A drop not reported yet when its rings are freed counts
 * in the next ring's lost[] too, and its LOST record is there. The losses
 * not reported yet are meta lost[r] minus the sum of the LOST records'. A
 * call that began while capture was on always finds rings for its
 * records: rings are freed only once no such call is running, and
 * replaced ones only once the new ones are published.
 */
#define ANTINOMIE_RECORD_ALIGN		8

/*
 * CALL IDS
 *
 * The CPU that takes a call's ENTRY (written or dropped) names the call:
 *
 *   call_id = cpu << ANTINOMIE_CALL_ID_SEQ_BITS | seq
 *
 * where seq counts the calls that CPU has named, from 1, modulo
 * 2^ANTINOMIE_CALL_ID_SEQ_BITS (years of calls at any rate the syscall
 * allows). Ids are so unique across CPUs without a counter they share,
 * and consecutive for the calls one CPU names; 0 is CPU 0's id once its
 * seq wraps, not a "no call" value. They order calls only within one
 * CPU: order across CPUs by time_ns. The EXIT carries the ENTRY's id,
 * whichever ring it lands on.
 */
#define ANTINOMIE_CALL_ID_SEQ_BITS	48
#define ANTINOMIE_CALL_ID_SEQ_MASK	((1ULL << ANTINOMIE_CALL_ID_SEQ_BITS) - 1)

/* struct antinomie_record_header.type */
#define ANTINOMIE_RECORD_ENTRY		1
#define ANTINOMIE_RECORD_EXIT		2
#define ANTINOMIE_RECORD_LOST		3

/*
 * struct antinomie_record_header.flags: the call came through a compat
 * (ia32 or x32) entry, so args hold 32-bit values and pointers.
 */
#define ANTINOMIE_RECORD_F_COMPAT	(1U << 0)

/**
 * struct antinomie_record_header - start of every record
 * @size: bytes of the whole record, header included; a multiple of
 *	ANTINOMIE_RECORD_ALIGN. The next record starts @size bytes later.
 * @type: ANTINOMIE_RECORD_*.
 * @hdr_size: bytes of this header; the body starts here.
 * @flags: ANTINOMIE_RECORD_F_*.
 * @call_id: id of the call, shared by its ENTRY and EXIT; see CALL IDS.
 *	0 in LOST records.
 * @time_ns: CLOCK_MONOTONIC (initial time namespace): for an EXIT or a LOST
 *	record, read just before the record was reserved, with preemption
 *	disabled; for an ENTRY, its call's start_ns if the task has not been
 *	switched out since the call began (no other task has run on its CPU
 *	then, so no record has been written to that ring in between), else
 *	read likewise. So within a ring it never decreases.
 * @pid: thread-group id of the caller in the initial pid namespace; 0 in
 *	LOST records.
 * @tid: thread id of the caller, likewise.
 * @cpu: CPU whose ring holds the record.
 * @syscall_nr: syscall number as syscall_get_nr() reports it, unmasked:
 *	298 on x86-64, 336 from ia32, and 0x4000012a from x32 (298 with
 *	__X32_SYSCALL_BIT, 0x40000000, set; ANTINOMIE_RECORD_F_COMPAT is set
 *	too). 0 in LOST records.
 */
struct antinomie_record_header {
	__u32	size;
	__u32	type;
	__u32	hdr_size;
	__u32	flags;
	__u64	call_id;
	__u64	time_ns;
	__u32	pid;
	__u32	tid;
	__u32	cpu;
	__u32	syscall_nr;
};

/**
 * struct antinomie_entry - body of an ENTRY record, written once the kernel
 *	has read the attr: when perf_copy_attr() has read the size word and,
 *	if the size is valid, copied the attr (or failed to), before it
 *	checks the attr's members or writes a size back; when the flags are
 *	invalid, which fails the call before it reads anything, at once
 * @size: bytes of this structure; the capture items start here.
 * @nr_items: capture items that follow; perf_event_open() has one, for
 *	argument 0 (attr_uptr), whatever its status.
 * @args: the six argument words as the syscall read them from its
 *	registers: an ia32 call's 32-bit words zero-extended.
 * @start_ns: CLOCK_MONOTONIC (initial time namespace) read when the call
 *	entered perf_event_open(), before the kernel read any argument; the
 *	record's time_ns is not earlier (see there).
 */
struct antinomie_entry {
	__u32	size;
	__u32	nr_items;
	__u64	args[6];
	__u64	start_ns;
};

/* struct antinomie_capture.kind: a struct perf_event_attr. */
#define ANTINOMIE_KIND_PERF_EVENT_ATTR	1

/*
 * struct antinomie_capture.status. For PERF_EVENT_ATTR the item holds what
 * perf_copy_attr() itself read, taken from its own variables where it
 * returns from the read: the capture reads no user memory, so it cannot
 * change what the call reads, faults or allocates. With eff = the size
 * word as perf_copy_attr() read it, 0 taken as 64 (PERF_ATTR_SIZE_VER0),
 * and attr_max = sizeof(struct perf_event_attr), 136 on 6.12:
 *
 * COMPLETE:       64 <= eff <= attr_max and copy_struct_from_user()
 *                 copied the attr: copied_len = eff, the bytes as it
 *                 copied them, before perf_copy_attr() rewrites any (size
 *                 0, sample_max_stack 0, unset branch privilege bits).
 *                 The kernel reads the size word twice, for eff and then
 *                 in the copy: with a writer racing the call, the size
 *                 in the data can differ from declared_size.
 * NULL_PTR:       the pointer (as the syscall read it: an ia32 call's
 *                 32 bits) is 0 and reading its size word faulted.
 *                 The kernel reads through a NULL pointer like any
 *                 other: with a page mapped at 0 (vm.mmap_min_addr 0, or
 *                 CAP_SYS_RAWIO), the status is that of any other pointer.
 * FAULT:          a read the kernel made faulted. With SIZE_FAULT it was
 *                 the size word's, and fault_offset is 4. Otherwise
 *                 copy_struct_from_user() faulted: in its check that the
 *                 tail [attr_max, eff) is zero, which it makes first, or
 *                 in its copy of the head [0, min(eff, attr_max)). It does
 *                 not tell which, nor how far it read: copied_len and
 *                 fault_offset are 0.
 * TRUNCATED:      attr_max < eff <= PAGE_SIZE. With TAIL_ZERO the tail is
 *                 zero and the head was copied: copied_len = attr_max.
 *                 With TAIL_NONZERO copy_struct_from_user() found a
 *                 non-zero byte in the tail and copied nothing: the call
 *                 fails with E2BIG, and copied_len is 0.
 * INVALID_SIZE:   eff < 64 or eff > PAGE_SIZE. perf_copy_attr() reads
 *                 nothing more and fails with E2BIG, so copied_len = 0.
 * NOT_APPLICABLE: the kernel does not read the pointee in this call: flags
 *                 outside PERF_FLAG_ALL fail with EINVAL first.
 */
#define ANTINOMIE_STATUS_COMPLETE	1
#define ANTINOMIE_STATUS_NULL_PTR	2
#define ANTINOMIE_STATUS_FAULT		3
#define ANTINOMIE_STATUS_TRUNCATED	4
#define ANTINOMIE_STATUS_INVALID_SIZE	5
#define ANTINOMIE_STATUS_NOT_APPLICABLE	6

/*
 * struct antinomie_capture.flags. TAIL_ZERO and TAIL_NONZERO give the
 * kernel's E2BIG criterion for eff > attr_max: only a non-zero tail fails.
 * SIZE_FAULT: reading the size word itself faulted, so declared_size is 0.
 * Other bits are zero.
 */
#define ANTINOMIE_CAPTURE_F_TAIL_ZERO		(1U << 0)
#define ANTINOMIE_CAPTURE_F_TAIL_NONZERO	(1U << 1)
#define ANTINOMIE_CAPTURE_F_SIZE_FAULT		(1U << 2)

/**
 * struct antinomie_capture - header of one captured pointee
 * @size: bytes of the item: this header, the data and its padding to
 *	ANTINOMIE_RECORD_ALIGN. The next item starts @size bytes later.
 * @hdr_size: bytes of this header; the data starts here.
 * @arg: index (0-5) of the argument that points to the pointee.
 * @kind: ANTINOMIE_KIND_*, what the pointee is.
 * @status: ANTINOMIE_STATUS_*, how reading it went.
 * @flags: ANTINOMIE_CAPTURE_F_*.
 * @declared_size: the pointee's size as the kernel took it from the
 *	pointee (for an attr, eff: the u32 at offset 4, 0 taken as 64); 0
 *	when that size could not be read.
 * @copied_len: bytes of data that follow.
 * @fault_offset: with ANTINOMIE_STATUS_FAULT, the offset from the
 *	pointee's start of the first byte that could not be read, where the
 *	kernel knows it (4 with SIZE_FAULT); otherwise 0.
 * @reserved: zero.
 */
struct antinomie_capture {
	__u32	size;
	__u32	hdr_size;
	__u32	arg;
	__u32	kind;
	__u32	status;
	__u32	flags;
	__u32	declared_size;
	__u32	copied_len;
	__u32	fault_offset;
	__u32	reserved;
};

/*
 * struct antinomie_exit.flags.
 *
 * SIZE_WRITTEN: the call failed with E2BIG from the size checks of
 * perf_copy_attr(), which store sizeof(struct perf_event_attr) into
 * attr_uptr->size; required_size is the value stored, as the kernel knew
 * it (the capture reads no user memory). Without it an E2BIG came from a
 * check after perf_copy_attr(), which writes nothing there:
 * perf_event_validate_size() (a read or sample size too large), the
 * kprobe and uprobe PMUs' event_init (a function name or path that
 * strndup_user() refuses), or an LSM.
 * SIZE_STORE_FAULT: with SIZE_WRITTEN, that store faulted (perf_copy_attr()
 * ignores it): the caller's size field keeps its value, and required_size
 * is the value the kernel tried to store.
 * ATTR_COPIED: perf_copy_attr() succeeded.
 * ENTRY_LOST: this call's ENTRY was dropped, and counted in the lost[]
 * of the ring it was offered to, so a reader must not wait for it.
 * ENTRY_GONE: this call's ENTRY (or the count of its loss) went to rings
 * that were replaced (ANTINOMIE_IOC_SET_RING_SIZE) while the call ran;
 * these rings never held it, so a reader must not wait for it.
 * WAITED: in lossless mode, the call waited for room before its ENTRY;
 * duration_ns includes the wait. See LOSSLESS MODE.
 * Other bits are zero.
 */
#define ANTINOMIE_EXIT_F_SIZE_STORE_FAULT	(1U << 0)
#define ANTINOMIE_EXIT_F_SIZE_WRITTEN		(1U << 1)
#define ANTINOMIE_EXIT_F_ATTR_COPIED		(1U << 2)
#define ANTINOMIE_EXIT_F_ENTRY_LOST		(1U << 4)
#define ANTINOMIE_EXIT_F_ENTRY_GONE		(1U << 5)
#define ANTINOMIE_EXIT_F_WAITED			(1U << 6)

/**
 * struct antinomie_exit - body of an EXIT record, written when the call
 *	returns
 * @size: bytes of this structure; the capture items start here.
 * @flags: ANTINOMIE_EXIT_F_*.
 * @ret: the syscall's return value: a new fd, or a negative errno.
 * @duration_ns: this record's time_ns minus the ENTRY's start_ns,
 *	exactly, also when the ENTRY was dropped: the call's run from its
 *	entry into perf_event_open() to just before the EXIT was reserved,
 *	which includes writing the ENTRY and, with ANTINOMIE_EXIT_F_WAITED,
 *	lossless mode's wait for room before it.
 * @required_size: with ANTINOMIE_EXIT_F_SIZE_WRITTEN, the size
 *	perf_copy_attr() stored into attr_uptr->size (or tried to, with
 *	ANTINOMIE_EXIT_F_SIZE_STORE_FAULT); otherwise 0.
 * @nr_items: capture items that follow; none in ABI version 4.
 * @entry_pos: where the call's ENTRY was written in its ring, the ring of
 *	the CPU that named the call (call_id >> ANTINOMIE_CALL_ID_SEQ_BITS),
 *	or, if it was lost, where the LOST record that reports it goes (in
 *	the next rings, if these are freed first). A
 *	consumer that began reading that ring at a later position, because
 *	a consumer before it read the ENTRY (the rings outlive a consumer
 *	while they hold unread records, capture stays on or a captured call
 *	is in flight), holds no such ENTRY, and must not wait for it.
 */
struct antinomie_exit {
	__u32	size;
	__u32	flags;
	__s64	ret;
	__u64	duration_ns;
	__u32	required_size;
	__u32	nr_items;
	__u64	entry_pos;
};

/**
 * struct antinomie_lost - body of a LOST record
 * @size: bytes of this structure.
 * @reserved: zero.
 * @first_time_ns: the time_ns the first dropped record would have had.
 * @last_time_ns: likewise for the last one; the LOST record's own time_ns
 *	is not earlier.
 * @min_call_id: smallest call_id among the dropped records.
 * @max_call_id: largest call_id among them. An ENTRY without EXIT whose
 *	id is in the range of some LOST record may have lost its EXIT rather
 *	than still be running.
 * @lost: ENTRY and EXIT records dropped on this ring since the previous
 *	LOST record, indexed by ANTINOMIE_LOST_*.
 */
struct antinomie_lost {
	__u32	size;
	__u32	reserved;
	__u64	first_time_ns;
	__u64	last_time_ns;
	__u64	min_call_id;
	__u64	max_call_id;
	__u64	lost[ANTINOMIE_LOST_NR_SLOTS];
};

/*
 * IOCTLS on /dev/antinomie, type 0xA6, numbers 0x00-0x0f.
 *
 * GET_INFO and GET_COUNTERS take an extensible structure: the kernel
 * matches the command by type, number and direction, takes the caller's
 * structure size from _IOC_SIZE(cmd) (at least the size defined here),
 * writes min(that, its own size) bytes and stores that count in size.
 *
 * ENABLE, DISABLE and SET_RING_SIZE change the whole system: the caller
 * needs what opening needs (EPERM), whoever opened the file.
 * ENABLE and DISABLE switch the capture of new calls; both are idempotent.
 * Capture switched on by ENABLE through a file that has mapped a ring is
 * switched off when that file is released (its last descriptor closed), so
 * a consumer that dies leaves no capture running. Capture switched on at
 * boot (antinomie.enable=1), or through a file that maps nothing (a
 * control command that enables and exits), stays on until DISABLE; ENABLE
 * while capture is on changes nothing. ENABLE fails with EIO once a ring
 * was found corrupted (a kernel bug, with a warning in the log), until
 * SET_RING_SIZE replaces the rings.
 * GET_COUNTERS fails with ENODEV for a CPU without a ring.
 * SET_RING_SIZE takes the new data_size of every ring, a power of two and a
 * multiple of the page size (else EINVAL). The rings of all possible CPUs
 * together may take at most the antinomie.max_ring_memory module
 * parameter's bytes (an eighth of RAM by default): ENOMEM beyond. It fails
 * with EBUSY while capture is enabled or any ring is mapped, and
 * reinitialises the rings: unread records and drops not reported yet are
 * discarded (read the rings and their counters first to keep them),
 * positions and counters restart from 0, and the EXIT of a call in flight
 * lands in the new ring without its ENTRY. The new rings are allocated
 * before the old ones are freed, so that a call in flight always finds one
 * set or the other for its EXIT: rings that grow must fit the bound
 * together with the old ones (to go from one large size to a larger one,
 * shrink first); smaller ones are allocated while the old ones are held, so
 * the two take less than twice the old set for that moment. If the
 * allocation fails, the old rings stay as they were.
 * SET_LOSSLESS takes a __u32, 1 to switch lossless mode on, 0 to switch it
 * off (else EINVAL); it changes the whole system, so it needs what
 * ENABLE needs, and switching it on, which makes every user's calls wait,
 * needs CAP_SYS_ADMIN as well (EPERM). Mode switched on through a file
 * goes off when that file is released. See LOSSLESS MODE.
 * SET_SCOPE takes a struct antinomie_scope, of _IOC_SIZE(cmd) bytes, at
 * least the size defined here (else EINVAL; bytes past the ones the kernel
 * knows must be zero, else E2BIG): the workload
 * the consumer traces, a cgroup v2 directory, its descendants included.
 * Lossless mode then makes only its tasks wait; with
 * ANTINOMIE_SCOPE_F_CAPTURE, only its tasks' calls are captured, so that
 * calls outside it neither fill the rings nor take call ids. cgroup_fd -1
 * (with flags 0) clears the scope. A scope set through a file goes when
 * that file is released, even if capture outlives it (see ENABLE): the
 * capture then takes every task's calls again. EBADF: cgroup_fd is not a
 * cgroup v2 directory (an O_PATH fd of one will do); ENOENT: the cgroup
 * was removed; EINVAL: unknown flags; EOPNOTSUPP: a kernel without
 * CONFIG_CGROUPS. It needs what ENABLE needs. See SCOPE.
 * SET_WATERMARK: poll() reports EPOLLIN once some ring holds at least this
 * many unread bytes. 1, the default each open starts from, wakes on any
 * record; larger values batch wake-ups, but data below the watermark wakes
 * nobody, so use a poll() timeout for bounded latency. 0 or more than
 * data_size: EINVAL. A smaller ring size lowers it to the new data_size.
 * Above half of data_size it acts as half: a ring drops a record for want
 * of room (RING_FULL) only when more than half of it is unread, and one
 * with an invalid consumer position (BAD_CONSUMER) counts as full, so a
 * ring that drops records for either reason wakes poll(), however high
 * the watermark. (A ring found corrupted drops every record whatever its
 * fill; see ENABLE's EIO.)
 */

/*
 * struct antinomie_info.flags. ENABLED: capture of new calls is on.
 * LOSSLESS: lossless mode is on, see LOSSLESS MODE. SCOPED: a scope is
 * set (ANTINOMIE_IOC_SET_SCOPE); SCOPE_CAPTURE: with
 * ANTINOMIE_SCOPE_F_CAPTURE.
 */
#define ANTINOMIE_INFO_F_ENABLED	(1U << 0)
#define ANTINOMIE_INFO_F_LOSSLESS	(1U << 1)
#define ANTINOMIE_INFO_F_SCOPED		(1U << 2)
#define ANTINOMIE_INFO_F_SCOPE_CAPTURE	(1U << 3)

/**
 * struct antinomie_info - device geometry, from ANTINOMIE_IOC_GET_INFO
 * @size: bytes the kernel filled in.
 * @abi_version: ANTINOMIE_ABI_VERSION of the kernel.
 * @cpu_id_limit: CPU ids are below this (the kernel's nr_cpu_ids, a name
 *	that is a macro in some kernel configurations). The CPUs with a
 *	ring are those in /sys/devices/system/cpu/possible.
 * @page_size: PAGE_SIZE of the kernel, also the largest valid attr size.
 * @flags: ANTINOMIE_INFO_F_*.
 * @reserved: zero.
 * @data_size: bytes of each ring's data area.
 * @watermark: poll() threshold in bytes, see ANTINOMIE_IOC_SET_WATERMARK.
 * @mmap_stride: distance between the mmap offsets of CPU n and n + 1.
 * @mmap_size: bytes of one ring's mapping.
 * @consumer_offset: offset of the consumer page in a ring's mapping.
 * @data_offset: offset of the data pages in a ring's mapping.
 */
struct antinomie_info {
	__u32	size;
	__u32	abi_version;
	__u32	cpu_id_limit;
	__u32	page_size;
	__u32	flags;
	__u32	reserved;
	__u64	data_size;
	__u64	watermark;
	__u64	mmap_stride;
	__u64	mmap_size;
	__u64	consumer_offset;
	__u64	data_offset;
};

/**
 * struct antinomie_counters - a ring's positions and counters, from
 *	ANTINOMIE_IOC_GET_COUNTERS, for tools that do not map the rings
 * @size: bytes the kernel filled in.
 * @cpu: set by the caller: the CPU whose ring to report.
 * @producer_pos: as in struct antinomie_meta.
 * @consumer_pos: as in struct antinomie_consumer, not validated.
 * @produced: as in struct antinomie_meta.
 * @lost: as in struct antinomie_meta.
 */
struct antinomie_counters {
	__u32	size;
	__u32	cpu;
	__u64	producer_pos;
	__u64	consumer_pos;
	__u64	produced;
	__u64	lost[ANTINOMIE_LOST_NR_SLOTS];
};

/*
 * SCOPE
 *
 * A consumer that traces one workload, such as a test run, names it by a
 * cgroup v2 directory (ANTINOMIE_IOC_SET_SCOPE): a task is in the scope if
 * it is in that cgroup or in one below it, at the time of the call.
 * Lossless mode makes only the scope's tasks wait: what else runs on the
 * machine never waits for the consumer, its records being dropped and
 * counted if they do not fit. With ANTINOMIE_SCOPE_F_CAPTURE, capture too
 * is limited to the scope: the calls of other tasks are not captured at
 * all, as if capture were off for them, so that no task outside the
 * workload can fill the rings the workload's records need. A cgroup
 * removed while it is the scope holds no task any more: nothing is then
 * captured (with ANTINOMIE_SCOPE_F_CAPTURE), and nobody waits.
 */
#define ANTINOMIE_SCOPE_F_CAPTURE	(1U << 0)

/**
 * struct antinomie_scope - argument of ANTINOMIE_IOC_SET_SCOPE
 * @flags: ANTINOMIE_SCOPE_F_*.
 * @cgroup_fd: an fd of a cgroup v2 directory, or -1 for no scope.
 */
struct antinomie_scope {
	__u32	flags;
	__s32	cgroup_fd;
};

#define ANTINOMIE_IOC_MAGIC		0xA6
#define ANTINOMIE_IOC_GET_INFO		_IOR(ANTINOMIE_IOC_MAGIC, 0x00, \
					     struct antinomie_info)
#define ANTINOMIE_IOC_ENABLE		_IO(ANTINOMIE_IOC_MAGIC, 0x01)
#define ANTINOMIE_IOC_DISABLE		_IO(ANTINOMIE_IOC_MAGIC, 0x02)
#define ANTINOMIE_IOC_GET_COUNTERS	_IOWR(ANTINOMIE_IOC_MAGIC, 0x03, \
					      struct antinomie_counters)
#define ANTINOMIE_IOC_SET_RING_SIZE	_IOW(ANTINOMIE_IOC_MAGIC, 0x04, __u64)
#define ANTINOMIE_IOC_SET_WATERMARK	_IOW(ANTINOMIE_IOC_MAGIC, 0x05, __u64)
#define ANTINOMIE_IOC_SET_LOSSLESS	_IOW(ANTINOMIE_IOC_MAGIC, 0x06, __u32)
#define ANTINOMIE_IOC_SET_SCOPE		_IOW(ANTINOMIE_IOC_MAGIC, 0x07, \
					     struct antinomie_scope)

#endif /* _UAPI_LINUX_ANTINOMIE_H */
