// SPDX-License-Identifier: GPL-2.0-only
/*
 * guest-exit: leave QEMU with a status through its isa-debug-exit device.
 *
 * QEMU exits with (value << 1) | 1 for a value written to the port, so
 * status 1 is ambiguous with QEMU's own failure exit. The guest writes
 * rc + 1 instead: the host sees (rc + 1) * 2 + 1, i.e. 3 for success, and
 * qemu/run.sh decodes it back. Values above 126 are clamped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/io.h>
#include <termios.h>
#include <unistd.h>

#define DEBUG_EXIT_PORT 0xf4

int main(int argc, char **argv)
{
	int rc = argc > 1 ? atoi(argv[1]) : 0;

	if (rc < 0 || rc > 126)
		rc = 126;
	sync();
	/*
	 * Let the serial console send what init printed (the scenario's end
	 * marker) before QEMU exits: under -icount the exit can otherwise
	 * overtake the UART's transmission.
	 */
	tcdrain(STDOUT_FILENO);
	tcdrain(STDERR_FILENO);
	if (ioperm(DEBUG_EXIT_PORT, 1, 1)) {
		perror("guest-exit: ioperm");
		return 1;
	}
	outb(rc + 1, DEBUG_EXIT_PORT);
	/* Only reached without the isa-debug-exit device. */
	fprintf(stderr, "guest-exit: no isa-debug-exit device at 0x%x\n", DEBUG_EXIT_PORT);
	return 1;
}
