/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * How the daemon stands with the scheduler: it plays a NIC, which never
 * waits for the host's CPUs, so its wake-ups (a datagram, a kick, the poll
 * of direct-verbs doorbells) should preempt programs that busy-poll their
 * CQs. Both calls print a line on stderr and return -1 when the daemon
 * must not start.
 */
#ifndef ROCEMU_TOOLS_DAEMON_PRIORITY_H
#define ROCEMU_TOOLS_DAEMON_PRIORITY_H

#include <stdbool.h>

/*
 * ROCEMU_NICE (unset: -10; -20 to 19): the daemon's nice value and, when it
 * leads its own session (an autostarted daemon), its autogroup's. The
 * default is taken only where the system allows it; a value set and
 * refused stops the daemon. Its timers also lose their slack.
 */
int rocemu_daemon_nice(void);

/*
 * ROCEMU_REALTIME=1 (realtime): SCHED_FIFO at the lowest real-time priority;
 * children go back to the normal policy. Refused with busy polling, which
 * would keep a core from every other process.
 */
int rocemu_daemon_realtime(bool realtime, bool busy_poll);

#endif
