// SPDX-License-Identifier: GPL-2.0-only
/*
 * antinomie-check: a quick raw-ABI check of the capture, in the guest.
 *
 * Opens /dev/antinomie, maps every CPU's ring, checks the device's refusals
 * (second open, capability, writable/executable/private mappings,
 * mprotect upgrades, SET_RING_SIZE while busy), then issues a table of
 * perf_event_open(2) calls twice: with capture off and with it on. Both
 * runs must give the same results and leave the same user memory; the
 * second must yield, for every call, an ENTRY and an EXIT record with the
 * expected statuses and flags. Also checks that poll() wakes up for a call
 * made while it sleeps, and that no record was lost.
 *
 * usage: antinomie-check             the checks above
 *        antinomie-check --boot SIZE  capture was enabled on the command
 *                                     line with SIZE-byte rings: check that
 *                                     the rings already hold earlier calls
 * Prints every record it checks; exits 0 if all is well.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/perf_event.h>

#include "../../abi/antinomie.h"

#define ATTR_MAX	136u	/* sizeof(struct perf_event_attr) on 6.12 */
#define MAX_CPUS	64
#define MAX_RECORDS	4096

static int failures;
static long page;

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("antinomie-check: FAIL ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	failures++;
}

#define CHECK(cond, ...) do { if (!(cond)) fail(__VA_ARGS__); } while (0)

static void die(const char *what)
{
	printf("antinomie-check: FAIL %s: %s\n", what, strerror(errno));
	exit(2);
}

struct ring {
	bool mapped;
	struct antinomie_meta *meta;
	struct antinomie_consumer *consumer;
	uint8_t *data;
};

static struct antinomie_info info;
static struct ring rings[MAX_CPUS];
static int nr_rings;

/* A record, copied out of its ring, and where it was there. */
struct rec {
	int cpu;
	uint64_t pos;
	uint32_t size;
	uint8_t bytes[512];
};

static struct rec recs[MAX_RECORDS];
static int nr_recs;

static const struct antinomie_record_header *rec_hdr(const struct rec *r)
{
	return (const void *)r->bytes;
}

static const void *rec_body(const struct rec *r)
{
	return r->bytes + rec_hdr(r)->hdr_size;
}

static void map_rings(int fd)
{
	for (unsigned int cpu = 0; cpu < info.cpu_id_limit && cpu < MAX_CPUS; cpu++) {
		off_t off = (off_t)cpu * info.mmap_stride;
		struct ring *r = &rings[cpu];
		void *all, *cons;

		all = mmap(NULL, info.mmap_size, PROT_READ, MAP_SHARED, fd, off);
		if (all == MAP_FAILED) {
			if (errno == ENODEV)
				continue;	/* not a possible CPU */
			die("mmap of a ring");
		}
		cons = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			    off + info.consumer_offset);
		if (cons == MAP_FAILED)
			die("mmap of a consumer page");
		r->mapped = true;
		r->meta = all;
		r->consumer = cons;
		r->data = (uint8_t *)all + info.data_offset;
		nr_rings++;
		CHECK(r->meta->magic == ANTINOMIE_MAGIC, "cpu%u: magic %#x", cpu, r->meta->magic);
		CHECK(r->meta->abi_version == ANTINOMIE_ABI_VERSION, "cpu%u: abi version", cpu);
		CHECK(r->meta->cpu == cpu, "cpu%u: meta cpu %u", cpu, r->meta->cpu);
		CHECK(r->meta->data_size == info.data_size, "cpu%u: data_size", cpu);
	}
}

/* Read every ring from consumer_pos to producer_pos, as (B) and (C) say. */
static void drain(bool keep)
{
	for (int cpu = 0; cpu < MAX_CPUS; cpu++) {
		struct ring *r = &rings[cpu];
		uint64_t prod, cons;

		if (!r->mapped)
			continue;
		prod = __atomic_load_n(&r->meta->producer_pos, __ATOMIC_ACQUIRE);	/* (B) */
		cons = r->consumer->consumer_pos;
		while (cons < prod) {
			const struct antinomie_record_header *h =
				(const void *)(r->data + (cons & (info.data_size - 1)));

			if (h->size < sizeof(*h) || h->size % 8 || cons + h->size > prod) {
				fail("cpu%d: bad record size %u at %llu", cpu, h->size,
				     (unsigned long long)cons);
				cons = prod;
				break;
			}
			if (keep && nr_recs < MAX_RECORDS && h->size <= sizeof(recs[0].bytes)) {
				recs[nr_recs].cpu = cpu;
				recs[nr_recs].pos = cons;
				recs[nr_recs].size = h->size;
				memcpy(recs[nr_recs].bytes, h, h->size);
				nr_recs++;
			}
			cons += h->size;
		}
		__atomic_store_n(&r->consumer->consumer_pos, cons, __ATOMIC_RELEASE);	/* (C) */
	}
}

static const char *status_name(uint32_t s)
{
	static const char *const names[] = {
		"?", "COMPLETE", "NULL_PTR", "FAULT", "TRUNCATED", "INVALID_SIZE",
		"NOT_APPLICABLE",
	};

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static void print_rec(const struct rec *r)
{
	const struct antinomie_record_header *h = rec_hdr(r);

	if (h->type == ANTINOMIE_RECORD_ENTRY) {
		const struct antinomie_entry *e = rec_body(r);
		const struct antinomie_capture *c = (const void *)((const uint8_t *)e + e->size);

		printf("  cpu%d ENTRY id=%llu pos=%llu pid=%u tid=%u nr=%u t=%llu start=%llu"
		       " args=[%#llx, %lld, %lld, %lld, %#llx, %#llx]"
		       " attr{%s flags=%#x declared=%u copied=%u fault_offset=%u}\n",
		       r->cpu, (unsigned long long)h->call_id, (unsigned long long)r->pos, h->pid,
		       h->tid, h->syscall_nr, (unsigned long long)h->time_ns,
		       (unsigned long long)e->start_ns, (unsigned long long)e->args[0],
		       (long long)(int)e->args[1], (long long)(int)e->args[2],
		       (long long)(int)e->args[3], (unsigned long long)e->args[4],
		       (unsigned long long)e->args[5], status_name(c->status), c->flags,
		       c->declared_size, c->copied_len, c->fault_offset);
	} else if (h->type == ANTINOMIE_RECORD_EXIT) {
		const struct antinomie_exit *x = rec_body(r);

		printf("  cpu%d EXIT  id=%llu ret=%lld duration=%lluns flags=%#x required_size=%u items=%u"
		       " entry_pos=%llu\n",
		       r->cpu, (unsigned long long)h->call_id, (long long)x->ret,
		       (unsigned long long)x->duration_ns, x->flags, x->required_size, x->nr_items,
		       (unsigned long long)x->entry_pos);
	} else if (h->type == ANTINOMIE_RECORD_LOST) {
		const struct antinomie_lost *l = rec_body(r);

		printf("  cpu%d LOST  full=%llu bad_consumer=%llu ids=%llu..%llu\n", r->cpu,
		       (unsigned long long)l->lost[ANTINOMIE_LOST_RING_FULL],
		       (unsigned long long)l->lost[ANTINOMIE_LOST_BAD_CONSUMER],
		       (unsigned long long)l->min_call_id, (unsigned long long)l->max_call_id);
	}
}

static const struct rec *find_rec(uint32_t type, uint64_t call_id)
{
	for (int i = 0; i < nr_recs; i++)
		if (rec_hdr(&recs[i])->type == type && rec_hdr(&recs[i])->call_id == call_id)
			return &recs[i];
	return NULL;
}

static long sys_perf_event_open(void *attr, int pid, int cpu, int group_fd, unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

/* The user memory of the calls: page 0 for attrs, page 1 PROT_NONE. */
static uint8_t *umem;

struct call_case {
	const char *name;
	int offset;		/* of the attr in umem; -1: NULL */
	uint32_t size;		/* attr.size */
	uint32_t nonzero_at;	/* a non-zero byte at this offset, if > 0 */
	unsigned long flags;
	int err;		/* expected errno, 0 for a new fd */
	uint32_t status, cap_flags, copied, fault_offset;
	uint32_t exit_flags, required_size;
};

#define XF_WRITTEN	ANTINOMIE_EXIT_F_SIZE_WRITTEN
#define XF_COPIED	ANTINOMIE_EXIT_F_ATTR_COPIED

static const struct call_case cases[] = {
	{ "valid software event", 0, 136, 0, PERF_FLAG_FD_CLOEXEC, 0,
	  ANTINOMIE_STATUS_COMPLETE, 0, 136, 0, XF_COPIED, 0 },
	{ "size 0 is VER0", 0, 0, 0, 0, 0,
	  ANTINOMIE_STATUS_COMPLETE, 0, 64, 0, XF_COPIED, 0 },
	{ "size 109 (half a field)", 0, 109, 0, 0, 0,
	  ANTINOMIE_STATUS_COMPLETE, 0, 109, 0, XF_COPIED, 0 },
	{ "NULL attr", -1, 0, 0, 0, EFAULT,
	  ANTINOMIE_STATUS_NULL_PTR, 0, 0, 0, 0, 0 },
	{ "invalid flags", -1, 0, 0, 1ul << 8, EINVAL,
	  ANTINOMIE_STATUS_NOT_APPLICABLE, 0, 0, 0, 0, 0 },
	{ "size 1", 0, 1, 0, 0, E2BIG,
	  ANTINOMIE_STATUS_INVALID_SIZE, 0, 0, 0, XF_WRITTEN, 136 },
	{ "size 4097", 0, 4097, 0, 0, E2BIG,
	  ANTINOMIE_STATUS_INVALID_SIZE, 0, 0, 0, XF_WRITTEN, 136 },
	{ "size 137, zero tail", 0, 137, 0, 0, 0,
	  ANTINOMIE_STATUS_TRUNCATED, ANTINOMIE_CAPTURE_F_TAIL_ZERO, 136, 0, XF_COPIED, 0 },
	/* The kernel copies no head after a non-zero tail: nothing to keep. */
	{ "size 200, non-zero tail", 0, 200, 199, 0, E2BIG,
	  ANTINOMIE_STATUS_TRUNCATED, ANTINOMIE_CAPTURE_F_TAIL_NONZERO, 0, 0,
	  XF_WRITTEN, 136 },
	/*
	 * copy_struct_from_user() faults after 100 bytes, and does not say
	 * where: nothing kept, no offset.
	 */
	{ "attr crossing into an unmapped page", 0 /* set below */, 136, 0, 0, EFAULT,
	  ANTINOMIE_STATUS_FAULT, 0, 0, 0, 0, 0 },
};

#define NR_CASES (sizeof(cases) / sizeof(cases[0]))

static int case_offset(const struct call_case *c)
{
	if (c == &cases[NR_CASES - 1])
		return page - 100;
	return c->offset;
}

static void setup_attr(const struct call_case *c)
{
	int off = case_offset(c);
	uint8_t bytes[ATTR_MAX];
	struct perf_event_attr a;
	uint32_t len;

	memset(umem, 0, page);
	if (off < 0)
		return;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.size = c->size;
	/* The build host's header may predate the pinned 136-byte layout. */
	memset(bytes, 0, sizeof(bytes));
	memcpy(bytes, &a, sizeof(a) < ATTR_MAX ? sizeof(a) : ATTR_MAX);
	len = page - off < (long)ATTR_MAX ? page - off : ATTR_MAX;
	memcpy(umem + off, bytes, len);
	if (c->nonzero_at)
		umem[off + c->nonzero_at] = 1;
}

struct outcome {
	long ret;
	int err;
	uint8_t mem[4096];
};

static void run_case(const struct call_case *c, struct outcome *o)
{
	int off = case_offset(c);

	setup_attr(c);
	errno = 0;
	o->ret = sys_perf_event_open(off < 0 ? NULL : umem + off, 0, -1, -1, c->flags);
	o->err = o->ret < 0 ? errno : 0;
	memcpy(o->mem, umem, page);
	if (o->ret >= 0)
		close(o->ret);
}

static void check_capture(const struct call_case *c, const struct outcome *o,
			  uint64_t call_id)
{
	const struct rec *en = find_rec(ANTINOMIE_RECORD_ENTRY, call_id);
	const struct rec *ex = find_rec(ANTINOMIE_RECORD_EXIT, call_id);
	int off = case_offset(c);

	if (!en || !ex) {
		fail("%s: call %llu has no ENTRY or no EXIT", c->name, (unsigned long long)call_id);
		return;
	}
	print_rec(en);
	print_rec(ex);

	const struct antinomie_record_header *h = rec_hdr(en);
	const struct antinomie_entry *e = rec_body(en);
	const struct antinomie_capture *cap = (const void *)((const uint8_t *)e + e->size);
	const struct antinomie_exit *x = rec_body(ex);

	CHECK(h->pid == (uint32_t)getpid() && h->tid == (uint32_t)gettid(), "%s: pid/tid", c->name);
	CHECK(h->syscall_nr == SYS_perf_event_open, "%s: syscall_nr %u", c->name, h->syscall_nr);
	CHECK(e->nr_items == 1, "%s: entry items %u", c->name, e->nr_items);
	CHECK(e->args[0] == (off < 0 ? 0 : (uint64_t)(uintptr_t)(umem + off)), "%s: args[0]", c->name);
	CHECK((uint32_t)e->args[1] == 0 && (int)e->args[2] == -1 && (int)e->args[3] == -1,
	      "%s: args[1..3]", c->name);
	CHECK(e->args[4] == c->flags, "%s: args[4]", c->name);
	CHECK(cap->arg == 0 && cap->kind == ANTINOMIE_KIND_PERF_EVENT_ATTR, "%s: item arg/kind", c->name);
	CHECK(cap->status == c->status, "%s: status %s, expected %s", c->name,
	      status_name(cap->status), status_name(c->status));
	CHECK(cap->flags == c->cap_flags, "%s: capture flags %#x", c->name, cap->flags);
	CHECK(cap->copied_len == c->copied, "%s: copied %u", c->name, cap->copied_len);
	CHECK(cap->fault_offset == c->fault_offset, "%s: fault_offset %u", c->name, cap->fault_offset);
	/* The size the kernel used: the size word, 0 taken as 64. */
	if (off >= 0 && c->status != ANTINOMIE_STATUS_NOT_APPLICABLE)
		CHECK(cap->declared_size == (c->size ? c->size : 64), "%s: declared %u", c->name,
		      cap->declared_size);
	/* The bytes are what the call was given (setup_attr() is repeatable). */
	if (cap->copied_len) {
		setup_attr(c);
		CHECK(!memcmp((const uint8_t *)cap + cap->hdr_size, umem + off, cap->copied_len),
		      "%s: captured bytes differ from the attr", c->name);
	}
	CHECK(x->ret == o->ret || (o->ret < 0 && x->ret == -o->err), "%s: exit ret %lld",
	      c->name, (long long)x->ret);
	CHECK(x->ret == (o->ret < 0 ? -o->err : o->ret), "%s: exit ret %lld vs %ld/%d",
	      c->name, (long long)x->ret, o->ret, o->err);
	CHECK(x->flags == c->exit_flags, "%s: exit flags %#x, expected %#x", c->name,
	      x->flags, c->exit_flags);
	CHECK(x->required_size == c->required_size, "%s: required_size %u", c->name,
	      x->required_size);
	CHECK(x->nr_items == 0, "%s: exit items %u", c->name, x->nr_items);
	CHECK(rec_hdr(ex)->time_ns >= h->time_ns, "%s: EXIT before ENTRY", c->name);
	/* ABI 4: when the call began, and where its ENTRY went. */
	CHECK(e->start_ns <= h->time_ns, "%s: start_ns %llu after the ENTRY's time %llu",
	      c->name, (unsigned long long)e->start_ns, (unsigned long long)h->time_ns);
	CHECK(x->duration_ns == rec_hdr(ex)->time_ns - e->start_ns,
	      "%s: duration %llu is not the EXIT's time minus start_ns", c->name,
	      (unsigned long long)x->duration_ns);
	CHECK((uint64_t)en->cpu == h->call_id >> ANTINOMIE_CALL_ID_SEQ_BITS,
	      "%s: ENTRY on cpu%d, not the cpu that named call %#llx", c->name, en->cpu,
	      (unsigned long long)h->call_id);
	CHECK(x->entry_pos == en->pos, "%s: entry_pos %llu, the ENTRY was at %llu", c->name,
	      (unsigned long long)x->entry_pos, (unsigned long long)en->pos);
}

static void ioctl_ok(int fd, unsigned long cmd, void *arg, const char *what)
{
	if (ioctl(fd, cmd, arg))
		die(what);
}

static void expect_errno(long ret, int err, const char *what)
{
	if (ret != -1 || errno != err)
		fail("%s: got %ld (%s), expected %s", what, ret, ret == -1 ? strerror(errno) : "ok",
		     strerror(err));
	else
		printf("antinomie-check: ok   %s -> %s\n", what, strerror(err));
}

static void check_refusals(int fd)
{
	off_t meta = 0, cons = info.consumer_offset, data = info.data_offset;
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct none[2] = { { 0 } };
	uint64_t size = info.data_size;
	void *p;
	int status;
	pid_t pid;

	expect_errno(open("/dev/antinomie", O_RDONLY), EBUSY, "second open");
	errno = 0;
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, meta);
	expect_errno(p == MAP_FAILED ? -1 : 0, EPERM, "writable meta page");
	p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, data);
	expect_errno(p == MAP_FAILED ? -1 : 0, EPERM, "writable data pages");
	p = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_SHARED, fd, cons);
	expect_errno(p == MAP_FAILED ? -1 : 0, EPERM, "executable consumer page");
	p = mmap(NULL, page, PROT_READ, MAP_PRIVATE, fd, data);
	expect_errno(p == MAP_FAILED ? -1 : 0, EINVAL, "private mapping");
	p = mmap(NULL, info.mmap_size + page, PROT_READ, MAP_SHARED, fd, 0);
	expect_errno(p == MAP_FAILED ? -1 : 0, EINVAL, "mapping past one ring");
	p = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, (off_t)info.cpu_id_limit * info.mmap_stride);
	expect_errno(p == MAP_FAILED ? -1 : 0, EINVAL, "mapping past the last CPU");
	p = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, data);
	if (p == MAP_FAILED)
		die("read-only mapping of data");
	expect_errno(mprotect(p, page, PROT_READ | PROT_WRITE), EACCES, "mprotect to writable");
	expect_errno(mprotect(p, page, PROT_READ | PROT_EXEC), EACCES, "mprotect to executable");
	munmap(p, page);
	expect_errno(ioctl(fd, ANTINOMIE_IOC_SET_RING_SIZE, &size), EBUSY,
		     "SET_RING_SIZE while mapped");
	size = 3 * page;
	expect_errno(ioctl(fd, ANTINOMIE_IOC_SET_RING_SIZE, &size), EINVAL,
		     "SET_RING_SIZE not a power of two");
	size = 0;
	expect_errno(ioctl(fd, ANTINOMIE_IOC_SET_WATERMARK, &size), EINVAL, "SET_WATERMARK 0");
	size = info.data_size + 1;
	expect_errno(ioctl(fd, ANTINOMIE_IOC_SET_WATERMARK, &size), EINVAL,
		     "SET_WATERMARK above data_size");
	expect_errno(ioctl(fd, _IO(ANTINOMIE_IOC_MAGIC, 0x0f)), ENOTTY, "unknown ioctl");

	/* Root without capabilities: the file is ours, the open is refused. */
	pid = fork();
	if (pid == 0) {
		int ret;

		close(fd);
		if (syscall(SYS_capset, &hdr, none))
			_exit(3);
		ret = open("/dev/antinomie", O_RDWR);
		_exit(ret == -1 && errno == EPERM ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "open without CAP_PERFMON/CAP_SYS_ADMIN was not refused with EPERM");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		printf("antinomie-check: ok   open without capabilities -> %s\n", strerror(EPERM));
}

/* A child calls perf_event_open() while the parent sleeps in poll(). */
static void check_poll(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct timespec t0, t1;
	int status, ret;
	pid_t pid;

	ioctl_ok(fd, ANTINOMIE_IOC_ENABLE, NULL, "ENABLE");
	drain(false);
	ret = poll(&pfd, 1, 0);
	CHECK(ret == 0, "poll() with empty rings returned %d", ret);
	pid = fork();
	if (pid == 0) {
		usleep(200 * 1000);
		sys_perf_event_open(NULL, 0, -1, -1, 0);
		_exit(0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = poll(&pfd, 1, 10000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	waitpid(pid, &status, 0);
	CHECK(ret == 1 && (pfd.revents & POLLIN), "poll() did not wake up (%d)", ret);
	if (ret == 1)
		printf("antinomie-check: ok   poll() woke up after %ld ms\n",
		       (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
	ioctl_ok(fd, ANTINOMIE_IOC_DISABLE, NULL, "DISABLE");
	drain(false);
}

static void check_no_loss(int fd)
{
	for (int cpu = 0; cpu < MAX_CPUS; cpu++) {
		struct antinomie_counters cnt = { .cpu = cpu };
		struct ring *r = &rings[cpu];

		if (!r->mapped)
			continue;
		ioctl_ok(fd, ANTINOMIE_IOC_GET_COUNTERS, &cnt, "GET_COUNTERS");
		CHECK(cnt.size == sizeof(cnt), "GET_COUNTERS size");
		CHECK(cnt.producer_pos == r->meta->producer_pos &&
		      cnt.consumer_pos == r->consumer->consumer_pos &&
		      cnt.produced == r->meta->produced, "cpu%d: GET_COUNTERS differs from the meta page", cpu);
		for (int i = 0; i < ANTINOMIE_LOST_NR_SLOTS; i++)
			CHECK(cnt.lost[i] == 0, "cpu%d: %llu records lost (reason %d)", cpu,
			      (unsigned long long)cnt.lost[i], i);
	}
}

static int check_boot(int fd, uint64_t size)
{
	int entries = 0, exits = 0;

	CHECK(info.flags & ANTINOMIE_INFO_F_ENABLED, "capture is not on after antinomie.enable=1");
	CHECK(info.data_size == size, "data_size %llu, expected %llu",
	      (unsigned long long)info.data_size, (unsigned long long)size);
	map_rings(fd);
	drain(true);
	for (int i = 0; i < nr_recs; i++) {
		const struct antinomie_record_header *h = rec_hdr(&recs[i]);

		if (h->type == ANTINOMIE_RECORD_ENTRY)
			entries++;
		if (h->type == ANTINOMIE_RECORD_EXIT) {
			exits++;
			CHECK(find_rec(ANTINOMIE_RECORD_ENTRY, h->call_id), "EXIT %llu without ENTRY",
			      (unsigned long long)h->call_id);
		}
		if (i < 6)
			print_rec(&recs[i]);
	}
	printf("antinomie-check: %d ENTRY and %d EXIT records from before this program ran\n",
	       entries, exits);
	CHECK(entries > 0 && entries == exits, "boot capture: %d ENTRY, %d EXIT", entries, exits);
	check_no_loss(fd);
	printf("antinomie-check: %s\n", failures ? "FAILED" : "all checks passed");
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	static struct outcome off[NR_CASES], on[NR_CASES];
	uint64_t first_id = 0;
	cpu_set_t one_cpu, all_cpus;
	int fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	page = sysconf(_SC_PAGESIZE);
	fd = open("/dev/antinomie", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("open /dev/antinomie");
	info.size = sizeof(info);
	ioctl_ok(fd, ANTINOMIE_IOC_GET_INFO, &info, "GET_INFO");
	printf("antinomie-check: abi %u, %u CPU ids, data_size %llu, mmap_size %llu, stride %llu, watermark %llu, %s\n",
	       info.abi_version, info.cpu_id_limit, (unsigned long long)info.data_size,
	       (unsigned long long)info.mmap_size, (unsigned long long)info.mmap_stride,
	       (unsigned long long)info.watermark,
	       info.flags & ANTINOMIE_INFO_F_ENABLED ? "enabled" : "disabled");
	if (argc == 3 && !strcmp(argv[1], "--boot"))
		return check_boot(fd, strtoull(argv[2], NULL, 0));

	CHECK(info.size == sizeof(info) && info.abi_version == ANTINOMIE_ABI_VERSION &&
	      info.page_size == page && info.consumer_offset == (uint64_t)page &&
	      info.data_offset == 2 * (uint64_t)page &&
	      info.mmap_size == 2 * (uint64_t)page + 2 * info.data_size,
	      "GET_INFO geometry");
	ioctl_ok(fd, ANTINOMIE_IOC_DISABLE, NULL, "DISABLE");

	umem = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (umem == MAP_FAILED || mprotect(umem + page, page, PROT_NONE))
		die("user memory");

	map_rings(fd);
	printf("antinomie-check: mapped %d rings\n", nr_rings);
	check_refusals(fd);
	drain(false);

	/* Capture off: the reference results. */
	for (unsigned int i = 0; i < NR_CASES; i++)
		run_case(&cases[i], &off[i]);
	drain(true);
	CHECK(nr_recs == 0, "%d records while capture was off", nr_recs);

	/*
	 * On one CPU, so that the calls' ids are consecutive: a CPU names
	 * the calls it takes with its own sequence numbers.
	 */
	CPU_ZERO(&one_cpu);
	CPU_SET(sched_getcpu(), &one_cpu);
	if (sched_getaffinity(0, sizeof(all_cpus), &all_cpus) ||
	    sched_setaffinity(0, sizeof(one_cpu), &one_cpu))
		die("sched_setaffinity");
	ioctl_ok(fd, ANTINOMIE_IOC_ENABLE, NULL, "ENABLE");
	ioctl_ok(fd, ANTINOMIE_IOC_ENABLE, NULL, "ENABLE again");
	for (unsigned int i = 0; i < NR_CASES; i++)
		run_case(&cases[i], &on[i]);
	ioctl_ok(fd, ANTINOMIE_IOC_DISABLE, NULL, "DISABLE");
	if (sched_setaffinity(0, sizeof(all_cpus), &all_cpus))
		die("sched_setaffinity");
	drain(true);

	/* Our calls' ids are consecutive: find the first. */
	for (int i = 0; i < nr_recs; i++) {
		const struct antinomie_record_header *h = rec_hdr(&recs[i]);

		if (h->type == ANTINOMIE_RECORD_ENTRY && h->tid == (uint32_t)gettid() &&
		    (!first_id || h->call_id < first_id))
			first_id = h->call_id;
	}
	printf("antinomie-check: %d records for %zu calls\n", nr_recs, NR_CASES);
	CHECK(nr_recs == 2 * (int)NR_CASES, "%d records, expected %zu", nr_recs, 2 * NR_CASES);
	for (unsigned int i = 0; i < NR_CASES; i++) {
		const struct call_case *c = &cases[i];

		printf("antinomie-check: case '%s': ret %ld%s%s\n", c->name, on[i].ret,
		       on[i].err ? " errno " : "", on[i].err ? strerror(on[i].err) : "");
		CHECK(on[i].ret == off[i].ret && on[i].err == off[i].err,
		      "%s: capture changed the result (%ld/%d vs %ld/%d)", c->name,
		      on[i].ret, on[i].err, off[i].ret, off[i].err);
		for (long b = 0; b < page; b++) {
			if (on[i].mem[b] != off[i].mem[b]) {
				fail("%s: capture changed the user memory the call left: byte %ld is %#x, not %#x",
				     c->name, b, on[i].mem[b], off[i].mem[b]);
				break;
			}
		}
		CHECK(on[i].err == c->err && (c->err || on[i].ret >= 0),
		      "%s: errno %d, expected %d", c->name, on[i].err, c->err);
		check_capture(c, &on[i], first_id + i);
	}
	check_poll(fd);
	check_no_loss(fd);
	printf("antinomie-check: %s\n", failures ? "FAILED" : "all checks passed");
	return failures ? 1 : 0;
}
