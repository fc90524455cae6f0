/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * QPs (emulator/obj/qp.c, qp_modify.c, qp_layout.c) through CREATE_QP,
 * MODIFY_QP, QUERY_QP and DESTROY_QP: what create refuses (type, create
 * flags, PD, CQs, SRQ, sizes past the device's caps) and what it grants;
 * the objects a QP holds; each attribute's bounds and the transitions and
 * masks ibv_modify_qp(3) allows, with EINVAL as the kernel answers; what
 * a transition keeps and what RESET forgets; another client's QP unknown;
 * mlx5's vendor create flags (qp_vendor_flags.c) and reserved QPNs
 * (reserved_qpn.c), numbers no QP gets.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "emulator/core/device.h"
#include "emulator/mem/pd_mr.h"
#include "emulator/obj/cq.h"
#include "emulator/obj/qp.h"
#include "emulator/obj/reserved_qpn.h"
#include "tests/unit/fixture.h"

#define INIT_MASK (IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)

static struct rocemu_create_qp_req rc_req(void)
{
	return (struct rocemu_create_qp_req){
		.pdn = fx.pdn, .qp_type = IBV_QPT_RC, .send_cqn = fx.scq.cqn,
		.recv_cqn = fx.rcq.cqn, .srqn = ROCEMU_NO_HANDLE, .user_qp = FX_USER_QP,
		.cap = { .max_send_wr = 10, .max_recv_wr = 10, .max_send_sge = 3,
			 .max_recv_sge = 3, .max_inline_data = 60 },
	};
}

/* Create a QP of req for c; its rings are not mapped. */
static int create(struct rocemu_client *c, const struct rocemu_create_qp_req *req,
		  struct rocemu_create_qp_resp *resp)
{
	int fd, err = rocemu_qp_create(c, req, resp, &fd);

	if (!err)
		close(fd);
	return err;
}

static struct rocemu_query_qp_resp query(uint32_t qpn)
{
	const struct rocemu_query_qp_req req = { .qpn = qpn };
	struct rocemu_query_qp_resp resp;

	ck_assert_int_eq(rocemu_qp_query(fx.client, &req, &resp), 0);
	return resp;
}

/* fx.qp replaced by a new RC QP in RESET, then taken to INIT. */
static void rc_in_init(void)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = ROCEMU_PORT_NUM,
				    .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	fx_qp_replace(IBV_QPT_RC);
	ck_assert_int_eq(fx_qp_modify(&attr, INIT_MASK), 0);
}

/* What ibv_rc_pingpong gives at RTR, towards the fixture's peer. */
static struct ibv_qp_attr rtr_attr(void)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
				    .dest_qp_num = FX_PEER_QPN, .rq_psn = 1,
				    .max_dest_rd_atomic = 1, .min_rnr_timer = 12 };

	attr.ah_attr.is_global = 1;
	attr.ah_attr.port_num = ROCEMU_PORT_NUM;
	attr.ah_attr.grh.dgid.raw[10] = 0xff;
	attr.ah_attr.grh.dgid.raw[11] = 0xff;
	attr.ah_attr.grh.dgid.raw[15] = 2;
	return attr;
}

#define RTR_MASK (IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | \
		  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)

START_TEST(test_create_refused)
{
	struct rocemu_create_qp_resp resp;
	struct rocemu_create_qp_req req = rc_req();

	req.qp_type = 200;
	ck_assert_int_eq(create(fx.client, &req, &resp), -EINVAL);
	/* A type verbs knows and the device does not do. */
	req.qp_type = IBV_QPT_DRIVER;
	ck_assert_int_eq(create(fx.client, &req, &resp), -EOPNOTSUPP);
	/* RAW_PACKET's own flag on another type (mlx5's process_create_flags) */
	req = rc_req();
	req.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	ck_assert_int_eq(create(fx.client, &req, &resp), -EOPNOTSUPP);
	req = rc_req();
	req.max_tso_header = 64;
	ck_assert_int_eq(create(fx.client, &req, &resp), -EINVAL);
	req = rc_req();
	req.pdn = fx.pdn + 1000;
	ck_assert_int_eq(create(fx.client, &req, &resp), -EINVAL);
	req = rc_req();
	req.send_cqn = fx.rcq.cqn + 1000;
	ck_assert_int_eq(create(fx.client, &req, &resp), -EINVAL);
	req = rc_req();
	req.recv_cqn = fx.rcq.cqn + 1000;
	ck_assert_int_eq(create(fx.client, &req, &resp), -EINVAL);
	req = rc_req();
	req.srqn = 1000;
	ck_assert_int_eq(create(fx.client, &req, &resp), -EINVAL);
	/* mlx5: a DCT receives through an SRQ. */
	req = rc_req();
	req.qp_type = ROCEMU_QPT_DCT;
	ck_assert_int_eq(create(fx.client, &req, &resp), -EINVAL);
}
END_TEST

/* process_vendor_flags: unknown flags, and packet-based credits but on RC, are EINVAL. */
START_TEST(test_create_vendor_flags)
{
	struct rocemu_create_qp_resp resp;
	struct rocemu_create_qp_req req = rc_req();

	req.vendor_flags = 1u << 31;
	ck_assert_int_eq(create(fx.client, &req, &resp), -EINVAL);
	req.vendor_flags = ROCEMU_QP_VENDOR_PACKET_BASED_CREDIT;
	req.qp_type = IBV_QPT_UC;
	ck_assert_int_eq(create(fx.client, &req, &resp), -EINVAL);
	req.qp_type = IBV_QPT_RC;
	ck_assert_int_eq(create(fx.client, &req, &resp), 0);
	/* The scatter flags are taken by every type. */
	req.vendor_flags = ROCEMU_QP_VENDOR_SCATTER_CQE | ROCEMU_QP_VENDOR_ALLOW_SCATTER_CQE;
	req.qp_type = IBV_QPT_UD;
	ck_assert_int_eq(create(fx.client, &req, &resp), 0);
}
END_TEST

/* mlx5dv_reserved_qpn_alloc: numbers of their own, above every QP's, the reserver's alone. */
START_TEST(test_reserved_qpns)
{
	struct rocemu_client *other = fx_client_new();
	uint32_t a, b;

	ck_assert_int_eq(rocemu_reserved_qpn_alloc(fx.client, &a), 0);
	ck_assert_int_eq(rocemu_reserved_qpn_alloc(fx.client, &b), 0);
	ck_assert_uint_ne(a, b);
	ck_assert_uint_ge(a, ROCEMU_FIRST_RESERVED_QPN);
	ck_assert_uint_le(b, ROCEMU_QPN_MASK);
	ck_assert_ptr_null(rocemu_qp_lookup(fx.client, a));
	ck_assert_int_eq(rocemu_reserved_qpn_dealloc(other, a), -EINVAL);
	ck_assert_int_eq(rocemu_reserved_qpn_dealloc(fx.client, fx.qp.qpn), -EINVAL);
	ck_assert_int_eq(rocemu_reserved_qpn_dealloc(fx.client, a), 0);
	ck_assert_int_eq(rocemu_reserved_qpn_dealloc(fx.client, a), -EINVAL);
}
END_TEST

/* ibv_create_qp(3): EINVAL for caps past the device's (ibv_query_device's max_qp_wr, max_sge). */
START_TEST(test_create_caps_refused)
{
	struct rocemu_create_qp_resp resp;
	struct rocemu_create_qp_req req = rc_req();

	req.cap.max_send_wr = ROCEMU_MAX_QP_WR + 1;
	ck_assert_int_eq(create(fx.client, &req, &resp), -EINVAL);
	req = rc_req();
	req.cap.max_recv_wr = ROCEMU_MAX_QP_WR + 1;
	ck_assert_int_eq(create(fx.client, &req, &resp), -EINVAL);
	req = rc_req();
	req.cap.max_send_sge = ROCEMU_MAX_SGE + 1;
	ck_assert_int_eq(create(fx.client, &req, &resp), -EINVAL);
	req = rc_req();
	req.cap.max_recv_sge = ROCEMU_MAX_SGE + 1;
	ck_assert_int_eq(create(fx.client, &req, &resp), -EINVAL);
	req = rc_req();
	req.cap.max_inline_data = ROCEMU_MAX_INLINE + 1;
	ck_assert_int_eq(create(fx.client, &req, &resp), -EINVAL);
}
END_TEST

START_TEST(test_create_grants)
{
	const struct rocemu_create_qp_req req = rc_req();
	struct rocemu_create_qp_resp resp;
	struct rocemu_query_qp_resp q;

	ck_assert_int_eq(create(fx.client, &req, &resp), 0);
	ck_assert_uint_ge(resp.cap.max_send_wr, req.cap.max_send_wr);
	ck_assert_uint_ge(resp.cap.max_recv_wr, req.cap.max_recv_wr);
	ck_assert_uint_ge(resp.cap.max_send_sge, req.cap.max_send_sge);
	ck_assert_uint_ge(resp.cap.max_recv_sge, req.cap.max_recv_sge);
	ck_assert_uint_ge(resp.cap.max_inline_data, req.cap.max_inline_data);
	/* mlx5 rings hold a power of two of entries. */
	ck_assert_uint_eq(resp.layout.sq_wqe_cnt & (resp.layout.sq_wqe_cnt - 1), 0);
	ck_assert_uint_eq(resp.layout.rq_wqe_cnt & (resp.layout.rq_wqe_cnt - 1), 0);
	q = query(resp.layout.qpn);
	ck_assert_int_eq(q.attr.qp_state, IBV_QPS_RESET);
	ck_assert_uint_eq(q.qp_type, IBV_QPT_RC);
	ck_assert_uint_eq(q.cap.max_send_wr, resp.cap.max_send_wr);
	ck_assert_uint_eq(q.cap.max_inline_data, resp.cap.max_inline_data);
	ck_assert_uint_ne(resp.layout.qpn, fx.qp.qpn);
}
END_TEST

/* A QP holds its PD and CQs (EBUSY) until it is destroyed; then it is unknown. */
START_TEST(test_holds_and_destroy)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	const struct rocemu_query_qp_req q = { .qpn = fx.qp.qpn };
	struct rocemu_query_qp_resp resp;

	ck_assert_int_eq(rocemu_pd_dealloc(fx.client, fx.pdn), -EBUSY);
	ck_assert_int_eq(rocemu_cq_destroy(fx.client, fx.scq.cqn), -EBUSY);
	ck_assert_int_eq(rocemu_cq_destroy(fx.client, fx.rcq.cqn), -EBUSY);
	ck_assert_int_eq(rocemu_qp_destroy(fx.client, fx.qp.qpn), 0);
	ck_assert_ptr_null(rocemu_qp_lookup(fx.client, fx.qp.qpn));
	ck_assert_int_eq(rocemu_qp_destroy(fx.client, fx.qp.qpn), -EINVAL);
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), -EINVAL);
	ck_assert_int_eq(rocemu_qp_query(fx.client, &q, &resp), -EINVAL);
	ck_assert_int_eq(rocemu_cq_destroy(fx.client, fx.scq.cqn), 0);
}
END_TEST

/* Another client's QP is unknown to this one, as another context's handle to uverbs. */
START_TEST(test_another_client)
{
	struct rocemu_client *other = fx_client_new();
	struct rocemu_create_cq_req cq_req = { .cqe = FX_CQE, .channel = ROCEMU_NO_HANDLE };
	struct rocemu_create_qp_req req = rc_req();
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = ROCEMU_PORT_NUM };
	struct rocemu_modify_qp_req modify = { .attr_mask = INIT_MASK, .attr = attr };
	struct rocemu_create_qp_resp resp;
	struct rocemu_cq_layout cq;
	int fd;

	/* fx.client's PD and CQs are none of the other client's. */
	ck_assert_int_eq(create(other, &req, &resp), -EINVAL);
	ck_assert_int_eq(rocemu_cq_create(other, &cq_req, &cq, &fd), 0);
	close(fd);
	req.pdn = fx_pd_alloc(other);
	req.send_cqn = req.recv_cqn = cq.cqn;
	ck_assert_int_eq(create(other, &req, &resp), 0);
	modify.qpn = resp.layout.qpn;
	ck_assert_ptr_null(rocemu_qp_lookup(fx.client, resp.layout.qpn));
	ck_assert_int_eq(rocemu_qp_modify(fx.client, &modify), -EINVAL);
	ck_assert_int_eq(rocemu_qp_destroy(fx.client, resp.layout.qpn), -EINVAL);
	ck_assert_int_eq(rocemu_qp_modify(other, &modify), 0);
	ck_assert_int_eq(rocemu_qp_destroy(other, resp.layout.qpn), 0);
}
END_TEST

/* ibv_modify_qp(3): EINVAL for a transition IBTA forbids or a mask it does not allow; nothing changes. */
START_TEST(test_transitions_refused)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTR, .port_num = ROCEMU_PORT_NUM };

	fx_qp_replace(IBV_QPT_RC);
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), -EINVAL);
	attr.qp_state = IBV_QPS_RTS;
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), -EINVAL);
	/* Linux's table: a QP never set up does not go to ERR. */
	attr.qp_state = IBV_QPS_ERR;
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), -EINVAL);
	attr.qp_state = IBV_QPS_INIT;
	ck_assert_int_eq(fx_qp_modify(&attr, INIT_MASK & ~IBV_QP_PORT), -EINVAL);
	ck_assert_int_eq(fx_qp_modify(&attr, INIT_MASK | IBV_QP_SQ_PSN), -EINVAL);
	/* A state past ERR. */
	attr.qp_state = IBV_QPS_ERR + 1;
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), -EINVAL);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_RESET);
	attr.qp_state = IBV_QPS_INIT;
	ck_assert_int_eq(fx_qp_modify(&attr, INIT_MASK), 0);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_INIT);
}
END_TEST

START_TEST(test_init_bounds)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 2 };

	fx_qp_replace(IBV_QPT_RC);
	ck_assert_int_eq(fx_qp_modify(&attr, INIT_MASK), -EINVAL);
	attr.port_num = ROCEMU_PORT_NUM;
	attr.pkey_index = 1;	/* one P_Key */
	ck_assert_int_eq(fx_qp_modify(&attr, INIT_MASK), -EINVAL);
	attr.pkey_index = 0;
	attr.qp_access_flags = 1u << 30;	/* no flag names it */
	ck_assert_int_eq(fx_qp_modify(&attr, INIT_MASK), -EINVAL);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_RESET);
	attr.qp_access_flags = IBV_ACCESS_REMOTE_READ;
	ck_assert_int_eq(fx_qp_modify(&attr, INIT_MASK), 0);
	/* INIT -> INIT changes the rights. */
	attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS), 0);
	ck_assert_int_eq(query(fx.qp.qpn).attr.qp_access_flags, IBV_ACCESS_REMOTE_WRITE);
}
END_TEST

/* Each attribute RTR takes, one past its bound: EINVAL, the QP left in INIT. */
START_TEST(test_rtr_bounds)
{
	struct ibv_qp_attr attr;

	rc_in_init();
	attr = rtr_attr();
	attr.path_mtu = 0;
	ck_assert_int_eq(fx_qp_modify(&attr, RTR_MASK), -EINVAL);
	attr.path_mtu = IBV_MTU_4096 + 1;
	ck_assert_int_eq(fx_qp_modify(&attr, RTR_MASK), -EINVAL);
	/* RoCE: the AV has a GRH, through GID 0 of port 1. */
	attr = rtr_attr();
	attr.ah_attr.is_global = 0;
	ck_assert_int_eq(fx_qp_modify(&attr, RTR_MASK), -EINVAL);
	attr = rtr_attr();
	attr.ah_attr.grh.sgid_index = 1;
	ck_assert_int_eq(fx_qp_modify(&attr, RTR_MASK), -EINVAL);
	attr = rtr_attr();
	attr.ah_attr.port_num = 2;
	ck_assert_int_eq(fx_qp_modify(&attr, RTR_MASK), -EINVAL);
	attr = rtr_attr();
	attr.dest_qp_num = 1u << 24;
	ck_assert_int_eq(fx_qp_modify(&attr, RTR_MASK), -EINVAL);
	attr = rtr_attr();
	attr.max_dest_rd_atomic = 17;
	ck_assert_int_eq(fx_qp_modify(&attr, RTR_MASK), -EINVAL);
	attr = rtr_attr();
	attr.min_rnr_timer = 32;
	ck_assert_int_eq(fx_qp_modify(&attr, RTR_MASK), -EINVAL);
	/* No alternate path (no APM). */
	attr = rtr_attr();
	ck_assert_int_eq(fx_qp_modify(&attr, RTR_MASK | IBV_QP_ALT_PATH), -EINVAL);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_INIT);
	ck_assert_int_eq(fx_qp_modify(&attr, RTR_MASK), 0);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_RTR);
}
END_TEST

START_TEST(test_rts_bounds_and_psn)
{
	struct ibv_qp_attr attr = rtr_attr();
	const int mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	struct rocemu_query_qp_resp q;

	rc_in_init();
	ck_assert_int_eq(fx_qp_modify(&attr, RTR_MASK), 0);
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 32;
	ck_assert_int_eq(fx_qp_modify(&attr, mask), -EINVAL);
	attr.timeout = 14;
	attr.retry_cnt = 8;
	ck_assert_int_eq(fx_qp_modify(&attr, mask), -EINVAL);
	attr.retry_cnt = 7;
	attr.rnr_retry = 8;
	ck_assert_int_eq(fx_qp_modify(&attr, mask), -EINVAL);
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 17;
	ck_assert_int_eq(fx_qp_modify(&attr, mask), -EINVAL);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_RTR);
	attr.max_rd_atomic = 16;
	/* PSNs are 24 bits: the bits above are dropped. */
	attr.sq_psn = 0x1abcdef;
	ck_assert_int_eq(fx_qp_modify(&attr, mask), 0);
	q = query(fx.qp.qpn);
	ck_assert_int_eq(q.attr.qp_state, IBV_QPS_RTS);
	ck_assert_uint_eq(q.attr.sq_psn, 0xabcdef);
	ck_assert_uint_eq(q.attr.dest_qp_num, FX_PEER_QPN);
	ck_assert_uint_eq(q.attr.timeout, 14);
	ck_assert_uint_eq(q.attr.max_rd_atomic, 16);
	ck_assert_int_eq(q.attr.path_mtu, IBV_MTU_1024);
}
END_TEST

/* RTS -> ERR -> RESET -> INIT: ERR goes only to RESET; RESET forgets every attribute. */
START_TEST(test_err_and_reset)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct rocemu_query_qp_resp q;

	ck_assert_uint_eq(query(fx.qp.qpn).attr.dest_qp_num, FX_PEER_QPN);
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_ERR);
	attr.qp_state = IBV_QPS_RTS;
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), -EINVAL);
	attr.qp_state = IBV_QPS_INIT;
	ck_assert_int_eq(fx_qp_modify(&attr, INIT_MASK), -EINVAL);
	attr.qp_state = IBV_QPS_RESET;
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
	q = query(fx.qp.qpn);
	ck_assert_int_eq(q.attr.qp_state, IBV_QPS_RESET);
	ck_assert_uint_eq(q.attr.dest_qp_num, 0);
	ck_assert_uint_eq(q.attr.sq_psn, 0);
	ck_assert_uint_eq(q.attr.qp_access_flags, 0);
	attr = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = ROCEMU_PORT_NUM };
	ck_assert_int_eq(fx_qp_modify(&attr, INIT_MASK), 0);
}
END_TEST

/* RTS -> SQD -> RTS, and a modify in RTS of what RTS may change. */
START_TEST(test_sqd_and_rts_changes)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_SQD };

	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
	ck_assert_int_eq(fx_qp_state(), IBV_QPS_SQD);
	attr.qp_state = IBV_QPS_RTS;
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
	attr.min_rnr_timer = 3;
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER), 0);
	ck_assert_uint_eq(query(fx.qp.qpn).attr.min_rnr_timer, 3);
	/* RTS -> RTS may not change the path MTU (IBTA 11.2.5.1). */
	attr.path_mtu = IBV_MTU_512;
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE | IBV_QP_PATH_MTU), -EINVAL);
	ck_assert_int_eq(query(fx.qp.qpn).attr.path_mtu, FX_MTU);
}
END_TEST

static Suite *qp_suite(void)
{
	Suite *s = suite_create("qp");
	TCase *create_tc = tcase_create("create"), *modify = tcase_create("modify");

	tcase_add_checked_fixture(create_tc, fx_setup, fx_teardown);
	tcase_add_test(create_tc, test_create_refused);
	tcase_add_test(create_tc, test_create_caps_refused);
	tcase_add_test(create_tc, test_create_vendor_flags);
	tcase_add_test(create_tc, test_reserved_qpns);
	tcase_add_test(create_tc, test_create_grants);
	tcase_add_test(create_tc, test_holds_and_destroy);
	suite_add_tcase(s, create_tc);
	tcase_add_test(create_tc, test_another_client);
	tcase_add_checked_fixture(modify, fx_setup, fx_teardown);
	tcase_add_test(modify, test_transitions_refused);
	tcase_add_test(modify, test_init_bounds);
	tcase_add_test(modify, test_rtr_bounds);
	tcase_add_test(modify, test_rts_bounds_and_psn);
	tcase_add_test(modify, test_err_and_reset);
	tcase_add_test(modify, test_sqd_and_rts_changes);
	suite_add_tcase(s, modify);
	return s;
}

int main(void)
{
	return fx_suite_run(qp_suite());
}
