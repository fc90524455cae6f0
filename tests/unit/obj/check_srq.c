/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Shared receive queues (emulator/obj/srq.c) through CREATE_SRQ,
 * MODIFY_SRQ, QUERY_SRQ and DESTROY_SRQ: what create refuses and the
 * sizes it grants, as mlx5_create_srq; arming the limit and the resize
 * mlx5 refuses; EBUSY while a QP takes from it; an SRQ of another client
 * unknown; QP_LAST_WQE_REACHED when a QP on it enters ERR.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "emulator/core/device.h"
#include "emulator/mem/pd_mr.h"
#include "emulator/obj/srq.h"
#include "tests/unit/fixture.h"

static int srq_create(struct rocemu_client *c, uint32_t pdn, uint32_t type, uint32_t max_wr,
		      uint32_t max_sge, struct rocemu_create_srq_resp *resp)
{
	const struct rocemu_create_srq_req req = {
		.pdn = pdn, .attr = { .max_wr = max_wr, .max_sge = max_sge },
		.user_srq = FX_USER_SRQ, .srq_type = type, .xrcd = ROCEMU_NO_HANDLE,
		.cqn = ROCEMU_NO_HANDLE,
	};
	int fd, err = rocemu_srq_create(c, &req, resp, &fd);

	if (!err)
		close(fd);
	return err;
}

static int srq_modify(uint32_t srqn, uint32_t mask, uint32_t max_wr, uint32_t limit)
{
	const struct rocemu_modify_srq_req req = {
		.srqn = srqn, .attr_mask = mask, .attr = { .max_wr = max_wr, .srq_limit = limit },
	};

	return rocemu_srq_modify(fx.client, &req);
}

START_TEST(test_create_refused)
{
	struct rocemu_create_srq_resp resp;

	ck_assert_int_eq(srq_create(fx.client, fx.pdn + 1000, IBV_SRQT_BASIC, 16, 1, &resp),
			 -EINVAL);
	/* mlx5_create_srq: past max_srq_wr or max_srq_sge. */
	ck_assert_int_eq(srq_create(fx.client, fx.pdn, IBV_SRQT_BASIC, ROCEMU_MAX_SRQ_WR + 1, 1,
				    &resp), -EINVAL);
	ck_assert_int_eq(srq_create(fx.client, fx.pdn, IBV_SRQT_BASIC, 16, ROCEMU_MAX_SRQ_SGE + 1,
				    &resp), -EINVAL);
	ck_assert_int_eq(srq_create(fx.client, fx.pdn, IBV_SRQT_TM, 16, 1, &resp), -EINVAL);
	/* XRC wants an open XRC domain and a CQ of the client. */
	ck_assert_int_eq(srq_create(fx.client, fx.pdn, IBV_SRQT_XRC, 16, 1, &resp), -EINVAL);
}
END_TEST

START_TEST(test_create_grants)
{
	struct rocemu_create_srq_resp resp;
	struct rocemu_query_srq_resp query;

	ck_assert_int_eq(srq_create(fx.client, fx.pdn, IBV_SRQT_BASIC, 100, 3, &resp), 0);
	ck_assert_uint_ge(resp.attr.max_wr, 100);
	ck_assert_uint_ge(resp.attr.max_sge, 3);
	/* The ring holds a power of two of WQEs, one of them never posted (mlx5's max_wr). */
	ck_assert_uint_eq(resp.layout.wqe_cnt & (resp.layout.wqe_cnt - 1), 0);
	ck_assert_uint_eq(resp.attr.max_wr, resp.layout.wqe_cnt - 1);
	ck_assert_int_eq(rocemu_srq_query(fx.client, resp.layout.srqn, &query), 0);
	ck_assert_uint_eq(query.attr.max_wr, resp.attr.max_wr);
	ck_assert_uint_eq(query.attr.max_sge, resp.attr.max_sge);
	ck_assert_uint_eq(query.attr.srq_limit, 0);
	ck_assert_int_eq(srq_create(fx.client, fx.pdn, IBV_SRQT_BASIC, ROCEMU_MAX_SRQ_WR,
				    ROCEMU_MAX_SRQ_SGE, &resp), 0);
	ck_assert_uint_eq(resp.attr.max_wr, ROCEMU_MAX_SRQ_WR);
}
END_TEST

START_TEST(test_modify)
{
	struct rocemu_query_srq_resp query;

	fx_srq_create();
	/* mlx5_ib_modify_srq: no resizing; a limit below the ring's entries. */
	ck_assert_int_eq(srq_modify(fx.srq.srqn, IBV_SRQ_MAX_WR, 2 * FX_QP_DEPTH, 0), -EINVAL);
	ck_assert_int_eq(srq_modify(fx.srq.srqn, IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT, FX_QP_DEPTH, 1),
			 -EINVAL);
	ck_assert_int_eq(srq_modify(fx.srq.srqn, IBV_SRQ_LIMIT, 0, fx.srq.layout.wqe_cnt), -EINVAL);
	ck_assert_int_eq(srq_modify(fx.srq.srqn, 1u << 2, 0, 0), -EINVAL);
	ck_assert_int_eq(srq_modify(fx.srq.srqn + 1000, IBV_SRQ_LIMIT, 0, 1), -EINVAL);
	ck_assert_int_eq(rocemu_srq_query(fx.client, fx.srq.srqn, &query), 0);
	ck_assert_uint_eq(query.attr.srq_limit, 0);
	ck_assert_int_eq(srq_modify(fx.srq.srqn, IBV_SRQ_LIMIT, 0, fx.srq.layout.wqe_cnt - 1), 0);
	ck_assert_int_eq(rocemu_srq_query(fx.client, fx.srq.srqn, &query), 0);
	ck_assert_uint_eq(query.attr.srq_limit, fx.srq.layout.wqe_cnt - 1);
}
END_TEST

START_TEST(test_destroy)
{
	uint32_t pdn = fx_pd_alloc(fx.client);
	struct rocemu_create_srq_resp resp;

	ck_assert_int_eq(srq_create(fx.client, pdn, IBV_SRQT_BASIC, 16, 1, &resp), 0);
	/* The SRQ holds its PD. */
	ck_assert_int_eq(rocemu_pd_dealloc(fx.client, pdn), -EBUSY);
	ck_assert_int_eq(rocemu_srq_destroy(fx.client, resp.layout.srqn), 0);
	ck_assert_int_eq(rocemu_srq_destroy(fx.client, resp.layout.srqn), -EINVAL);
	ck_assert_int_eq(rocemu_pd_dealloc(fx.client, pdn), 0);
	/* A QP taking from it holds it. */
	fx_srq_create();
	fx_qp_replace_srq(IBV_QPT_RC);
	ck_assert_int_eq(rocemu_srq_destroy(fx.client, fx.srq.srqn), -EBUSY);
}
END_TEST

START_TEST(test_another_client)
{
	struct rocemu_client *other = fx_client_new();
	struct rocemu_create_srq_resp resp;
	struct rocemu_query_srq_resp query;

	ck_assert_int_eq(srq_create(other, fx_pd_alloc(other), IBV_SRQT_BASIC, 16, 1, &resp), 0);
	/* fx.pdn is not the other client's. */
	ck_assert_int_eq(srq_create(other, fx.pdn, IBV_SRQT_BASIC, 16, 1, &resp), -EINVAL);
	ck_assert_ptr_null(rocemu_srq_lookup(fx.client, resp.layout.srqn));
	ck_assert_int_eq(rocemu_srq_query(fx.client, resp.layout.srqn, &query), -EINVAL);
	ck_assert_int_eq(srq_modify(resp.layout.srqn, IBV_SRQ_LIMIT, 0, 1), -EINVAL);
	ck_assert_int_eq(rocemu_srq_destroy(fx.client, resp.layout.srqn), -EINVAL);
	ck_assert_int_eq(rocemu_srq_destroy(other, resp.layout.srqn), 0);
}
END_TEST

/* IBTA 10.3.1: a QP on an SRQ that enters ERR reports QP_LAST_WQE_REACHED. */
START_TEST(test_last_wqe_reached)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = ROCEMU_PORT_NUM };
	struct rocemu_async_record ev;

	fx_srq_create();
	fx_qp_replace_srq(IBV_QPT_RC);
	/* Not from RESET: a QP never set up has nothing to flush (Linux's state table). */
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
						IBV_QP_ACCESS_FLAGS), 0);
	attr.qp_state = IBV_QPS_ERR;
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
	ck_assert(fx_async_event(&ev));
	ck_assert_uint_eq(ev.element, FX_USER_QP);
	ck_assert_uint_eq(ev.event_type, IBV_EVENT_QP_LAST_WQE_REACHED);
	ck_assert(!fx_async_event(&ev));
}
END_TEST

/* A QP without an SRQ reports nothing when it enters ERR by modify. */
START_TEST(test_no_event_without_srq)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct rocemu_async_record ev;

	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
	ck_assert(!fx_async_event(&ev));
}
END_TEST

static Suite *srq_suite(void)
{
	Suite *s = suite_create("srq");
	TCase *tc = tcase_create("srq");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_create_refused);
	tcase_add_test(tc, test_create_grants);
	tcase_add_test(tc, test_modify);
	tcase_add_test(tc, test_destroy);
	tcase_add_test(tc, test_another_client);
	tcase_add_test(tc, test_last_wqe_reached);
	tcase_add_test(tc, test_no_event_without_srq);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(srq_suite());
}
