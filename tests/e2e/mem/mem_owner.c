/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * No byte outside what an MR's owner registered, in the process that
 * registered it, is ever read or written through the MR. A ConnectX
 * pins the pages: a transfer after the owner let them go lands in
 * orphaned pages. rocemu fails it as an access to memory that is gone:
 * the peer's READ or WRITE completes with IBV_WC_REM_ACCESS_ERR (the
 * responder NAKs with a remote access error).
 *
 *   mem_owner reuse DEV_A DEV_B   owner A registers a buffer, hands its
 *       context to this process (cmd_fd, ibv_import_device) and exits; a
 *       victim is forked until it gets A's pid (ns_last_pid: run in a pid
 *       namespace of its own), with its secret at the buffer's address; a
 *       peer READs and WRITEs through A's rkey. Exit 77 when the victim
 *       cannot be given the pid.
 *   mem_owner exec DEV_A DEV_B    the same, A exec'ing the victim instead.
 *   mem_owner remap DEV_A DEV_B FILE   a plain MR's buffer is unmapped and
 *       FILE mapped MAP_SHARED at its address: the peer's WRITE leaves the
 *       file as it was, its READ gets no byte of it; an ODP MR over the
 *       same steps follows the mapping (the WRITE reaches the file, the
 *       READ returns it).
 *
 * One line per check, then "N passed" and "N failed".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>
#include "tests/e2e/harness/verbs_pair.h"

#define RWA (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define LEN 8192
#define SEED_OWNER 1
#define SEED_VICTIM 2
#define SEED_PEER 3
#define SEED_FILE 4
#define PID_TRIES 100

/* What the owner tells this process, beside its cmd_fd. */
struct handles {
	uint32_t pd, rkey;
	int32_t pid;
};

static bool send_fd(int sock, int fd, const struct handles *h)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { (void *)h, sizeof(*h) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == (ssize_t)sizeof(*h);
}

static int recv_fd(int sock, struct handles *h)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { h, sizeof(*h) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != (ssize_t)sizeof(*h))
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

static bool say(int fd, char c)
{
	return write(fd, &c, 1) == 1;
}

static bool hear(int fd, char want)
{
	char c;

	return read(fd, &c, 1) == 1 && c == want;
}

/* The owner: buf registered on DEV_A, its context handed over; then it exits or execs the victim. */
static void owner_main(int sock, const char *dev, uint8_t *buf, bool exec_victim)
{
	struct handles h = { .pid = getpid() };
	char addr[32], fd_arg[16];
	struct ibv_mr *mr;

	fill_pattern(buf, LEN, SEED_OWNER, 0);
	if (!dev_open(&dev_a, dev))
		_exit(2);
	mr = ibv_reg_mr(dev_a.pd, buf, LEN, RWA);
	if (!mr)
		_exit(3);
	h.pd = dev_a.pd->handle;
	h.rkey = mr->rkey;
	if (!send_fd(sock, dev_a.ctx->cmd_fd, &h) || !hear(sock, 'g'))
		_exit(4);
	if (!exec_victim)
		_exit(0);
	snprintf(addr, sizeof(addr), "%p", (void *)buf);
	snprintf(fd_arg, sizeof(fd_arg), "%d", sock);
	execl("/proc/self/exe", "mem_owner", "victim", addr, fd_arg, (char *)NULL);
	_exit(5);
}

/*
 * The victim: its secret at buf (mapped there when it is a new program),
 * "r" once it is, then, at "d", "u" when the secret is untouched.
 */
static int victim_main(uint8_t *buf, int sock, bool map)
{
	if (map && mmap(buf, LEN, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != buf)
		return say(sock, 'n') ? 0 : 1;
	fill_pattern(buf, LEN, SEED_VICTIM, 0);
	if (!say(sock, 'r') || !hear(sock, 'd'))
		return 1;
	return say(sock, pattern_mismatch(buf, LEN, SEED_VICTIM, 0) == LEN ? 'u' : 't') ? 0 : 1;
}

/* One RDMA op of the peer (p->b) through rkey at raddr, on a pair of its own; its status. */
static enum ibv_wc_status peer_op(enum ibv_wr_opcode op, struct buf *local, uint32_t rkey,
				  uint64_t raddr)
{
	struct ibv_sge sge = sge_of(local, 0, LEN);
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { .remote_addr = raddr, .rkey = rkey } };
	struct ibv_wc wc = { .status = IBV_WC_GENERAL_ERR };
	struct pair p;

	if (!pair_open(&p, &side_default, &side_default)) {
		check(false, "QP pair: %s", strerror(errno));
		return IBV_WC_GENERAL_ERR;
	}
	if (post_send(p.b.qp, &wr, "peer's RDMA op") && wait_wc(p.b.send_cq, &wc) != 1)
		wc.status = IBV_WC_GENERAL_ERR;
	pair_close(&p);
	return wc.status;
}

/* The peer READs and WRITEs through the gone owner's rkey; the victim's bytes stay its own. */
static void peer_checks(const char *name_b, uint32_t rkey, uint8_t *buf, int victim)
{
	enum ibv_wc_status st;
	struct buf *local;

	if (!dev_open(&dev_b, name_b) || !(local = buf_new(&dev_b, LEN, LEN, RWA, UNTOUCHED)))
		return;
	st = peer_op(IBV_WR_RDMA_READ, local, rkey, (uintptr_t)buf);
	check(st == IBV_WC_REM_ACCESS_ERR, "READ through the gone owner's rkey -> %s (got %s)",
	      ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR), ibv_wc_status_str(st));
	check(all_bytes(local->p, LEN, UNTOUCHED), "the READ returned none of the victim's bytes");
	fill_pattern(local->p, LEN, SEED_PEER, 0);
	st = peer_op(IBV_WR_RDMA_WRITE, local, rkey, (uintptr_t)buf);
	check(st == IBV_WC_REM_ACCESS_ERR, "WRITE through the gone owner's rkey -> %s (got %s)",
	      ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR), ibv_wc_status_str(st));
	check(say(victim, 'd') && hear(victim, 'u'), "the victim's memory is untouched");
}

/* Import the owner's context and PD as dev_a; its handles in *h. */
static bool import_owner(int sock, struct handles *h)
{
	int cmd_fd = recv_fd(sock, h);

	dev_a.ctx = cmd_fd >= 0 ? ibv_import_device(cmd_fd) : NULL;
	dev_a.pd = dev_a.ctx ? ibv_import_pd(dev_a.ctx, h->pd) : NULL;
	check(dev_a.pd != NULL, "the owner's context and PD imported (%s)",
	      dev_a.pd ? "ok" : strerror(errno));
	return dev_a.pd && !ibv_query_gid(dev_a.ctx, 1, 0, &dev_a.gid);
}

/* Fork the victim until it has pid; its end of a socketpair, or -1 (then exit 77). */
static int victim_at(pid_t pid, uint8_t *buf)
{
	int sv[2], tries;
	pid_t got;
	FILE *f;

	for (tries = 0; tries < PID_TRIES; tries++) {
		f = fopen("/proc/sys/kernel/ns_last_pid", "w");
		if (!f || fprintf(f, "%d", (int)pid - 1) < 0 || fclose(f)) {
			printf("skip: ns_last_pid cannot be written: %s\n", strerror(errno));
			return -1;
		}
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
			return -1;
		got = fork();
		if (got == 0) {
			close(sv[0]);
			_exit(victim_main(buf, sv[1], false));
		}
		close(sv[1]);
		if (got == pid && hear(sv[0], 'r'))
			return sv[0];
		close(sv[0]);
		if (got > 0)
			waitpid(got, NULL, 0);
	}
	printf("skip: no victim got pid %d in %d forks\n", (int)pid, PID_TRIES);
	return -1;
}

static int owner_gone_main(const char *name_a, const char *name_b, bool exec_victim)
{
	uint8_t *buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct handles h;
	int sv[2], victim;
	pid_t owner;

	if (buf == MAP_FAILED || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 1;
	owner = fork();
	if (owner == 0) {
		close(sv[0]);
		owner_main(sv[1], name_a, buf, exec_victim);
	}
	close(sv[1]);
	if (!import_owner(sv[0], &h))
		return checks_finish();
	if (exec_victim) {
		check(say(sv[0], 'g') && hear(sv[0], 'r'), "the owner exec'd the victim");
		victim = sv[0];
	} else {
		check(say(sv[0], 'g') && waitpid(owner, NULL, 0) == owner, "the owner exited");
		victim = victim_at(owner, buf);
		if (victim < 0)
			return 77;
		printf("victim has the owner's pid %d\n", (int)owner);
	}
	peer_checks(name_b, h.rkey, buf, victim);
	bufs_free();
	dev_close(&dev_b);
	/* The PD is the owner's, imported: given back as imported (its MR keeps it alive). */
	ibv_unimport_pd(dev_a.pd);
	dev_a.pd = NULL;
	dev_close(&dev_a);
	return checks_finish();
}

/* READ and WRITE of the peer through mr's rkey after buf became the mapping of file fd. */
static void remap_checks(struct buf *local, uint8_t *buf, int fd, bool odp)
{
	int access = RWA | (odp ? IBV_ACCESS_ON_DEMAND : 0);
	enum ibv_wc_status want = odp ? IBV_WC_SUCCESS : IBV_WC_REM_ACCESS_ERR, st;
	const char *kind = odp ? "ODP" : "plain";
	uint8_t disk[LEN];
	struct ibv_mr *mr;

	if (mmap(buf, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
	    buf)
		return;
	fill_pattern(buf, LEN, SEED_OWNER, 0);
	fill_pattern(disk, LEN, SEED_FILE, 0);
	mr = ibv_reg_mr(dev_a.pd, buf, LEN, access);
	check(mr != NULL, "%s MR over the buffer (%s)", kind, mr ? "ok" : strerror(errno));
	if (!mr || pwrite(fd, disk, LEN, 0) != LEN || munmap(buf, LEN) ||
	    mmap(buf, LEN, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) != buf) {
		check(false, "the file mapped where the buffer was: %s", strerror(errno));
		return;
	}
	memset(local->p, UNTOUCHED, LEN);
	st = peer_op(IBV_WR_RDMA_READ, local, mr->rkey, (uintptr_t)buf);
	check(st == want, "%s: READ after the remap -> %s (got %s)", kind, ibv_wc_status_str(want),
	      ibv_wc_status_str(st));
	check((pattern_mismatch(local->p, LEN, SEED_FILE, 0) == LEN) == odp,
	      odp ? "ODP: the READ returned the file's bytes" : "plain: the READ returned no byte of the file");
	fill_pattern(local->p, LEN, SEED_PEER, 0);
	st = peer_op(IBV_WR_RDMA_WRITE, local, mr->rkey, (uintptr_t)buf);
	check(st == want, "%s: WRITE after the remap -> %s (got %s)", kind, ibv_wc_status_str(want),
	      ibv_wc_status_str(st));
	check(msync(buf, LEN, MS_SYNC) == 0 && pread(fd, disk, LEN, 0) == LEN &&
	      pattern_mismatch(disk, LEN, odp ? SEED_PEER : SEED_FILE, 0) == LEN,
	      odp ? "ODP: the WRITE reached the file" : "plain: the file is as it was");
	ibv_dereg_mr(mr);
}

static int remap_main(const char *name_a, const char *name_b, const char *path)
{
	uint8_t *buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	struct buf *local;

	if (buf == MAP_FAILED || fd < 0 || !dev_open(&dev_a, name_a) || !dev_open(&dev_b, name_b) ||
	    !(local = buf_new(&dev_b, LEN, LEN, RWA, UNTOUCHED))) {
		check(false, "setup: %s", strerror(errno));
		return checks_finish();
	}
	remap_checks(local, buf, fd, false);
	remap_checks(local, buf, fd, true);
	munmap(buf, LEN);
	close(fd);
	bufs_free();
	dev_close(&dev_b);
	dev_close(&dev_a);
	return checks_finish();
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "victim"))
		return victim_main((uint8_t *)(uintptr_t)strtoull(argv[2], NULL, 0), atoi(argv[3]),
				   true);
	if (argc == 4 && !strcmp(argv[1], "reuse"))
		return owner_gone_main(argv[2], argv[3], false);
	if (argc == 4 && !strcmp(argv[1], "exec"))
		return owner_gone_main(argv[2], argv[3], true);
	if (argc == 5 && !strcmp(argv[1], "remap"))
		return remap_main(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: mem_owner reuse|exec DEV_A DEV_B | remap DEV_A DEV_B FILE\n");
	return 2;
}
