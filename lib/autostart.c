/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Reaching the daemon, and starting it when nobody answers: under flock()
 * on <runtime_dir>/autostart.lock so that racing processes start one
 * daemon, detached (double fork, setsid) so it outlives the program.
 */
#include "lib/shim.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/wait.h>

#include "rocemu/ctrl_io.h"
#include "rocemu/log.h"

#define AUTOSTART_WAIT_MS 5000
#define AUTOSTART_POLL_MS 10

static bool is_executable(const char *path)
{
	return access(path, X_OK) == 0;
}

/* $ROCEMU_DAEMON, else ROCEMU_BINDIR/rocemud, else next to the shim (build tree). */
static int daemon_path(char *buf, size_t len)
{
	static const char *const relative[] = { "../tools/rocemud", "../../tools/rocemud" };
	const char *env = getenv("ROCEMU_DAEMON");
	char self[PATH_MAX];
	const char *self_dir;
	Dl_info info;
	size_t i;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return 0;
	}
	snprintf(buf, len, "%s/rocemud", ROCEMU_BINDIR);
	if (is_executable(buf))
		return 0;
	if (!dladdr((void *)daemon_path, &info) || !info.dli_fname)
		return -ENOENT;
	snprintf(self, sizeof(self), "%s", info.dli_fname);
	self_dir = dirname(self);
	for (i = 0; i < sizeof(relative) / sizeof(relative[0]); i++) {
		snprintf(buf, len, "%s/%s", self_dir, relative[i]);
		if (is_executable(buf))
			return 0;
	}
	return -ENOENT;
}

/* Only async-signal-safe calls between fork and exec: the app may have threads. */
static int daemon_spawn(const char *path, const char *log_path)
{
	static const char exec_failed[] = "librocemu: cannot execute rocemud\n";
	char *const argv[] = { (char *)path, (char *)"--autostarted", NULL };
	sigset_t none;
	pid_t pid;

	sigemptyset(&none);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int null_fd, log_fd;

		if (fork() != 0)
			_exit(0);
		setsid();
		sigprocmask(SIG_SETMASK, &none, NULL);
		null_fd = open("/dev/null", O_RDWR);
		log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0600);
		dup2(null_fd, STDIN_FILENO);
		dup2(null_fd, STDOUT_FILENO);
		dup2(log_fd >= 0 ? log_fd : null_fd, STDERR_FILENO);
		close_range(3, ~0U, 0);	/* the app's descriptors are not the daemon's */
		execv(path, argv);
		if (write(STDERR_FILENO, exec_failed, sizeof(exec_failed) - 1) < 0)
			_exit(127);
		_exit(127);
	}
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return 0;
}

/* Connect to the daemon of dir if we trust it (rocemu_ctrl_connect); say why not. */
static int trusted_connect(const char *dir)
{
	char why[ROCEMU_TRUST_WHY_MAX];
	int fd = rocemu_ctrl_connect(dir, why, sizeof(why));

	if (fd == -EPERM)
		rocemu_log(ROCEMU_LOG_ERROR, "runtime directory %s: %s: not talking to rocemud there",
			   dir, why);
	return fd;
}

static int connect_with_wait(const char *dir, int wait_ms)
{
	const struct timespec pause = { 0, AUTOSTART_POLL_MS * 1000000L };
	int fd, waited;

	for (waited = 0;; waited += AUTOSTART_POLL_MS) {
		fd = trusted_connect(dir);
		if (fd >= 0 || fd == -EPERM || waited >= wait_ms)
			return fd;
		nanosleep(&pause, NULL);
	}
}

/* Called with the autostart lock held. */
static int daemon_start_and_connect(const char *dir)
{
	char path[PATH_MAX], log_path[PATH_MAX + 16];
	int err;

	err = daemon_path(path, sizeof(path));
	if (err) {
		rocemu_log(ROCEMU_LOG_WARN, "cannot find rocemud (set ROCEMU_DAEMON)");
		return err;
	}
	snprintf(log_path, sizeof(log_path), "%s/rocemud.log", dir);
	rocemu_log(ROCEMU_LOG_INFO, "starting %s --autostarted (runtime %s)", path, dir);
	err = daemon_spawn(path, log_path);
	if (err)
		return err;
	return connect_with_wait(dir, AUTOSTART_WAIT_MS);
}

int rocemu_daemon_connect(void)
{
	char dir[PATH_MAX], lock_path[PATH_MAX + 32], why[ROCEMU_TRUST_WHY_MAX];
	int fd, lock_fd, err;

	err = rocemu_runtime_dir(dir, sizeof(dir));
	if (err)
		return err;
	fd = trusted_connect(dir);
	if (fd >= 0 || fd == -EPERM)
		return fd;
	err = rocemu_runtime_dir_make(dir, why, sizeof(why));
	if (err) {
		rocemu_log(ROCEMU_LOG_ERROR, "runtime directory %s: %s: cannot start rocemud there",
			   dir, err == -EPERM ? why : strerror(-err));
		return err;
	}
	snprintf(lock_path, sizeof(lock_path), "%s/%s", dir, ROCEMU_CTRL_LOCK);
	lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock_fd < 0)
		return -errno;
	while (flock(lock_fd, LOCK_EX) < 0 && errno == EINTR)
		;
	/* Someone may have started it while we waited for the lock. */
	fd = trusted_connect(dir);
	if (fd < 0 && fd != -EPERM)
		fd = daemon_start_and_connect(dir);
	flock(lock_fd, LOCK_UN);
	close(lock_fd);
	return fd;
}
