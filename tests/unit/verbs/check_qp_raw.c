/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * RAW_PACKET QPs and steering rules on an emulated device
 * (lib/verbs/qp_raw.c, qp.c, flow.c): the CREATE_QP request of a raw QP
 * (its create flags and max_tso_header) and of an RSS QP (its table's
 * handle and Toeplitz hash, no queue or CQ of its own), the errnos
 * libmlx5 and mlx5_ib give for the RSS attributes, the daemon's EPERM
 * passed on, the offloads the modify that sets the port turns on, and
 * ibv_create_flow/ibv_destroy_flow's CREATE_FLOW request byte for byte
 * with the daemon's answers. The daemon is daemon_conn.h's stand-in.
 */
#include <check.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lib/shim.h"
#include "tests/unit/verbs/daemon_conn.h"

#define QPN 0x000aa1
#define PDN 3
#define CQN 0x41
#define IND_TBL_HANDLE 9
#define FLOW_HANDLE 0x77
#define SQ_BBS 8
#define RQ_WQES 4
#define RQ_SHIFT 6
#define RQ_OFFSET (SQ_BBS * ROCEMU_WQE_BB)
#define DBREC_OFFSET (RQ_OFFSET + (RQ_WQES << RQ_SHIFT))
#define MAP_SIZE (DBREC_OFFSET + ROCEMU_WQE_BB)

static struct rocemu_device device;
static struct ibv_device ibdev;
static struct rocemu_context rctx, other_rctx;
static struct ibv_context *const ctx = &rctx.vctx.context;
static struct rocemu_pd pd;
static struct rocemu_cq cq;
static struct ibv_rwq_ind_table ind_tbl, other_ind_tbl;
static uint8_t key[ROCEMU_RSS_KEY_MAX];

struct rocemu_device *rocemu_device_of(struct ibv_device *dev)
{
	return dev == &ibdev ? &device : NULL;
}

/* Not reached: every object here is the emulated device's, nothing is posted or swept. */
void *rocemu_real(enum rocemu_real_fn fn)
{
	(void)fn;
	abort();
}

void rocemu_cq_clean(struct rocemu_cq *c, uint32_t qpn, struct rocemu_srq *s)
{
	(void)c;
	(void)qpn;
	(void)s;
}

void rocemu_ctx_doorbell(struct rocemu_context *c)
{
	(void)c;
	abort();
}

static void ctx_init(struct rocemu_context *r)
{
	memset(r, 0, sizeof(*r));
	r->vctx.context.device = &ibdev;
	r->vctx.context.num_comp_vectors = 1;
	pthread_mutex_init(&r->vctx.context.mutex, NULL);
	rocemu_huge_pool_init(&r->huge_pool);
}

static void objs_open(void)
{
	size_t i;

	ctx_init(&rctx);
	ctx_init(&other_rctx);
	pd = (struct rocemu_pd){ .ibpd = { .context = ctx }, .pdn = PDN };
	memset(&cq, 0, sizeof(cq));
	cq.ibcq.context = ctx;
	cq.cqn = CQN;
	pthread_spin_init(&cq.lock, PTHREAD_PROCESS_PRIVATE);
	ind_tbl = (struct ibv_rwq_ind_table){ .context = ctx, .ind_tbl_handle = IND_TBL_HANDLE };
	other_ind_tbl = (struct ibv_rwq_ind_table){ .context = &other_rctx.vctx.context };
	for (i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(0x6d + i);
	unsetenv("MLX5_SCATTER_TO_CQE");
	conn_reset();
}

static void objs_close(void)
{
	rocemu_qp_table_free(&rctx);
	pthread_spin_destroy(&cq.lock);
}

/* The daemon's layout for a QP of queues, or of none (an RSS QP's). */
static void answer_create(bool queues)
{
	struct rocemu_create_qp_resp resp = {
		.layout = { .qpn = QPN, .size = MAP_SIZE, .rq_offset = RQ_OFFSET,
			    .dbrec_offset = DBREC_OFFSET },
	};

	if (queues) {
		resp.layout.sq_wqe_cnt = SQ_BBS;
		resp.layout.rq_wqe_cnt = RQ_WQES;
		resp.layout.rq_wqe_shift = RQ_SHIFT;
		resp.cap = (struct ibv_qp_cap){ .max_send_wr = SQ_BBS, .max_recv_wr = RQ_WQES,
						.max_send_sge = 1, .max_recv_sge = 1 };
	}
	conn_answer(ROCEMU_OP_CREATE_QP, 0, &resp, sizeof(resp), MAP_SIZE);
}

static struct ibv_qp_init_attr_ex raw_attr(void)
{
	return (struct ibv_qp_init_attr_ex){
		.qp_type = IBV_QPT_RAW_PACKET, .pd = &pd.ibpd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS |
			     IBV_QP_INIT_ATTR_MAX_TSO_HEADER,
		.create_flags = IBV_QP_CREATE_SCATTER_FCS | IBV_QP_CREATE_CVLAN_STRIPPING |
				IBV_QP_CREATE_PCI_WRITE_END_PADDING,
		.max_tso_header = 64,
		.send_cq = ibv_cq_ex_to_cq(&cq.ibcq), .recv_cq = ibv_cq_ex_to_cq(&cq.ibcq),
		.cap = { .max_send_wr = 8, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};
}

/* An RSS QP as perftest's raw_ethernet_bw --rss makes one: TCP over IPv4, its table, a key. */
static struct ibv_qp_init_attr_ex rss_attr(void)
{
	return (struct ibv_qp_init_attr_ex){
		.qp_type = IBV_QPT_RAW_PACKET, .pd = &pd.ibpd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			     IBV_QP_INIT_ATTR_RX_HASH,
		.rwq_ind_tbl = &ind_tbl,
		.rx_hash_conf = { .rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
				  .rx_hash_key_len = sizeof(key), .rx_hash_key = key,
				  .rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 |
							 IBV_RX_HASH_SRC_PORT_TCP |
							 IBV_RX_HASH_DST_PORT_TCP },
	};
}

static const struct rocemu_create_qp_req *create_req(void)
{
	return conn_last(ROCEMU_OP_CREATE_QP);
}

static void assert_refused(struct ibv_qp_init_attr_ex attr, int err)
{
	errno = 0;
	ck_assert_ptr_null(rocemu_create_qp_ex_op(ctx, &attr));
	ck_assert_int_eq(errno, err);
	ck_assert_int_eq(conn_calls_all(), 0);
}

/* A raw QP: its flags and TSO header room asked for, no RSS; the port's modify turns on the offloads. */
START_TEST(test_create_raw)
{
	struct ibv_qp_init_attr_ex attr = raw_attr();
	struct ibv_qp_attr mod = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *qp;
	struct rocemu_qp *rqp;
	const struct rocemu_create_qp_req *req;

	answer_create(true);
	qp = rocemu_create_qp_ex_op(ctx, &attr);
	ck_assert_ptr_nonnull(qp);
	req = create_req();
	ck_assert_uint_eq(req->qp_type, IBV_QPT_RAW_PACKET);
	ck_assert_uint_eq(req->create_flags, IBV_QP_CREATE_SCATTER_FCS |
			  IBV_QP_CREATE_CVLAN_STRIPPING | IBV_QP_CREATE_PCI_WRITE_END_PADDING);
	ck_assert_uint_eq(req->max_tso_header, 64);
	ck_assert_uint_eq(req->rwq_ind_tbl, ROCEMU_NO_HANDLE);
	ck_assert_uint_eq(req->rx_hash_key_len, 0);
	ck_assert_uint_eq(req->send_cqn, CQN);
	ck_assert_uint_eq(req->recv_cqn, CQN);
	rqp = to_rqp(qp);
	ck_assert_uint_eq(rqp->max_tso_header, 64);
	ck_assert_ptr_eq(rocemu_qp_table_find(&rctx, QPN), rqp);
	ck_assert(!rqp->raw_csum);
	ck_assert_int_eq(ibv_modify_qp(qp, &mod, IBV_QP_STATE), 0);
	ck_assert(!rqp->raw_csum);
	ck_assert_int_eq(ibv_modify_qp(qp, &mod, IBV_QP_STATE | IBV_QP_PORT), 0);
	ck_assert(rqp->raw_csum);
	ck_assert_uint_eq(rqp->max_tso, 262144);
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
}
END_TEST

/* Without IBV_QP_INIT_ATTR_MAX_TSO_HEADER the field means nothing: 0 is asked. */
START_TEST(test_create_raw_no_tso)
{
	struct ibv_qp_init_attr_ex attr = raw_attr();
	struct ibv_qp *qp;

	attr.comp_mask &= ~(uint32_t)IBV_QP_INIT_ATTR_MAX_TSO_HEADER;
	answer_create(true);
	qp = rocemu_create_qp_ex_op(ctx, &attr);
	ck_assert_ptr_nonnull(qp);
	ck_assert_uint_eq(create_req()->max_tso_header, 0);
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
}
END_TEST

/* The daemon refuses a client without CAP_NET_RAW: EPERM, as uverbs does. */
START_TEST(test_create_raw_eperm)
{
	struct ibv_qp_init_attr_ex attr = raw_attr();

	conn_answer(ROCEMU_OP_CREATE_QP, -EPERM, NULL, 0, 0);
	errno = 0;
	ck_assert_ptr_null(rocemu_create_qp_ex_op(ctx, &attr));
	ck_assert_int_eq(errno, EPERM);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_CREATE_QP), 1);
}
END_TEST

/* An RSS QP: the table's handle and the hash asked for; no CQ, queue or place in the poller's table. */
START_TEST(test_create_rss)
{
	struct ibv_qp_init_attr_ex attr = rss_attr();
	const struct rocemu_create_qp_req *req;
	struct ibv_qp *qp;

	attr.send_cq = attr.recv_cq = ibv_cq_ex_to_cq(&cq.ibcq);	/* ignored */
	answer_create(false);
	qp = rocemu_create_qp_ex_op(ctx, &attr);
	ck_assert_ptr_nonnull(qp);
	req = create_req();
	ck_assert_uint_eq(req->qp_type, IBV_QPT_RAW_PACKET);
	ck_assert_uint_eq(req->rwq_ind_tbl, IND_TBL_HANDLE);
	ck_assert_uint_eq(req->rx_hash_fields_mask, IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 |
			  IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP);
	ck_assert_uint_eq(req->rx_hash_function, IBV_RX_HASH_FUNC_TOEPLITZ);
	ck_assert_uint_eq(req->rx_hash_key_len, ROCEMU_RSS_KEY_MAX);
	ck_assert_mem_eq(req->rx_hash_key, key, sizeof(key));
	ck_assert_uint_eq(req->send_cqn, ROCEMU_NO_HANDLE);
	ck_assert_uint_eq(req->recv_cqn, ROCEMU_NO_HANDLE);
	ck_assert_uint_eq(req->cap.max_recv_wr, 0);
	ck_assert_uint_eq(req->cap.max_send_wr, 0);
	ck_assert_uint_eq(req->vendor_flags & ROCEMU_QP_VENDOR_SCATTER_CQE, 0);
	ck_assert_ptr_null(rocemu_qp_table_find(&rctx, QPN));
	/* libmlx5: no modify of a TIR, the daemon not asked */
	ck_assert_int_eq(ibv_modify_qp(qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT },
				       IBV_QP_STATE), EOPNOTSUPP);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_MODIFY_QP), 0);
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_DESTROY_QP), 1);
}
END_TEST

/* The RSS attributes as libmlx5 and mlx5_ib's create_rss_raw_qp_tir refuse them. */
START_TEST(test_create_rss_refused)
{
	struct ibv_qp_init_attr_ex attr = rss_attr();

	attr.rx_hash_conf.rx_hash_key_len = ROCEMU_RSS_KEY_MAX + 1;	/* libmlx5 */
	assert_refused(attr, EINVAL);
	attr = rss_attr();
	attr.rx_hash_conf.rx_hash_key_len = ROCEMU_RSS_KEY_MAX - 1;
	assert_refused(attr, EINVAL);
	attr = rss_attr();
	attr.rx_hash_conf.rx_hash_function = 0;
	assert_refused(attr, EOPNOTSUPP);
	attr = rss_attr();
	attr.rx_hash_conf.rx_hash_fields_mask |= IBV_RX_HASH_IPSEC_SPI;
	assert_refused(attr, EOPNOTSUPP);
	attr = rss_attr();
	attr.rx_hash_conf.rx_hash_fields_mask |= IBV_RX_HASH_SRC_IPV6;
	assert_refused(attr, EINVAL);
	attr = rss_attr();
	attr.rx_hash_conf.rx_hash_fields_mask |= IBV_RX_HASH_DST_PORT_UDP;
	assert_refused(attr, EINVAL);
	attr = rss_attr();
	attr.comp_mask &= ~(uint32_t)IBV_QP_INIT_ATTR_IND_TABLE;
	assert_refused(attr, EINVAL);
	attr = rss_attr();
	attr.comp_mask &= ~(uint32_t)IBV_QP_INIT_ATTR_RX_HASH;
	assert_refused(attr, EINVAL);
	attr = rss_attr();
	attr.rwq_ind_tbl = &other_ind_tbl;
	assert_refused(attr, EINVAL);
	attr = rss_attr();
	attr.qp_type = IBV_QPT_UD;
	assert_refused(attr, EINVAL);
	attr = rss_attr();
	attr.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	attr.send_ops_flags = IBV_QP_EX_WITH_SEND;
	assert_refused(attr, EINVAL);
	attr = rss_attr();
	attr.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	attr.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	assert_refused(attr, EINVAL);
}
END_TEST

/* A rule of an ETH and an IPv4 spec: the request holds the attributes and both specs byte for byte. */
START_TEST(test_create_flow)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
		struct ibv_flow_spec_ipv4 ipv4;
	} rule = {	/* laid end to end, as each spec is a multiple of 4 bytes */
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(rule), .priority = 2,
			  .num_of_specs = 2, .port = 1, .flags = IBV_FLOW_ATTR_FLAGS_DONT_TRAP },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(struct ibv_flow_spec_eth),
			 .val = { .dst_mac = { 2, 0, 0, 0, 0, 1 }, .ether_type = htobe16(0x0800) },
			 .mask = { .dst_mac = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
				   .ether_type = 0xffff } },
		.ipv4 = { .type = IBV_FLOW_SPEC_IPV4, .size = sizeof(struct ibv_flow_spec_ipv4),
			  .val = { .dst_ip = htobe32(0x0a000001) }, .mask = { .dst_ip = 0xffffffff } },
	};
	struct rocemu_create_flow_resp resp = { .handle = FLOW_HANDLE };
	const struct rocemu_create_flow_req *req;
	const struct rocemu_handle_req *dreq;
	struct ibv_qp_init_attr_ex attr = raw_attr();
	struct ibv_flow *flow;
	struct ibv_qp *qp;

	answer_create(true);
	qp = rocemu_create_qp_ex_op(ctx, &attr);
	ck_assert_ptr_nonnull(qp);
	conn_answer(ROCEMU_OP_CREATE_FLOW, 0, &resp, sizeof(resp), 0);
	flow = rocemu_create_flow_op(qp, &rule.attr);
	ck_assert_ptr_nonnull(flow);
	ck_assert_ptr_eq(flow->context, ctx);
	ck_assert_uint_eq(flow->handle, FLOW_HANDLE);
	req = conn_last(ROCEMU_OP_CREATE_FLOW);
	ck_assert_uint_eq(req->qpn, QPN);
	ck_assert_uint_eq(req->type, IBV_FLOW_ATTR_NORMAL);
	ck_assert_uint_eq(req->flags, IBV_FLOW_ATTR_FLAGS_DONT_TRAP);
	ck_assert_uint_eq(req->priority, 2);
	ck_assert_uint_eq(req->port, 1);
	ck_assert_uint_eq(req->num_of_specs, 2);
	ck_assert_uint_eq(req->specs_len, sizeof(rule.eth) + sizeof(rule.ipv4));
	ck_assert_mem_eq(req->specs, &rule.eth, sizeof(rule.eth) + sizeof(rule.ipv4));
	/* destroy: the handle asked for; the daemon's errno given back, the flow kept */
	conn_answer(ROCEMU_OP_DESTROY_FLOW, -EBUSY, NULL, 0, 0);
	ck_assert_int_eq(rocemu_destroy_flow_op(flow), EBUSY);
	dreq = conn_last(ROCEMU_OP_DESTROY_FLOW);
	ck_assert_uint_eq(dreq->handle, FLOW_HANDLE);
	conn_answer(ROCEMU_OP_DESTROY_FLOW, 0, NULL, 0, 0);
	ck_assert_int_eq(rocemu_destroy_flow_op(flow), 0);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_DESTROY_FLOW), 2);
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
}
END_TEST

/* The daemon's refusal is errno; a spec of no bytes or past the request's room never reaches it. */
START_TEST(test_create_flow_refused)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_tcp_udp tcp;
	} rule = {	/* laid end to end, as each spec is a multiple of 4 bytes */
		.attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(rule), .num_of_specs = 1,
			  .port = 1 },
		.tcp = { .type = IBV_FLOW_SPEC_TCP, .size = sizeof(struct ibv_flow_spec_tcp_udp) },
	};
	struct ibv_qp_init_attr_ex attr = raw_attr();
	struct ibv_qp *qp;

	answer_create(true);
	qp = rocemu_create_qp_ex_op(ctx, &attr);
	ck_assert_ptr_nonnull(qp);
	conn_answer(ROCEMU_OP_CREATE_FLOW, -EOPNOTSUPP, NULL, 0, 0);
	errno = 0;
	ck_assert_ptr_null(rocemu_create_flow_op(qp, &rule.attr));
	ck_assert_int_eq(errno, EOPNOTSUPP);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_CREATE_FLOW), 1);
	rule.tcp.size = 0;
	errno = 0;
	ck_assert_ptr_null(rocemu_create_flow_op(qp, &rule.attr));
	ck_assert_int_eq(errno, EINVAL);
	rule.tcp.size = ROCEMU_FLOW_SPECS_MAX + 1;
	ck_assert_ptr_null(rocemu_create_flow_op(qp, &rule.attr));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_CREATE_FLOW), 1);
	ck_assert_int_eq(ibv_destroy_qp(qp), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("qp_raw");
	TCase *tc = tcase_create("raw");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, objs_open, objs_close);
	tcase_add_test(tc, test_create_raw);
	tcase_add_test(tc, test_create_raw_no_tso);
	tcase_add_test(tc, test_create_raw_eperm);
	tcase_add_test(tc, test_create_rss);
	tcase_add_test(tc, test_create_rss_refused);
	tcase_add_test(tc, test_create_flow);
	tcase_add_test(tc, test_create_flow_refused);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
