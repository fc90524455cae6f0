/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "tools/daemon_priority.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "rocemu/log.h"

/*
 * -10: at the programs' own weight the daemon loses about one wake-up race
 * in a hundred to a busy-polling program and waits for the scheduler's tick
 * (4 ms at HZ=250); at -10 it wins them while still leaving a CPU it keeps
 * busy a tenth to the others.
 */
#define DEFAULT_NICE (-10)

/* An autostarted daemon leads its own session and so its own autogroup: set that group's nice too. */
static void autogroup_nice(int nice)
{
	FILE *f;
	bool ok;

	if (getsid(0) != getpid())
		return;
	f = fopen("/proc/self/autogroup", "w");
	ok = f && fprintf(f, "%d", nice) > 0;
	if (f && fclose(f))
		ok = false;
	if (!ok)
		rocemu_log(ROCEMU_LOG_DEBUG, "autogroup nice %d: %s", nice, strerror(errno));
}

/*
 * The loop's short timers (the 16 us poll of direct doorbells) fire on
 * time: a normal task's timers may be late by its slack, 50 us by default,
 * which the epoll backend's waits take (io_uring's do not).
 */
static void timer_slack_tight(void)
{
	if (prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL))
		rocemu_log(ROCEMU_LOG_DEBUG, "timer slack: %s", strerror(errno));
}

/* ROCEMU_NICE, or the default where allowed; -1 when a value set is bad or refused. */
static int nice_enter(void)
{
	const char *env = getenv("ROCEMU_NICE");
	long nice = DEFAULT_NICE;
	char *end;

	if (env && *env) {
		errno = 0;
		nice = strtol(env, &end, 10);
		if (errno || *end || nice < -20 || nice > 19) {
			fprintf(stderr, "rocemud: ROCEMU_NICE=\"%s\" is not a nice value from -20 to 19\n",
				env);
			return -1;
		}
	}
	if (setpriority(PRIO_PROCESS, 0, (int)nice)) {
		if (env && *env) {
			fprintf(stderr, "rocemud: ROCEMU_NICE=%ld: %s (a negative value needs "
					"CAP_SYS_NICE or an RLIMIT_NICE above 20)\n", nice, strerror(errno));
			return -1;
		}
		rocemu_log(ROCEMU_LOG_DEBUG, "nice %ld not allowed here (%s): the daemon stays at %d",
			   nice, strerror(errno), getpriority(PRIO_PROCESS, 0));
		return 0;
	}
	autogroup_nice((int)nice);
	rocemu_log(ROCEMU_LOG_DEBUG, "nice %ld", nice);
	return 0;
}

/* ROCEMU_REALTIME=1: SCHED_FIFO 1, never with busy polling. */
static int realtime_enter(bool realtime, bool busy_poll)
{
	struct sched_param param = { .sched_priority = 1 };

	if (!realtime)
		return 0;
	if (busy_poll) {
		fprintf(stderr, "rocemud: ROCEMU_REALTIME=1 with ROCEMU_BUSY_POLL=1 would keep a core "
				"from every other process\n");
		return -1;
	}
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &param)) {
		fprintf(stderr, "rocemud: ROCEMU_REALTIME=1: SCHED_FIFO: %s (it needs CAP_SYS_NICE or an "
				"RLIMIT_RTPRIO of 1)\n", strerror(errno));
		return -1;
	}
	rocemu_log(ROCEMU_LOG_INFO, "real-time scheduling: SCHED_FIFO priority 1");
	return 0;
}

int rocemu_daemon_schedule(bool realtime, bool busy_poll)
{
	timer_slack_tight();
	return nice_enter() || realtime_enter(realtime, busy_poll) ? -1 : 0;
}
