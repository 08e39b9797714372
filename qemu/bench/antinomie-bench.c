// SPDX-License-Identifier: GPL-2.0-only
/*
 * antinomie-bench: the loops of scripts/bench.sh. Runs one syscall path
 * CALLS times on each of THREADS threads (thread i pinned to CPU i), all
 * released together, and prints the wall time per call. Every call's result
 * is checked, so a loop that stopped measuring its path fails instead.
 *
 * usage: antinomie-bench [-t THREADS] [-n CALLS] [-r RATE] PATH...
 *        antinomie-bench device enable|disable|ring-size BYTES|counters|is-lossless
 *   PATH   einval   perf_event_open with bad flags: EINVAL before the attr
 *                   is read
 *          e2big    a 200-byte attr with a non-zero byte past the kernel's
 *                   struct: E2BIG (the kernel writes its size back; reset
 *                   before each call)
 *          swevent  a software event opened and closed (one open + close
 *                   per call)
 *          big      the same event with a 4096-byte attr whose tail is
 *                   zero, opened and closed
 *          getpid   getpid(2): the tax on a syscall that is not traced
 *   -t     threads (default 1), at most one per online CPU
 *   -n     calls per thread (default 10000; 0 runs the setup only, for the
 *          instruction-count baseline)
 *   -r     pace: at most RATE calls per second over all threads (loss test)
 *
 * The device commands drive /dev/antinomie (as antinomie-e2e device does,
 * without its 11 MB: the instruction-count boots decompress a small image);
 * counters prints one JSON array, {"cpu", "producer_pos", "consumer_pos",
 * "produced", "lost"} per possible CPU; is-lossless exits 0 when lossless
 * mode is on.
 *
 * Prints per PATH one line:
 *   antinomie-bench: path=P threads=T calls=C wall_ns=W ns_per_call=X
 * with C = CALLS * THREADS and X = W / C: under single-threaded TCG the
 * vCPUs share one host thread, so W / C is the host time per call whatever
 * the thread count.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../abi/antinomie.h"

#define MAX_THREADS 64
#define BIG_ATTR 4096
/* PERF_ATTR_SIZE_VER8, the attr size of Linux 6.12 (the host's headers may
 * be older). */
#define KERNEL_ATTR_SIZE 136

enum path { P_EINVAL, P_E2BIG, P_SWEVENT, P_BIG, P_GETPID };
static const char *const path_names[] = { "einval", "e2big", "swevent", "big", "getpid" };

struct worker {
	pthread_t thread;
	int cpu;
	enum path path;
	unsigned long calls;
	double rate; /* calls per second for this thread, 0: unpaced */
	const char *error; /* set on an unexpected result */
	long bad_ret;
	int bad_errno;
	uint64_t t_start, t_end; /* this thread's loop, CLOCK_MONOTONIC */
	/* Each thread's own attr buffers: the kernel writes the size back. */
	unsigned char attr[BIG_ATTR] __attribute__((aligned(64)));
};

static pthread_barrier_t start_barrier;

static long perf_open(void *attr, unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, 0, -1, -1, flags);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sw_attr(unsigned char *buf, uint32_t size)
{
	struct perf_event_attr *a = (struct perf_event_attr *)buf;

	memset(buf, 0, size);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->size = size;
	a->disabled = 1;
}

/* One call of the path; 0 if it returned what the path must return. */
static int one_call(struct worker *w)
{
	struct perf_event_attr *a = (struct perf_event_attr *)w->attr;
	long ret;

	switch (w->path) {
	case P_EINVAL:
		ret = perf_open(w->attr, ~0UL);
		if (ret == -1 && errno == EINVAL)
			return 0;
		break;
	case P_E2BIG:
		a->size = 200;
		ret = perf_open(w->attr, 0);
		if (ret == -1 && errno == E2BIG)
			return 0;
		break;
	case P_SWEVENT:
	case P_BIG:
		ret = perf_open(w->attr, 0);
		if (ret >= 0) {
			close((int)ret);
			return 0;
		}
		break;
	case P_GETPID:
		ret = syscall(SYS_getpid);
		if (ret > 0)
			return 0;
		break;
	default:
		ret = -1;
	}
	w->bad_ret = ret;
	w->bad_errno = errno;
	return -1;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	cpu_set_t set;
	unsigned long i;
	uint64_t t0, interval = 0;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		w->error = "sched_setaffinity failed";
		w->bad_errno = errno;
	}
	switch (w->path) {
	case P_EINVAL:
		sw_attr(w->attr, KERNEL_ATTR_SIZE);
		break;
	case P_E2BIG:
		sw_attr(w->attr, 200);
		w->attr[199] = 1;
		break;
	case P_SWEVENT:
		sw_attr(w->attr, KERNEL_ATTR_SIZE);
		break;
	case P_BIG:
		sw_attr(w->attr, BIG_ATTR);
		break;
	case P_GETPID:
		break;
	}
	if (w->rate > 0)
		interval = (uint64_t)(1e9 / w->rate);
	pthread_barrier_wait(&start_barrier);
	if (w->error)
		return NULL;
	t0 = now_ns();
	w->t_start = t0;
	for (i = 0; i < w->calls; i++) {
		if (interval && (i & 15) == 0) {
			uint64_t due = t0 + i * interval, t = now_ns();

			if (t < due) {
				struct timespec d = { .tv_sec = (time_t)((due - t) / 1000000000u),
						      .tv_nsec = (long)((due - t) % 1000000000u) };

				nanosleep(&d, NULL);
			}
		}
		if (one_call(w)) {
			w->error = "unexpected result";
			return NULL;
		}
	}
	w->t_end = now_ns();
	return NULL;
}

static int parse_path(const char *s)
{
	for (unsigned int i = 0; i < sizeof(path_names) / sizeof(path_names[0]); i++)
		if (!strcmp(s, path_names[i]))
			return (int)i;
	return -1;
}

static unsigned long parse_ulong(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end) {
		fprintf(stderr, "antinomie-bench: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

static int run(enum path path, unsigned int threads, unsigned long calls, double rate)
{
	static struct worker workers[MAX_THREADS];
	uint64_t t0 = UINT64_MAX, t1 = 0;
	int rc = 0;

	if (pthread_barrier_init(&start_barrier, NULL, threads + 1)) {
		fprintf(stderr, "antinomie-bench: pthread_barrier_init failed\n");
		return 1;
	}
	for (unsigned int i = 0; i < threads; i++) {
		struct worker *w = &workers[i];

		memset(w, 0, sizeof(*w));
		w->cpu = (int)i;
		w->path = path;
		w->calls = calls;
		w->rate = rate / threads;
		if (pthread_create(&w->thread, NULL, worker_main, w)) {
			fprintf(stderr, "antinomie-bench: pthread_create failed\n");
			exit(1);
		}
	}
	pthread_barrier_wait(&start_barrier);
	for (unsigned int i = 0; i < threads; i++)
		pthread_join(workers[i].thread, NULL);
	pthread_barrier_destroy(&start_barrier);
	for (unsigned int i = 0; i < threads; i++) {
		struct worker *w = &workers[i];

		if (w->error) {
			fprintf(stderr, "antinomie-bench: %s: thread %u: %s (ret %ld, %s)\n",
				path_names[path], i, w->error, w->bad_ret, strerror(w->bad_errno));
			rc = 1;
		}
		/* Wall time: first thread's start to last thread's end. */
		if (w->t_start < t0)
			t0 = w->t_start;
		if (w->t_end > t1)
			t1 = w->t_end;
	}
	if (rc)
		return rc;
	printf("antinomie-bench: path=%s threads=%u calls=%lu wall_ns=%llu ns_per_call=%.1f\n",
	       path_names[path], threads, calls * threads, (unsigned long long)(t1 - t0),
	       calls ? (double)(t1 - t0) / (double)(calls * threads) : 0.0);
	fflush(stdout);
	return 0;
}

static int device_cmd(int argc, char **argv)
{
	struct antinomie_info info = { 0 };
	int fd = open("/dev/antinomie", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		perror("antinomie-bench: /dev/antinomie");
		return 1;
	}
	if (ioctl(fd, ANTINOMIE_IOC_GET_INFO, &info)) {
		perror("antinomie-bench: ANTINOMIE_IOC_GET_INFO");
		return 1;
	}
	if (argc == 1 && !strcmp(argv[0], "enable")) {
		if (ioctl(fd, ANTINOMIE_IOC_ENABLE)) {
			perror("antinomie-bench: ANTINOMIE_IOC_ENABLE");
			return 1;
		}
	} else if (argc == 1 && !strcmp(argv[0], "disable")) {
		if (ioctl(fd, ANTINOMIE_IOC_DISABLE)) {
			perror("antinomie-bench: ANTINOMIE_IOC_DISABLE");
			return 1;
		}
	} else if (argc == 2 && !strcmp(argv[0], "ring-size")) {
		__u64 size = parse_ulong(argv[1], "ring size");

		if (ioctl(fd, ANTINOMIE_IOC_SET_RING_SIZE, &size)) {
			perror("antinomie-bench: ANTINOMIE_IOC_SET_RING_SIZE");
			return 1;
		}
	} else if (argc == 1 && !strcmp(argv[0], "counters")) {
		const char *sep = "";

		printf("[");
		for (__u32 cpu = 0; cpu < info.cpu_id_limit; cpu++) {
			struct antinomie_counters c = { .cpu = cpu };

			/* A CPU that is not possible has no ring: ENODEV. */
			if (ioctl(fd, ANTINOMIE_IOC_GET_COUNTERS, &c)) {
				if (errno == ENODEV)
					continue;
				perror("antinomie-bench: ANTINOMIE_IOC_GET_COUNTERS");
				return 1;
			}
			printf("%s{\"cpu\":%u,\"producer_pos\":%llu,\"consumer_pos\":%llu,\"produced\":%llu,\"lost\":[",
			       sep, cpu, (unsigned long long)c.producer_pos,
			       (unsigned long long)c.consumer_pos, (unsigned long long)c.produced);
			for (int i = 0; i < ANTINOMIE_LOST_NR_SLOTS; i++)
				printf("%s%llu", i ? "," : "", (unsigned long long)c.lost[i]);
			printf("]}");
			sep = ",";
		}
		printf("]\n");
	} else if (argc == 1 && !strcmp(argv[0], "is-lossless")) {
		/* Exit 0 if lossless mode is on (antinomie.lossless=1 at boot). */
		close(fd);
		return info.flags & ANTINOMIE_INFO_F_LOSSLESS ? 0 : 1;
	} else {
		fprintf(stderr, "antinomie-bench: device enable|disable|ring-size BYTES|counters|is-lossless\n");
		return 2;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long threads = 1, calls = 10000;
	double rate = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int opt, rc = 0;

	if (argc >= 2 && !strcmp(argv[1], "device"))
		return device_cmd(argc - 2, argv + 2);

	while ((opt = getopt(argc, argv, "t:n:r:")) != -1) {
		switch (opt) {
		case 't':
			threads = parse_ulong(optarg, "thread count");
			break;
		case 'n':
			calls = parse_ulong(optarg, "call count");
			break;
		case 'r':
			rate = (double)parse_ulong(optarg, "rate");
			break;
		default:
			fprintf(stderr, "usage: %s [-t THREADS] [-n CALLS] [-r RATE] PATH...\n", argv[0]);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "antinomie-bench: no PATH (einval e2big swevent big getpid)\n");
		return 2;
	}
	if (threads < 1 || threads > MAX_THREADS || (long)threads > ncpu) {
		fprintf(stderr, "antinomie-bench: %lu threads, but %ld CPUs online (one thread per CPU)\n",
			threads, ncpu);
		return 2;
	}
	for (int i = optind; i < argc; i++) {
		if (parse_path(argv[i]) < 0) {
			fprintf(stderr, "antinomie-bench: unknown path '%s' (einval e2big swevent big getpid)\n",
				argv[i]);
			return 2;
		}
	}
	for (int i = optind; i < argc && !rc; i++)
		rc = run((enum path)parse_path(argv[i]), (unsigned int)threads, calls, rate);
	return rc;
}
