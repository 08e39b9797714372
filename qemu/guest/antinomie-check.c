// SPDX-License-Identifier: GPL-2.0-only
/*
 * antinomie-check: what the kselftest (tools/testing/selftests/antinomie)
 * cannot check, on the raw ABI, in the guest.
 *
 * --boot SIZE: capture was enabled on the kernel command line with
 * SIZE-byte rings, so the rings already hold the calls made before any
 * consumer opened the device: each EXIT has its ENTRY, none was lost. The
 * kselftest skips a kernel booted so, and its set-up resizes the rings,
 * which would throw exactly those records away.
 *
 * Without it: poll() sleeping in the kernel wakes up for a call made
 * meanwhile by another process (the kselftest only polls without
 * sleeping), the ring geometry's exact offsets, ENOTTY for an unknown
 * ioctl and ENABLE when enabled, and no record lost. The kselftest checks
 * the rest of the ABI: the refusals, the records byte for byte, the same
 * results and user memory with capture off and on.
 *
 * usage: antinomie-check             the checks above
 *        antinomie-check --boot SIZE  the rings hold the calls from boot
 * Exits 0 if all is well.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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

#include "../../abi/antinomie.h"

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

/* A child calls perf_event_open() while the parent sleeps in poll(). */
static void check_poll(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct timespec t0, t1;
	int status, ret;
	pid_t pid;

	ioctl_ok(fd, ANTINOMIE_IOC_ENABLE, NULL, "ENABLE when enabled");
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
	expect_errno(ioctl(fd, _IO(ANTINOMIE_IOC_MAGIC, 0x0f)), ENOTTY, "unknown ioctl");
	map_rings(fd);
	printf("antinomie-check: mapped %d rings\n", nr_rings);
	ioctl_ok(fd, ANTINOMIE_IOC_ENABLE, NULL, "ENABLE");
	check_poll(fd);
	check_no_loss(fd);
	printf("antinomie-check: %s\n", failures ? "FAILED" : "all checks passed");
	return failures ? 1 : 0;
}
