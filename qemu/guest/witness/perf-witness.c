// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf-witness: an independent count of the perf_event_open(2) calls a
 * program makes, taken on the caller's side, to check that a capture saw
 * every one of them.
 *
 * scripts/build-selftests.sh links the kernel's perf_events selftests with
 * -Wl,--wrap=syscall and this file: every syscall(2) call goes through
 * __wrap_syscall(), which forwards it unchanged and, for perf_event_open,
 * appends one line to the file named by $ANTINOMIE_WITNESS:
 *
 *	tid=<tid> ret=<raw return: fd or -errno> args=<a0>,<a1>,<a2>,<a3>,<a4>
 *
 * with the argument words as the kernel receives them (unsigned 64-bit).
 * One write(2) per line on an O_APPEND descriptor keeps lines whole across
 * threads and processes. errno is preserved for the caller.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

long __real_syscall(long nr, ...);

long __wrap_syscall(long nr, ...)
{
	unsigned long a[6];
	const char *path;
	char line[256];
	long ret;
	int err, fd, len, i;
	va_list ap;

	/* syscall(2) takes up to six words; x86-64 passes them all in registers. */
	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);

	ret = __real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (nr != SYS_perf_event_open)
		return ret;

	err = errno;
	path = getenv("ANTINOMIE_WITNESS");
	if (path) {
		len = snprintf(line, sizeof(line), "tid=%ld ret=%ld args=%lu,%lu,%lu,%lu,%lu\n",
			       (long)gettid(), ret == -1 ? -(long)err : ret,
			       a[0], a[1], a[2], a[3], a[4]);
		fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0) {
			if (write(fd, line, len) != len)
				fprintf(stderr, "perf-witness: short write to %s\n", path);
			close(fd);
		} else {
			fprintf(stderr, "perf-witness: cannot open %s\n", path);
		}
	}
	errno = err;
	return ret;
}
