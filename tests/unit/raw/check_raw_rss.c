/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * An RSS RAW_PACKET QP (emulator/raw/raw_recv.c over emulator/wq/): it
 * holds its indirection table while it lives; a frame lands in the WQ
 * rocemu_rss_select picks, its CQE on the WQ's CQ naming the WQ and
 * carrying the hash and its type; a WQ not RDY drops and counts, a WQ
 * with nothing posted (or a doorbell record past its ring) drops and
 * counts out_of_buffer; ibv_modify_wq to ERR flushes the WQEs posted.
 */
#include <check.h>
#include <endian.h>
#include <infiniband/mlx5dv.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emulator/core/device.h"
#include "emulator/obj/qp.h"
#include "emulator/raw/raw.h"
#include "emulator/wq/rwq_ind_table.h"
#include "emulator/wq/wq.h"
#include "net/eth/eth_frame.h"
#include "tests/unit/fixture.h"
#include "tests/unit/net/eth_build.h"

#define WQS 2
#define PAYLOAD 64u
#define SLOT 512u
#define FIELDS (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_SRC_PORT_UDP | \
		IBV_RX_HASH_DST_PORT_UDP)

static struct {
	struct rocemu_create_wq_resp resp;
	uint8_t *map;
	uint32_t posted;
} wqs[WQS];
static uint32_t table, rss_qpn;
static uint8_t frame[256];
static uint32_t frame_len;

static void wq_new(unsigned int i)
{
	const struct rocemu_create_wq_req req = {
		.pdn = fx.pdn, .cqn = fx.rcq.cqn, .wq_type = IBV_WQT_RQ, .max_wr = 4, .max_sge = 1,
	};
	int fd;

	ck_assert_int_eq(rocemu_wq_create(fx.client, &req, &wqs[i].resp, &fd), 0);
	wqs[i].map = mmap(NULL, wqs[i].resp.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(wqs[i].map, MAP_FAILED);
	close(fd);
	wqs[i].posted = 0;
}

/* WQ i posts a receive into its own SLOT of fx.buf and rings its doorbell record. */
static void wq_post(unsigned int i)
{
	struct mlx5_wqe_data_seg d = {
		.byte_count = htobe32(SLOT), .lkey = htobe32(fx.lkey),
		.addr = htobe64((uintptr_t)fx.buf + i * SLOT),
	};
	uint32_t slot = wqs[i].posted & (wqs[i].resp.wqe_cnt - 1);

	memcpy(wqs[i].map + ((size_t)slot << wqs[i].resp.wqe_shift), &d, sizeof(d));
	wqs[i].posted++;
	__atomic_store_n((__be32 *)(wqs[i].map + wqs[i].resp.dbrec_offset),
			 htobe32(wqs[i].posted), __ATOMIC_RELEASE);
}

static int wq_state(unsigned int i, enum ibv_wq_state state)
{
	const struct rocemu_modify_wq_req req = {
		.wqn = wqs[i].resp.wqn, .attr_mask = IBV_WQ_ATTR_STATE, .wq_state = state,
	};

	return rocemu_wq_modify(fx.client, &req);
}

static void setup(void)
{
	static struct rocemu_create_rwq_ind_table_req treq = { .log_size = 1 };
	struct rocemu_create_rwq_ind_table_resp tresp;
	struct rocemu_create_qp_req qreq = {
		.qp_type = IBV_QPT_RAW_PACKET, .send_cqn = ROCEMU_NO_HANDLE,
		.recv_cqn = ROCEMU_NO_HANDLE, .srqn = ROCEMU_NO_HANDLE, .xrcd = ROCEMU_NO_HANDLE,
		.rx_hash_fields_mask = FIELDS, .rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
		.rx_hash_key_len = ROCEMU_RSS_KEY_MAX,
	};
	struct rocemu_create_qp_resp qresp;
	int fd;

	fx_setup();
	for (unsigned int i = 0; i < WQS; i++) {
		wq_new(i);
		treq.wqns[i] = wqs[i].resp.wqn;
	}
	ck_assert_int_eq(rocemu_rwq_ind_table_create(fx.client, &treq, &tresp), 0);
	table = tresp.handle;
	for (unsigned int i = 0; i < ROCEMU_RSS_KEY_MAX; i++)
		qreq.rx_hash_key[i] = (uint8_t)(i * 37 + 1);
	qreq.pdn = fx.pdn;
	qreq.rwq_ind_tbl = table;
	ck_assert_int_eq(rocemu_qp_create(fx.client, &qreq, &qresp, &fd), 0);
	close(fd);
	rss_qpn = qresp.layout.qpn;
	/* A TIR: no queue of its own */
	ck_assert_uint_eq(qresp.layout.sq_wqe_cnt, 0);
	ck_assert_uint_eq(qresp.layout.rq_wqe_cnt, 0);
}

static void teardown(void)
{
	for (unsigned int i = 0; i < WQS; i++)
		munmap(wqs[i].map, wqs[i].resp.size);
	fx_teardown();
}

/* A UDP frame of flow i to the RSS QP as the steering hands it; the WQ it should pick in *wq, the hash in *h. */
static void deliver(unsigned int i, unsigned int *wq, struct rocemu_rss_hash *h)
{
	struct rocemu_qp *qp = rocemu_qp_lookup(fx.client, rss_qpn);
	const struct rocemu_rss_conf conf = { .key = qp->raw->rss_key, .key_len = ROCEMU_RSS_KEY_MAX,
					      .fields = FIELDS };
	struct rocemu_eth_frame f;
	size_t n = build_eth(frame, BUILD_NO_VLAN, ETH_P_IP);
	struct rocemu_wq *picked;

	n += build_ipv4(frame + n, 5, IPPROTO_UDP, (uint16_t)(28 + PAYLOAD), 7, 0, "10.0.0.1",
			"10.0.0.2");
	n += build_udp(frame + n, (uint16_t)(1000 + i), 8080, (uint16_t)(8 + PAYLOAD));
	memset(frame + n, (int)i, PAYLOAD);
	frame_len = (uint32_t)(n + PAYLOAD);
	ck_assert(rocemu_eth_parse(&f, frame, frame_len));
	picked = rocemu_rss_select(rocemu_rwq_ind_table_lookup(fx.client, table), &conf, &f, h);
	*wq = picked->wqn == wqs[0].resp.wqn ? 0 : 1;
	qp->ops->rx_frame(qp, &f, 0);
}

/* Frames of several flows each in the WQ the hash picks, named by its CQE with the hash. */
START_TEST(test_rss_delivery)
{
	unsigned int hits[WQS] = { 0 };
	struct rocemu_rss_hash h;
	struct mlx5_cqe64 cqe;
	unsigned int w;
	uint32_t hash;

	for (unsigned int i = 0; i < WQS; i++)
		ck_assert_int_eq(wq_state(i, IBV_WQS_RDY), 0);
	for (unsigned int i = 0; i < 16; i++) {
		wq_post(0);
		wq_post(1);
		deliver(i, &w, &h);
		cqe = fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_SEND, (uint16_t)hits[w], 0);
		ck_assert(rocemu_cqe_is_wq(&cqe));
		ck_assert_uint_eq(rocemu_cqe_qpn(&cqe), wqs[w].resp.wqn);
		ck_assert_uint_eq(rocemu_cqe_srqn(&cqe), 0);
		ck_assert_uint_eq(be32toh(cqe.byte_cnt), frame_len);
		ck_assert_mem_eq(fx.buf + w * SLOT, frame, frame_len);
		memcpy(&hash, (uint8_t *)&cqe + 12, sizeof(hash));	/* rss_hash_result */
		ck_assert_uint_eq(be32toh(hash), h.value);
		ck_assert_uint_eq(((uint8_t *)&cqe)[16], ROCEMU_RSS_HTYPE_IPV4 | ROCEMU_RSS_HTYPE_UDP);
		hits[w]++;
		/* The other WQ's receive is taken back: post only where one was used. */
		wqs[!w].posted--;
	}
	ck_assert_uint_gt(hits[0], 0);
	ck_assert_uint_gt(hits[1], 0);
	ck_assert_uint_eq(fx.dev->counters.raw_rx_frames, 16);
}
END_TEST

/* A WQ not RDY takes nothing: dropped and counted, nothing consumed. */
START_TEST(test_rss_wq_not_ready)
{
	struct rocemu_rss_hash h;
	struct mlx5_cqe64 cqe;
	unsigned int w;

	wq_post(0);
	wq_post(1);
	deliver(0, &w, &h);
	ck_assert(!fx_poll(&fx.rcq, &cqe));
	ck_assert_uint_eq(fx.dev->counters.raw_rx_dropped, 1);
	ck_assert_uint_eq(rocemu_wq_lookup(fx.client, wqs[w].resp.wqn)->consumed, 0);
}
END_TEST

/* A RDY WQ with nothing posted: dropped, counted in out_of_buffer. */
START_TEST(test_rss_no_wqe)
{
	struct rocemu_rss_hash h;
	struct mlx5_cqe64 cqe;
	unsigned int w;

	for (unsigned int i = 0; i < WQS; i++)
		ck_assert_int_eq(wq_state(i, IBV_WQS_RDY), 0);
	deliver(0, &w, &h);
	ck_assert(!fx_poll(&fx.rcq, &cqe));
	ck_assert_uint_eq(fx.dev->counters.out_of_buffer, 1);
}
END_TEST

/* A doorbell record past the WQ's ring (a program's scribble): nothing taken, dropped and counted. */
START_TEST(test_rss_doorbell_past_ring)
{
	struct rocemu_rss_hash h;
	struct mlx5_cqe64 cqe;
	unsigned int w;

	for (unsigned int i = 0; i < WQS; i++) {
		ck_assert_int_eq(wq_state(i, IBV_WQS_RDY), 0);
		*(__be32 *)(wqs[i].map + wqs[i].resp.dbrec_offset) = htobe32(wqs[i].resp.wqe_cnt + 1);
	}
	deliver(0, &w, &h);
	ck_assert(!fx_poll(&fx.rcq, &cqe));
	ck_assert_uint_eq(fx.dev->counters.out_of_buffer, 1);
	ck_assert_uint_eq(rocemu_wq_lookup(fx.client, wqs[w].resp.wqn)->consumed, 0);
}
END_TEST

/* ibv_modify_wq to ERR: each WQE posted completes with WR_FLUSH_ERR, naming the WQ. */
START_TEST(test_rss_flush_on_err)
{
	struct mlx5_cqe64 cqe;

	ck_assert_int_eq(wq_state(0, IBV_WQS_RDY), 0);
	wq_post(0);
	wq_post(0);
	ck_assert_int_eq(wq_state(0, IBV_WQS_ERR), 0);
	for (uint16_t i = 0; i < 2; i++) {
		cqe = fx_expect_cqe(&fx.rcq, MLX5_CQE_RESP_ERR, i, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
		ck_assert(rocemu_cqe_is_wq(&cqe));
		ck_assert_uint_eq(rocemu_cqe_qpn(&cqe), wqs[0].resp.wqn);
	}
	ck_assert(!fx_poll(&fx.rcq, &cqe));
}
END_TEST

/* The QP holds its table: EBUSY until it goes; a table unknown is EINVAL. */
START_TEST(test_rss_holds_table)
{
	struct rocemu_create_qp_req req = {
		.pdn = fx.pdn, .qp_type = IBV_QPT_RAW_PACKET, .send_cqn = ROCEMU_NO_HANDLE,
		.recv_cqn = ROCEMU_NO_HANDLE, .srqn = ROCEMU_NO_HANDLE, .xrcd = ROCEMU_NO_HANDLE,
		.rwq_ind_tbl = table + 100, .rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
		.rx_hash_key_len = ROCEMU_RSS_KEY_MAX,
	};
	struct rocemu_create_qp_resp resp;
	int fd;

	ck_assert_uint_eq(rocemu_rwq_ind_table_lookup(fx.client, table)->users, 1);
	ck_assert_int_eq(rocemu_rwq_ind_table_destroy(fx.client, table), -EBUSY);
	ck_assert_int_eq(rocemu_qp_create(fx.client, &req, &resp, &fd), -EINVAL);
	ck_assert_int_eq(rocemu_qp_destroy(fx.client, rss_qpn), 0);
	ck_assert_int_eq(rocemu_rwq_ind_table_destroy(fx.client, table), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("raw_rss");
	TCase *tc = tcase_create("rss");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_rss_delivery);
	tcase_add_test(tc, test_rss_wq_not_ready);
	tcase_add_test(tc, test_rss_no_wqe);
	tcase_add_test(tc, test_rss_doorbell_past_ring);
	tcase_add_test(tc, test_rss_flush_on_err);
	tcase_add_test(tc, test_rss_holds_table);
	suite_add_tcase(s, tc);
	return fx_suite_run(s);
}
