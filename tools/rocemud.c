/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * rocemud: the emulated RoCE adapters of this host (network namespace).
 * Runs in the foreground; logs go to stderr (ROCEMU_LOG sets the level).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emulator/ctrl/daemon.h"
#include "emulator/ctrl/device_config.h"
#include "rocemu/ctrl_io.h"
#include "rocemu/log.h"
#include "tools/daemon_priority.h"

#define DEFAULT_AUTOSTART_IDLE_EXIT 10
#define MAX_IDLE_EXIT 86400

struct options {
	bool autostarted;
	long idle_exit_s;	/* -1: not given */
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: rocemud [OPTIONS]\n"
		"Emulated RoCEv2 RDMA adapters (ConnectX look) for libibverbs programs.\n"
		"\n"
		"  -f, --foreground     run in the foreground (the default)\n"
		"      --autostarted    started by a program on demand: exit after\n"
		"                       ROCEMU_IDLE_EXIT seconds (default %d) without clients\n"
		"      --idle-exit S    exit after S seconds without any connection\n"
		"  -h, --help           show this help\n"
		"\n"
		"Environment: ROCEMU_DEVICES (default %s), ROCEMU_RUNTIME_DIR,\n"
		"ROCEMU_NET (io_uring|epoll), ROCEMU_LOG (error|warn|info|debug), ROCEMU_IDLE_EXIT,\n"
		"ROCEMU_LIMITS (what each client may hold: key=value,...; see rocemu(7)).\n",
		DEFAULT_AUTOSTART_IDLE_EXIT, ROCEMU_DEFAULT_DEVICES);
}

static int parse_seconds(const char *text, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < 0 || v > MAX_IDLE_EXIT)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_options(int argc, char **argv, struct options *opt)
{
	enum { OPT_AUTOSTARTED = 256, OPT_IDLE_EXIT };
	static const struct option longopts[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "autostarted", no_argument, NULL, OPT_AUTOSTARTED },
		{ "idle-exit", required_argument, NULL, OPT_IDLE_EXIT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opt->autostarted = false;
	opt->idle_exit_s = -1;
	while ((c = getopt_long(argc, argv, "fh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			break;
		case OPT_AUTOSTARTED:
			opt->autostarted = true;
			break;
		case OPT_IDLE_EXIT:
			if (parse_seconds(optarg, &opt->idle_exit_s)) {
				fprintf(stderr, "rocemud: --idle-exit wants seconds from 0 to %d, not \"%s\"\n",
					MAX_IDLE_EXIT, optarg);
				return -1;
			}
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rocemud: unexpected argument \"%s\"\n", argv[optind]);
		return -1;
	}
	return 0;
}

/* Seconds without connections before exiting; 0: never. */
static long idle_exit_seconds(const struct options *opt)
{
	const char *env = getenv("ROCEMU_IDLE_EXIT");
	long s = DEFAULT_AUTOSTART_IDLE_EXIT;

	if (opt->idle_exit_s >= 0)
		return opt->idle_exit_s;
	if (!opt->autostarted)
		return 0;
	if (env && *env && parse_seconds(env, &s))
		fprintf(stderr, "rocemud: ignoring ROCEMU_IDLE_EXIT=\"%s\" (not seconds)\n", env);
	return s;
}

/*
 * A variable of two values: *on is whether it says on_value (unset or
 * empty: off_value). Returns 0, or -1 with a line on stderr for another value.
 */
static int env_switch(const char *name, const char *off_value, const char *on_value, bool *on)
{
	const char *env = getenv(name);

	*on = env && !strcmp(env, on_value);
	if (!env || !*env || *on || !strcmp(env, off_value))
		return 0;
	fprintf(stderr, "rocemud: %s=\"%s\" is neither %s nor %s\n", name, env, off_value, on_value);
	return -1;
}

/* ROCEMU_WIRE: unset or empty for the default, host or private. */
static int env_wire(enum rocemu_wire_mode *wire)
{
	const char *env = getenv("ROCEMU_WIRE");

	*wire = ROCEMU_WIRE_AUTO;
	if (!env || !*env)
		return 0;
	if (!strcmp(env, "host") || !strcmp(env, "private")) {
		*wire = env[0] == 'h' ? ROCEMU_WIRE_HOST : ROCEMU_WIRE_PRIVATE;
		return 0;
	}
	fprintf(stderr, "rocemud: ROCEMU_WIRE=\"%s\" is neither host nor private\n", env);
	return -1;
}

/*
 * Is a daemon answering on dir's socket? Returns its pid, 0 when none
 * (a stale socket file is removed), or -errno (-EPERM: why says whose it is).
 */
static long running_daemon(const char *dir, char *why, size_t why_len)
{
	struct rocemu_hello_req req = { .pid = (uint32_t)getpid() };
	struct {
		struct rocemu_msg_hdr hdr;
		struct rocemu_hello_resp body;
	} resp;
	struct rocemu_msg_hdr hdr;
	struct sockaddr_un sun;
	long pid = 0;
	ssize_t n;
	int sock;

	sock = rocemu_ctrl_connect(dir, why, why_len);
	if (sock < 0) {
		if (sock != -ECONNREFUSED && sock != -ENOENT)
			return sock;
		if (sock == -ECONNREFUSED && !rocemu_ctrl_addr(&sun, dir)) {
			rocemu_log(ROCEMU_LOG_INFO, "removing stale socket %s", sun.sun_path);
			unlink(sun.sun_path);
		}
		return 0;
	}
	rocemu_msg_init(&hdr, ROCEMU_OP_HELLO, 1, 0, sizeof(req));
	if (!rocemu_ctrl_send(sock, &hdr, &req, NULL, 0)) {
		n = rocemu_ctrl_recv(sock, &resp, sizeof(resp), NULL, NULL);
		if (n > 0 && !rocemu_msg_check(&resp, (size_t)n, 1) && !resp.hdr.status)
			pid = resp.body.daemon_pid;
	}
	close(sock);
	return pid ? pid : -EBUSY;	/* something listens there, but not a daemon of ours */
}

static int run(const struct options *opt)
{
	static struct rocemu_device devs[ROCEMU_MAX_DEVICES];
	struct rocemu_daemon_config cfg;
	struct rocemu_limits limits;
	char dir[PATH_MAX], err[512], why[ROCEMU_TRUST_WHY_MAX];
	unsigned int num_devs;
	bool udp_delivery, busy_poll, dma_by_mem, realtime;
	enum rocemu_wire_mode wire;
	long other;
	int ret;

	if (rocemu_devices_parse(getenv("ROCEMU_DEVICES"), devs, &num_devs, err, sizeof(err))) {
		fprintf(stderr, "rocemud: ROCEMU_DEVICES: %s\n", err);
		return 1;
	}
	rocemu_limits_default(&limits);
	if (rocemu_limits_parse(getenv("ROCEMU_LIMITS"), &limits, err, sizeof(err))) {
		fprintf(stderr, "rocemud: ROCEMU_LIMITS: %s\n", err);
		return 1;
	}
	/* local: devices of this daemon hand datagrams over inside it; udp: through the kernel. */
	if (env_switch("ROCEMU_DELIVERY", "local", "udp", &udp_delivery) ||
	    env_switch("ROCEMU_BUSY_POLL", "0", "1", &busy_poll) ||
	    env_switch("ROCEMU_DMA", "pid", "mem", &dma_by_mem) || env_wire(&wire) ||
	    env_switch("ROCEMU_REALTIME", "0", "1", &realtime))
		return 1;
	ret = rocemu_runtime_dir(dir, sizeof(dir));
	if (!ret)
		ret = rocemu_runtime_dir_make(dir, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "rocemud: runtime directory %s: %s\n", dir,
			ret == -EPERM ? why : strerror(-ret));
		return 1;
	}
	other = running_daemon(dir, why, sizeof(why));
	if (other > 0) {
		fprintf(stderr, "rocemud: another daemon (pid %ld) is running in %s\n", other, dir);
		return 1;
	}
	if (other == -EPERM) {
		fprintf(stderr, "rocemud: runtime directory %s: %s\n", dir, why);
		return 1;
	}
	if (other < 0) {
		fprintf(stderr, "rocemud: %s/%s is in use: %s\n", dir, ROCEMU_CTRL_SOCKET,
			strerror((int)-other));
		return 1;
	}
	if (rocemu_daemon_schedule(realtime, busy_poll))
		return 1;
	if (busy_poll)
		rocemu_log(ROCEMU_LOG_INFO, "busy polling while clients are connected");
	if (dma_by_mem)
		rocemu_log(ROCEMU_LOG_INFO, "every copy through /proc/PID/mem (ROCEMU_DMA=mem)");
	cfg = (struct rocemu_daemon_config){ .runtime_dir = dir, .devs = devs,
					     .num_devs = num_devs,
					     .idle_exit_s = (unsigned int)idle_exit_seconds(opt),
					     .autostarted = opt->autostarted,
					     .udp_delivery = udp_delivery,
					     .busy_poll = busy_poll, .dma_by_mem = dma_by_mem,
					     .wire = wire, .limits = limits };
	ret = rocemu_daemon_run(&cfg, err, sizeof(err));
	if (ret && err[0])
		fprintf(stderr, "rocemud: %s\n", err);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct options opt;

	if (parse_options(argc, argv, &opt))
		return 2;
	return run(&opt);
}
