/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A responder whose process is gone answers nothing. The responder QPs
 * live in a child process, which is SIGKILLed once they are connected;
 * a process it cloned with its file table (CLONE_FILES, so no fork
 * handler of any library runs) keeps the control connection open, so the
 * daemon keeps the QPs of a process that no longer exists. A WRITE, READ,
 * SEND, atomic and zero-length WRITE to them then end with RETRY_EXC_ERR,
 * as with a host that lost its process, never REM_ACCESS_ERR or
 * REM_OP_ERR; the daemon logs that the process is gone, and frees its
 * objects once the connection closes.
 *
 *   rc_peer_gone DEVICE_A DEVICE_B ROCEMU DAEMON_LOG
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/e2e/harness/forge.h"
#include "tests/e2e/harness/verbs_pair.h"

#define MSG_LEN 64
#define MEM_LEN 4096
#define RECV_OFFSET 1024	/* where the SEND lands in the responder's memory */
#define TIMEOUT_16MS 12		/* 4.096 us * 2^12 */
#define RETRIES 3
#define WAIT_MS 5000

enum op { OP_WRITE, OP_READ, OP_SEND, OP_ATOMIC, OP_WRITE_ZERO, NOPS };

static const char *const op_names[NOPS] = {
	[OP_WRITE] = "WRITE", [OP_READ] = "READ", [OP_SEND] = "SEND",
	[OP_ATOMIC] = "FETCH_AND_ADD", [OP_WRITE_ZERO] = "zero-length WRITE",
};

/* What the responder process tells the requester, and back. */
struct responder_info {
	uint32_t qpn[NOPS];
	uint64_t addr;
	uint32_t rkey;
	union ibv_gid gid;
	pid_t keeper;
};

struct requester_info {
	uint32_t qpn[NOPS];
	union ibv_gid gid;
};

static bool read_full(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return false;
		}
		p += n;
		len -= (size_t)n;
	}
	return true;
}

static bool write_full(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len) == (ssize_t)len;
}

/*
 * The child: responder QPs on dev_b with memory and a receive posted,
 * connected to the requester, then a keeper cloned with its file table,
 * then SIGKILL. Never returns.
 */
static void __attribute__((noreturn)) responder(const char *dev_name, int up, int down, int hold)
{
	int rights = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		     IBV_ACCESS_REMOTE_ATOMIC;
	struct responder_info ri = { 0 };
	struct requester_info qi;
	struct side s[NOPS];
	struct ibv_recv_wr rwr;
	struct ibv_sge sge;
	struct buf *mem;
	char byte;
	int i;

	if (!dev_open(&dev_b, dev_name))
		_exit(1);
	for (i = 0; i < NOPS; i++)
		if (!side_open(&s[i], &dev_b, &side_default))
			_exit(1);
	mem = buf_new(&dev_b, MEM_LEN, MEM_LEN, rights, 0);
	if (!mem)
		_exit(1);
	for (i = 0; i < NOPS; i++)
		ri.qpn[i] = s[i].qp->qp_num;
	ri.addr = raddr_of(mem, 0);
	ri.rkey = mem->mr->rkey;
	ri.gid = dev_b.gid;
	if (!write_full(up, &ri, offsetof(struct responder_info, keeper)) ||
	    !read_full(down, &qi, sizeof(qi)))
		_exit(1);
	for (i = 0; i < NOPS; i++)
		if (qp_connect(s[i].qp, qi.qpn[i], &qi.gid, PSN_B, PSN_A, &side_default.knobs))
			_exit(1);
	/* Once the QP is past RESET (mlx5 refuses it there); an early SEND meets RNR retries. */
	sge = sge_of(mem, RECV_OFFSET, MSG_LEN);
	rwr = (struct ibv_recv_wr){ .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	if (!post_recv(s[OP_SEND].qp, &rwr, "responder receive"))
		_exit(1);
	/* Like fork, but sharing the file table: the connection stays open while it lives. */
	ri.keeper = (pid_t)syscall(SYS_clone, CLONE_FILES | SIGCHLD, NULL, NULL, NULL, 0);
	if (ri.keeper == 0) {
		while (read(hold, &byte, 1) > 0)
			;
		_exit(0);
	}
	write_full(up, &ri.keeper, sizeof(ri.keeper));
	raise(SIGKILL);
	_exit(1);
}

/* The daemon log has a line saying pid is gone (at most WAIT_MS). */
static bool log_says_gone(const char *log, pid_t pid)
{
	struct timespec start;
	char needle[64], line[512];

	snprintf(needle, sizeof(needle), "pid %d (", (int)pid);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		FILE *f = fopen(log, "r");

		while (f && fgets(line, sizeof(line), f))
			if (strstr(line, needle) && strstr(line, " is gone")) {
				fclose(f);
				return true;
			}
		if (f)
			fclose(f);
		usleep(10000);
	} while (elapsed_ms(&start) < WAIT_MS);
	return false;
}

/* `rocemu status` lists a client of pid (listed: true) or not, within WAIT_MS. */
static bool status_lists(pid_t pid, bool listed)
{
	static char out[65536];
	struct timespec start;
	char needle[64];

	snprintf(needle, sizeof(needle), "client pid %d ", (int)pid);
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		if (cli_output("status", out, sizeof(out)) && (strstr(out, needle) != NULL) == listed)
			return true;
		usleep(10000);
	} while (elapsed_ms(&start) < WAIT_MS);
	return false;
}

static void post_op(struct side *a, enum op op, struct buf *local, const struct responder_info *ri)
{
	struct ibv_sge sge = sge_of(local, 0, op == OP_ATOMIC ? 8 : op == OP_WRITE_ZERO ? 0 : MSG_LEN);
	struct ibv_send_wr wr = {
		.wr_id = 0x100 + op, .sg_list = &sge, .num_sge = op == OP_WRITE_ZERO ? 0 : 1,
		.send_flags = IBV_SEND_SIGNALED,
	};
	char what[80];

	switch (op) {
	case OP_WRITE:
	case OP_WRITE_ZERO:
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = ri->addr;
		wr.wr.rdma.rkey = ri->rkey;
		break;
	case OP_READ:
		wr.opcode = IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = ri->addr;
		wr.wr.rdma.rkey = ri->rkey;
		break;
	case OP_SEND:
		wr.opcode = IBV_WR_SEND;
		break;
	case OP_ATOMIC:
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.remote_addr = ri->addr;
		wr.wr.atomic.rkey = ri->rkey;
		wr.wr.atomic.compare_add = 1;
		break;
	case NOPS:
		return;
	}
	snprintf(what, sizeof(what), "%s to the QP of a process that is gone", op_names[op]);
	if (post_send(a->qp, &wr, what))
		expect_wc(a->send_cq, what, (struct want){ wr.wr_id, IBV_WC_RETRY_EXC_ERR, -1, -1 }, NULL);
}

int main(int argc, char **argv)
{
	int up[2], down[2], hold[2], status, i;
	struct side_spec spec = side_default;
	struct responder_info ri;
	struct requester_info qi;
	struct side a[NOPS];
	struct buf *local;
	pid_t child;

	if (argc != 5) {
		fprintf(stderr, "usage: %s DEVICE_A DEVICE_B ROCEMU DAEMON_LOG\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	cli_use(argv[3]);
	/* The keeper outlives its parent: it becomes ours, to be reaped. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) || pipe(up) || pipe(down) || pipe(hold)) {
		perror("setup");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0) {
		close(up[0]);
		close(down[1]);
		close(hold[1]);
		responder(argv[2], up[1], down[0], hold[0]);
	}
	close(up[1]);
	close(down[0]);
	close(hold[0]);
	memset(a, 0, sizeof(a));
	spec.knobs.timeout = TIMEOUT_16MS;
	spec.knobs.retry_cnt = RETRIES;
	if (!dev_open(&dev_a, argv[1]))
		goto out;
	for (i = 0; i < NOPS; i++) {
		if (!side_open(&a[i], &dev_a, &spec))
			goto out;
		qi.qpn[i] = a[i].qp->qp_num;
	}
	qi.gid = dev_a.gid;
	if (!read_full(up[0], &ri, offsetof(struct responder_info, keeper)) ||
	    !write_full(down[1], &qi, sizeof(qi))) {
		check(false, "the responder process set up its QPs");
		goto out;
	}
	for (i = 0; i < NOPS; i++)
		if (qp_connect(a[i].qp, ri.qpn[i], &ri.gid, PSN_A, PSN_B, &spec.knobs)) {
			check(false, "connecting requester QP %d", i);
			goto out;
		}
	if (!read_full(up[0], &ri.keeper, sizeof(ri.keeper)) || ri.keeper <= 0) {
		check(false, "the responder process cloned a keeper of its connection");
		goto out;
	}
	check(waitpid(child, &status, 0) == child && WIFSIGNALED(status) &&
	      WTERMSIG(status) == SIGKILL, "the responder process %d is killed", (int)child);
	check(status_lists(child, true), "rocemu status still lists the QPs of pid %d (its connection is open)",
	      (int)child);

	local = buf_new(&dev_a, MSG_LEN, MSG_LEN, IBV_ACCESS_LOCAL_WRITE, 0x33);
	if (!local)
		goto out;
	for (i = 0; i < OP_WRITE_ZERO; i++)
		post_op(&a[i], (enum op)i, local, &ri);
	check(log_says_gone(argv[4], child), "the daemon logs that pid %d is gone", (int)child);
	/* No DMA at all: only knowing the process is gone keeps the QP silent. */
	post_op(&a[OP_WRITE_ZERO], OP_WRITE_ZERO, local, &ri);

	/* The keeper lets go: the connection closes and the objects of pid go. */
	close(hold[1]);
	hold[1] = -1;
	check(waitpid(ri.keeper, &status, 0) == ri.keeper, "the keeper %d exits", (int)ri.keeper);
	check(status_lists(child, false), "rocemu status no longer lists pid %d", (int)child);
	cli_status_answers("at the end");
out:
	if (hold[1] >= 0)
		close(hold[1]);
	bufs_free();
	for (i = 0; i < NOPS; i++)
		side_close(&a[i]);
	dev_close(&dev_a);
	return checks_finish();
}
