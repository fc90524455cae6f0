/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The process that writes a capture file. The kernel may stop a write()
 * to a file between two pages when SIGKILL comes, so a daemon writing its
 * own file could leave half a record. Instead the daemon hands records
 * through a pipe to this child, which writes whole records only: killed,
 * the daemon closes the pipe, and the child writes what came whole and
 * drops the rest.
 */
#include "net/observe/pcap_sink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SINK_BUF_BYTES (2u << 20)	/* a batch and a record cut in two */

/* Write all of buf to fd; 0 or -errno. */
static int write_all(int fd, const uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int rocemu_pcap_sink_write(int pipe_fd, const void *buf, size_t len)
{
	return write_all(pipe_fd, buf, len);
}

/* Bytes of whole records at the start of buf[0, len). */
static size_t whole_records(const uint8_t *buf, size_t len)
{
	size_t at = 0;

	for (;;) {
		uint32_t caplen;

		if (len - at < ROCEMU_PCAP_RECORD_HDR_BYTES)
			return at;
		memcpy(&caplen, buf + at + ROCEMU_PCAP_RECORD_CAPLEN_AT, sizeof(caplen));
		if (len - at - ROCEMU_PCAP_RECORD_HDR_BYTES < caplen)
			return at;
		at += ROCEMU_PCAP_RECORD_HDR_BYTES + caplen;
	}
}

/* The child: pipe in, whole records out. Exits 0, or with the errno of what failed. */
static __attribute__((noreturn)) void sink_run(int in, int out)
{
	uint8_t *buf = malloc(SINK_BUF_BYTES);
	size_t held = 0, whole;
	ssize_t n;
	int err;

	if (!buf)
		_exit(ENOMEM);
	while ((n = read(in, buf + held, SINK_BUF_BYTES - held)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		held += (size_t)n;
		whole = whole_records(buf, held);
		err = write_all(out, buf, whole);
		if (err)
			_exit(-err);	/* the daemon's next write finds the pipe closed */
		memmove(buf, buf + whole, held - whole);
		held -= whole;
		/* A record larger than the buffer cannot come: the daemon's are at most 64 KiB. */
		if (held == SINK_BUF_BYTES)
			_exit(EMSGSIZE);
	}
	_exit(close(out) ? errno : 0);
}

int rocemu_pcap_sink_start(int file_fd, const void *head, size_t head_len, pid_t *pid)
{
	int fds[2], err;
	pid_t child;

	/* The file header is no record: it goes in before the child starts. */
	err = write_all(file_fd, head, head_len);
	if (err || pipe2(fds, O_CLOEXEC)) {
		err = err ? err : -errno;
		close(file_fd);
		return err;
	}
	/* A batch goes in with one write while the child is busy (the limit may refuse it). */
	(void)fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
	child = fork();
	if (child == 0) {
		/* Only the pipe and the file: no client connection may stay open here. */
		if (dup2(fds[0], STDIN_FILENO) < 0 || dup2(file_fd, STDOUT_FILENO) < 0)
			_exit(errno);
		close_range(STDERR_FILENO + 1, ~0u, 0);
		sink_run(STDIN_FILENO, STDOUT_FILENO);
	}
	err = child < 0 ? -errno : 0;
	close(fds[0]);
	close(file_fd);
	if (err) {
		close(fds[1]);
		return err;
	}
	*pid = child;
	return fds[1];
}

int rocemu_pcap_sink_stop(int pipe_fd, pid_t pid)
{
	int status;

	close(pipe_fd);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(status))
		return -EIO;
	return -WEXITSTATUS(status);
}
