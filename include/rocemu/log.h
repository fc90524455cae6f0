/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * One log line per event on stderr, quiet by default. ROCEMU_LOG picks the
 * level: error, warn (default), info, debug. Header-only: the shim, the
 * daemon and the tools each include it and share nothing else.
 *
 * Convention: name the device, QPN and PSN where they apply, e.g.
 *   rocemu_log(ROCEMU_LOG_DEBUG, "rocemu0 qp 0x000112 RESET->INIT");
 */
#ifndef ROCEMU_LOG_H
#define ROCEMU_LOG_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum rocemu_log_level {
	ROCEMU_LOG_ERROR,
	ROCEMU_LOG_WARN,
	ROCEMU_LOG_INFO,
	ROCEMU_LOG_DEBUG,
};

static inline int rocemu_log_threshold(void)
{
	static int level = -1;
	const char *env;

	if (level >= 0)
		return level;
	env = getenv("ROCEMU_LOG");
	if (!env || !*env || !strcmp(env, "warn"))
		level = ROCEMU_LOG_WARN;
	else if (!strcmp(env, "error"))
		level = ROCEMU_LOG_ERROR;
	else if (!strcmp(env, "info"))
		level = ROCEMU_LOG_INFO;
	else if (!strcmp(env, "debug"))
		level = ROCEMU_LOG_DEBUG;
	else
		level = ROCEMU_LOG_WARN;
	return level;
}

static inline int rocemu_log_enabled(enum rocemu_log_level lvl)
{
	return (int)lvl <= rocemu_log_threshold();
}

__attribute__((format(printf, 2, 3)))
static inline void rocemu_log(enum rocemu_log_level lvl, const char *fmt, ...)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };
	char line[512];
	struct timespec ts;
	va_list ap;
	int n;

	if (!rocemu_log_enabled(lvl))
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	n = snprintf(line, sizeof(line), "rocemu[%d] %ld.%06ld %s: ", (int)getpid(),
		     (long)ts.tv_sec, ts.tv_nsec / 1000, names[lvl]);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(line))
		n += vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line) - 1)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* One write per line so lines from several processes do not interleave. */
	if (write(STDERR_FILENO, line, n) < 0)
		return;
}

#endif /* ROCEMU_LOG_H */
