/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * rocemu: the command line of the emulator. It speaks only the control
 * protocol (include/rocemu/ctrl_io.h) and never links the emulator.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rocemu/ctrl_io.h"
#include "tools/cli_ctrl.h"
#include "tools/ladder.h"
#include "tools/stats_view.h"
#include "tools/trace_cmd.h"

#define START_TIMEOUT_MS 5000
#define STOP_TIMEOUT_MS 5000
#define POLL_MS 10

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: rocemu COMMAND [ARGS]\n"
		"\n"
		"  run [--] CMD [ARGS...]  run CMD with the verbs shim preloaded; starts rocemud\n"
		"                          for the time of CMD when none is running\n"
		"  status                  devices, processes and their objects\n"
		"  up DEV                  bring DEV's port up (IBV_EVENT_PORT_ACTIVE)\n"
		"  down DEV                take DEV's port down (IBV_EVENT_PORT_ERR)\n"
		"  fault DEV SPEC|off      inject faults on DEV's egress, e.g.\n"
		"                          drop=0.05,dup=0.02,reorder=0.02,corrupt=0.01,delay_us=200,seed=7\n"
		"  stats [DEV] [--json]    counters of every device or of DEV (as `rdma statistic`\n"
		"                          and mlx5 hw_counters name them), as text or JSON\n"
		"  capture DEV -w FILE     capture DEV's packets to FILE (pcap) from now on\n"
		"  capture DEV stop        end DEV's capture (the file stays complete)\n"
		"  trace [DEV] [--qp QPN] [--kind packet,qp,cqe,async]\n"
		"                          the daemon's events live, one line each, until Ctrl-C\n"
		"  ladder FILE.pcap... -o FILE.svg\n"
		"                          a ladder diagram of captures (one lane per QP)\n"
		"  stop                    ask the daemon to exit\n"
		"  --help                  show this help\n"
		"\n"
		"Environment: ROCEMU_RUNTIME_DIR, ROCEMU_DEVICES, ROCEMU_DAEMON, ROCEMU_SHIM,\n"
		"ROCEMU_LOG, ROCEMU_NET, ROCEMU_ONLY, ROCEMU_FAULTS (SPEC for every device at\n"
		"start), ROCEMU_PCAP (directory: capture to DIR/DEV.pcap), ROCEMU_PCAP_SNAPLEN\n"
		"(bytes kept of each captured frame, default 322; 0: whole frames).\n");
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* `rocemu stats [DEV] [--json]`: the report of every device or of DEV. */
static int cmd_stats(int argc, char **argv)
{
	const char *dev = NULL;
	bool json = false;
	char *report = NULL;
	size_t len = 0;
	FILE *mem;
	int i, ret;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!dev && argv[i][0] != '-')
			dev = argv[i];
		else
			return -1;
	}
	mem = open_memstream(&report, &len);
	if (!mem)
		return 1;
	ret = cmd_text(ROCEMU_OP_STATS, "stats", mem);
	fclose(mem);
	if (!ret) {
		ret = stats_view_print(report, dev, json, stdout);
		if (ret == -ENODEV)
			fprintf(stderr, "rocemu: no device %s\n", dev);
		ret = ret ? 1 : 0;
	}
	free(report);
	return ret;
}

static int cmd_port(const char *dev, enum ibv_port_state state)
{
	struct rocemu_set_port_state_req req = { .port_state = state };
	char dir[PATH_MAX];
	int ret;

	if (strlen(dev) >= sizeof(req.dev_name)) {
		fprintf(stderr, "rocemu: no device %s\n", dev);
		return 1;
	}
	memcpy(req.dev_name, dev, strlen(dev));
	if (runtime_dir_or_die(dir, sizeof(dir)))
		return 1;
	ret = ctrl_call(dir, ROCEMU_OP_SET_PORT_STATE, &req, sizeof(req), NULL, 0);
	if (!ret)
		return 0;
	if (ret == -ENODEV) {
		fprintf(stderr, "rocemu: no device %s\n", dev);
		return 1;
	}
	return command_failed(dir, ret, state == IBV_PORT_ACTIVE ? "up" : "down");
}

static int cmd_fault(const char *dev, const char *spec)
{
	struct rocemu_set_faults_req req = { 0 };
	char dir[PATH_MAX];
	int ret;

	if (strlen(dev) >= sizeof(req.dev_name)) {
		fprintf(stderr, "rocemu: no device %s\n", dev);
		return 1;
	}
	if (strlen(spec) >= sizeof(req.spec)) {
		fprintf(stderr, "rocemu: fault: specification too long\n");
		return 1;
	}
	memcpy(req.dev_name, dev, strlen(dev));
	memcpy(req.spec, spec, strlen(spec));
	if (runtime_dir_or_die(dir, sizeof(dir)))
		return 1;
	ret = ctrl_call(dir, ROCEMU_OP_SET_FAULTS, &req, sizeof(req), NULL, 0);
	if (!ret)
		return 0;
	if (ret == -ENODEV)
		fprintf(stderr, "rocemu: no device %s\n", dev);
	else if (ret == -EINVAL)
		fprintf(stderr, "rocemu: fault: invalid specification '%s' (keys drop, dup, reorder, "
			"corrupt: rates 0..1 adding up to at most 1; delay_us; seed)\n", spec);
	else
		return command_failed(dir, ret, "fault");
	return 1;
}

/* `rocemu capture DEV -w FILE` and `rocemu capture DEV stop`: a capture on a running daemon. */
static int cmd_capture(const char *dev, const char *file)
{
	struct rocemu_set_capture_req req = { 0 };
	char dir[PATH_MAX], cwd[PATH_MAX];
	int n = 0, sock, ret;

	if (strlen(dev) >= sizeof(req.dev_name)) {
		fprintf(stderr, "rocemu: no device %s\n", dev);
		return 1;
	}
	memcpy(req.dev_name, dev, strlen(dev));
	/* The daemon has its own working directory: it is told an absolute name. */
	if (file && file[0] == '/')
		n = snprintf(req.path, sizeof(req.path), "%s", file);
	else if (file && getcwd(cwd, sizeof(cwd)))
		n = snprintf(req.path, sizeof(req.path), "%s/%s", cwd, file);
	else if (file)
		n = -1;
	if (n < 0 || (size_t)n >= sizeof(req.path)) {
		fprintf(stderr, "rocemu: capture: the absolute name of %s is too long\n", file);
		return 1;
	}
	if (runtime_dir_or_die(dir, sizeof(dir)))
		return 1;
	/* Connected first: the daemon's own errnos (ENOENT of a file) then mean what they say. */
	sock = ctrl_open(dir);
	if (sock < 0)
		return command_failed(dir, sock, "capture");
	ret = ctrl_ask(sock, ROCEMU_OP_SET_CAPTURE, &req, sizeof(req), NULL);
	close(sock);
	if (ret == -ENODEV)
		fprintf(stderr, "rocemu: no device %s\n", dev);
	else if (ret == -ENODATA)
		fprintf(stderr, "rocemu: %s has no capture running\n", dev);
	else if (ret == -EBUSY)
		fprintf(stderr, "rocemu: %s captures already; `rocemu capture %s stop` first\n", dev,
			dev);
	else if (ret)
		fprintf(stderr, "rocemu: capture: the daemon cannot write %s: %s\n", req.path,
			strerror(-ret));
	return ret ? 1 : 0;
}

/* Ask the daemon of dir to exit and wait until its process is gone. */
static int daemon_shutdown(const char *dir)
{
	long waited;
	pid_t pid;
	int ret;

	ret = daemon_hello(dir, &pid);
	if (!ret)
		ret = ctrl_call(dir, ROCEMU_OP_SHUTDOWN, NULL, 0, NULL, 0);
	if (ret)
		return ret;
	for (waited = 0; waited < STOP_TIMEOUT_MS; waited += POLL_MS) {
		if (kill(pid, 0) && errno == ESRCH)
			return 0;
		sleep_ms(POLL_MS);
	}
	return -ETIMEDOUT;
}

static int cmd_stop(void)
{
	char dir[PATH_MAX];
	int ret;

	if (runtime_dir_or_die(dir, sizeof(dir)))
		return 1;
	ret = daemon_shutdown(dir);
	return ret ? command_failed(dir, ret, "stop") : 0;
}

/* The directory this executable lives in. */
static int exe_dir(char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	if (n <= 0)
		return -errno;
	path[n] = '\0';
	return snprintf(buf, len, "%s", dirname(path)) >= (int)len ? -ENAMETOOLONG : 0;
}

/* $env, else the first of candidates that exists (the last one regardless). */
static void find_file(char *out, size_t len, const char *env, const char *const *candidates,
		      int count)
{
	const char *value = getenv(env);
	int i;

	if (value && *value) {
		snprintf(out, len, "%s", value);
		return;
	}
	for (i = 0; i < count - 1; i++)
		if (candidates[i][0] && !access(candidates[i], R_OK))
			break;
	snprintf(out, len, "%s", candidates[i]);
}

static void find_daemon_and_shim(char *daemon, char *shim, size_t len)
{
	char dir[PATH_MAX] = "", local_daemon[PATH_MAX + 16] = "", local_shim[PATH_MAX + 32] = "";

	if (!exe_dir(dir, sizeof(dir))) {
		snprintf(local_daemon, sizeof(local_daemon), "%s/rocemud", dir);
		snprintf(local_shim, sizeof(local_shim), "%s/../lib/.libs/librocemu.so", dir);
	}
	find_file(daemon, len, "ROCEMU_DAEMON",
		  (const char *const[]){ local_daemon, ROCEMU_BINDIR "/rocemud" }, 2);
	find_file(shim, len, "ROCEMU_SHIM",
		  (const char *const[]){ local_shim, ROCEMU_PKGLIBDIR "/librocemu.so" }, 2);
}

/* Start rocemud and wait until it answers. Returns its pid, or -1 (reported). */
static pid_t daemon_start(const char *path, const char *dir)
{
	long waited;
	pid_t pid, answering, parent = getpid();
	int status, devnull, ret;

	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "rocemu: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* Out of the terminal's process group: it exits on our SHUTDOWN, or when we die. */
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(1);
		devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (devnull >= 0) {
			dup2(devnull, STDIN_FILENO);
			dup2(devnull, STDOUT_FILENO);
		}
		execl(path, "rocemud", (char *)NULL);
		fprintf(stderr, "rocemu: cannot run %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	for (waited = 0; waited < START_TIMEOUT_MS; waited += POLL_MS) {
		ret = daemon_hello(dir, &answering);
		if (!ret)
			return pid;
		if (ret == -EPERM)	/* said by ctrl_open */
			goto stop;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			fprintf(stderr, "rocemu: %s exited (status %d) before answering\n", path,
				WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
			return -1;
		}
		sleep_ms(POLL_MS);
	}
	fprintf(stderr, "rocemu: %s did not answer within %d s\n", path, START_TIMEOUT_MS / 1000);
stop:
	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
	return -1;
}

/* Wait for the daemon we started to exit; after the timeout, terminate it. */
static void daemon_reap(pid_t pid)
{
	long waited;
	int status;

	for (waited = 0; waited < STOP_TIMEOUT_MS; waited += POLL_MS) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return;
		sleep_ms(POLL_MS);
	}
	fprintf(stderr, "rocemu: rocemud (pid %d) did not exit; terminating it\n", (int)pid);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

static volatile sig_atomic_t child_pid;

static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

/* LD_PRELOAD for CMD: [ASan runtime:]shim[:what was there]. */
static char *preload_value(const char *shim)
{
	const char *old = getenv("LD_PRELOAD");
	const char *asan = "";
	char *value;

#ifdef ROCEMU_ASAN_RUNTIME
	/* A sanitized shim loads into unsanitized programs only after the ASan runtime. */
	asan = ROCEMU_ASAN_RUNTIME ":";
#endif
	if (asprintf(&value, "%s%s%s%s", asan, shim, old && *old ? ":" : "",
		     old && *old ? old : "") < 0)
		return NULL;
	return value;
}

static int run_child(char **argv, const char *daemon, const char *shim)
{
	struct sigaction sa = { .sa_handler = forward_signal };
	char *preload = preload_value(shim);
	pid_t pid;
	int status;

	if (!preload)
		return 1;
	sigemptyset(&sa.sa_mask);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "rocemu: fork: %s\n", strerror(errno));
		free(preload);
		return 1;
	}
	if (pid == 0) {
		setenv("LD_PRELOAD", preload, 1);
		setenv("ROCEMU_DAEMON", daemon, 1);
#ifdef ROCEMU_ASAN_RUNTIME
		/* Distribution programs (perftest...) leak by design at exit. */
		setenv("ASAN_OPTIONS", "detect_leaks=0", 0);
#endif
		execvp(argv[0], argv);
		fprintf(stderr, "rocemu: %s: %s\n", argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	free(preload);
	child_pid = pid;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 1;
	child_pid = 0;
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Serialise starting with the shim's autostart: both take the same lock. */
static int lock_autostart(const char *dir)
{
	char path[PATH_MAX + 32];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, ROCEMU_CTRL_LOCK);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		while (flock(fd, LOCK_EX) && errno == EINTR)
			;
	return fd;
}

static int cmd_run(int argc, char **argv)
{
	char dir[PATH_MAX], daemon[PATH_MAX], shim[PATH_MAX], why[ROCEMU_TRUST_WHY_MAX];
	pid_t started, running;
	int lock, ret;

	if (argc > 0 && !strcmp(argv[0], "--")) {
		argc--;
		argv++;
	}
	if (argc == 0) {
		fprintf(stderr, "rocemu: run: no command given\n");
		usage(stderr);
		return 2;
	}
	if (runtime_dir_or_die(dir, sizeof(dir)))
		return 1;
	ret = rocemu_runtime_dir_make(dir, why, sizeof(why));
	if (ret == -EPERM) {
		untrusted(dir, why);
		return 1;
	}
	if (ret) {
		fprintf(stderr, "rocemu: runtime directory %s: %s\n", dir, strerror(-ret));
		return 1;
	}
	find_daemon_and_shim(daemon, shim, sizeof(daemon));
	lock = lock_autostart(dir);
	started = 0;
	ret = daemon_hello(dir, &running);
	if (ret) {
		started = ret == -EPERM ? -1 : daemon_start(daemon, dir);
		if (started < 0) {
			if (lock >= 0)
				close(lock);
			return 1;
		}
	}
	if (lock >= 0)
		close(lock);
	ret = run_child(argv, daemon, shim);
	if (started > 0) {
		int err = ctrl_call(dir, ROCEMU_OP_SHUTDOWN, NULL, 0, NULL, 0);

		if (err)
			fprintf(stderr, "rocemu: shutdown of rocemud: %s\n", strerror(-err));
		daemon_reap(started);
	}
	return ret;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;
	int ret;

	if (!cmd) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 2, argv + 2);
	if (!strcmp(cmd, "status") && argc == 2)
		return cmd_text(ROCEMU_OP_STATUS, "status", stdout);
	if (!strcmp(cmd, "stats") && argc <= 4 && (ret = cmd_stats(argc - 2, argv + 2)) >= 0)
		return ret;
	if (!strcmp(cmd, "fault") && argc == 4)
		return cmd_fault(argv[2], argv[3]);
	if (!strcmp(cmd, "capture") && argc == 5 && !strcmp(argv[3], "-w"))
		return cmd_capture(argv[2], argv[4]);
	if (!strcmp(cmd, "capture") && argc == 4 && !strcmp(argv[3], "stop"))
		return cmd_capture(argv[2], NULL);
	if (!strcmp(cmd, "trace"))
		return trace_command(argc - 2, argv + 2);
	if (!strcmp(cmd, "ladder"))
		return ladder_command(argc - 2, argv + 2);
	if (!strcmp(cmd, "stop") && argc == 2)
		return cmd_stop();
	if (!strcmp(cmd, "up") && argc == 3)
		return cmd_port(argv[2], IBV_PORT_ACTIVE);
	if (!strcmp(cmd, "down") && argc == 3)
		return cmd_port(argv[2], IBV_PORT_DOWN);
	fprintf(stderr, "rocemu: unknown command or wrong arguments: %s\n", cmd);
	usage(stderr);
	return 2;
}
