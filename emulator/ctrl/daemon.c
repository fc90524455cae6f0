/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/ctrl/daemon.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "emulator/ctrl/ctrl_server.h"
#include "emulator/ctrl/emu_life.h"
#include "net/loop/loop.h"
#include "net/udp/udp_netns.h"
#include "rocemu/log.h"

static void on_signal(void *arg, int fd, uint32_t revents)
{
	struct rocemu_loop *loop = arg;
	struct signalfd_siginfo si;

	if (read(fd, &si, sizeof(si)) != sizeof(si))
		return;
	rocemu_log(ROCEMU_LOG_INFO, "%s received, exiting", strsignal((int)si.ssi_signo));
	rocemu_loop_stop(loop);
}

/*
 * SIGTERM and SIGINT arrive through the loop. What a client can make
 * happen never ends the daemon: SIGPIPE (a client may vanish), SIGXFSZ
 * and SIGXCPU (an autostarted daemon inherits the soft RLIMIT_FSIZE and
 * RLIMIT_CPU of the client that started it; past the first a write fails
 * instead), SIGBUS (its memfds are sealed, shm.h).
 */
static int signals_setup(void)
{
	sigset_t set;
	int fd;

	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	signal(SIGXCPU, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

/* emu on loop until it stops; err set when it could not start. */
static int serve(const struct rocemu_daemon_config *cfg, struct rocemu_loop *loop, int sigfd,
		 char *err, size_t errlen)
{
	static struct rocemu_emu emu;
	uint64_t fds;
	int ret;

	ret = rocemu_emu_init(&emu, loop, cfg->runtime_dir, cfg->devs, cfg->num_devs, err, errlen);
	if (ret)
		return ret;
	emu.busy_poll = cfg->busy_poll;
	emu.dma_by_mem = cfg->dma_by_mem;
	emu.limits = cfg->limits;
	fds = rocemu_limits_fds_setup(&emu.limits);
	ret = rocemu_loop_watch_fd(loop, sigfd, on_signal, loop);
	if (!ret)
		ret = rocemu_ctrl_server_start(&emu, cfg->idle_exit_s, err, errlen);
	else
		snprintf(err, errlen, "cannot watch signals: %s", strerror(-ret));
	if (ret) {
		rocemu_emu_fini(&emu);
		return ret;
	}
	rocemu_log(ROCEMU_LOG_INFO, "started: %u device(s), runtime %s%s", cfg->num_devs,
		   cfg->runtime_dir, cfg->autostarted ? " (autostarted)" : "");
	rocemu_log(ROCEMU_LOG_INFO, "%" PRIu64 " descriptors, %" PRIu64 " a client", fds,
		   emu.limits.fds);
	ret = rocemu_loop_run(loop);
	if (ret)
		rocemu_log(ROCEMU_LOG_ERROR, "event loop failed: %s", strerror(-ret));
	/* Ports close before the socket goes: whoever waits for the socket may rebind them. */
	rocemu_emu_fini(&emu);
	rocemu_ctrl_server_stop(&emu);
	rocemu_log(ROCEMU_LOG_INFO, "stopped");
	return ret;
}

/* Every device on 127.0.0.0/8: none can reach another host. */
static bool all_loopback(const struct rocemu_daemon_config *cfg)
{
	for (unsigned int i = 0; i < cfg->num_devs; i++)
		if ((ntohl(cfg->devs[i].ipv4) >> 24) != IN_LOOPBACKNET)
			return false;
	return true;
}

/* The devices' sockets in a namespace of the daemon's own where none needs the host's. */
static int wire_setup(const struct rocemu_daemon_config *cfg, char *err, size_t errlen)
{
	char why[160];
	int ret;

	if (cfg->wire == ROCEMU_WIRE_HOST || (cfg->wire == ROCEMU_WIRE_AUTO && !all_loopback(cfg)))
		return 0;
	if (!all_loopback(cfg)) {
		snprintf(err, errlen, "ROCEMU_WIRE=private: a device's address is not on loopback");
		return -EINVAL;
	}
	ret = rocemu_udp_netns_start(why, sizeof(why));
	if (ret && cfg->wire == ROCEMU_WIRE_PRIVATE) {
		snprintf(err, errlen, "ROCEMU_WIRE=private: %s", why);
		return ret;
	}
	if (ret)
		rocemu_log(ROCEMU_LOG_WARN, "devices bound on the host (%s): other local users can reach them",
			   why);
	else
		rocemu_log(ROCEMU_LOG_INFO, "wire private: the devices' UDP sockets live in a network namespace of their own");
	return 0;
}

int rocemu_daemon_run(const struct rocemu_daemon_config *cfg, char *err, size_t errlen)
{
	struct rocemu_loop *loop;
	int sigfd, ret;

	err[0] = '\0';
	ret = wire_setup(cfg, err, errlen);
	if (ret)
		return ret;
	sigfd = signals_setup();
	if (sigfd < 0) {
		snprintf(err, errlen, "signals: %s", strerror(-sigfd));
		rocemu_udp_netns_stop();
		return sigfd;
	}
	loop = rocemu_loop_new(ROCEMU_LOOP_AUTO);
	if (!loop) {
		ret = -errno;
		snprintf(err, errlen, "event loop: %s", strerror(errno));
		close(sigfd);
		rocemu_udp_netns_stop();
		return ret;
	}
	rocemu_log(ROCEMU_LOG_INFO, "event loop backend %s", rocemu_loop_backend_name(loop));
	rocemu_loop_set_local_delivery(loop, !cfg->udp_delivery);
	ret = serve(cfg, loop, sigfd, err, errlen);
	rocemu_loop_unwatch_fd(loop, sigfd);
	rocemu_loop_free(loop);
	close(sigfd);
	rocemu_udp_netns_stop();
	return ret;
}
