/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * XRC QPs through the public verbs API, across two processes. This
 * process makes an XRC domain on a file, an XRC SRQ and target TGT1 on
 * DEV_TGT, and two initiators on DEV_INI; a second process (this program
 * run again as "xrc_qp child ...") opens the domain through the file,
 * makes its own target TGT2 and opens TGT1 by number. Both targets take
 * their receives from the one SRQ of this process: every message lands
 * whole, in the order of its initiator, its CQE naming its target. Then:
 * TGT1 outlives its creator's destroy while the other process holds it
 * and goes with that last reference; a message naming an SRQ of another
 * domain is refused (IBV_WC_REM_INV_REQ_ERR). Also the errnos of
 * ibv_create_qp_ex and ibv_open_qp that rdma-core gives for XRC, and
 * ibv_close_xrcd refused (EBUSY) while a target holds the domain.
 *
 *   xrc_qp DEV_TGT DEV_INI
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

#define MSGS 4			/* per initiator */
#define MSG_LEN 5000		/* five packets at MTU 1024 */
#define SLOT 8192		/* a receive buffer */
#define RECVS (2 * MSGS)

/* What this process tells the other one, and what it answers. */
struct to_child {
	uint32_t tgt1, ini2;
	union ibv_gid ini_gid;
};

/* Steps of the other process, one byte each way. */
enum step { STEP_DATA_DONE = 'd', STEP_TGT1_DESTROYED = 'x', STEP_RELEASED = 'r',
	    STEP_FINISH = 'f' };

static const struct qp_knobs tgt_knobs = {
	.max_dest_rd_atomic = 4, .min_rnr_timer = 12, .timeout = 14, .stop_at_rtr = true,
};
static const struct qp_knobs ini_knobs = QP_KNOBS_DEFAULT;

static bool full_write(int fd, const void *p, size_t len)
{
	return write(fd, p, len) == (ssize_t)len;
}

static bool full_read(int fd, void *p, size_t len)
{
	return read(fd, p, len) == (ssize_t)len;
}

static void step_send(int fd, enum step s)
{
	char c = (char)s;

	check(full_write(fd, &c, 1), "tell the other process '%c'", c);
}

static bool step_wait(int fd, enum step s)
{
	char c = 0;

	return full_read(fd, &c, 1) && c == (char)s;
}

static struct ibv_qp *tgt_create(struct ibv_context *ctx, struct ibv_xrcd *xrcd)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = xrcd,
	};

	return ibv_create_qp_ex(ctx, &attr);
}

static struct ibv_qp *tgt_open(struct ibv_context *ctx, struct ibv_xrcd *xrcd, uint32_t qpn,
			       uint32_t comp_mask)
{
	struct ibv_qp_open_attr attr = {
		.comp_mask = comp_mask,
		.qp_num = qpn,
		.xrcd = xrcd,
		.qp_type = IBV_QPT_XRC_RECV,
	};

	return ibv_open_qp(ctx, &attr);
}

#define OPEN_ALL (IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD | IBV_QP_OPEN_ATTR_TYPE)

/* An initiator on d; with qp_ex, sends go through ibv_wr_* (ibv_wr_set_xrc_srqn). */
static struct ibv_qp *ini_create(struct dev *d, struct ibv_cq *cq, bool qp_ex)
{
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_XRC_SEND,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = d->pd,
		.send_cq = cq,
		.cap = { .max_send_wr = 16, .max_send_sge = 1 },
	};

	if (qp_ex) {
		attr.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		attr.send_ops_flags = IBV_QP_EX_WITH_SEND;
	}
	return ibv_create_qp_ex(d->ctx, &attr);
}

static void expect_qp_null(struct ibv_qp *qp, int want, const char *what)
{
	check(!qp && errno == want, "%s -> %s (got %s)", what, strerror(want),
	      qp ? "a QP" : strerror(errno));
	if (qp)
		ibv_destroy_qp(qp);
}

/* rdma-core's answers: ibv_cmd_create_qp_ex2 and ibv_cmd_open_qp. */
static void create_open_errnos(struct dev *d, struct ibv_xrcd *xrcd, struct ibv_cq *cq,
			       uint32_t tgt_qpn)
{
	struct ibv_qp_init_attr_ex attr = { .qp_type = IBV_QPT_XRC_RECV };

	expect_qp_null(ibv_create_qp_ex(d->ctx, &attr), EINVAL, "a target without its domain");
	attr = (struct ibv_qp_init_attr_ex){ .qp_type = IBV_QPT_XRC_SEND, .send_cq = cq,
					     .cap = { .max_send_wr = 1, .max_send_sge = 1 } };
	expect_qp_null(ibv_create_qp_ex(d->ctx, &attr), EINVAL, "an initiator without a PD");
	expect_qp_null(tgt_open(d->ctx, xrcd, tgt_qpn, OPEN_ALL | IBV_QP_OPEN_ATTR_RESERVED),
		       EOPNOTSUPP, "ibv_open_qp with an unknown comp_mask bit");
	expect_qp_null(tgt_open(d->ctx, xrcd, tgt_qpn, OPEN_ALL & ~IBV_QP_OPEN_ATTR_TYPE), EINVAL,
		       "ibv_open_qp without the type");
	expect_qp_null(tgt_open(d->ctx, xrcd, tgt_qpn + 1000, OPEN_ALL), EINVAL,
		       "ibv_open_qp of no such target");
}

/* ---------------- the other process ---------------- */

static int child_main(const char *dev_name, const char *file, int in, int out)
{
	struct dev d = { 0 };
	struct to_child msg;
	struct ibv_xrcd *xrcd;
	struct ibv_qp *tgt2, *opened;
	enum ibv_qp_state state;
	int fd = open(file, O_RDONLY), sq_draining;
	uint32_t qpn;

	if (fd < 0 || !dev_open(&d, dev_name) || !full_read(in, &msg, sizeof(msg)))
		return 2;
	xrcd = xrcd_open(d.ctx, fd, 0);
	check(xrcd != NULL, "other process: opens the domain through the file");
	if (!xrcd)
		return checks_finish();
	tgt2 = tgt_create(d.ctx, xrcd);
	check(tgt2 && tgt2->qp_type == IBV_QPT_XRC_RECV, "other process: makes its target TGT2");
	opened = tgt_open(d.ctx, xrcd, msg.tgt1, OPEN_ALL);
	check(opened && opened->qp_num == msg.tgt1 && !opened->send_cq && !opened->pd,
	      "other process: ibv_open_qp of TGT1 (no PD, CQ)");
	if (!tgt2 || !opened)
		return checks_finish();
	check(qp_state(opened, &state, &sq_draining) == 0 && state == IBV_QPS_RTR,
	      "other process: ibv_query_qp of the opened TGT1 reads RTR");
	check(ibv_close_xrcd(xrcd) == EBUSY, "other process: ibv_close_xrcd while its targets hold it -> EBUSY");
	check(qp_connect(tgt2, msg.ini2, &msg.ini_gid, 0, PSN_A, &tgt_knobs) == 0,
	      "other process: TGT2 to RTR, from initiator 0x%06x", msg.ini2);
	qpn = tgt2->qp_num;
	check(full_write(out, &qpn, sizeof(qpn)), "other process: tells TGT2's number");
	if (!step_wait(in, STEP_DATA_DONE) || !step_wait(in, STEP_TGT1_DESTROYED))
		return 2;
	check(qp_state(opened, &state, &sq_draining) == 0 && state == IBV_QPS_RTR,
	      "other process: TGT1 still there after its creator's destroy");
	check(ibv_destroy_qp(opened) == 0, "other process: destroy of its TGT1 reference");
	step_send(out, STEP_RELEASED);
	if (!step_wait(in, STEP_FINISH))
		return 2;
	check(ibv_destroy_qp(tgt2) == 0 && ibv_close_xrcd(xrcd) == 0,
	      "other process: TGT2 destroyed, domain closed");
	dev_close(&d);
	close(fd);
	return checks_finish();
}

/* ---------------- this process ---------------- */

static char domain_file[] = "/tmp/rocemu-xrc-qp-XXXXXX";

static pid_t child_start(const char *dev_name, int *to_child, int *from_child)
{
	int down[2], up[2];
	char self[4096], in[16], out[16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid;

	if (n <= 0 || pipe(down) || pipe(up))
		return -1;
	self[n] = '\0';
	snprintf(in, sizeof(in), "%d", down[0]);
	snprintf(out, sizeof(out), "%d", up[1]);
	pid = fork();
	if (pid == 0) {
		close(down[1]);
		close(up[0]);
		execl(self, self, "child", dev_name, domain_file, in, out, (char *)NULL);
		_exit(127);
	}
	close(down[0]);
	close(up[1]);
	*to_child = down[1];
	*from_child = up[0];
	return pid;
}

/* Message k (0-based) of initiator i: seed 16 * (i + 1) + k. */
static unsigned int seed_of(int ini, int k)
{
	return 16u * (unsigned int)(ini + 1) + (unsigned int)k;
}

static bool send_msg(struct ibv_qp *ini, bool qp_ex, uint32_t srqn, struct ibv_sge sge,
		     uint64_t wr_id)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_qp_ex *qpx;

	if (!qp_ex) {
		wr.qp_type.xrc.remote_srqn = srqn;
		return post_send(ini, &wr, "ibv_post_send with remote_srqn");
	}
	qpx = ibv_qp_to_qp_ex(ini);
	ibv_wr_start(qpx);
	qpx->wr_id = wr_id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_xrc_srqn(qpx, srqn);
	ibv_wr_set_sge(qpx, sge.lkey, sge.addr, sge.length);
	return ibv_wr_complete(qpx) == 0;
}

struct run {
	struct dev a, b;		/* targets' device, initiators' device */
	struct ibv_xrcd *xrcd;
	struct ibv_cq *srq_cq, *ini_cq;
	struct ibv_srq *srq;
	uint32_t srqn;
	struct ibv_qp *tgt1, *ini[2];
	uint32_t tgt2;
	struct buf *recv, *send;
};

/* Both initiators send MSGS messages each; every one lands whole, by its target, in order. */
static void shared_srq_data(struct run *r)
{
	int got[2] = { 0, 0 }, i, k;
	struct ibv_wc wc;

	for (i = 0; i < RECVS; i++) {
		struct ibv_sge sge = sge_of(r->recv, (size_t)i * SLOT, SLOT);
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 }, *bad;

		check(ibv_post_srq_recv(r->srq, &wr, &bad) == 0, "post SRQ receive %d", i);
	}
	for (k = 0; k < MSGS; k++)
		for (i = 0; i < 2; i++) {
			size_t off = (size_t)(i * MSGS + k) * SLOT;

			fill_pattern(r->send->p + off, MSG_LEN, seed_of(i, k), 0);
			check(send_msg(r->ini[i], i == 1, r->srqn, sge_of(r->send, off, MSG_LEN),
				       (uint64_t)(i * MSGS + k)),
			      "initiator %d sends message %d to SRQ %u", i, k, r->srqn);
		}
	for (i = 0; i < RECVS; i++)
		check(wait_wc(r->ini_cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS &&
		      wc.opcode == IBV_WC_SEND, "send completion %d: %s", i,
		      ibv_wc_status_str(wc.status));
	for (i = 0; i < RECVS; i++) {
		int from;

		if (wait_wc(r->srq_cq, &wc) != 1) {
			check(false, "receive completion %d of %d", i, RECVS);
			return;
		}
		from = wc.qp_num == r->tgt1->qp_num ? 0 : wc.qp_num == r->tgt2 ? 1 : -1;
		check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		      wc.byte_len == MSG_LEN && from >= 0 && wc.src_qp == r->ini[from]->qp_num &&
		      wc.wr_id < RECVS,
		      "receive %d: %s, %u bytes, by target 0x%06x from initiator 0x%06x", i,
		      ibv_wc_status_str(wc.status), wc.byte_len, wc.qp_num, wc.src_qp);
		if (from < 0 || wc.wr_id >= RECVS)
			continue;
		check_pattern(r->recv->p + wc.wr_id * SLOT, MSG_LEN, seed_of(from, got[from]), 0,
			      from ? "TGT2's message, in the SRQ of the other process" :
				     "TGT1's message");
		got[from]++;
	}
	check(got[0] == MSGS && got[1] == MSGS, "%d messages through TGT1, %d through TGT2",
	      got[0], got[1]);
}

/*
 * A fetch-and-add from an initiator of one SGE: its WQE (ctrl, XRC, raddr,
 * atomic and data segments) needs two BBs, which the QP's caps must allow.
 */
static void xrc_atomic(struct run *r)
{
	struct ibv_sge sge = sge_of(r->send, 0, 8);
	struct ibv_send_wr wr = {
		.wr_id = 77, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = raddr_of(r->recv, 0), .rkey = r->recv->mr->rkey,
			       .compare_add = 5 },
		.qp_type.xrc.remote_srqn = r->srqn,
	};
	uint64_t before, after;
	struct ibv_wc wc;

	memcpy(&before, r->recv->p, sizeof(before));
	if (!post_send(r->ini[0], &wr, "ibv_post_send of an XRC fetch-and-add"))
		return;
	if (!expect_wc(r->ini_cq, "XRC fetch-and-add", (struct want){ .wr_id = 77,
		       .status = IBV_WC_SUCCESS, .opcode = IBV_WC_FETCH_ADD, .byte_len = 8 }, &wc))
		return;
	memcpy(&after, r->recv->p, sizeof(after));
	check(after == before + 5 && !memcmp(r->send->p, &before, sizeof(before)),
	      "XRC fetch-and-add: target %#llx -> %#llx, the old value returned",
	      (unsigned long long)before, (unsigned long long)after);
}

/* A message naming an SRQ of another domain: NAK invalid request (IBTA A14). */
static void foreign_srq(struct run *r)
{
	struct ibv_xrcd *other = xrcd_open(r->a.ctx, -1, 0);
	struct ibv_cq *cq = ibv_create_cq(r->a.ctx, 4, NULL, NULL, 0);
	struct ibv_srq_init_attr_ex attr = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = r->a.pd, .xrcd = other, .cq = cq,
	};
	struct ibv_srq *srq = other && cq ? ibv_create_srq_ex(r->a.ctx, &attr) : NULL;
	uint32_t srqn = 0;
	struct ibv_wc wc;

	check(srq && ibv_get_srq_num(srq, &srqn) == 0, "an XRC SRQ of another domain");
	if (!srq)
		return;
	check(send_msg(r->ini[1], true, srqn, sge_of(r->send, 0, 64), 99),
	      "initiator 1 sends to SRQ %u of another domain", srqn);
	expect_wc(r->ini_cq, "SRQ of another domain", (struct want){ .wr_id = 99,
		  .status = IBV_WC_REM_INV_REQ_ERR, .opcode = -1, .byte_len = -1 }, &wc);
	ibv_destroy_srq(srq);
	ibv_destroy_cq(cq);
	ibv_close_xrcd(other);
}

static bool setup(struct run *r, const char *tgt_dev, const char *ini_dev, int fd)
{
	struct ibv_srq_init_attr_ex attr = {
		.attr = { .max_wr = RECVS, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
	};
	struct ibv_qp_attr qattr;
	struct ibv_qp_init_attr init;

	if (!dev_open(&r->a, tgt_dev) || !dev_open(&r->b, ini_dev))
		return false;
	r->xrcd = xrcd_open(r->a.ctx, fd, O_CREAT);
	r->srq_cq = ibv_create_cq(r->a.ctx, 2 * RECVS, NULL, NULL, 0);
	r->ini_cq = ibv_create_cq(r->b.ctx, 4 * RECVS, NULL, NULL, 0);
	check(r->xrcd && r->srq_cq && r->ini_cq, "domain on %s, CQs", domain_file);
	if (!r->xrcd || !r->srq_cq || !r->ini_cq)
		return false;
	attr.pd = r->a.pd;
	attr.xrcd = r->xrcd;
	attr.cq = r->srq_cq;
	r->srq = ibv_create_srq_ex(r->a.ctx, &attr);
	check(r->srq && ibv_get_srq_num(r->srq, &r->srqn) == 0, "XRC SRQ %u", r->srqn);
	r->tgt1 = tgt_create(r->a.ctx, r->xrcd);
	r->ini[0] = ini_create(&r->b, r->ini_cq, false);
	r->ini[1] = ini_create(&r->b, r->ini_cq, true);
	check(r->tgt1 && r->ini[0] && r->ini[1], "target TGT1 and two initiators");
	if (!r->srq || !r->tgt1 || !r->ini[0] || !r->ini[1])
		return false;
	check(ibv_query_qp(r->tgt1, &qattr, IBV_QP_STATE, &init) == 0 &&
	      init.qp_type == IBV_QPT_XRC_RECV && !init.cap.max_send_wr && !init.cap.max_recv_wr,
	      "TGT1 queries as XRC_RECV with no queue");
	check(!r->ini[0]->recv_cq && !r->ini[0]->srq, "an initiator has no receive CQ or SRQ");
	create_open_errnos(&r->a, r->xrcd, r->srq_cq, r->tgt1->qp_num);
	r->recv = buf_new(&r->a, (size_t)RECVS * SLOT, (size_t)RECVS * SLOT,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC, UNTOUCHED);
	r->send = buf_new(&r->b, (size_t)RECVS * SLOT, (size_t)RECVS * SLOT,
			  IBV_ACCESS_LOCAL_WRITE, 0);
	return r->recv && r->send &&
	       !qp_connect(r->tgt1, r->ini[0]->qp_num, &r->b.gid, 0, PSN_A, &tgt_knobs) &&
	       !qp_connect(r->ini[0], r->tgt1->qp_num, &r->a.gid, PSN_A, 0, &ini_knobs);
}

int main(int argc, char **argv)
{
	struct run r = { 0 };
	struct to_child msg;
	int fd, to_child = -1, from_child = -1, status;
	struct ibv_qp *again;
	pid_t pid;

	if (argc == 6 && !strcmp(argv[1], "child"))
		return child_main(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
	if (argc != 3) {
		fprintf(stderr, "usage: %s DEV_TGT DEV_INI\n", argv[0]);
		return 2;
	}
	fd = mkstemp(domain_file);
	if (fd < 0 || !setup(&r, argv[1], argv[2], fd)) {
		check(false, "setup");
		goto out;
	}
	pid = child_start(argv[1], &to_child, &from_child);
	check(pid > 0, "the other process starts");
	if (pid <= 0)
		goto out;
	msg = (struct to_child){ .tgt1 = r.tgt1->qp_num, .ini2 = r.ini[1]->qp_num,
				 .ini_gid = r.b.gid };
	check(full_write(to_child, &msg, sizeof(msg)) &&
	      full_read(from_child, &r.tgt2, sizeof(r.tgt2)), "TGT2 0x%06x made by the other process",
	      r.tgt2);
	check(qp_connect(r.ini[1], r.tgt2, &r.a.gid, PSN_A, 0, &ini_knobs) == 0,
	      "initiator 1 to RTS, towards TGT2");
	shared_srq_data(&r);
	xrc_atomic(&r);
	step_send(to_child, STEP_DATA_DONE);
	check(ibv_close_xrcd(r.xrcd) == EBUSY, "ibv_close_xrcd while TGT1 and the SRQ hold it -> EBUSY");
	check(ibv_destroy_qp(r.tgt1) == 0, "the creator destroys TGT1");
	again = tgt_open(r.a.ctx, r.xrcd, msg.tgt1, OPEN_ALL);
	check(again != NULL, "TGT1 lives on for the other process's reference (ibv_open_qp here)");
	if (again)
		ibv_destroy_qp(again);
	step_send(to_child, STEP_TGT1_DESTROYED);
	check(step_wait(from_child, STEP_RELEASED), "the other process let TGT1 go");
	expect_qp_null(tgt_open(r.a.ctx, r.xrcd, msg.tgt1, OPEN_ALL), EINVAL,
		       "ibv_open_qp of TGT1 after its last reference");
	foreign_srq(&r);
	step_send(to_child, STEP_FINISH);
	check(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the other process passed its checks");
out:
	if (r.ini[0])
		ibv_destroy_qp(r.ini[0]);
	if (r.ini[1])
		ibv_destroy_qp(r.ini[1]);
	if (r.srq)
		ibv_destroy_srq(r.srq);
	bufs_free();
	if (r.srq_cq)
		ibv_destroy_cq(r.srq_cq);
	if (r.ini_cq)
		ibv_destroy_cq(r.ini_cq);
	if (r.xrcd)
		check(ibv_close_xrcd(r.xrcd) == 0, "the domain closes once nothing holds it");
	dev_close(&r.a);
	dev_close(&r.b);
	unlink(domain_file);
	return checks_finish();
}
