/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The BPF contender's records, shared by the BPF program (contender.bpf.c)
 * and its consumer (antinomie-bpf.c), and the layout of the file the
 * consumer writes: a contender_file_header, then the records as the ring
 * buffer delivered them, each starting with its contender_header, then a
 * contender_counts per possible CPU.
 *
 * What it records is what capture's ENTRY and EXIT record, as far as a
 * tracer at the syscall tracepoints can: the argument words (the raw
 * tracepoint's six registers; the syscall tracepoint carries the five
 * declared arguments, the sixth word is then 0), the caller, a timestamp, the attr's size word and min(size, 136) bytes of
 * the attr (size 0 read as PERF_ATTR_SIZE_VER0), and a status; at exit the
 * return value. The duration is the exit's time less its entry's, paired
 * by tid in the decoder, as perf trace pairs them: one hash map update and
 * delete per call less in the traced path.
 */
#ifndef ANTINOMIE_BPF_CONTENDER_H
#define ANTINOMIE_BPF_CONTENDER_H

#include <linux/types.h>

/* 6.12's sizeof(struct perf_event_attr) (PERF_ATTR_SIZE_VER8). */
#define CONTENDER_ATTR_MAX	136
#define CONTENDER_ATTR_VER0	64
/* x86-64's syscall number of perf_event_open(2), for the raw tracepoints. */
#define CONTENDER_NR_PERF_EVENT_OPEN	298

#define CONTENDER_FILE_MAGIC	0x31465042544e41ULL /* "ANTBPF1" */

#define CONTENDER_ENTRY	1
#define CONTENDER_EXIT	2
/* Written by the consumer after the last record, one per possible CPU. */
#define CONTENDER_COUNTS	3

/* The entry's status: the same numbers as ANTINOMIE_STATUS_* (abi/). */
#define CONTENDER_STATUS_COMPLETE	1 /* all min(size, 136) bytes read */
#define CONTENDER_STATUS_NULL_PTR	2 /* attr pointer NULL: nothing read */
#define CONTENDER_STATUS_FAULT		3 /* a read failed: read_error says */
#define CONTENDER_STATUS_TRUNCATED	4 /* size > 136: the first 136 read */

/* The entry's flags. */
#define CONTENDER_F_SIZE_FAULT	(1U << 0) /* the size word itself unreadable */

/* Counters, one per CPU each (a BPF_MAP_TYPE_PERCPU_ARRAY). */
#define CONTENDER_COUNT_PRODUCED	0 /* records the program made */
#define CONTENDER_COUNT_LOST		1 /* of those, reservations that failed */
#define CONTENDER_COUNT_UNREADABLE	2 /* raw sys_exit: regs unreadable */
#define CONTENDER_NR_COUNTS		3

struct contender_file_header {
	__u64 magic;
	__u32 header_size;
	__u32 attr_max;
};

struct contender_header {
	__u32 size;	/* of the whole record */
	__u32 type;	/* CONTENDER_ENTRY or CONTENDER_EXIT */
	__u64 time_ns;	/* bpf_ktime_get_ns() */
	__u32 pid;
	__u32 tid;
	__u32 cpu;
	__u32 flags;
};

struct contender_entry {
	struct contender_header h;
	__u64 args[6];
	__u32 declared_size;	/* the attr's size word as read */
	__u32 copied_len;	/* bytes of attr[] read */
	__u32 status;
	__s32 read_error;	/* of the failed bpf_probe_read_user, else 0 */
	__u8 attr[CONTENDER_ATTR_MAX];
};

struct contender_exit {
	struct contender_header h;
	__s64 ret;
};

/* h.cpu's counters when the programs were detached: records made there,
 * and of those, lost (the rest are in the file). */
struct contender_counts {
	struct contender_header h;
	__u64 produced;
	__u64 lost;
};

#endif
