/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Objects shared across processes (ibv_import_device(3), ibv_import_pd(3),
 * ibv_import_mr(3), ibv_import_dm(3)). The owner opens device A, makes a
 * PD, an MR over its buffer and device memory, and passes its context's
 * cmd_fd by SCM_RIGHTS over a socketpair to a second process (this program
 * run as "import child ..."; also by pidfd_getfd where ptrace rules allow
 * it). The child imports the context, the PD, the
 * MR (same keys and length, addr NULL) and the DM (same bytes); handles
 * that name nothing are ENOENT, as the kernel's uverbs answers, also in
 * another context of the child's own; a pipe is no cmd_fd (EINVAL). The
 * owner then unimports its own objects and closes its context: they stay, as on a shared uverbs
 * file, while the child uses them: a QP on the imported PD READs into the
 * owner's buffer and WRITEs from it through the imported lkey, and a peer
 * WRITEs into it through the imported rkey; the owner checks its buffer.
 * Unimported objects stay in the daemon: the PD imports again, and is
 * EBUSY to dealloc while the MR is on it.
 *
 *   import DEVICE_A DEVICE_B   one line per check, then "N passed" and "N failed"
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>
#include "tests/e2e/harness/verbs_pair.h"

#define RWA (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
	     IBV_ACCESS_REMOTE_ATOMIC)
#define REGION 4096
#define BUF_LEN (3 * REGION)	/* READ target, WRITE source, remote WRITE target */
#define DM_LEN 4096
#define NO_SUCH_HANDLE 0xfffff0u

/* What the owner tells the child, beside the cmd_fd. */
struct handles {
	uint32_t pd, mr, dm, lkey, rkey;
	int32_t owner_pid, owner_cmd_fd;	/* for pidfd_getfd */
	uint64_t length, buf_addr;
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

/* One byte each way between owner and child. */
static bool say(int sock, char c)
{
	return write(sock, &c, 1) == 1;
}

static bool hear(int sock, char want)
{
	char c;

	return read(sock, &c, 1) == 1 && c == want;
}

static bool rdma(struct ibv_qp *qp, struct ibv_cq *cq, enum ibv_wr_opcode op, struct ibv_sge sge,
		 uint64_t raddr, uint32_t rkey, const char *what)
{
	struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED };

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return post_send(qp, &wr, what) &&
	       expect_wc(cq, what, (struct want){ 9, IBV_WC_SUCCESS, -1, -1 }, NULL);
}

static void expect_enoent(void *obj, const char *what)
{
	check(!obj && errno == ENOENT, "%s -> ENOENT (got %s)", what, obj ? "an object" : strerror(errno));
}

/* The owner's cmd_fd taken with pidfd_getfd imports too, where ptrace rules allow it. */
static void import_by_pidfd(const struct handles *h)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
	int pidfd = (int)syscall(SYS_pidfd_open, h->owner_pid, 0), fd = -1;
	struct ibv_context *ctx;
	struct ibv_pd *pd;

	if (pidfd >= 0)
		fd = (int)syscall(SYS_pidfd_getfd, pidfd, h->owner_cmd_fd, 0);
	if (fd < 0) {
		printf("skip: pidfd_getfd of the owner's cmd_fd: %s\n", strerror(errno));
		if (pidfd >= 0)
			close(pidfd);
		return;
	}
	close(pidfd);
	ctx = ibv_import_device(fd);
	check(ctx != NULL, "import_device of a cmd_fd taken by pidfd_getfd (%s)",
	      ctx ? "ok" : strerror(errno));
	if (!ctx) {
		close(fd);
		return;
	}
	pd = ibv_import_pd(ctx, h->pd);
	check(pd != NULL, "import_pd through it (%s)", pd ? "ok" : strerror(errno));
	if (pd)
		ibv_unimport_pd(pd);
	ibv_close_device(ctx);
#else
	(void)h;
#endif
}

/* The child: import, use the owner's memory through the imported MR, unimport. */
static void child_checks(int sock, const char *name_a, const char *name_b)
{
	struct ibv_pd *pd = NULL, *again;
	struct ibv_mr *mr = NULL;
	struct ibv_dm *dm = NULL;
	struct ibv_context *ctx, *own;
	struct pair p = { 0 };
	struct handles h;
	struct buf *peer;
	uint8_t bytes[256];
	int cmd_fd = recv_fd(sock, &h), pipefd[2];

	check(cmd_fd >= 0, "cmd_fd and handles received by SCM_RIGHTS");
	if (cmd_fd < 0)
		return;
	if (!pipe(pipefd)) {
		ctx = ibv_import_device(pipefd[0]);
		check(!ctx && errno == EINVAL, "import_device of a pipe -> EINVAL (got %s)",
		      ctx ? "a context" : strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
	}
	ctx = ibv_import_device(cmd_fd);
	check(ctx && !strcmp(ibv_get_device_name(ctx->device), name_a),
	      "import_device: a context of %s (%s)", name_a, ctx ? "ok" : strerror(errno));
	if (!ctx)
		return;
	expect_enoent(ibv_import_pd(ctx, NO_SUCH_HANDLE), "import_pd of no PD");
	pd = ibv_import_pd(ctx, h.pd);
	check(pd && pd->handle == h.pd, "import_pd: handle %u (%s)", h.pd, pd ? "ok" : strerror(errno));
	if (pd) {
		expect_enoent(ibv_import_mr(pd, NO_SUCH_HANDLE), "import_mr of no MR");
		mr = ibv_import_mr(pd, h.mr);
		check(mr && mr->lkey == h.lkey && mr->rkey == h.rkey && mr->length == h.length &&
		      !mr->addr && mr->handle == h.mr && mr->pd == pd,
		      "import_mr: the owner's keys and length, addr NULL (%s)", mr ? "ok" : strerror(errno));
	}
	import_by_pidfd(&h);
	expect_enoent(ibv_import_dm(ctx, NO_SUCH_HANDLE), "import_dm of no DM");
	dm = ibv_import_dm(ctx, h.dm);
	check(dm && dm->handle == h.dm, "import_dm (%s)", dm ? "ok" : strerror(errno));
	if (dm && !ibv_memcpy_from_dm(bytes, dm, 0, sizeof(bytes)))
		check_pattern(bytes, sizeof(bytes), 6, 0, "imported DM: the owner's bytes");
	/* Another context of this process is another object space. */
	own = NULL;
	if (dev_open(&dev_b, name_a)) {
		own = dev_b.ctx;
		expect_enoent(ibv_import_pd(own, h.pd), "import_pd into a context of its own");
	}
	dev_close(&dev_b);
	if (!pd || !mr)
		goto out;
	/* The owner closes its context now; what we imported must stay. */
	check(say(sock, 'i') && hear(sock, 'c'), "owner closed its context");
	dev_a.name = name_a;
	dev_a.ctx = ctx;
	dev_a.pd = pd;
	if (ibv_query_gid(ctx, 1, 0, &dev_a.gid) || !dev_open(&dev_b, name_b) ||
	    !pair_open(&p, &side_default, &side_default)) {
		check(false, "QP pair on the imported PD: %s", strerror(errno));
		goto out;
	}
	peer = buf_new(&dev_b, 2 * REGION, 2 * REGION, RWA, UNTOUCHED);
	if (!peer)
		goto out;
	fill_pattern(peer->p, REGION, 7, 0);
	rdma(p.a.qp, p.a.send_cq, IBV_WR_RDMA_READ, (struct ibv_sge){ h.buf_addr, REGION, mr->lkey },
	     raddr_of(peer, 0), peer->mr->rkey, "READ into the owner's buffer (imported lkey)");
	if (rdma(p.a.qp, p.a.send_cq, IBV_WR_RDMA_WRITE,
		 (struct ibv_sge){ h.buf_addr + REGION, REGION, mr->lkey }, raddr_of(peer, REGION),
		 peer->mr->rkey, "WRITE from the owner's buffer (imported lkey)"))
		check_pattern(peer->p + REGION, REGION, 5, 0, "peer got the owner's bytes");
	rdma(p.b.qp, p.b.send_cq, IBV_WR_RDMA_WRITE, sge_of(peer, 0, 256), h.buf_addr + 2 * REGION,
	     mr->rkey, "peer WRITEs into the owner's buffer (imported rkey)");
	if (dm) {
		check(ibv_memcpy_to_dm(dm, 0, bytes, 8) == 0, "memcpy_to_dm into the imported DM");
		ibv_unimport_dm(dm);
		dm = NULL;
	}
	ibv_unimport_mr(mr);
	mr = NULL;
	pair_close(&p);
	ibv_unimport_pd(pd);
	dev_a.pd = pd = NULL;
	/* Unimport left the PD in the daemon, still holding the owner's MR. */
	again = ibv_import_pd(ctx, h.pd);
	check(again != NULL, "import_pd again after unimport (%s)", again ? "ok" : strerror(errno));
	if (again) {
		int rc = ibv_dealloc_pd(again);

		check(rc == EBUSY, "dealloc_pd while the owner's MR is on it -> EBUSY (got %d)", rc);
		ibv_unimport_pd(again);
	}
out:
	pair_close(&p);
	bufs_free();
	dev_close(&dev_b);
	if (mr)
		ibv_unimport_mr(mr);
	if (dm)
		ibv_unimport_dm(dm);
	if (pd)
		ibv_unimport_pd(pd);
	dev_a.pd = NULL;
	dev_close(&dev_a);	/* closes the imported context and its cmd_fd */
}

static int child_main(const char *name_a, const char *name_b, const char *sock_arg)
{
	int sock = atoi(sock_arg);

	printf("child: imports %s, peer on %s\n", name_a, name_b);
	child_checks(sock, name_a, name_b);
	close(sock);
	return checks_finish();
}

/* Start "import child A B SOCK" on the other end of a socketpair; its pid, -1 on failure. */
static pid_t child_start(const char *name_a, const char *name_b, int sock)
{
	char self[4096], sock_arg[16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid;

	if (n <= 0)
		return -1;
	self[n] = '\0';
	snprintf(sock_arg, sizeof(sock_arg), "%d", sock);
	pid = fork();
	if (pid == 0) {
		execl(self, self, "child", name_a, name_b, sock_arg, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static int owner_main(const char *name_a, const char *name_b)
{
	struct ibv_alloc_dm_attr dm_attr = { .length = DM_LEN };
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr = NULL;
	struct ibv_dm *dm = NULL;
	uint8_t *buf = aligned_alloc(4096, BUF_LEN), bytes[256];
	int sv[2] = { -1, -1 }, status = -1;
	struct handles h;
	pid_t pid = -1;

	printf("owner on %s\n", name_a);
	if (!buf || !dev_open(&dev_a, name_a))
		goto out;
	ctx = dev_a.ctx;
	pd = dev_a.pd;
	memset(buf, UNTOUCHED, BUF_LEN);
	fill_pattern(buf + REGION, REGION, 5, 0);
	mr = ibv_reg_mr(pd, buf, BUF_LEN, RWA);
	dm = ibv_alloc_dm(ctx, &dm_attr);
	check(mr && dm, "owner: MR and DM (%s)", mr && dm ? "ok" : strerror(errno));
	if (!mr || !dm)
		goto out;
	fill_pattern(bytes, sizeof(bytes), 6, 0);
	ibv_memcpy_to_dm(dm, 0, bytes, sizeof(bytes));
	h = (struct handles){ .pd = pd->handle, .mr = mr->handle, .dm = dm->handle, .lkey = mr->lkey,
			      .rkey = mr->rkey, .owner_pid = getpid(), .owner_cmd_fd = ctx->cmd_fd,
			      .length = mr->length, .buf_addr = (uintptr_t)buf };
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		goto out;
	/* The child's end must survive exec. */
	pid = child_start(name_a, name_b, dup(sv[1]));
	close(sv[1]);
	check(pid > 0 && send_fd(sv[0], ctx->cmd_fd, &h), "cmd_fd sent to the child");
	if (hear(sv[0], 'i')) {
		/* Local objects dropped, nothing destroyed: they live on with the child's imports. */
		ibv_unimport_mr(mr);
		ibv_unimport_dm(dm);
		ibv_unimport_pd(pd);
		ibv_close_device(ctx);
		dev_a.ctx = NULL;
		dev_a.pd = NULL;
		mr = NULL;
		dm = NULL;
		say(sv[0], 'c');
	}
	if (pid > 0 && waitpid(pid, &status, 0) == pid)
		check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: every check passed");
	check_pattern(buf, REGION, 7, 0, "owner's buffer after the child's READ");
	check_pattern(buf + 2 * REGION, 256, 7, 0, "owner's buffer after the peer's WRITE");
	check_untouched(buf + 2 * REGION + 256, REGION - 256, UNTOUCHED, "owner's buffer past it");
out:
	if (sv[0] >= 0)
		close(sv[0]);
	if (mr)
		ibv_dereg_mr(mr);
	if (dm)
		ibv_free_dm(dm);
	dev_close(&dev_a);
	free(buf);
	return checks_finish();
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "child"))
		return child_main(argv[2], argv[3], argv[4]);
	if (argc != 3) {
		fprintf(stderr, "usage: %s DEVICE_A DEVICE_B\n", argv[0]);
		return 1;
	}
	return owner_main(argv[1], argv[2]);
}
