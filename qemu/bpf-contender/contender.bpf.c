// SPDX-License-Identifier: GPL-2.0-only
/*
 * The BPF contender: a tracer of perf_event_open(2) written the way a BPF
 * tool would be (perf trace's augmented_raw_syscalls.bpf.c reads the attr
 * by its own size field at sys_enter the same way), so that capture's cost
 * and fidelity are measured against it (scripts/bench.sh, BENCHMARKS.md).
 * Two placements, one loaded at a time (antinomie-bpf --variant):
 *   tp   the syscall tracepoints syscalls:sys_{enter,exit}_perf_event_open
 *   raw  the raw tracepoints sys_enter/sys_exit, filtered by syscall number
 * Records go to one BPF ring buffer; a failed reservation is counted, per
 * CPU, so that produced = consumed + lost.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "contender.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	/* Set by the consumer before loading (--ring-size). */
	__uint(max_entries, 1 << 22);
} records SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CONTENDER_NR_COUNTS);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

/*
 * The consumer's own calls are not traced (perf trace filters itself out
 * the same way, through a map too): attaching a tracepoint program opens a
 * perf event. Its tgid, in slot 0, is set by the consumer after loading
 * and before attaching. A map, not a const volatile global: libbpf
 * creates the .rodata map only after probing for global data with a
 * socket filter program, which a kernel without CONFIG_NET (the bench
 * kernels) cannot load.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} consumer SEC(".maps");

static __always_inline int is_consumer(__u64 pid_tgid)
{
	__u32 slot = 0;
	__u32 *tgid = bpf_map_lookup_elem(&consumer, &slot);

	return tgid && pid_tgid >> 32 == *tgid;
}

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&counts, &which);

	/* Per-CPU slot, and a BPF program is not preempted on its CPU. */
	if (c)
		*c += 1;
}

/* The record, or NULL (counted lost) when the ring buffer is full. */
static __always_inline void *reserve(__u64 size)
{
	void *r;

	count(CONTENDER_COUNT_PRODUCED);
	r = bpf_ringbuf_reserve(&records, size, 0);
	if (!r)
		count(CONTENDER_COUNT_LOST);
	return r;
}

static __always_inline void fill_header(struct contender_header *h, __u32 size, __u32 type,
					__u64 pid_tgid)
{
	h->size = size;
	h->type = type;
	h->time_ns = bpf_ktime_get_ns();
	h->pid = pid_tgid >> 32;
	h->tid = (__u32)pid_tgid;
	h->cpu = bpf_get_smp_processor_id();
	h->flags = 0;
}

/* The attr at args[0]: its size word, then min(size, 136) bytes. */
static __always_inline void read_attr(struct contender_entry *e)
{
	const void *uattr = (const void *)e->args[0];
	__u32 size = 0, len;
	long err;

	e->declared_size = 0;
	e->copied_len = 0;
	e->read_error = 0;
	if (!uattr) {
		e->status = CONTENDER_STATUS_NULL_PTR;
		return;
	}
	/* perf_event_attr.size is the second __u32. */
	err = bpf_probe_read_user(&size, sizeof(size), uattr + 4);
	if (err) {
		e->status = CONTENDER_STATUS_FAULT;
		e->read_error = err;
		e->h.flags |= CONTENDER_F_SIZE_FAULT;
		return;
	}
	e->declared_size = size;
	len = size ? size : CONTENDER_ATTR_VER0;
	e->status = CONTENDER_STATUS_COMPLETE;
	if (len > CONTENDER_ATTR_MAX) {
		len = CONTENDER_ATTR_MAX;
		e->status = CONTENDER_STATUS_TRUNCATED;
	}
	err = bpf_probe_read_user(e->attr, len, uattr);
	if (err) {
		e->status = CONTENDER_STATUS_FAULT;
		e->read_error = err;
		return;
	}
	e->copied_len = len;
}

static __always_inline void record_entry(const __u64 *args)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct contender_entry *e;

	if (is_consumer(pid_tgid))
		return;
	e = reserve(sizeof(*e));
	if (!e)
		return;
	fill_header(&e->h, sizeof(*e), CONTENDER_ENTRY, pid_tgid);
	for (int i = 0; i < 6; i++)
		e->args[i] = args[i];
	read_attr(e);
	bpf_ringbuf_submit(e, 0);
}

static __always_inline void record_exit(__s64 ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct contender_exit *x;

	if (is_consumer(pid_tgid))
		return;
	x = reserve(sizeof(*x));
	if (!x)
		return;
	fill_header(&x->h, sizeof(*x), CONTENDER_EXIT, pid_tgid);
	x->ret = ret;
	bpf_ringbuf_submit(x, 0);
}

/*
 * The syscall tracepoints' records (events/syscalls/sys_*_perf_event_open/format).
 * sys_enter carries the syscall's five declared arguments, not a sixth
 * register; reading past the record's end makes the kernel refuse to
 * attach the program (-EACCES: its context offset beyond the event's).
 */
struct syscall_enter_event {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__u64 args[5];
};

struct syscall_exit_event {
	__u64 common;
	__s32 nr;
	__u32 pad;
	__s64 ret;
};

SEC("tp/syscalls/sys_enter_perf_event_open")
int tp_enter(struct syscall_enter_event *ctx)
{
	/* The sixth word is not in the tracepoint: recorded as 0. */
	__u64 args[6] = { 0 };

	for (int i = 0; i < 5; i++)
		args[i] = ctx->args[i];
	record_entry(args);
	return 0;
}

SEC("tp/syscalls/sys_exit_perf_event_open")
int tp_exit(struct syscall_exit_event *ctx)
{
	record_exit(ctx->ret);
	return 0;
}

/*
 * x86-64's struct pt_regs from r10 (offset 56) to di (112): the argument
 * registers are di, si, dx, r10, r8, r9, read in one bpf_probe_read_kernel
 * (without BTF a raw tracepoint sees the registers only through a read).
 */
struct syscall_regs {
	__u64 r10, r9, r8, ax, cx, dx, si, di, orig_ax;
};
#define SYSCALL_REGS_OFFSET	56

SEC("raw_tp/sys_enter")
int raw_enter(struct bpf_raw_tracepoint_args *ctx)
{
	struct syscall_regs regs;
	__u64 args[6];

	if (ctx->args[1] != CONTENDER_NR_PERF_EVENT_OPEN)
		return 0;
	if (bpf_probe_read_kernel(&regs, sizeof(regs), (void *)ctx->args[0] + SYSCALL_REGS_OFFSET)) {
		/* A call not recorded: made and lost, never silent. */
		count(CONTENDER_COUNT_PRODUCED);
		count(CONTENDER_COUNT_LOST);
		return 0;
	}
	args[0] = regs.di;
	args[1] = regs.si;
	args[2] = regs.dx;
	args[3] = regs.r10;
	args[4] = regs.r8;
	args[5] = regs.r9;
	record_entry(args);
	return 0;
}

SEC("raw_tp/sys_exit")
int raw_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 nr;

	/* sys_exit carries (regs, ret): the number is regs->orig_ax. */
	if (bpf_probe_read_kernel(&nr, sizeof(nr),
				  (void *)ctx->args[0] + SYSCALL_REGS_OFFSET + 8 * 8)) {
		/* Whether this exit was due a record is unknown: counted. */
		count(CONTENDER_COUNT_UNREADABLE);
		return 0;
	}
	if (nr != CONTENDER_NR_PERF_EVENT_OPEN)
		return 0;
	record_exit(ctx->args[1]);
	return 0;
}
