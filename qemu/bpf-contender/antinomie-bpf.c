// SPDX-License-Identifier: GPL-2.0-only
/*
 * antinomie-bpf: loads the BPF contender (contender.bpf.c), attaches one of
 * its placements, and drains its ring buffer to a file until SIGINT or
 * SIGTERM; then prints its counts.
 *
 * usage: antinomie-bpf --variant tp|raw [--out FILE] [--drain live|none]
 *                      [--ring-size BYTES] [--ready FILE]
 *        antinomie-bpf dump FILE
 *   --variant   tp: syscalls:sys_{enter,exit}_perf_event_open;
 *               raw: raw tracepoints sys_enter/sys_exit filtered by number
 *   --out       the records file (contender.h; default /tmp/bpf.records)
 *   --drain     live (default): ring_buffer__poll() while the calls run;
 *               none: read nothing, leave the records in the ring buffer, as
 *               the benchmark leaves capture's in its rings, so that the
 *               cost measured is the traced side's alone
 *   --ring-size the ring buffer's size, a power of two of pages (default
 *               64 MiB)
 *   --ready     created once the programs are attached
 * The summary (stderr, one line): produced = consumed + lost + unread, and
 * the entries by status (complete, null, fault, truncated; live only).
 * Exits non-zero if a record was malformed or an exit's registers were
 * unreadable.
 * dump: the records of FILE, one line each; an exit's duration is its time
 * less that of the last entry of its tid.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "contender.h"
#include "contender.skel.h"

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

struct drain {
	FILE *out;
	unsigned long long entries, exits, malformed;
	/* Entries by status, CONTENDER_STATUS_* as index. */
	unsigned long long status[CONTENDER_STATUS_TRUNCATED + 1];
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct drain *d = ctx;
	const struct contender_header *h = data;

	if (size < sizeof(*h) || h->size != size ||
	    (h->type == CONTENDER_ENTRY && size != sizeof(struct contender_entry)) ||
	    (h->type == CONTENDER_EXIT && size != sizeof(struct contender_exit)) ||
	    (h->type != CONTENDER_ENTRY && h->type != CONTENDER_EXIT)) {
		d->malformed++;
		return 0;
	}
	if (h->type == CONTENDER_ENTRY) {
		/* The ring buffer's pages are read-only here; the bytes past
		 * what the program read are another record's leftovers: zeroed
		 * in a copy, so the file holds only what was read. */
		struct contender_entry e;

		memcpy(&e, data, sizeof(e));
		if (e.copied_len < CONTENDER_ATTR_MAX)
			memset(e.attr + e.copied_len, 0, CONTENDER_ATTR_MAX - e.copied_len);
		d->entries++;
		if (e.status <= CONTENDER_STATUS_TRUNCATED)
			d->status[e.status]++;
		if (fwrite(&e, sizeof(e), 1, d->out) != 1)
			return -EIO;
	} else {
		d->exits++;
		if (fwrite(data, size, 1, d->out) != 1)
			return -EIO;
	}
	return 0;
}

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void usage_error(const char *what)
{
	fprintf(stderr, "antinomie-bpf: %s\nusage: antinomie-bpf --variant tp|raw [--out FILE] "
			"[--drain live|none] [--ring-size BYTES] [--ready FILE]\n", what);
	exit(2);
}

/* The last entry time of each tid, for the exits' durations (dump). */
struct pending {
	__u32 tid;
	__u64 time_ns;
};

static int dump(const char *path)
{
	FILE *f = fopen(path, "r");
	struct contender_file_header fh;
	struct contender_entry e;
	struct pending *pending = NULL;
	size_t npending = 0;
	int rc = 0;

	if (!f) {
		fprintf(stderr, "antinomie-bpf: cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (fread(&fh, sizeof(fh), 1, f) != 1 || fh.magic != CONTENDER_FILE_MAGIC ||
	    fh.header_size != sizeof(struct contender_header) || fh.attr_max != CONTENDER_ATTR_MAX) {
		fprintf(stderr, "antinomie-bpf: %s is not a contender records file of this build\n", path);
		fclose(f);
		return 1;
	}
	while (fread(&e.h, sizeof(e.h), 1, f) == 1) {
		size_t rest = e.h.size - sizeof(e.h);
		size_t i;

		if ((e.h.type != CONTENDER_ENTRY || e.h.size != sizeof(struct contender_entry)) &&
		    (e.h.type != CONTENDER_EXIT || e.h.size != sizeof(struct contender_exit)) &&
		    (e.h.type != CONTENDER_COUNTS || e.h.size != sizeof(struct contender_counts))) {
			fprintf(stderr, "antinomie-bpf: %s: bad record (type %u, size %u)\n", path,
				e.h.type, e.h.size);
			rc = 1;
			break;
		}
		if (fread((char *)&e + sizeof(e.h), rest, 1, f) != 1) {
			fprintf(stderr, "antinomie-bpf: %s: truncated record\n", path);
			rc = 1;
			break;
		}
		if (e.h.type == CONTENDER_COUNTS) {
			const struct contender_counts *k = (const void *)&e;

			printf("COUNTS cpu=%u produced=%llu lost=%llu\n", k->h.cpu,
			       (unsigned long long)k->produced, (unsigned long long)k->lost);
			continue;
		}
		for (i = 0; i < npending && pending[i].tid != e.h.tid; i++)
			;
		if (e.h.type == CONTENDER_ENTRY) {
			if (i == npending) {
				struct pending *grown = realloc(pending, (npending + 1) * sizeof(*pending));

				if (!grown) {
					fprintf(stderr, "antinomie-bpf: out of memory\n");
					rc = 1;
					break;
				}
				pending = grown;
				pending[npending++].tid = e.h.tid;
			}
			pending[i].time_ns = e.h.time_ns;
			printf("ENTRY t=%llu pid=%u tid=%u cpu=%u args=%#llx,%lld,%lld,%lld,%#llx,%#llx "
			       "size=%u copied=%u status=%u read_error=%d flags=%#x attr=",
			       (unsigned long long)e.h.time_ns, e.h.pid, e.h.tid, e.h.cpu,
			       (unsigned long long)e.args[0], (long long)e.args[1], (long long)e.args[2],
			       (long long)e.args[3], (unsigned long long)e.args[4],
			       (unsigned long long)e.args[5], e.declared_size, e.copied_len, e.status,
			       e.read_error, e.h.flags);
			for (__u32 b = 0; b < e.copied_len && b < CONTENDER_ATTR_MAX; b++)
				printf("%02x", e.attr[b]);
			printf("\n");
		} else {
			const struct contender_exit *x = (const void *)&e;

			printf("EXIT t=%llu pid=%u tid=%u cpu=%u ret=%lld", (unsigned long long)x->h.time_ns,
			       x->h.pid, x->h.tid, x->h.cpu, (long long)x->ret);
			/* An exit whose entry was lost has no duration. */
			if (i < npending && pending[i].time_ns) {
				printf(" duration_ns=%llu",
				       (unsigned long long)(x->h.time_ns - pending[i].time_ns));
				pending[i].time_ns = 0;
			}
			printf("\n");
		}
	}
	if (ferror(f)) {
		fprintf(stderr, "antinomie-bpf: cannot read %s\n", path);
		rc = 1;
	}
	free(pending);
	fclose(f);
	return rc;
}

/*
 * The counters summed over the CPUs; with out, also written there, a
 * contender_counts per possible CPU.
 */
static int read_counts(int map_fd, unsigned long long sums[CONTENDER_NR_COUNTS], FILE *out)
{
	int ncpus = libbpf_num_possible_cpus();
	__u64 *per_cpu;
	int rc = 0;

	if (ncpus <= 0)
		return -1;
	per_cpu = calloc((size_t)ncpus * CONTENDER_NR_COUNTS, sizeof(*per_cpu));
	if (!per_cpu)
		return -1;
	for (__u32 k = 0; k < CONTENDER_NR_COUNTS; k++) {
		sums[k] = 0;
		if (bpf_map_lookup_elem(map_fd, &k, per_cpu + (size_t)k * ncpus)) {
			free(per_cpu);
			return -1;
		}
		for (int c = 0; c < ncpus; c++)
			sums[k] += per_cpu[(size_t)k * ncpus + c];
	}
	for (int c = 0; out && c < ncpus; c++) {
		struct contender_counts counts = {
			.h = { .size = sizeof(counts), .type = CONTENDER_COUNTS, .cpu = c },
			.produced = per_cpu[CONTENDER_COUNT_PRODUCED * ncpus + c],
			.lost = per_cpu[CONTENDER_COUNT_LOST * ncpus + c],
		};

		if (fwrite(&counts, sizeof(counts), 1, out) != 1)
			rc = -1;
	}
	free(per_cpu);
	return rc;
}

int main(int argc, char **argv)
{
	const char *variant = NULL, *out_path = "/tmp/bpf.records", *ready = NULL;
	unsigned long long ring_size = 64ULL << 20, sums[CONTENDER_NR_COUNTS];
	int live = 1, err, rc = 0;
	struct drain d = { 0 };
	struct ring_buffer *rb = NULL;
	struct contender_bpf *skel;
	struct sigaction sa = { .sa_handler = on_signal };

	if (argc == 3 && !strcmp(argv[1], "dump"))
		return dump(argv[2]);
	for (int i = 1; i < argc; i++) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!val)
			usage_error("every option takes a value");
		i++;
		if (!strcmp(opt, "--variant"))
			variant = val;
		else if (!strcmp(opt, "--out"))
			out_path = val;
		else if (!strcmp(opt, "--ready"))
			ready = val;
		else if (!strcmp(opt, "--drain") && !strcmp(val, "live"))
			live = 1;
		else if (!strcmp(opt, "--drain") && !strcmp(val, "none"))
			live = 0;
		else if (!strcmp(opt, "--ring-size")) {
			char *end;

			ring_size = strtoull(val, &end, 0);
			if (*end || !ring_size || (ring_size & (ring_size - 1)) || ring_size % 4096)
				usage_error("--ring-size must be a power of two of pages");
		} else
			usage_error("unknown option or value");
	}
	if (!variant || (strcmp(variant, "tp") && strcmp(variant, "raw")))
		usage_error("--variant tp or raw is required");

	libbpf_set_print(print_libbpf);
	skel = contender_bpf__open();
	if (!skel) {
		fprintf(stderr, "antinomie-bpf: cannot open the BPF object: %s\n", strerror(errno));
		return 1;
	}
	int raw = !strcmp(variant, "raw");

	bpf_program__set_autoload(skel->progs.tp_enter, !raw);
	bpf_program__set_autoload(skel->progs.tp_exit, !raw);
	bpf_program__set_autoload(skel->progs.raw_enter, raw);
	bpf_program__set_autoload(skel->progs.raw_exit, raw);
	err = bpf_map__set_max_entries(skel->maps.records, ring_size);
	if (!err)
		err = contender_bpf__load(skel);
	if (err) {
		fprintf(stderr, "antinomie-bpf: cannot load the BPF programs: %s\n", strerror(-err));
		contender_bpf__destroy(skel);
		return 1;
	}
	__u32 slot = 0, tgid = getpid();

	err = bpf_map__update_elem(skel->maps.consumer, &slot, sizeof(slot), &tgid, sizeof(tgid), BPF_ANY);
	if (err) {
		fprintf(stderr, "antinomie-bpf: cannot set the consumer's tgid: %s\n", strerror(-err));
		contender_bpf__destroy(skel);
		return 1;
	}
	if (live) {
		d.out = fopen(out_path, "w");
		if (!d.out) {
			fprintf(stderr, "antinomie-bpf: cannot create %s: %s\n", out_path, strerror(errno));
			contender_bpf__destroy(skel);
			return 1;
		}
		struct contender_file_header fh = {
			.magic = CONTENDER_FILE_MAGIC,
			.header_size = sizeof(struct contender_header),
			.attr_max = CONTENDER_ATTR_MAX,
		};
		if (fwrite(&fh, sizeof(fh), 1, d.out) != 1) {
			fprintf(stderr, "antinomie-bpf: cannot write %s\n", out_path);
			return 1;
		}
		rb = ring_buffer__new(bpf_map__fd(skel->maps.records), on_record, &d, NULL);
		if (!rb) {
			fprintf(stderr, "antinomie-bpf: cannot map the ring buffer: %s\n", strerror(errno));
			return 1;
		}
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	err = contender_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "antinomie-bpf: cannot attach the %s programs: %s\n", variant, strerror(-err));
		return 1;
	}
	if (ready) {
		int fd = open(ready, O_CREAT | O_WRONLY | O_TRUNC, 0644);

		if (fd < 0) {
			fprintf(stderr, "antinomie-bpf: cannot create %s: %s\n", ready, strerror(errno));
			return 1;
		}
		close(fd);
	}
	while (!stopping) {
		if (live) {
			err = ring_buffer__poll(rb, 100);
			if (err < 0 && err != -EINTR) {
				fprintf(stderr, "antinomie-bpf: ring_buffer__poll: %s\n", strerror(-err));
				rc = 1;
				break;
			}
		} else {
			pause();
		}
	}
	/* Detached first, so that what is drained below is all there is. */
	contender_bpf__detach(skel);
	if (live && ring_buffer__consume(rb) < 0) {
		fprintf(stderr, "antinomie-bpf: ring_buffer__consume failed\n");
		rc = 1;
	}
	if (read_counts(bpf_map__fd(skel->maps.counts), sums, d.out)) {
		fprintf(stderr, "antinomie-bpf: cannot read the counters: %s\n", strerror(errno));
		return 1;
	}
	unsigned long long produced = sums[CONTENDER_COUNT_PRODUCED], lost = sums[CONTENDER_COUNT_LOST];
	unsigned long long consumed = d.entries + d.exits + d.malformed;
	unsigned long long unread = live ? 0 : produced - lost;

	fprintf(stderr,
		"antinomie-bpf: variant=%s drain=%s produced=%llu consumed=%llu lost=%llu unread=%llu "
		"entries=%llu exits=%llu malformed=%llu unreadable_exits=%llu "
		"complete=%llu null=%llu fault=%llu truncated=%llu\n",
		variant, live ? "live" : "none", produced, consumed, lost, unread, d.entries, d.exits,
		d.malformed, sums[CONTENDER_COUNT_UNREADABLE],
		d.status[CONTENDER_STATUS_COMPLETE], d.status[CONTENDER_STATUS_NULL_PTR],
		d.status[CONTENDER_STATUS_FAULT], d.status[CONTENDER_STATUS_TRUNCATED]);
	if (produced != consumed + lost + unread) {
		fprintf(stderr, "antinomie-bpf: produced %llu != consumed %llu + lost %llu + unread %llu\n",
			produced, consumed, lost, unread);
		rc = 1;
	}
	if (d.malformed || sums[CONTENDER_COUNT_UNREADABLE])
		rc = 1;
	if (d.out && fclose(d.out)) {
		fprintf(stderr, "antinomie-bpf: cannot write %s: %s\n", out_path, strerror(errno));
		rc = 1;
	}
	ring_buffer__free(rb);
	contender_bpf__destroy(skel);
	return rc;
}
