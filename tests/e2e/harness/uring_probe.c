/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Can this process use io_uring? Container runtimes and sysctls often
 * forbid it; the end-to-end tests skip the io_uring backend then.
 * Exit 0: it works; 77: it does not (the reason on stderr).
 */
#include <stdio.h>
#include <string.h>
#include <liburing.h>

int main(void)
{
	struct io_uring ring;
	int rc = io_uring_queue_init(2, &ring, 0);

	if (rc < 0) {
		fprintf(stderr, "io_uring_queue_init: %s\n", strerror(-rc));
		return 77;
	}
	io_uring_queue_exit(&ring);
	return 0;
}
