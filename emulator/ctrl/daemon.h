/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The daemon's run: the event loop (io_uring, or epoll; ROCEMU_NET), the
 * emulated devices on it, the control socket and SIGTERM/SIGINT, until a
 * signal, SHUTDOWN or the idle exit stops it. rocemud gets its loop here,
 * never from net/ directly.
 */
#ifndef ROCEMU_EMULATOR_DAEMON_H
#define ROCEMU_EMULATOR_DAEMON_H

#include <stdbool.h>
#include <stddef.h>

#include "emulator/core/device.h"

/* Where the devices' UDP sockets live (ROCEMU_WIRE). */
enum rocemu_wire_mode {
	ROCEMU_WIRE_AUTO,	/* private when every device is on loopback, else host */
	ROCEMU_WIRE_HOST,	/* bound on the host: other daemons and hosts reach them */
	ROCEMU_WIRE_PRIVATE,	/* in a network namespace of the daemon's own (udp_netns.h) */
};

struct rocemu_daemon_config {
	const char *runtime_dir;	/* made and checked by the caller */
	const struct rocemu_device *devs;
	unsigned int num_devs;
	unsigned int idle_exit_s;	/* 0: never exit for want of clients */
	bool autostarted;		/* for the log */
	bool udp_delivery;		/* ROCEMU_DELIVERY=udp: devices of this daemon talk through the kernel too */
	bool busy_poll;			/* ROCEMU_BUSY_POLL=1: spin while clients are connected */
	bool dma_by_mem;		/* ROCEMU_DMA=mem: every copy through /proc/PID/mem */
	struct rocemu_limits limits;	/* ROCEMU_LIMITS over the defaults; fds 0: a share of the daemon's */
	enum rocemu_wire_mode wire;		/* ROCEMU_WIRE: where the devices' UDP sockets live */
};

/*
 * Serve until stopped, then close everything. Returns 0, or -errno with a
 * one-line reason in err when it could not start (err empty: the loop
 * failed while running, as logged).
 */
int rocemu_daemon_run(const struct rocemu_daemon_config *cfg, char *err, size_t errlen);

#endif /* ROCEMU_EMULATOR_DAEMON_H */
