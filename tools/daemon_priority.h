/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * How the daemon stands with the scheduler: it plays a NIC, which never
 * waits for the host's CPUs, so its wake-ups (a datagram, a kick, the poll
 * of direct-verbs doorbells) should preempt programs that busy-poll their
 * CQs. rocemu_daemon_schedule prints a line on stderr and returns -1 when
 * the daemon must not start.
 */
#ifndef ROCEMU_TOOLS_DAEMON_PRIORITY_H
#define ROCEMU_TOOLS_DAEMON_PRIORITY_H

#include <stdbool.h>

/*
 * Sets the daemon's standing, in this order:
 * - its timers lose their slack;
 * - ROCEMU_NICE (unset: -10; -20 to 19) is its nice value and, when it
 *   leads its own session (an autostarted daemon), its autogroup's; the
 *   default is taken only where the system allows it, a value set and
 *   refused stops the daemon;
 * - ROCEMU_REALTIME=1 (realtime): SCHED_FIFO at the lowest real-time
 *   priority, children back to the normal policy; refused with busy
 *   polling, which would keep a core from every other process.
 */
int rocemu_daemon_schedule(bool realtime, bool busy_poll);

#endif
