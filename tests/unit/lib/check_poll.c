/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The shim's CQE parser (lib/datapath/poll.c) against a poster that reuses
 * a send queue slot the instant the poller releases it: the QP lies in a
 * read-only page, so the release store of sq.tail traps, and the trap
 * handler plays the poster (a new wr_id in the freed slot) before letting
 * the store go on. The completion must still carry the old wr_id.
 */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/shim.h"

#define QPN 0x000123
#define OLD_WR_ID 100
#define NEW_WR_ID 200

static struct rocemu_qp *qp;
static size_t qp_map_size;
static int traps;

struct rocemu_qp *rocemu_qp_table_find(struct rocemu_context *rctx, uint32_t qpn)
{
	(void)rctx;
	return qpn == QPN ? qp : NULL;
}

/* Not reached: the CQ is never empty while the test polls it. */
bool rocemu_cq_flush_one(struct rocemu_cq *cq, struct ibv_wc *wc)
{
	(void)cq;
	(void)wc;
	abort();
}

void rocemu_conn_check(struct rocemu_conn *conn)
{
	(void)conn;
	abort();
}

/* Not reached: the test's QP has no SRQ. */
uint64_t rocemu_srq_complete(struct rocemu_srq *srq, uint16_t wqe_counter)
{
	(void)srq;
	(void)wqe_counter;
	abort();
}

/* The poster, at the moment the poller's store to the QP page is about to land. */
static void on_write_to_qp(int sig, siginfo_t *si, void *uctx)
{
	char *addr = si->si_addr;

	(void)sig;
	(void)uctx;
	if (addr < (char *)qp || addr >= (char *)qp + qp_map_size)
		abort();
	traps++;
	qp->sq.wrid[0] = NEW_WR_ID;
	mprotect(qp, qp_map_size, PROT_READ | PROT_WRITE);
}

START_TEST(test_wr_id_read_before_release)
{
	struct sigaction sa = { .sa_sigaction = on_write_to_qp, .sa_flags = SA_SIGINFO };
	struct mlx5_cqe64 cqes[4];
	struct rocemu_context rctx;
	struct rocemu_cq cq;
	struct rocemu_qp *cache = NULL;
	struct ibv_wc wc;
	__be32 dbrec[2] = { 0, 0 };
	uint64_t wrid[4] = { OLD_WR_ID };
	uint32_t wqe_head[4] = { 0 };

	qp_map_size = ((sizeof(*qp) + 4095) / 4096) * 4096;
	qp = mmap(NULL, qp_map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(qp, MAP_FAILED);
	qp->qpn = QPN;
	qp->sq.wqe_cnt = 4;
	qp->sq.cur_post = 1;	/* one WQE of one BB posted, in slot 0 */
	qp->sq.wrid = wrid;
	qp->sq.wqe_head = wqe_head;

	memset(&rctx, 0, sizeof(rctx));
	memset(&cq, 0, sizeof(cq));
	memset(cqes, 0, sizeof(cqes));
	cq.ibcq.context = &rctx.vctx.context;
	cq.ncqe = 4;
	cq.buf = cqes;
	cq.cqe_size = sizeof(cqes[0]);
	cq.dbrec = dbrec;
	cqes[0].sop_drop_qpn = htobe32((uint32_t)MLX5_OPCODE_RDMA_WRITE << 24 | QPN);
	cqes[0].wqe_counter = htobe16(0);
	cqes[0].op_own = MLX5_CQE_REQ << 4;	/* owner bit 0: the first pass of the ring */
	cqes[1].op_own = MLX5_CQE_INVALID << 4;

	ck_assert_int_eq(sigaction(SIGSEGV, &sa, NULL), 0);
	ck_assert_int_eq(mprotect(qp, qp_map_size, PROT_READ), 0);
	ck_assert(rocemu_cq_poll_one(&cq, &wc, &cache));
	ck_assert_int_eq(traps, 1);	/* the release did happen, and the poster ran at it */
	ck_assert_uint_eq(qp->sq.tail, 1);
	ck_assert_int_eq(wc.status, IBV_WC_SUCCESS);
	ck_assert_int_eq(wc.opcode, IBV_WC_RDMA_WRITE);
	ck_assert_uint_eq(wc.qp_num, QPN);
	ck_assert_uint_eq(wc.wr_id, OLD_WR_ID);
	munmap(qp, qp_map_size);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("poll");
	TCase *tc = tcase_create("poll");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_wr_id_read_before_release);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
