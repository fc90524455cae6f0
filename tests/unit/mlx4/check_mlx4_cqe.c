/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The mlx4 ring format's CQE writer (emulator/mlx4/cqe.c) read back as
 * libmlx4 polls: a new ring is hardware's in every entry, the owner bit
 * flips each pass, for 32- and 64-byte entries; send, receive and error
 * CQEs carry their fields where libmlx4 reads them (an error's syndrome
 * for each status, an XRC SRQ's receive marked by its SRQ); mlx4's arm
 * words raise events (0 is never armed); an overrun loses the CQE; a
 * resize keeps unpolled CQEs at their indices.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/mlx4dv.h>

#include "emulator/base/idtable.h"
#include "emulator/core/emu.h"
#include "emulator/mlx4/cqe.h"
#include "emulator/obj/cq.h"
#include "emulator/obj/srq.h"
#include "rocemu/ring_mlx4.h"
#include "tests/unit/fixture.h"

#define NCQE 8u

static struct rocemu_cq cq;
static uint8_t *ring;
static uint32_t ci;

static __be32 *dbrec(void)
{
	return (__be32 *)(ring + cq.layout.dbrec_offset);
}

static void cq_init(uint32_t cqe_size)
{
	free(ring);
	ring = aligned_alloc(4096, 8192);
	ck_assert_ptr_nonnull(ring);
	memset(ring, 0, 8192);
	cq = (struct rocemu_cq){ 0 };
	cq.owner = fx.client;
	cq.cqn = 9;
	cq.ring.addr = ring;
	cq.layout = (struct rocemu_cq_layout){ .cqn = 9, .ncqe = NCQE, .cqe_size = cqe_size,
					       .dbrec_offset = 4096 };
	ci = 0;
	ck_assert_uint_eq(rocemu_mlx4_cqe_ring_start(ring, cqe_size, NCQE, 0, 0), 0);
}

static void setup(void)
{
	fx_setup();
	ring = NULL;
	cq_init(ROCEMU_MLX4_CQE_SIZE_DEFAULT);
}

static void teardown(void)
{
	free(ring);
	fx_teardown();
}

/* libmlx4's get_sw_cqe at ci, then its consumer index update. */
static bool poll(struct mlx4_cqe *out)
{
	struct mlx4_cqe *cqe = rocemu_mlx4_cqe_at(ring, cq.layout.cqe_size, NCQE, ci);

	if (!rocemu_mlx4_cqe_ready(__atomic_load_n(&cqe->owner_sr_opcode, __ATOMIC_ACQUIRE), ci,
				   NCQE))
		return false;
	*out = *cqe;
	ci++;
	dbrec()[0] = htobe32(ci & 0xffffff);
	return true;
}

static const struct rocemu_cqe_info send_ok = {
	.kind = ROCEMU_CQE_SEND_DONE, .wqe_opcode = MLX4_OPCODE_RDMA_READ, .qpn = 0x123,
	.wqe_counter = 7, .byte_cnt = 4096,
};

START_TEST(test_owner_bit_each_pass)
{
	uint32_t sizes[] = { 32, 64 };

	for (size_t s = 0; s < 2; s++) {
		struct mlx4_cqe cqe;

		cq_init(sizes[s]);
		for (uint32_t k = 0; k < NCQE; k++)
			ck_assert(!poll(&cqe));
		for (uint32_t i = 0; i < 3 * NCQE; i++) {
			struct rocemu_cqe_info info = send_ok;

			info.wqe_counter = (uint16_t)i;
			ck_assert(rocemu_mlx4_cqe_write(&cq, &info));
			ck_assert(poll(&cqe));
			ck_assert_uint_eq(cqe.owner_sr_opcode & MLX4_CQE_OWNER_MASK,
					  i & NCQE ? MLX4_CQE_OWNER_MASK : 0);
			ck_assert_uint_eq(be16toh(cqe.wqe_index), (uint16_t)i);
			ck_assert(!poll(&cqe));
		}
		/* A 64-byte entry carries its CQE in its second half. */
		if (sizes[s] == 64)
			ck_assert_ptr_eq(rocemu_mlx4_cqe_at(ring, 64, NCQE, 1), ring + 64 + 32);
	}
}
END_TEST

START_TEST(test_send_cqe)
{
	struct mlx4_cqe cqe;

	ck_assert(rocemu_mlx4_cqe_write(&cq, &send_ok));
	ck_assert(poll(&cqe));
	ck_assert_uint_eq(cqe.owner_sr_opcode & MLX4_CQE_IS_SEND_MASK, MLX4_CQE_IS_SEND_MASK);
	ck_assert_uint_eq(cqe.owner_sr_opcode & MLX4_CQE_OPCODE_MASK, MLX4_OPCODE_RDMA_READ);
	ck_assert_uint_eq(rocemu_mlx4_cqe_qpn(&cqe), 0x123);
	ck_assert_uint_eq(be16toh(cqe.wqe_index), 7);
	ck_assert_uint_eq(be32toh(cqe.byte_cnt), 4096);
}
END_TEST

START_TEST(test_recv_cqes)
{
	const struct {
		enum rocemu_cqe_kind kind;
		uint8_t opcode;
	} kinds[] = {
		{ ROCEMU_CQE_RECV_SEND, MLX4_RECV_OPCODE_SEND },
		{ ROCEMU_CQE_RECV_SEND_IMM, MLX4_RECV_OPCODE_SEND_IMM },
		{ ROCEMU_CQE_RECV_SEND_INV, MLX4_RECV_OPCODE_SEND_INVAL },
		{ ROCEMU_CQE_RECV_WRITE_IMM, MLX4_RECV_OPCODE_RDMA_WRITE_IMM },
	};
	struct mlx4_cqe cqe;

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct rocemu_cqe_info info = {
			.kind = kinds[k].kind, .qpn = 0x222, .wqe_counter = (uint16_t)(40 + k),
			.byte_cnt = 100, .imm = htobe32(0xa0b0c0d0), .src_qp = 0x333,
			.grh_ipv4 = k == 0,
		};

		ck_assert(rocemu_mlx4_cqe_write(&cq, &info));
		ck_assert(poll(&cqe));
		ck_assert_uint_eq(cqe.owner_sr_opcode & MLX4_CQE_IS_SEND_MASK, 0);
		ck_assert_uint_eq(cqe.owner_sr_opcode & MLX4_CQE_OPCODE_MASK, kinds[k].opcode);
		ck_assert(rocemu_mlx4_recv_cqe_ops[kinds[k].opcode].flags & ROCEMU_CQE_OP_RQ);
		ck_assert_uint_eq(be32toh(cqe.vlan_my_qpn), 0x222);
		ck_assert_uint_eq(be32toh(cqe.byte_cnt), 100);
		ck_assert_uint_eq(be32toh(cqe.immed_rss_invalid), 0xa0b0c0d0);
		ck_assert_uint_eq(be32toh(cqe.g_mlpath_rqpn), (k == 0 ? 0x80000000u : 0) | 0x333);
		ck_assert_uint_eq(be16toh(cqe.wqe_index), 40 + k);
	}
}
END_TEST

START_TEST(test_xrc_srq_recv)
{
	static uint8_t xrcd_open;
	struct rocemu_srq srq = { .xrcd_open = (struct rocemu_xrcd_open *)(void *)&xrcd_open };
	struct rocemu_cqe_info info = { .kind = ROCEMU_CQE_RECV_SEND, .qpn = 0x444, .byte_cnt = 8,
					.src_qp = 0x555, .wqe_counter = 3 };
	struct mlx4_cqe cqe;
	uint32_t srqn;

	ck_assert_int_eq(rocemu_idtable_alloc(&fx.emu.srqs, &srq, &srqn), 0);
	info.srqn = srqn;
	ck_assert(rocemu_mlx4_cqe_write(&cq, &info));
	ck_assert(poll(&cqe));
	ck_assert_uint_eq(be32toh(cqe.vlan_my_qpn), ROCEMU_MLX4_XRC_QPN_BIT | 0x444);
	ck_assert_uint_eq(be32toh(cqe.g_mlpath_rqpn), srqn);
	ck_assert_uint_eq(be16toh(cqe.wqe_index), 3);
	/* An error of the same receive is found the same way. */
	info.kind = ROCEMU_CQE_RECV_ERR;
	info.status = IBV_WC_WR_FLUSH_ERR;
	ck_assert(rocemu_mlx4_cqe_write(&cq, &info));
	ck_assert(poll(&cqe));
	ck_assert_uint_eq(be32toh(cqe.vlan_my_qpn), ROCEMU_MLX4_XRC_QPN_BIT | 0x444);
	ck_assert_uint_eq(be32toh(cqe.g_mlpath_rqpn), srqn);
	/* A plain SRQ's receive names its QP alone. */
	srq.xrcd_open = NULL;
	info.kind = ROCEMU_CQE_RECV_SEND;
	ck_assert(rocemu_mlx4_cqe_write(&cq, &info));
	ck_assert(poll(&cqe));
	ck_assert_uint_eq(be32toh(cqe.vlan_my_qpn), 0x444);
	ck_assert_uint_eq(be32toh(cqe.g_mlpath_rqpn), 0x555);
	rocemu_idtable_remove(&fx.emu.srqs, srqn);
}
END_TEST

START_TEST(test_error_syndromes)
{
	const enum ibv_wc_status statuses[] = {
		IBV_WC_LOC_LEN_ERR, IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOC_PROT_ERR, IBV_WC_WR_FLUSH_ERR,
		IBV_WC_MW_BIND_ERR, IBV_WC_BAD_RESP_ERR, IBV_WC_LOC_ACCESS_ERR,
		IBV_WC_REM_INV_REQ_ERR, IBV_WC_REM_ACCESS_ERR, IBV_WC_REM_OP_ERR,
		IBV_WC_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR, IBV_WC_REM_ABORT_ERR,
	};

	for (size_t k = 0; k < sizeof(statuses) / sizeof(statuses[0]); k++) {
		bool send = k & 1;
		struct rocemu_cqe_info info = {
			.kind = send ? ROCEMU_CQE_SEND_ERR : ROCEMU_CQE_RECV_ERR,
			.status = statuses[k], .wqe_opcode = MLX4_OPCODE_SEND, .qpn = 0x666,
			.wqe_counter = (uint16_t)(100 + k),
		};
		struct mlx4_cqe cqe;
		const struct mlx4_err_cqe *err = (const void *)&cqe;

		ck_assert(rocemu_mlx4_cqe_write(&cq, &info));
		ck_assert(poll(&cqe));
		ck_assert_uint_eq(cqe.owner_sr_opcode & MLX4_CQE_OPCODE_MASK, MLX4_CQE_OPCODE_ERROR);
		ck_assert_uint_eq(!!(cqe.owner_sr_opcode & MLX4_CQE_IS_SEND_MASK), send);
		ck_assert_uint_eq(rocemu_mlx4_cqe_error_status(err->syndrome), statuses[k]);
		ck_assert_uint_eq(err->vendor_err, 0);
		ck_assert_uint_eq(be16toh(err->wqe_index), 100 + k);
		ck_assert_uint_eq(be32toh(err->vlan_my_qpn) & MLX4_CQE_QPN_MASK, 0x666);
	}
}
END_TEST

static void arm(uint32_t sn, bool solicited_only)
{
	dbrec()[1] = htobe32(rocemu_mlx4_cq_arm_word(sn, solicited_only, ci));
}

START_TEST(test_arm_words)
{
	struct rocemu_cqe_info info = send_ok;
	struct mlx4_cqe cqe;

	/* 0: never armed, no event. */
	ck_assert(rocemu_mlx4_cqe_write(&cq, &info));
	ck_assert_uint_eq(cq.notified, 0);
	ck_assert(poll(&cqe));
	/* REQ_NOT: the next CQE fires, once. */
	arm(1, false);
	rocemu_mlx4_cqe_arm_check(&cq);
	ck_assert_uint_eq(cq.notified, 0);
	ck_assert(rocemu_mlx4_cqe_write(&cq, &info));
	ck_assert_uint_eq(cq.notified, 2);
	ck_assert_uint_eq(cq.fired_sn, 1);
	ck_assert(rocemu_mlx4_cqe_write(&cq, &info));
	ck_assert_uint_eq(cq.notified, 2);
	/* REQ_NOT_SOL: an unsolicited CQE does not fire, a solicited one does. */
	ck_assert(poll(&cqe) && poll(&cqe));
	arm(2, true);
	ck_assert(rocemu_mlx4_cqe_write(&cq, &info));
	ck_assert_uint_eq(cq.notified, 2);
	info.kind = ROCEMU_CQE_RECV_SEND;
	info.solicited = true;
	ck_assert(rocemu_mlx4_cqe_write(&cq, &info));
	ck_assert_uint_eq(cq.notified, 5);
	ck_assert_uint_eq(cq.fired_sn, 2);
	/* An arm that finds an unreported CQE fires at once. */
	info.solicited = false;
	ck_assert(rocemu_mlx4_cqe_write(&cq, &info));
	arm(3, false);
	rocemu_mlx4_cqe_arm_check(&cq);
	ck_assert_uint_eq(cq.notified, 6);
	ck_assert_uint_eq(cq.fired_sn, 3);
}
END_TEST

START_TEST(test_overrun)
{
	for (uint32_t i = 0; i < NCQE; i++)
		ck_assert(rocemu_mlx4_cqe_write(&cq, &send_ok));
	ck_assert(!rocemu_mlx4_cqe_write(&cq, &send_ok));
	ck_assert_uint_eq(cq.overruns, 1);
	ck_assert_uint_eq(cq.pi, NCQE);
}
END_TEST

START_TEST(test_resize_keeps_unpolled)
{
	uint8_t *to = aligned_alloc(4096, 8192);
	struct rocemu_cqe_info info = send_ok;
	struct mlx4_cqe cqe;

	for (uint32_t i = 0; i < 6; i++) {
		info.wqe_counter = (uint16_t)i;
		ck_assert(rocemu_mlx4_cqe_write(&cq, &info));
	}
	ck_assert(poll(&cqe) && poll(&cqe) && poll(&cqe));
	memset(to, 0, 8192);
	ck_assert_int_eq(rocemu_mlx4_cqe_ring_move(&cq, to, 2 * NCQE, to + 4096), 0);
	free(ring);
	ring = to;
	cq.ring.addr = to;
	cq.layout.ncqe = 2 * NCQE;
	for (uint32_t i = 3; i < 6; i++) {
		struct mlx4_cqe *c = rocemu_mlx4_cqe_at(ring, cq.layout.cqe_size, 2 * NCQE, ci);

		ck_assert(rocemu_mlx4_cqe_ready(c->owner_sr_opcode, ci, 2 * NCQE));
		ck_assert_uint_eq(be16toh(c->wqe_index), i);
		ci++;
	}
	for (uint32_t i = 6; i < 6 + 2 * NCQE - 3; i++)
		ck_assert(!rocemu_mlx4_cqe_ready(rocemu_mlx4_cqe_at(ring, cq.layout.cqe_size, 2 * NCQE,
								    i)->owner_sr_opcode, i, 2 * NCQE));
	/* Too many unpolled CQEs for the new ring. */
	ck_assert_int_eq(rocemu_mlx4_cqe_ring_move(&cq, ring, 2, ring + 4096), -EINVAL);
}
END_TEST

START_TEST(test_sizes)
{
	ck_assert(rocemu_mlx4_cqe_size_valid(32));
	ck_assert(rocemu_mlx4_cqe_size_valid(64));
	ck_assert(!rocemu_mlx4_cqe_size_valid(128));
	ck_assert(!rocemu_mlx4_cqe_size_valid(0));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("mlx4_cqe");
	TCase *tc = tcase_create("cqe");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_owner_bit_each_pass);
	tcase_add_test(tc, test_send_cqe);
	tcase_add_test(tc, test_recv_cqes);
	tcase_add_test(tc, test_xrc_srq_recv);
	tcase_add_test(tc, test_error_syndromes);
	tcase_add_test(tc, test_arm_words);
	tcase_add_test(tc, test_overrun);
	tcase_add_test(tc, test_resize_keeps_unpolled);
	tcase_add_test(tc, test_sizes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fx_suite_run(suite());
}
