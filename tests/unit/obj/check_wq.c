/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Receive WQs and RSS indirection tables (emulator/wq/) through the
 * control ops CREATE_WQ, MODIFY_WQ, DESTROY_WQ, CREATE_RWQ_IND_TABLE and
 * DESTROY_RWQ_IND_TABLE: what create refuses and the ring it grants, as
 * mlx5; ibv_modify_wq's state rules; EBUSY for a WQ in a table, a table
 * an RSS QP uses and a CQ a WQ completes to; another client's objects
 * unknown, and released with it; the WQ an RSS QP gives a frame, by the
 * Microsoft verification suite's hashes.
 */
#include <check.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emulator/core/device.h"
#include "emulator/ctrl/client_life.h"
#include "emulator/ctrl/ctrl_ops.h"
#include "emulator/obj/cq.h"
#include "emulator/wq/rwq_ind_table.h"
#include "emulator/wq/wq.h"
#include "tests/unit/fixture.h"

static int op(struct rocemu_client *c, uint16_t opcode, const void *req, void *resp, int *fd)
{
	struct rocemu_msg_hdr hdr = { .op = opcode };
	struct rocemu_ctrl_reply reply = { .body = resp };
	int err = rocemu_ctrl_dispatch(c, &hdr, req, &reply);

	if (fd)
		*fd = reply.nfds ? reply.fds[0] : -1;
	else if (reply.nfds)
		close(reply.fds[0]);
	return err;
}

static int wq_create(struct rocemu_client *c, uint32_t pdn, uint32_t cqn, uint32_t type,
		     uint32_t max_wr, uint32_t max_sge, uint32_t flags,
		     struct rocemu_create_wq_resp *resp)
{
	const struct rocemu_create_wq_req req = {
		.pdn = pdn, .cqn = cqn, .wq_type = type, .max_wr = max_wr, .max_sge = max_sge,
		.create_flags = flags, .user_wq = 0x1234,
	};

	return op(c, ROCEMU_OP_CREATE_WQ, &req, resp, NULL);
}

/* A WQ of fx's PD and receive CQ; its number. */
static uint32_t wq_new(void)
{
	struct rocemu_create_wq_resp resp;

	ck_assert_int_eq(wq_create(fx.client, fx.pdn, fx.rcq.cqn, IBV_WQT_RQ, 8, 1, 0, &resp), 0);
	return resp.wqn;
}

static int wq_modify(uint32_t wqn, uint32_t mask, uint32_t state, uint32_t curr)
{
	const struct rocemu_modify_wq_req req = {
		.wqn = wqn, .attr_mask = mask, .wq_state = state, .curr_wq_state = curr,
	};

	return op(fx.client, ROCEMU_OP_MODIFY_WQ, &req, NULL, NULL);
}

static int handle_op(struct rocemu_client *c, uint16_t opcode, uint32_t handle)
{
	const struct rocemu_handle_req req = { .handle = handle };

	return op(c, opcode, &req, NULL, NULL);
}

static int table_create(struct rocemu_client *c, uint32_t log_size, const uint32_t *wqns,
			uint32_t *handle)
{
	static struct rocemu_create_rwq_ind_table_req req;
	struct rocemu_create_rwq_ind_table_resp resp;
	int err;

	req.log_size = log_size;
	if (log_size <= ROCEMU_RWQ_IND_TABLE_MAX_LOG)
		memcpy(req.wqns, wqns, sizeof(uint32_t) << log_size);
	err = op(c, ROCEMU_OP_CREATE_RWQ_IND_TABLE, &req, &resp, NULL);
	if (!err)
		*handle = resp.handle;
	return err;
}

START_TEST(test_create_refused)
{
	struct rocemu_create_wq_resp resp;

	ck_assert_int_eq(wq_create(fx.client, fx.pdn + 1000, fx.rcq.cqn, IBV_WQT_RQ, 8, 1, 0, &resp),
			 -EINVAL);
	ck_assert_int_eq(wq_create(fx.client, fx.pdn, fx.rcq.cqn + 1000, IBV_WQT_RQ, 8, 1, 0, &resp),
			 -EINVAL);
	ck_assert_int_eq(wq_create(fx.client, fx.pdn, fx.rcq.cqn, IBV_WQT_RQ + 1, 8, 1, 0, &resp),
			 -EINVAL);
	ck_assert_int_eq(wq_create(fx.client, fx.pdn, fx.rcq.cqn, IBV_WQT_RQ, 0, 1, 0, &resp),
			 -EINVAL);
	ck_assert_int_eq(wq_create(fx.client, fx.pdn, fx.rcq.cqn, IBV_WQT_RQ, ROCEMU_MAX_QP_WR + 1,
				   1, 0, &resp), -EINVAL);
	ck_assert_int_eq(wq_create(fx.client, fx.pdn, fx.rcq.cqn, IBV_WQT_RQ, 8, ROCEMU_MAX_SGE + 1,
				   0, &resp), -EINVAL);
	ck_assert_int_eq(wq_create(fx.client, fx.pdn, fx.rcq.cqn, IBV_WQT_RQ, 8, 1,
				   IBV_WQ_FLAGS_DELAY_DROP, &resp), -EOPNOTSUPP);
}
END_TEST

START_TEST(test_create_grants)
{
	const struct rocemu_create_wq_req req = {
		.pdn = fx.pdn, .cqn = fx.rcq.cqn, .wq_type = IBV_WQT_RQ, .max_wr = 100, .max_sge = 3,
		.create_flags = IBV_WQ_FLAGS_SCATTER_FCS, .user_wq = 0xabcd,
	};
	struct rocemu_create_wq_resp resp;
	struct rocemu_wq *wq;
	void *map;
	int fd;

	ck_assert_int_eq(op(fx.client, ROCEMU_OP_CREATE_WQ, &req, &resp, &fd), 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_uint_eq(resp.wqe_cnt, 128);
	ck_assert_uint_eq(resp.max_wr, 128);
	ck_assert_uint_ge(resp.max_sge, 3);
	/* mlx5's RQ stride: a power of two of 16-byte data segments. */
	ck_assert_uint_eq(resp.wqe_shift, 6);
	ck_assert_uint_ge(resp.dbrec_offset, (uint64_t)resp.wqe_cnt << resp.wqe_shift);
	ck_assert_uint_ge(resp.size, resp.dbrec_offset + 4);
	map = mmap(NULL, resp.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(map, MAP_FAILED);
	munmap(map, resp.size);
	close(fd);
	wq = rocemu_wq_lookup(fx.client, resp.wqn);
	ck_assert_ptr_nonnull(wq);
	ck_assert_int_eq(wq->state, IBV_WQS_RESET);
	ck_assert_uint_eq(wq->flags, IBV_WQ_FLAGS_SCATTER_FCS);
	ck_assert_uint_eq(wq->user_wq, 0xabcd);
}
END_TEST

START_TEST(test_modify_states)
{
	uint32_t wqn = wq_new();
	struct rocemu_wq *wq = rocemu_wq_lookup(fx.client, wqn);

	ck_assert_int_eq(wq_modify(wqn, IBV_WQ_ATTR_STATE, IBV_WQS_ERR, 0), -EINVAL);
	ck_assert_int_eq(wq_modify(wqn, IBV_WQ_ATTR_STATE, IBV_WQS_RDY, 0), 0);
	ck_assert_int_eq(wq->state, IBV_WQS_RDY);
	ck_assert_int_eq(wq_modify(wqn, IBV_WQ_ATTR_STATE, IBV_WQS_RDY, 0), 0);
	/* A current state given that is not the WQ's. */
	ck_assert_int_eq(wq_modify(wqn, IBV_WQ_ATTR_STATE | IBV_WQ_ATTR_CURR_STATE, IBV_WQS_ERR,
				   IBV_WQS_RESET), -EINVAL);
	ck_assert_int_eq(wq_modify(wqn, IBV_WQ_ATTR_STATE | IBV_WQ_ATTR_CURR_STATE, IBV_WQS_ERR,
				   IBV_WQS_RDY), 0);
	ck_assert_int_eq(wq->state, IBV_WQS_ERR);
	ck_assert_int_eq(wq_modify(wqn, IBV_WQ_ATTR_STATE, IBV_WQS_RDY, 0), -EINVAL);
	ck_assert_int_eq(wq_modify(wqn, IBV_WQ_ATTR_STATE, IBV_WQS_UNKNOWN, 0), -EINVAL);
	ck_assert_int_eq(wq_modify(wqn, IBV_WQ_ATTR_STATE, IBV_WQS_RESET, 0), 0);
	ck_assert_int_eq(wq->state, IBV_WQS_RESET);
	/* No such attribute, no such WQ. */
	ck_assert_int_eq(wq_modify(wqn, IBV_WQ_ATTR_RESERVED, 0, 0), -EINVAL);
	ck_assert_int_eq(wq_modify(wqn + 1000, IBV_WQ_ATTR_STATE, IBV_WQS_RDY, 0), -EINVAL);
}
END_TEST

START_TEST(test_modify_flags)
{
	uint32_t wqn = wq_new();
	struct rocemu_modify_wq_req req = {
		.wqn = wqn, .attr_mask = IBV_WQ_ATTR_FLAGS,
		.flags = IBV_WQ_FLAGS_CVLAN_STRIPPING | IBV_WQ_FLAGS_SCATTER_FCS,
		.flags_mask = IBV_WQ_FLAGS_CVLAN_STRIPPING,
	};

	ck_assert_int_eq(op(fx.client, ROCEMU_OP_MODIFY_WQ, &req, NULL, NULL), 0);
	ck_assert_uint_eq(rocemu_wq_lookup(fx.client, wqn)->flags, IBV_WQ_FLAGS_CVLAN_STRIPPING);
	req.flags_mask = IBV_WQ_FLAGS_DELAY_DROP;
	ck_assert_int_eq(op(fx.client, ROCEMU_OP_MODIFY_WQ, &req, NULL, NULL), -EOPNOTSUPP);
}
END_TEST

START_TEST(test_tables_and_busy)
{
	uint32_t wqns[4] = { wq_new(), wq_new(), wq_new(), wq_new() }, handle, bad[2];
	struct rocemu_rwq_ind_table *t;

	ck_assert_int_eq(table_create(fx.client, ROCEMU_RWQ_IND_TABLE_MAX_LOG + 1, wqns, &handle),
			 -EINVAL);
	bad[0] = wqns[0];
	bad[1] = wqns[3] + 1000;
	ck_assert_int_eq(table_create(fx.client, 1, bad, &handle), -EINVAL);
	ck_assert_int_eq(table_create(fx.client, 2, wqns, &handle), 0);
	/* A WQ in a table, and the CQ a WQ completes to, cannot go. */
	ck_assert_int_eq(handle_op(fx.client, ROCEMU_OP_DESTROY_WQ, wqns[1]), -EBUSY);
	ck_assert_int_eq(rocemu_cq_destroy(fx.client, fx.rcq.cqn), -EBUSY);
	/* A table an RSS QP uses cannot go. */
	t = rocemu_rwq_ind_table_lookup(fx.client, handle);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(t->log_size, 2);
	t->users++;
	ck_assert_int_eq(handle_op(fx.client, ROCEMU_OP_DESTROY_RWQ_IND_TABLE, handle), -EBUSY);
	t->users--;
	ck_assert_int_eq(handle_op(fx.client, ROCEMU_OP_DESTROY_RWQ_IND_TABLE, handle), 0);
	ck_assert_int_eq(handle_op(fx.client, ROCEMU_OP_DESTROY_RWQ_IND_TABLE, handle), -EINVAL);
	ck_assert_int_eq(handle_op(fx.client, ROCEMU_OP_DESTROY_WQ, wqns[1]), 0);
	ck_assert_int_eq(handle_op(fx.client, ROCEMU_OP_DESTROY_WQ, wqns[1]), -EINVAL);
	ck_assert_ptr_null(rocemu_wq_lookup(fx.client, wqns[1]));
}
END_TEST

START_TEST(test_another_client)
{
	struct rocemu_client *other = fx_client_new();
	uint32_t pdn = fx_pd_alloc(other), wqn = wq_new(), handle, theirs;
	struct rocemu_create_cq_req cq_req = { .cqe = 16, .channel = ROCEMU_NO_HANDLE };
	struct rocemu_cq_layout cq;
	struct rocemu_create_wq_resp resp;
	int fd;

	/* fx's WQ is unknown to other, for a table, a modify or a destroy. */
	ck_assert_int_eq(table_create(other, 0, &wqn, &handle), -EINVAL);
	ck_assert_int_eq(handle_op(other, ROCEMU_OP_DESTROY_WQ, wqn), -EINVAL);
	/* Its own WQ in its own table, released when it goes. */
	ck_assert_int_eq(rocemu_cq_create(other, &cq_req, &cq, &fd), 0);
	close(fd);
	ck_assert_int_eq(wq_create(other, pdn, cq.cqn, IBV_WQT_RQ, 4, 1, 0, &resp), 0);
	theirs = resp.wqn;
	ck_assert_int_eq(table_create(other, 0, &theirs, &handle), 0);
	ck_assert_int_eq(handle_op(fx.client, ROCEMU_OP_DESTROY_RWQ_IND_TABLE, handle), -EINVAL);
	rocemu_client_free(other);
	ck_assert_ptr_null(rocemu_idtable_get(&fx.emu.wqs, theirs));
	ck_assert_ptr_null(rocemu_idtable_get(&fx.emu.rwq_ind_tables, handle));
	ck_assert_ptr_nonnull(rocemu_wq_lookup(fx.client, wqn));
}
END_TEST

static const uint8_t ms_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

/* An IPv4/TCP frame from src:sport to dst:dport (addresses network order), parsed. */
static void tcp_frame(struct rocemu_eth_frame *f, uint8_t *buf, const uint8_t *src,
		      const uint8_t *dst, uint16_t sport, uint16_t dport)
{
	memset(buf, 0, 54);
	buf[12] = ETH_P_IP >> 8;
	buf[13] = ETH_P_IP & 0xff;
	buf[14] = 0x45;
	buf[17] = 40;
	buf[22] = 64;
	buf[23] = IPPROTO_TCP;
	memcpy(buf + 26, src, 4);
	memcpy(buf + 30, dst, 4);
	buf[34] = (uint8_t)(sport >> 8), buf[35] = (uint8_t)sport;
	buf[36] = (uint8_t)(dport >> 8), buf[37] = (uint8_t)dport;
	buf[46] = 0x50;
	ck_assert(rocemu_eth_parse(f, buf, 54));
	ck_assert_int_eq(f->l4, ROCEMU_ETH_L4_TCP);
}

START_TEST(test_rss_select)
{
	static const struct {
		uint8_t src[4], dst[4];
		uint16_t sport, dport;
		uint32_t hash;
	} v[] = {
		{ { 66, 9, 149, 187 }, { 161, 142, 100, 80 }, 2794, 1766, 0x51ccc178 },
		{ { 199, 92, 111, 2 }, { 65, 69, 140, 83 }, 14230, 4739, 0xc626b0ea },
		{ { 38, 27, 205, 30 }, { 209, 142, 163, 6 }, 48228, 2217, 0xafc7327f },
	};
	const struct rocemu_rss_conf conf = {
		.key = ms_key, .key_len = sizeof(ms_key),
		.fields = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_SRC_PORT_TCP |
			  IBV_RX_HASH_DST_PORT_TCP,
	};
	const struct rocemu_rss_conf udp = { .key = ms_key, .key_len = sizeof(ms_key),
					     .fields = IBV_RX_HASH_SRC_PORT_UDP };
	uint32_t wqns[4] = { wq_new(), wq_new(), wq_new(), wq_new() }, handle;
	struct rocemu_rwq_ind_table *t;
	struct rocemu_eth_frame f;
	struct rocemu_rss_hash h;
	uint8_t buf[64];
	size_t i;

	ck_assert_int_eq(table_create(fx.client, 2, wqns, &handle), 0);
	t = rocemu_rwq_ind_table_lookup(fx.client, handle);
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		tcp_frame(&f, buf, v[i].src, v[i].dst, v[i].sport, v[i].dport);
		ck_assert_uint_eq(rocemu_rss_select(t, &conf, &f, &h)->wqn, wqns[v[i].hash & 3]);
		ck_assert_uint_eq(h.value, v[i].hash);
		ck_assert_uint_eq(h.type, ROCEMU_RSS_HTYPE_IPV4 | ROCEMU_RSS_HTYPE_TCP);
		/* UDP ports asked of a TCP frame: not hashed, the first WQ. */
		ck_assert_uint_eq(rocemu_rss_select(t, &udp, &f, &h)->wqn, wqns[0]);
		ck_assert_uint_eq(h.value, 0);
		ck_assert_uint_eq(h.type, 0);
	}
}
END_TEST

static Suite *wq_suite(void)
{
	Suite *s = suite_create("wq");
	TCase *tc = tcase_create("wq");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, test_create_refused);
	tcase_add_test(tc, test_create_grants);
	tcase_add_test(tc, test_modify_states);
	tcase_add_test(tc, test_modify_flags);
	tcase_add_test(tc, test_tables_and_busy);
	tcase_add_test(tc, test_another_client);
	tcase_add_test(tc, test_rss_select);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(wq_suite());
}
