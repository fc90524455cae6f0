/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * XRC through the public verbs API. XRC domains (ibv_open_xrcd(3)): the
 * errnos of ibv_cmd_open_xrcd and the kernel's uverbs (EINVAL without fd
 * and oflags, EOPNOTSUPP for unknown bits, EBADF for a bad fd, EAGAIN for
 * a file without a domain and no O_CREAT, EINVAL for O_EXCL on one that
 * has it); one domain per file shared by two contexts and by another
 * process (this program run again as "xrc open DEVICE FILE"), gone with
 * its last open, also when a process exits without closing it. XRC SRQs:
 * EINVAL without their domain or CQ, ibv_get_srq_num, RC and UD QPs
 * refused on one (EINVAL, as uverbs), and the domain and the CQ held
 * (EBUSY) while the SRQ lives.
 *
 *   xrc DEV_A DEV_B
 *
 * One line per check, then "N passed" and "N failed"; exit 0 when none failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>
#include "tests/e2e/harness/verbs_pair.h"

static char domain_file[] = "/tmp/rocemu-xrc-XXXXXX";
static int domain_fd = -1;

static void expect_open_fails(struct ibv_context *ctx, struct ibv_xrcd_init_attr *attr, int want,
			      const char *what)
{
	struct ibv_xrcd *xrcd = ibv_open_xrcd(ctx, attr);

	check(!xrcd && errno == want, "open_xrcd %s -> %s (got %s)", what, strerror(want),
	      xrcd ? "a domain" : strerror(errno));
	if (xrcd)
		ibv_close_xrcd(xrcd);
}

/* Run "xrc open DEVICE FILE" (oflags 0: the domain must exist); its exit status, -1 if none. */
static int other_process_opens(const char *dev_name, bool close_it)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid;
	int status;

	if (n <= 0)
		return -1;
	self[n] = '\0';
	pid = fork();
	if (pid == 0) {
		execl(self, self, close_it ? "open-close" : "open-exit", dev_name, domain_file,
		      (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void xrcd_errnos(void)
{
	struct ibv_xrcd_init_attr attr = { .fd = domain_fd, .oflags = O_CREAT };

	attr.comp_mask = IBV_XRCD_INIT_ATTR_FD;
	expect_open_fails(dev_a.ctx, &attr, EINVAL, "without oflags");
	attr.comp_mask = IBV_XRCD_INIT_ATTR_OFLAGS;
	expect_open_fails(dev_a.ctx, &attr, EINVAL, "without fd");
	attr.comp_mask = IBV_XRCD_INIT_ATTR_RESERVED;
	expect_open_fails(dev_a.ctx, &attr, EOPNOTSUPP, "with an unknown bit");
	attr.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS;
	attr.fd = 1000;
	expect_open_fails(dev_a.ctx, &attr, EBADF, "on a closed fd");
	attr.fd = domain_fd;
	attr.oflags = 0;
	expect_open_fails(dev_a.ctx, &attr, EAGAIN, "of a file without a domain, no O_CREAT");
}

static void xrcd_shared(void)
{
	struct ibv_xrcd *a, *b, *own1, *own2;
	struct ibv_xrcd_init_attr excl = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = domain_fd, .oflags = O_CREAT | O_EXCL,
	};

	a = xrcd_open(dev_a.ctx, domain_fd, O_CREAT);
	check(a != NULL, "open_xrcd O_CREAT makes the file's domain: %s", a ? "ok" : strerror(errno));
	if (!a)
		return;
	expect_open_fails(dev_b.ctx, &excl, EINVAL, "O_CREAT|O_EXCL of a file with a domain");
	b = xrcd_open(dev_b.ctx, domain_fd, 0);
	check(b != NULL, "another context opens the file's domain without O_CREAT: %s",
	      b ? "ok" : strerror(errno));
	check(other_process_opens(dev_b.name, true) == 0,
	      "another process opens and closes the file's domain");
	check(other_process_opens(dev_b.name, false) == 0,
	      "another process opens the file's domain and exits without closing it");
	own1 = xrcd_open(dev_a.ctx, -1, O_CREAT);
	own2 = xrcd_open(dev_a.ctx, -1, 0);
	check(own1 && own2 && own1 != own2, "fd -1 gives domains of their own: %s",
	      own1 && own2 ? "ok" : strerror(errno));
	check(!own1 || !ibv_close_xrcd(own1), "close_xrcd of a domain of its own");
	check(!own2 || !ibv_close_xrcd(own2), "close_xrcd of another domain of its own");
	check(!ibv_close_xrcd(a), "close_xrcd of the first open");
	check(other_process_opens(dev_b.name, true) == 0, "the domain lives while an open is left");
	check(!b || !ibv_close_xrcd(b), "close_xrcd of the last open");
	check(other_process_opens(dev_b.name, true) == ENOENT,
	      "the domain went with its last open (another process finds none)");
}

static struct ibv_srq *xrc_srq_create(struct ibv_xrcd *xrcd, struct ibv_cq *cq, uint32_t comp_mask)
{
	struct ibv_srq_init_attr_ex attr = {
		.attr = { .max_wr = 16, .max_sge = 1 },
		.comp_mask = comp_mask,
		.srq_type = IBV_SRQT_XRC,
		.pd = dev_b.pd, .xrcd = xrcd, .cq = cq,
	};

	return ibv_create_srq_ex(dev_b.ctx, &attr);
}

#define XRC_SRQ_MASK (IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD | \
		      IBV_SRQ_INIT_ATTR_CQ)

/* uverbs create_qp: a QP of type receiving through an XRC SRQ is EINVAL. */
static void refuses_xrc_srq(enum ibv_qp_type type, struct ibv_cq *cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr attr = { .send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = type,
					 .cap = { .max_send_wr = 1, .max_send_sge = 1 } };
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp(dev_b.pd, &attr);
	check(!qp && errno == EINVAL, "create_qp %s on an XRC SRQ -> EINVAL (got %s)",
	      type == IBV_QPT_RC ? "RC" : "UD", qp ? "a QP" : strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
}

static void xrc_srq(void)
{
	struct ibv_xrcd *xrcd = xrcd_open(dev_b.ctx, -1, O_CREAT);
	struct ibv_cq *cq = ibv_create_cq(dev_b.ctx, 16, NULL, NULL, 0);
	struct ibv_srq *srq, *bad;
	uint32_t srqn = 0;

	if (!xrcd || !cq) {
		check(false, "domain and CQ for an XRC SRQ: %s", strerror(errno));
		goto out;
	}
	bad = xrc_srq_create(xrcd, cq, XRC_SRQ_MASK & ~IBV_SRQ_INIT_ATTR_XRCD);
	check(!bad && errno == EINVAL, "create_srq_ex XRC without a domain -> EINVAL (got %s)",
	      bad ? "an SRQ" : strerror(errno));
	bad = xrc_srq_create(xrcd, cq, XRC_SRQ_MASK & ~IBV_SRQ_INIT_ATTR_CQ);
	check(!bad && errno == EINVAL, "create_srq_ex XRC without a CQ -> EINVAL (got %s)",
	      bad ? "an SRQ" : strerror(errno));
	srq = xrc_srq_create(xrcd, cq, XRC_SRQ_MASK);
	check(srq != NULL, "create_srq_ex XRC: %s", srq ? "ok" : strerror(errno));
	if (!srq)
		goto out;
	check(!ibv_get_srq_num(srq, &srqn) && srqn, "get_srq_num gives the SRQ's number (%u)", srqn);
	refuses_xrc_srq(IBV_QPT_RC, cq, srq);
	refuses_xrc_srq(IBV_QPT_UD, cq, srq);
	check(ibv_close_xrcd(xrcd) == EBUSY, "close_xrcd while an XRC SRQ is in it -> EBUSY");
	check(ibv_destroy_cq(cq) == EBUSY, "destroy_cq while an XRC SRQ completes to it -> EBUSY");
	check(!ibv_destroy_srq(srq), "destroy the XRC SRQ");
out:
	check(!xrcd || !ibv_close_xrcd(xrcd), "close_xrcd once the SRQ is gone");
	check(!cq || !ibv_destroy_cq(cq), "destroy_cq once the SRQ is gone");
}

static const struct named_check checks[] = {
	{ "xrcd errnos", xrcd_errnos },
	{ "xrcd shared through a file", xrcd_shared },
	{ "XRC SRQ", xrc_srq },
};

/* "open-close"/"open-exit" DEVICE FILE: open the file's domain (oflags 0); exit 0, ENOENT, or 1. */
static int open_in_this_process(const char *mode, const char *dev_name, const char *file)
{
	struct ibv_xrcd *xrcd;
	int fd = open(file, O_RDONLY), ret;

	if (fd < 0 || !dev_open(&dev_a, dev_name))
		return 1;
	xrcd = xrcd_open(dev_a.ctx, fd, 0);
	if (!xrcd)
		return errno == EAGAIN ? ENOENT : 1;
	if (!strcmp(mode, "open-exit"))
		_exit(0);	/* the daemon drops the open with the connection */
	ret = ibv_close_xrcd(xrcd) ? 1 : 0;
	dev_close(&dev_a);
	return ret;
}

int main(int argc, char **argv)
{
	int ret;

	if (argc == 4)
		return open_in_this_process(argv[1], argv[2], argv[3]);
	domain_fd = mkstemp(domain_file);
	if (domain_fd < 0) {
		perror("mkstemp");
		return 1;
	}
	ret = run_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]));
	close(domain_fd);
	unlink(domain_file);
	return ret;
}
