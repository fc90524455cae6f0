/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A client that does not use the shim and turns on the memory the daemon
 * shares with it: it speaks the control protocol itself, so it holds the
 * memfd of every object (the context page, a CQ, an SRQ, a QP's rings, a
 * device memory region), and ftruncates each to 0 and to a page more.
 * Each memfd is sealed against both (EPERM) and keeps its size. Then it
 * makes the daemon read its rings (its QP's and CQ's doorbells watched as
 * mlx5dv_init_obj's are, the context's doorbell sequence moved), prints
 * "ready" and waits for a line on stdin, while the test checks that the
 * daemon lives and serves others; then its QP still answers a query.
 *
 *   memfd_truncate RUNTIME_DIR
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/e2e/harness/ctrl_client.h"
#include "tests/e2e/harness/verbs_pair.h"

#define SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

static int sock = -1;

/* A request that must succeed with one memfd (or, for OPEN_DEVICE, more): returns fds[at]. */
static int call_fd(enum rocemu_ctrl_op op, const void *req, void *resp, int at)
{
	int fds[ROCEMU_CTRL_MAX_FDS], nfds = ROCEMU_CTRL_MAX_FDS;
	int err = ctrl_client_call(sock, op, req, -1, resp, fds, &nfds);

	check(!err && nfds > at, "%s: %s", rocemu_ctrl_op_names[op], err ? strerror(-err) : "a memfd");
	return !err && nfds > at ? fds[at] : -1;
}

/* ftruncate(fd, size) is refused with EPERM. */
static void check_refused(const char *what, int fd, off_t size)
{
	int ret = ftruncate(fd, size), err = errno;

	check(ret && err == EPERM, "%s: ftruncate to %lld bytes refused (%s)", what,
	      (long long)size, ret ? strerror(err) : "done");
}

/*
 * fd is sealed: it cannot grow, nor shrink (last: unsealed, it is left
 * empty, and the daemon's next access to it is SIGBUS), and keeps its size.
 */
static void check_sealed(const char *what, int fd)
{
	struct stat before, after;
	int seals, ret, err;

	if (fd < 0 || fstat(fd, &before))
		return;
	seals = fcntl(fd, F_GET_SEALS);
	check(seals >= 0 && (seals & SEALS) == SEALS, "%s: sealed against shrink and grow (0x%x)",
	      what, seals);
	check_refused(what, fd, before.st_size + 4096);
	check_refused(what, fd, 0);
	ret = fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE);
	err = errno;
	check(ret && err == EPERM, "%s: no seal can be added (%s)", what,
	      ret ? strerror(err) : "added");
	check(!fstat(fd, &after) && after.st_size == before.st_size, "%s: still %lld bytes", what,
	      (long long)before.st_size);
}

/* The daemon scans the context and reads the rings of qpn and cqn at every scan. */
static void make_daemon_read(struct rocemu_context_page *page, int kick_fd, uint32_t qpn,
			     uint32_t cqn)
{
	const struct rocemu_direct_doorbells_req qp = { .kind = ROCEMU_DIRECT_QP, .handle = qpn };
	const struct rocemu_direct_doorbells_req cq = { .kind = ROCEMU_DIRECT_CQ, .handle = cqn };

	check(!ctrl_client_call(sock, ROCEMU_OP_DIRECT_DOORBELLS, &qp, -1, NULL, NULL, NULL) &&
	      !ctrl_client_call(sock, ROCEMU_OP_DIRECT_DOORBELLS, &cq, -1, NULL, NULL, NULL),
	      "the QP's and the CQ's doorbells watched");
	__atomic_add_fetch(&page->doorbell_seq, 1, __ATOMIC_RELEASE);
	check(!eventfd_write(kick_fd, 1), "the daemon kicked");
}

int main(int argc, char **argv)
{
	struct rocemu_open_device_req open_req = { .dev_index = 0, .pid = (uint32_t)getpid() };
	struct rocemu_open_device_resp open_resp;
	struct rocemu_alloc_pd_resp pd;
	struct rocemu_create_cq_req cq_req = { .cqe = 16, .channel = ROCEMU_NO_HANDLE };
	struct rocemu_create_cq_resp cq;
	struct rocemu_create_srq_req srq_req = { .attr = { .max_wr = 16, .max_sge = 1 },
						 .srq_type = IBV_SRQT_BASIC };
	struct rocemu_create_srq_resp srq;
	struct rocemu_create_qp_req qp_req = {
		.qp_type = IBV_QPT_RC, .srqn = ROCEMU_NO_HANDLE,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rocemu_create_qp_resp qp;
	struct rocemu_alloc_dm_req dm_req = { .length = 4096 };
	struct rocemu_dm_resp dm;
	struct rocemu_query_qp_req query = { 0 };
	struct rocemu_query_qp_resp state;
	int fds[ROCEMU_CTRL_MAX_FDS], nfds = ROCEMU_CTRL_MAX_FDS, page_fd = -1;
	struct rocemu_context_page *page = MAP_FAILED;
	char why[ROCEMU_TRUST_WHY_MAX], line[16];

	if (argc != 2) {
		fprintf(stderr, "usage: memfd_truncate RUNTIME_DIR\n");
		return 2;
	}
	check(!ctrl_client_mem_proof(&open_req.mem, &open_req), "the proof of our address space");
	sock = rocemu_ctrl_connect(argv[1], why, sizeof(why));
	check(sock >= 0, "connected to the daemon of %s%s%s", argv[1], sock < 0 ? ": " : "",
	      sock >= 0 ? "" : sock == -EPERM ? why : strerror(-sock));
	if (sock < 0)
		return checks_finish();
	check(!ctrl_client_call(sock, ROCEMU_OP_OPEN_DEVICE, &open_req, -1, &open_resp, fds, &nfds) &&
	      nfds == 4, "OPEN_DEVICE: %d fds", nfds);
	if (nfds == 4) {
		page_fd = fds[2];
		page = mmap(NULL, open_resp.context_page_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			    page_fd, 0);
	}
	check(!ctrl_client_call(sock, ROCEMU_OP_ALLOC_PD, NULL, -1, &pd, NULL, NULL), "ALLOC_PD");
	qp_req.pdn = srq_req.pdn = pd.pdn;
	cq_req.user_cq = 1;
	check_sealed("the context page", page_fd);
	check_sealed("a CQ", call_fd(ROCEMU_OP_CREATE_CQ, &cq_req, &cq, 0));
	check_sealed("an SRQ", call_fd(ROCEMU_OP_CREATE_SRQ, &srq_req, &srq, 0));
	qp_req.send_cqn = qp_req.recv_cqn = cq.layout.cqn;
	check_sealed("a QP's rings", call_fd(ROCEMU_OP_CREATE_QP, &qp_req, &qp, 0));
	check_sealed("device memory", call_fd(ROCEMU_OP_ALLOC_DM, &dm_req, &dm, 0));
	if (page != MAP_FAILED && nfds == 4)
		make_daemon_read(page, fds[1], qp.layout.qpn, cq.layout.cqn);
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = '\0';
	query.qpn = qp.layout.qpn;
	check(!ctrl_client_call(sock, ROCEMU_OP_QUERY_QP, &query, -1, &state, NULL, NULL) &&
	      state.attr.qp_state == IBV_QPS_RESET, "the QP still answers a query, in RESET");
	return checks_finish();
}
