/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * RoCEv2 codecs: the opcode table, header accessors, AETH syndromes, timer
 * tables and the ICRC against known answers computed apart from this code.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "net/roce/icrc.h"
#include "net/roce/roce_hdr.h"
#include "net/roce/roce_opcode.h"

/* ---------------- opcode table ---------------- */

static const enum rocemu_opcode known_opcodes[] = {
	ROCEMU_OP_RC_SEND_FIRST, ROCEMU_OP_RC_SEND_MIDDLE, ROCEMU_OP_RC_SEND_LAST,
	ROCEMU_OP_RC_SEND_LAST_WITH_IMMEDIATE, ROCEMU_OP_RC_SEND_ONLY,
	ROCEMU_OP_RC_SEND_ONLY_WITH_IMMEDIATE, ROCEMU_OP_RC_RDMA_WRITE_FIRST,
	ROCEMU_OP_RC_RDMA_WRITE_MIDDLE, ROCEMU_OP_RC_RDMA_WRITE_LAST,
	ROCEMU_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, ROCEMU_OP_RC_RDMA_WRITE_ONLY,
	ROCEMU_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, ROCEMU_OP_RC_RDMA_READ_REQUEST,
	ROCEMU_OP_RC_RDMA_READ_RESPONSE_FIRST, ROCEMU_OP_RC_RDMA_READ_RESPONSE_MIDDLE,
	ROCEMU_OP_RC_RDMA_READ_RESPONSE_LAST, ROCEMU_OP_RC_RDMA_READ_RESPONSE_ONLY,
	ROCEMU_OP_RC_ACKNOWLEDGE, ROCEMU_OP_RC_ATOMIC_ACKNOWLEDGE, ROCEMU_OP_RC_COMPARE_SWAP,
	ROCEMU_OP_RC_FETCH_ADD, ROCEMU_OP_RC_SEND_LAST_WITH_INVALIDATE,
	ROCEMU_OP_RC_SEND_ONLY_WITH_INVALIDATE,
	ROCEMU_OP_UC_SEND_FIRST, ROCEMU_OP_UC_SEND_MIDDLE, ROCEMU_OP_UC_SEND_LAST,
	ROCEMU_OP_UC_SEND_LAST_WITH_IMMEDIATE, ROCEMU_OP_UC_SEND_ONLY,
	ROCEMU_OP_UC_SEND_ONLY_WITH_IMMEDIATE, ROCEMU_OP_UC_RDMA_WRITE_FIRST,
	ROCEMU_OP_UC_RDMA_WRITE_MIDDLE, ROCEMU_OP_UC_RDMA_WRITE_LAST,
	ROCEMU_OP_UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, ROCEMU_OP_UC_RDMA_WRITE_ONLY,
	ROCEMU_OP_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
	ROCEMU_OP_UD_SEND_ONLY, ROCEMU_OP_UD_SEND_ONLY_WITH_IMMEDIATE,
	ROCEMU_OP_XRC_SEND_FIRST, ROCEMU_OP_XRC_SEND_MIDDLE, ROCEMU_OP_XRC_SEND_LAST,
	ROCEMU_OP_XRC_SEND_LAST_WITH_IMMEDIATE, ROCEMU_OP_XRC_SEND_ONLY,
	ROCEMU_OP_XRC_SEND_ONLY_WITH_IMMEDIATE, ROCEMU_OP_XRC_RDMA_WRITE_FIRST,
	ROCEMU_OP_XRC_RDMA_WRITE_MIDDLE, ROCEMU_OP_XRC_RDMA_WRITE_LAST,
	ROCEMU_OP_XRC_RDMA_WRITE_LAST_WITH_IMMEDIATE, ROCEMU_OP_XRC_RDMA_WRITE_ONLY,
	ROCEMU_OP_XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, ROCEMU_OP_XRC_RDMA_READ_REQUEST,
	ROCEMU_OP_XRC_RDMA_READ_RESPONSE_FIRST, ROCEMU_OP_XRC_RDMA_READ_RESPONSE_MIDDLE,
	ROCEMU_OP_XRC_RDMA_READ_RESPONSE_LAST, ROCEMU_OP_XRC_RDMA_READ_RESPONSE_ONLY,
	ROCEMU_OP_XRC_ACKNOWLEDGE, ROCEMU_OP_XRC_ATOMIC_ACKNOWLEDGE, ROCEMU_OP_XRC_COMPARE_SWAP,
	ROCEMU_OP_XRC_FETCH_ADD, ROCEMU_OP_XRC_SEND_LAST_WITH_INVALIDATE,
	ROCEMU_OP_XRC_SEND_ONLY_WITH_INVALIDATE,
	ROCEMU_OP_DC_SEND_FIRST, ROCEMU_OP_DC_SEND_MIDDLE, ROCEMU_OP_DC_SEND_LAST,
	ROCEMU_OP_DC_SEND_LAST_WITH_IMMEDIATE, ROCEMU_OP_DC_SEND_ONLY,
	ROCEMU_OP_DC_SEND_ONLY_WITH_IMMEDIATE, ROCEMU_OP_DC_RDMA_WRITE_FIRST,
	ROCEMU_OP_DC_RDMA_WRITE_MIDDLE, ROCEMU_OP_DC_RDMA_WRITE_LAST,
	ROCEMU_OP_DC_RDMA_WRITE_LAST_WITH_IMMEDIATE, ROCEMU_OP_DC_RDMA_WRITE_ONLY,
	ROCEMU_OP_DC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, ROCEMU_OP_DC_RDMA_READ_REQUEST,
	ROCEMU_OP_DC_RDMA_READ_RESPONSE_FIRST, ROCEMU_OP_DC_RDMA_READ_RESPONSE_MIDDLE,
	ROCEMU_OP_DC_RDMA_READ_RESPONSE_LAST, ROCEMU_OP_DC_RDMA_READ_RESPONSE_ONLY,
	ROCEMU_OP_DC_ACKNOWLEDGE, ROCEMU_OP_DC_ATOMIC_ACKNOWLEDGE, ROCEMU_OP_DC_COMPARE_SWAP,
	ROCEMU_OP_DC_FETCH_ADD,
};

#define N_KNOWN (sizeof(known_opcodes) / sizeof(known_opcodes[0]))

static bool is_known(unsigned int op)
{
	for (size_t i = 0; i < N_KNOWN; i++)
		if (known_opcodes[i] == op)
			return true;
	return false;
}

START_TEST(test_opcode_known_set)
{
	ck_assert_uint_eq(N_KNOWN, 81);
	for (unsigned int op = 0; op < 256; op++) {
		const struct rocemu_opcode_info *info = rocemu_opcode_info((uint8_t)op);

		ck_assert_msg(!!info == is_known(op), "opcode 0x%02x", op);
		if (!info)
			ck_assert_str_eq(rocemu_opcode_name((uint8_t)op), "Unknown");
	}
	/* reserved RC 0x15, RD's RESYNC, CNP, FLUSH/ATOMIC_WRITE are not handled */
	ck_assert_ptr_null(rocemu_opcode_info(0x15));
	ck_assert_ptr_null(rocemu_opcode_info(0x55));
	ck_assert_ptr_null(rocemu_opcode_info(0x81));
	ck_assert_ptr_null(rocemu_opcode_info(0xff));
}
END_TEST

/* Length is the sum of the headers present; each offset the sum before it. */
START_TEST(test_opcode_lengths_offsets)
{
	for (size_t i = 0; i < N_KNOWN; i++) {
		const struct rocemu_opcode_info *info = rocemu_opcode_info((uint8_t)known_opcodes[i]);
		size_t sum = 0;

		ck_assert_ptr_nonnull(info);
		ck_assert(info->hdr_mask & ROCEMU_HDRM_BTH);
		for (int h = 0; h < ROCEMU_HDR_PAYLOAD; h++) {
			if (!(info->hdr_mask & (1u << h))) {
				ck_assert_uint_eq(info->offset[h], 0);
				continue;
			}
			ck_assert_msg(info->offset[h] == sum, "%s hdr %d", info->name, h);
			sum += rocemu_hdr_bytes(h);
		}
		ck_assert_msg(info->length == sum, "%s length", info->name);
		ck_assert_uint_eq(info->offset[ROCEMU_HDR_PAYLOAD], info->length);
	}
}
END_TEST

/* Hand-checked against IBTA 9.2: a few layouts written out. */
START_TEST(test_opcode_sample_layouts)
{
	const struct rocemu_opcode_info *i;

	i = rocemu_opcode_info(ROCEMU_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
	ck_assert_uint_eq(i->offset[ROCEMU_HDR_RETH], 12);
	ck_assert_uint_eq(i->offset[ROCEMU_HDR_IMMDT], 28);
	ck_assert_uint_eq(i->length, 32);
	i = rocemu_opcode_info(ROCEMU_OP_RC_ATOMIC_ACKNOWLEDGE);
	ck_assert_uint_eq(i->offset[ROCEMU_HDR_AETH], 12);
	ck_assert_uint_eq(i->offset[ROCEMU_HDR_ATMACK], 16);
	ck_assert_uint_eq(i->length, 24);
	ck_assert(!(i->hdr_mask & ROCEMU_HDRM_PAYLOAD));
	i = rocemu_opcode_info(ROCEMU_OP_RC_COMPARE_SWAP);
	ck_assert_uint_eq(i->offset[ROCEMU_HDR_ATMETH], 12);
	ck_assert_uint_eq(i->length, 40);
	i = rocemu_opcode_info(ROCEMU_OP_UD_SEND_ONLY_WITH_IMMEDIATE);
	ck_assert_uint_eq(i->offset[ROCEMU_HDR_DETH], 12);
	ck_assert_uint_eq(i->offset[ROCEMU_HDR_IMMDT], 20);
	ck_assert_uint_eq(i->length, 24);
	i = rocemu_opcode_info(ROCEMU_OP_RC_SEND_LAST_WITH_INVALIDATE);
	ck_assert_uint_eq(i->offset[ROCEMU_HDR_IETH], 12);
	ck_assert_uint_eq(i->length, 16);
	i = rocemu_opcode_info(ROCEMU_OP_RC_RDMA_READ_RESPONSE_MIDDLE);
	ck_assert_uint_eq(i->hdr_mask, ROCEMU_HDRM_BTH | ROCEMU_HDRM_PAYLOAD);
	ck_assert_uint_eq(i->length, 12);
	i = rocemu_opcode_info(ROCEMU_OP_RC_RDMA_READ_REQUEST);
	ck_assert_uint_eq(i->hdr_mask, ROCEMU_HDRM_BTH | ROCEMU_HDRM_RETH);
	ck_assert_uint_eq(i->length, 28);
	ck_assert_str_eq(rocemu_opcode_name(ROCEMU_OP_RC_SEND_ONLY), "RC Send Only");
	ck_assert_str_eq(rocemu_opcode_name(ROCEMU_OP_UD_SEND_ONLY_WITH_IMMEDIATE),
			 "UD Send Only Immediate");
	/* XRC: XRCETH right after BTH on requests, none on responses (IBTA 9.3.6). */
	i = rocemu_opcode_info(ROCEMU_OP_XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
	ck_assert_uint_eq(i->offset[ROCEMU_HDR_XRCETH], 12);
	ck_assert_uint_eq(i->offset[ROCEMU_HDR_RETH], 16);
	ck_assert_uint_eq(i->offset[ROCEMU_HDR_IMMDT], 32);
	ck_assert_uint_eq(i->length, 36);
	i = rocemu_opcode_info(ROCEMU_OP_XRC_FETCH_ADD);
	ck_assert_uint_eq(i->offset[ROCEMU_HDR_ATMETH], 16);
	ck_assert_uint_eq(i->length, 44);
	i = rocemu_opcode_info(0xb1);
	ck_assert_uint_eq(i->hdr_mask, ROCEMU_HDRM_BTH | ROCEMU_HDRM_AETH);
	ck_assert_str_eq(i->name, "XRC Acknowledge");
	ck_assert_str_eq(rocemu_opcode_name(0xa4), "XRC Send Only");
}
END_TEST

static bool name_has(const char *name, const char *word)
{
	return strstr(name, word) != NULL;
}

/* Every opcode's flags and headers say what its (Wireshark) name says. */
START_TEST(test_opcode_flags_match_names)
{
	for (size_t k = 0; k < N_KNOWN; k++) {
		uint8_t op = (uint8_t)known_opcodes[k];
		const struct rocemu_opcode_info *i = rocemu_opcode_info(op);
		const char *n = i->name;
		unsigned int f = i->flags;
		bool single = name_has(n, "Only") || name_has(n, "Request") ||
			      name_has(n, "Acknowledge") || name_has(n, "Swap") ||
			      name_has(n, "Fetch");
		bool resp = name_has(n, "Response") || name_has(n, "Acknowledge");
		unsigned int transport = op & ROCEMU_OP_TRANSPORT_MASK;

		ck_assert_msg(!!(f & ROCEMU_OPF_START) == (single || name_has(n, "First")), "%s", n);
		ck_assert_msg(!!(f & ROCEMU_OPF_END) == (single || name_has(n, "Last")), "%s", n);
		ck_assert_msg(!!(f & ROCEMU_OPF_MIDDLE) == name_has(n, "Middle"), "%s", n);
		ck_assert_msg(!!(f & ROCEMU_OPF_SEND) == name_has(n, "Send"), "%s", n);
		ck_assert_msg(!!(f & ROCEMU_OPF_WRITE) == name_has(n, "Write"), "%s", n);
		ck_assert_msg(!!(f & ROCEMU_OPF_READ) == name_has(n, "Read"), "%s", n);
		ck_assert_msg(!!(f & ROCEMU_OPF_ATOMIC) ==
			      (name_has(n, "Swap") || name_has(n, "Fetch") || name_has(n, "Atomic")),
			      "%s", n);
		ck_assert_msg(!!(f & ROCEMU_OPF_IMM) == name_has(n, "Immediate"), "%s", n);
		ck_assert_msg(!!(i->hdr_mask & ROCEMU_HDRM_IMMDT) == name_has(n, "Immediate"), "%s", n);
		ck_assert_msg(!!(f & ROCEMU_OPF_INV) == name_has(n, "Invalidate"), "%s", n);
		ck_assert_msg(!!(i->hdr_mask & ROCEMU_HDRM_IETH) == name_has(n, "Invalidate"), "%s", n);
		ck_assert_msg(!!(f & ROCEMU_OPF_ACK) == name_has(n, "Acknowledge"), "%s", n);
		ck_assert_msg(!!(f & ROCEMU_OPF_RESP) == resp, "%s", n);
		ck_assert_msg(!!(f & ROCEMU_OPF_REQ) == !resp, "%s", n);
		ck_assert_msg(!!(f & ROCEMU_OPF_RC) == (transport == ROCEMU_OP_TRANSPORT_RC &&
						       !strncmp(n, "RC ", 3)), "%s", n);
		ck_assert_msg(!!(f & ROCEMU_OPF_UC) == (transport == ROCEMU_OP_TRANSPORT_UC &&
						       !strncmp(n, "UC ", 3)), "%s", n);
		ck_assert_msg(!!(f & ROCEMU_OPF_UD) == (transport == ROCEMU_OP_TRANSPORT_UD &&
						       !strncmp(n, "UD ", 3)), "%s", n);
		ck_assert_msg(!!(f & ROCEMU_OPF_XRC) == (transport == ROCEMU_OP_TRANSPORT_XRC &&
							!strncmp(n, "XRC ", 4)), "%s", n);
		ck_assert_msg(!!(f & ROCEMU_OPF_DC) == (transport == ROCEMU_OP_TRANSPORT_DC &&
						       !strncmp(n, "DC ", 3)), "%s", n);
		/* DC: DCETH on every packet, RDETH on all but the Acknowledge, DETH on requests */
		ck_assert_msg(!!(i->hdr_mask & ROCEMU_HDRM_DETH) ==
			      ((f & ROCEMU_OPF_UD) || ((f & ROCEMU_OPF_DC) && (f & ROCEMU_OPF_REQ))),
			      "%s", n);
		ck_assert_msg(!!(i->hdr_mask & ROCEMU_HDRM_DCETH) == !!(f & ROCEMU_OPF_DC), "%s", n);
		ck_assert_msg(!!(i->hdr_mask & ROCEMU_HDRM_RDETH) ==
			      ((f & ROCEMU_OPF_DC) && strcmp(n, "DC Acknowledge")), "%s", n);
		ck_assert_msg(!!(i->hdr_mask & ROCEMU_HDRM_XRCETH) ==
			      ((f & ROCEMU_OPF_XRC) && (f & ROCEMU_OPF_REQ)), "%s", n);
		/* RETH starts writes and carries reads; AETH on every response but MIDDLE */
		ck_assert_msg(!!(i->hdr_mask & ROCEMU_HDRM_RETH) ==
			      (((f & ROCEMU_OPF_WRITE) && (f & ROCEMU_OPF_START)) ||
			       ((f & ROCEMU_OPF_READ) && (f & ROCEMU_OPF_REQ))), "%s", n);
		ck_assert_msg(!!(i->hdr_mask & ROCEMU_HDRM_AETH) ==
			      ((f & ROCEMU_OPF_RESP) && !(f & ROCEMU_OPF_MIDDLE)), "%s", n);
		ck_assert_msg(!!(i->hdr_mask & ROCEMU_HDRM_ATMETH) ==
			      ((f & ROCEMU_OPF_ATOMIC) && (f & ROCEMU_OPF_REQ)), "%s", n);
		ck_assert_msg(!!(i->hdr_mask & ROCEMU_HDRM_ATMACK) ==
			      ((f & ROCEMU_OPF_ATOMIC) && (f & ROCEMU_OPF_RESP)), "%s", n);
		ck_assert_msg(!!(i->hdr_mask & ROCEMU_HDRM_PAYLOAD) ==
			      !!(f & (ROCEMU_OPF_SEND | ROCEMU_OPF_WRITE) ||
				 ((f & ROCEMU_OPF_READ) && (f & ROCEMU_OPF_RESP))), "%s", n);
	}
}
END_TEST

/* ---------------- header accessors ---------------- */

static const uint8_t backgrounds[] = { 0x00, 0xff, 0xa5, 0x5a };

/* Sets a field, reads it back, restores the old value and checks that the
 * buffer is byte-for-byte what it was: no neighbouring bit was touched. */
#define ROUND_TRIP(hdr, field, value, expect) do { \
	for (size_t b_ = 0; b_ < sizeof(backgrounds); b_++) { \
		uint8_t buf_[32], orig_[32]; \
		memset(buf_, backgrounds[b_], sizeof(buf_)); \
		memcpy(orig_, buf_, sizeof(buf_)); \
		__typeof__(rocemu_##hdr##_##field(buf_)) old_ = rocemu_##hdr##_##field(buf_); \
		rocemu_##hdr##_set_##field(buf_, value); \
		ck_assert_msg(rocemu_##hdr##_##field(buf_) == (expect), \
			      #hdr "." #field " background 0x%02x", backgrounds[b_]); \
		rocemu_##hdr##_set_##field(buf_, old_); \
		ck_assert_mem_eq(buf_, orig_, sizeof(buf_)); \
	} \
} while (0)

START_TEST(test_bth_round_trips)
{
	ROUND_TRIP(bth, opcode, 0x0a, 0x0a);
	ROUND_TRIP(bth, se, true, true);
	ROUND_TRIP(bth, se, false, false);
	ROUND_TRIP(bth, m, true, true);
	ROUND_TRIP(bth, m, false, false);
	for (uint8_t pad = 0; pad < 4; pad++)
		ROUND_TRIP(bth, padcnt, pad, pad);
	ROUND_TRIP(bth, padcnt, 7, 3);		/* two bits only */
	ROUND_TRIP(bth, tver, 0, 0);
	ROUND_TRIP(bth, tver, 0x1f, 0xf);	/* four bits only */
	ROUND_TRIP(bth, pkey, 0x8001, 0x8001);
	ROUND_TRIP(bth, fecn, true, true);
	ROUND_TRIP(bth, fecn, false, false);
	ROUND_TRIP(bth, becn, true, true);
	ROUND_TRIP(bth, becn, false, false);
	ROUND_TRIP(bth, destqp, 0x123456, 0x123456);
	ROUND_TRIP(bth, destqp, 0xffffff, 0xffffff);
	ROUND_TRIP(bth, destqp, 0x01000001, 0x000001);	/* 24 bits wrap */
	ROUND_TRIP(bth, ackreq, true, true);
	ROUND_TRIP(bth, ackreq, false, false);
	ROUND_TRIP(bth, psn, 0, 0);
	ROUND_TRIP(bth, psn, 0xffffff, 0xffffff);
	ROUND_TRIP(bth, psn, 0x1abcdef, 0xabcdef);
}
END_TEST

/* Every BTH field at its IBTA bit position. */
START_TEST(test_bth_layout)
{
	static const uint8_t want[ROCEMU_BTH_BYTES] = {
		0x0b, 0xf3, 0xab, 0xcd, 0xc0, 0x12, 0x34, 0x56, 0x80, 0x65, 0x43, 0x21,
	};
	uint8_t bth[ROCEMU_BTH_BYTES] = { 0 };

	rocemu_bth_set_opcode(bth, ROCEMU_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
	rocemu_bth_set_se(bth, true);
	rocemu_bth_set_m(bth, true);
	rocemu_bth_set_padcnt(bth, 3);
	rocemu_bth_set_tver(bth, 3);
	rocemu_bth_set_pkey(bth, 0xabcd);
	rocemu_bth_set_fecn(bth, true);
	rocemu_bth_set_becn(bth, true);
	rocemu_bth_set_destqp(bth, 0x123456);
	rocemu_bth_set_ackreq(bth, true);
	rocemu_bth_set_psn(bth, 0x654321);
	ck_assert_mem_eq(bth, want, sizeof(want));
}
END_TEST

START_TEST(test_ext_round_trips)
{
	ROUND_TRIP(reth, va, 0x0123456789abcdefull, 0x0123456789abcdefull);
	ROUND_TRIP(reth, rkey, 0xdeadbeef, 0xdeadbeef);
	ROUND_TRIP(reth, dma_len, 0x80000000, 0x80000000);
	ROUND_TRIP(aeth, syndrome, 0x62, 0x62);
	ROUND_TRIP(aeth, msn, 0xfedcba, 0xfedcba);
	ROUND_TRIP(aeth, msn, 0x1000002, 0x000002);
	ROUND_TRIP(atmeth, va, 0xfedcba9876543210ull, 0xfedcba9876543210ull);
	ROUND_TRIP(atmeth, rkey, 0x00000108, 0x00000108);
	ROUND_TRIP(atmeth, swap_add, 0x1111222233334444ull, 0x1111222233334444ull);
	ROUND_TRIP(atmeth, compare, 0x5555666677778888ull, 0x5555666677778888ull);
	ROUND_TRIP(atmack, orig, 0x8000000000000001ull, 0x8000000000000001ull);
	ROUND_TRIP(deth, qkey, 0x80010000, 0x80010000);
	ROUND_TRIP(deth, src_qp, 0xabcdef, 0xabcdef);
	ROUND_TRIP(deth, src_qp, 0xff000001, 0x000001);
	ROUND_TRIP(xrceth, srqn, 0x123456, 0x123456);
	ROUND_TRIP(xrceth, srqn, 0xff000007, 0x000007);
	ROUND_TRIP(immdt, imm, 0x11223344, 0x11223344);
	ROUND_TRIP(ieth, rkey, 0x99887766, 0x99887766);
}
END_TEST

/* Extension headers at their byte positions. */
START_TEST(test_ext_layout)
{
	static const uint8_t want_atmeth[ROCEMU_ATMETH_BYTES] = {
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,	/* VA */
		0x11, 0x12, 0x13, 0x14,				/* R_Key */
		0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28,	/* swap/add */
		0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38,	/* compare */
	};
	static const uint8_t want_deth[ROCEMU_DETH_BYTES] = {
		0x80, 0x01, 0x02, 0x03, 0x00, 0x0a, 0x0b, 0x0c,
	};
	static const uint8_t want_aeth[ROCEMU_AETH_BYTES] = { 0x3e, 0x00, 0x01, 0x02 };
	uint8_t h[ROCEMU_ATMETH_BYTES] = { 0 };

	rocemu_atmeth_set_va(h, 0x0102030405060708ull);
	rocemu_atmeth_set_rkey(h, 0x11121314);
	rocemu_atmeth_set_swap_add(h, 0x2122232425262728ull);
	rocemu_atmeth_set_compare(h, 0x3132333435363738ull);
	ck_assert_mem_eq(h, want_atmeth, sizeof(want_atmeth));

	memset(h, 0, sizeof(h));
	rocemu_deth_set_qkey(h, 0x80010203);
	rocemu_deth_set_src_qp(h, 0x0a0b0c);
	ck_assert_mem_eq(h, want_deth, sizeof(want_deth));

	memset(h, 0, sizeof(h));
	rocemu_aeth_set_syndrome(h, rocemu_aeth_syndrome_make(ROCEMU_AETH_RNR_NAK, 30));
	rocemu_aeth_set_msn(h, 0x102);
	ck_assert_mem_eq(h, want_aeth, sizeof(want_aeth));
}
END_TEST

START_TEST(test_psn_arith)
{
	ck_assert_uint_eq(rocemu_psn_add(0xffffff, 1), 0);
	ck_assert_uint_eq(rocemu_psn_add(0xfffffe, 5), 3);
	ck_assert_int_eq(rocemu_psn_diff(0, 0xffffff), 1);
	ck_assert_int_eq(rocemu_psn_diff(0xffffff, 0), -1);
	ck_assert_int_eq(rocemu_psn_diff(5, 5), 0);
	ck_assert_int_eq(rocemu_psn_diff(0x7fffff, 0), 0x7fffff);
	ck_assert_int_eq(rocemu_psn_diff(0x800000, 0), -0x800000);
	ck_assert_int_eq(rocemu_psn_diff(3, 0xfffffe), 5);
}
END_TEST

/* ---------------- AETH syndrome and timers ---------------- */

START_TEST(test_aeth_syndrome)
{
	ck_assert_uint_eq(rocemu_aeth_syndrome_make(ROCEMU_AETH_ACK, ROCEMU_AETH_CREDITS_INVALID), 0x1f);
	ck_assert_uint_eq(rocemu_aeth_syndrome_make(ROCEMU_AETH_ACK, 0), 0x00);
	ck_assert_uint_eq(rocemu_aeth_syndrome_make(ROCEMU_AETH_RNR_NAK, 14), 0x2e);
	ck_assert_uint_eq(rocemu_aeth_syndrome_make(ROCEMU_AETH_NAK, ROCEMU_NAK_PSN_SEQ_ERROR), 0x60);
	ck_assert_uint_eq(rocemu_aeth_syndrome_make(ROCEMU_AETH_NAK, ROCEMU_NAK_INVALID_REQUEST), 0x61);
	ck_assert_uint_eq(rocemu_aeth_syndrome_make(ROCEMU_AETH_NAK, ROCEMU_NAK_REMOTE_ACCESS_ERROR), 0x62);
	ck_assert_uint_eq(rocemu_aeth_syndrome_make(ROCEMU_AETH_NAK, ROCEMU_NAK_REMOTE_OP_ERROR), 0x63);
	ck_assert_uint_eq(rocemu_aeth_syndrome_make(ROCEMU_AETH_NAK, ROCEMU_NAK_INVALID_RD_REQUEST), 0x64);
	ck_assert_uint_eq(rocemu_aeth_syndrome_make(ROCEMU_AETH_RNR_NAK, 0x25), 0x25); /* 5 bits */
	ck_assert_int_eq(rocemu_aeth_syndrome_type(0x2e), ROCEMU_AETH_RNR_NAK);
	ck_assert_uint_eq(rocemu_aeth_syndrome_value(0x2e), 14);
	ck_assert_int_eq(rocemu_aeth_syndrome_type(0x62), ROCEMU_AETH_NAK);
	ck_assert_uint_eq(rocemu_aeth_syndrome_value(0x62), ROCEMU_NAK_REMOTE_ACCESS_ERROR);
	ck_assert_int_eq(rocemu_aeth_syndrome_type(0x1f), ROCEMU_AETH_ACK);
	for (unsigned int s = 0; s < 256; s++)
		ck_assert_uint_eq(rocemu_aeth_syndrome_make(rocemu_aeth_syndrome_type((uint8_t)s),
							    rocemu_aeth_syndrome_value((uint8_t)s)), s);
}
END_TEST

START_TEST(test_rnr_timer_table)
{
	/* roce-wire.md's list in hundredths of a millisecond (= 10 us) */
	static const uint32_t centi_ms[32] = {
		65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
		256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
		12288, 16384, 24576, 32768, 49152,
	};

	for (uint8_t code = 0; code < 32; code++)
		ck_assert_uint_eq(rocemu_rnr_timer_to_us(code), centi_ms[code] * 10);
	ck_assert_uint_eq(rocemu_rnr_timer_to_us(14), 1280);	/* 1.28 ms */
	ck_assert_uint_eq(rocemu_ack_timeout_ns(0), 0);		/* infinite */
	ck_assert_uint_eq(rocemu_ack_timeout_ns(1), 8192);
	ck_assert_uint_eq(rocemu_ack_timeout_ns(14), 67108864);	/* 67.1 ms */
	ck_assert_uint_eq(rocemu_ack_timeout_ns(31), 4096ull << 31);
}
END_TEST

/* ---------------- known-answer packets ----------------
 * The ICRCs below were computed apart from this code, in Python:
 *   masked = IPv4(ver/ihl 0x45, TOS 0xff, total length, ID 0, DF, TTL 0xff,
 *            protocol 17, checksum 0xffff, src, dst)
 *          + UDP(sport, 4791, length, checksum 0xffff)
 *          + BTH with byte 4 set to 0xff + the rest of the packet
 *   icrc = zlib.crc32(b'\xff' * 8 + masked)   (lengths count the ICRC)
 * Each array is the UDP payload from the BTH to the pad, without ICRC.
 */

/* rc_send_only: 192.168.0.1 -> 192.168.0.2, sport 0xc123, 16 bytes + ICRC 0x891a4e1d */
static const uint8_t kat_rc_send_only[] = {
	0x04, 0x00, 0xff, 0xff, 0xc0, 0x00, 0x01, 0x23, 0x80, 0x00, 0x00, 0x01,
	0xde, 0xad, 0xbe, 0xef,
};

/* rc_write_only: 10.0.0.1 -> 10.0.0.2, sport 0xc456, 284 bytes + ICRC 0xe048f4a4 */
static const uint8_t kat_rc_write_only[] = {
	0x0a, 0x00, 0xff, 0xff, 0x00, 0xab, 0xcd, 0xef, 0x80, 0xff, 0xff, 0xfe,
	0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x56, 0x78, 0x00, 0x01, 0x23, 0x08,
	0x00, 0x00, 0x01, 0x00, 0x03, 0x0a, 0x11, 0x18, 0x1f, 0x26, 0x2d, 0x34,
	0x3b, 0x42, 0x49, 0x50, 0x57, 0x5e, 0x65, 0x6c, 0x73, 0x7a, 0x81, 0x88,
	0x8f, 0x96, 0x9d, 0xa4, 0xab, 0xb2, 0xb9, 0xc0, 0xc7, 0xce, 0xd5, 0xdc,
	0xe3, 0xea, 0xf1, 0xf8, 0xff, 0x06, 0x0d, 0x14, 0x1b, 0x22, 0x29, 0x30,
	0x37, 0x3e, 0x45, 0x4c, 0x53, 0x5a, 0x61, 0x68, 0x6f, 0x76, 0x7d, 0x84,
	0x8b, 0x92, 0x99, 0xa0, 0xa7, 0xae, 0xb5, 0xbc, 0xc3, 0xca, 0xd1, 0xd8,
	0xdf, 0xe6, 0xed, 0xf4, 0xfb, 0x02, 0x09, 0x10, 0x17, 0x1e, 0x25, 0x2c,
	0x33, 0x3a, 0x41, 0x48, 0x4f, 0x56, 0x5d, 0x64, 0x6b, 0x72, 0x79, 0x80,
	0x87, 0x8e, 0x95, 0x9c, 0xa3, 0xaa, 0xb1, 0xb8, 0xbf, 0xc6, 0xcd, 0xd4,
	0xdb, 0xe2, 0xe9, 0xf0, 0xf7, 0xfe, 0x05, 0x0c, 0x13, 0x1a, 0x21, 0x28,
	0x2f, 0x36, 0x3d, 0x44, 0x4b, 0x52, 0x59, 0x60, 0x67, 0x6e, 0x75, 0x7c,
	0x83, 0x8a, 0x91, 0x98, 0x9f, 0xa6, 0xad, 0xb4, 0xbb, 0xc2, 0xc9, 0xd0,
	0xd7, 0xde, 0xe5, 0xec, 0xf3, 0xfa, 0x01, 0x08, 0x0f, 0x16, 0x1d, 0x24,
	0x2b, 0x32, 0x39, 0x40, 0x47, 0x4e, 0x55, 0x5c, 0x63, 0x6a, 0x71, 0x78,
	0x7f, 0x86, 0x8d, 0x94, 0x9b, 0xa2, 0xa9, 0xb0, 0xb7, 0xbe, 0xc5, 0xcc,
	0xd3, 0xda, 0xe1, 0xe8, 0xef, 0xf6, 0xfd, 0x04, 0x0b, 0x12, 0x19, 0x20,
	0x27, 0x2e, 0x35, 0x3c, 0x43, 0x4a, 0x51, 0x58, 0x5f, 0x66, 0x6d, 0x74,
	0x7b, 0x82, 0x89, 0x90, 0x97, 0x9e, 0xa5, 0xac, 0xb3, 0xba, 0xc1, 0xc8,
	0xcf, 0xd6, 0xdd, 0xe4, 0xeb, 0xf2, 0xf9, 0x00, 0x07, 0x0e, 0x15, 0x1c,
	0x23, 0x2a, 0x31, 0x38, 0x3f, 0x46, 0x4d, 0x54, 0x5b, 0x62, 0x69, 0x70,
	0x77, 0x7e, 0x85, 0x8c, 0x93, 0x9a, 0xa1, 0xa8, 0xaf, 0xb6, 0xbd, 0xc4,
	0xcb, 0xd2, 0xd9, 0xe0, 0xe7, 0xee, 0xf5, 0xfc,
};

/* rc_ack: 192.168.0.2 -> 192.168.0.1, sport 0xc789, 16 bytes + ICRC 0xfb0c8bc9 */
static const uint8_t kat_rc_ack[] = {
	0x11, 0x00, 0xff, 0xff, 0x00, 0x00, 0x04, 0x56, 0x00, 0x00, 0x00, 0x01,
	0x1f, 0x00, 0x00, 0x05,
};

/* rc_send_imm_pad: 127.0.0.1 -> 127.0.0.2, sport 0xc001, 24 bytes + ICRC 0x09e04e61 */
static const uint8_t kat_rc_send_imm_pad[] = {
	0x05, 0xb0, 0xff, 0xff, 0x00, 0x00, 0x01, 0x00, 0x00, 0x12, 0x34, 0x56,
	0x11, 0x22, 0x33, 0x44, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0x00, 0x00,
};


/* A CNP captured on a ConnectX-4 Lx (IP ID 0x718c, TOS 0xc2, TTL 64,
 * sport 0), ICRC bytes 82 fd 00 2a on the wire. */
static const uint8_t cnp_ip[20] = {
	0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11,
	0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01,
};
static const uint8_t cnp_udp[8] = { 0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00 };
static const uint8_t cnp_pkt[28] = {	/* BTH + 16 zero bytes of CNP padding */
	0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00,
};
#define CNP_ICRC 0x2a00fd82u

struct kat {
	const char *name;
	const uint8_t *pkt;
	size_t len;
	const char *saddr, *daddr;
	uint16_t sport;
	uint32_t icrc;
	size_t paylen;
};

#define KAT(n, s, d, sp, icrc, plen) \
	{ #n, kat_##n, sizeof(kat_##n), s, d, sp, icrc, plen }

static const struct kat kats[] = {
	KAT(rc_send_only, "192.168.0.1", "192.168.0.2", 0xc123, 0x891a4e1du, 4),
	KAT(rc_write_only, "10.0.0.1", "10.0.0.2", 0xc456, 0xe048f4a4u, 256),
	KAT(rc_ack, "192.168.0.2", "192.168.0.1", 0xc789, 0xfb0c8bc9u, 0),
	KAT(rc_send_imm_pad, "127.0.0.1", "127.0.0.2", 0xc001, 0x09e04e61u, 5),
};

#define N_KATS (sizeof(kats) / sizeof(kats[0]))

static struct rocemu_ipv4_udp kat_flow(const struct kat *k)
{
	struct rocemu_ipv4_udp f = { .sport = htons(k->sport), .dport = htons(4791) };

	ck_assert_int_eq(inet_pton(AF_INET, k->saddr, &f.saddr), 1);
	ck_assert_int_eq(inet_pton(AF_INET, k->daddr, &f.daddr), 1);
	return f;
}

/* The IPv4 and UDP headers a datagram of flow with wire_len bytes of payload leaves with. */
static struct iphdr kat_ip_id(const struct rocemu_ipv4_udp *flow, size_t wire_len, uint16_t id,
			      bool df)
{
	return (struct iphdr){ .version = 4, .ihl = 5, .ttl = 64, .protocol = IPPROTO_UDP,
			       .tot_len = htons((uint16_t)(28 + wire_len)), .id = htons(id),
			       .frag_off = df ? htons(IP_DF) : 0, .saddr = flow->saddr,
			       .daddr = flow->daddr };
}

static struct iphdr kat_ip(const struct rocemu_ipv4_udp *flow, size_t wire_len)
{
	return kat_ip_id(flow, wire_len, 0, true);
}

static struct udphdr kat_udp(const struct rocemu_ipv4_udp *flow, size_t wire_len)
{
	return (struct udphdr){ .source = flow->sport, .dest = flow->dport,
				.len = htons((uint16_t)(8 + wire_len)) };
}

/* A copy of the packet with room for the ICRC. */
static uint8_t *kat_copy(const struct kat *k)
{
	uint8_t *p = malloc(k->len + ROCEMU_ICRC_BYTES);

	ck_assert_ptr_nonnull(p);
	memcpy(p, k->pkt, k->len);
	return p;
}

/* The accessors read the independently built packets as built. */
START_TEST(test_kat_fields)
{
	uint8_t *p = kat_copy(&kats[0]);

	ck_assert_uint_eq(rocemu_bth_opcode(p), ROCEMU_OP_RC_SEND_ONLY);
	ck_assert_uint_eq(rocemu_bth_pkey(p), 0xffff);
	ck_assert(rocemu_bth_fecn(p) && rocemu_bth_becn(p));
	ck_assert_uint_eq(rocemu_bth_destqp(p), 0x000123);
	ck_assert(rocemu_bth_ackreq(p));
	ck_assert_uint_eq(rocemu_bth_psn(p), 1);
	ck_assert_ptr_eq(rocemu_pkt_payload(p), p + 12);
	ck_assert_ptr_null(rocemu_pkt_reth(p));
	free(p);

	p = kat_copy(&kats[1]);
	ck_assert_ptr_eq(rocemu_pkt_reth(p), p + 12);
	ck_assert_uint_eq(rocemu_reth_va(rocemu_pkt_reth(p)), 0x00007f0012345678ull);
	ck_assert_uint_eq(rocemu_reth_rkey(rocemu_pkt_reth(p)), 0x00012308);
	ck_assert_uint_eq(rocemu_reth_dma_len(rocemu_pkt_reth(p)), 256);
	ck_assert_uint_eq(rocemu_bth_destqp(p), 0xabcdef);
	ck_assert_uint_eq(rocemu_bth_psn(p), 0xfffffe);
	ck_assert_ptr_eq(rocemu_pkt_payload(p), p + 28);
	free(p);

	p = kat_copy(&kats[2]);
	ck_assert_ptr_eq(rocemu_pkt_aeth(p), p + 12);
	ck_assert_uint_eq(rocemu_aeth_syndrome(rocemu_pkt_aeth(p)), 0x1f);
	ck_assert_uint_eq(rocemu_aeth_msn(rocemu_pkt_aeth(p)), 5);
	ck_assert_ptr_null(rocemu_pkt_payload(p));
	ck_assert_ptr_null(rocemu_pkt_atmack(p));
	free(p);

	p = kat_copy(&kats[3]);
	ck_assert(rocemu_bth_se(p));
	ck_assert_uint_eq(rocemu_bth_padcnt(p), 3);
	ck_assert_uint_eq(rocemu_immdt_imm(rocemu_pkt_immdt(p)), 0x11223344);
	ck_assert_mem_eq(rocemu_pkt_payload(p), "hello", 5);
	free(p);
}
END_TEST

START_TEST(test_payload_len)
{
	for (size_t i = 0; i < N_KATS; i++) {
		const struct kat *k = &kats[i];
		uint8_t *p = kat_copy(k);

		ck_assert_int_eq(rocemu_pkt_payload_len(p, k->len + ROCEMU_ICRC_BYTES), k->paylen);
		ck_assert_uint_eq(rocemu_pkt_wire_len(rocemu_pkt_info(p), k->paylen),
				  k->len + ROCEMU_ICRC_BYTES);
		ck_assert_int_eq(rocemu_pkt_payload_len(p, k->len + ROCEMU_ICRC_BYTES - 1), -EINVAL);
		free(p);
	}

	uint8_t pkt[64] = { 0 };

	ck_assert_int_eq(rocemu_pkt_payload_len(pkt, 15), -EINVAL);
	rocemu_bth_set_opcode(pkt, 0x15);
	ck_assert_int_eq(rocemu_pkt_payload_len(pkt, 16), -EPROTO);
	rocemu_bth_set_opcode(pkt, ROCEMU_OP_RC_SEND_ONLY);
	ck_assert_int_eq(rocemu_pkt_payload_len(pkt, 16), 0);
	rocemu_bth_set_tver(pkt, 1);
	ck_assert_int_eq(rocemu_pkt_payload_len(pkt, 16), -EPROTO);
	rocemu_bth_set_tver(pkt, 0);
	rocemu_bth_set_padcnt(pkt, 3);
	ck_assert_int_eq(rocemu_pkt_payload_len(pkt, 16), -EINVAL);	/* pad > payload */
	ck_assert_int_eq(rocemu_pkt_payload_len(pkt, 20), 1);
	rocemu_bth_set_padcnt(pkt, 0);
	rocemu_bth_set_opcode(pkt, ROCEMU_OP_RC_RDMA_READ_REQUEST);
	ck_assert_int_eq(rocemu_pkt_payload_len(pkt, 28), -EINVAL);	/* RETH cut */
	ck_assert_int_eq(rocemu_pkt_payload_len(pkt, 32), 0);
	ck_assert_int_eq(rocemu_pkt_payload_len(pkt, 36), -EINVAL);	/* no payload allowed */
	ck_assert_uint_eq(rocemu_pad_bytes(0), 0);
	ck_assert_uint_eq(rocemu_pad_bytes(1), 3);
	ck_assert_uint_eq(rocemu_pad_bytes(4094), 2);
	ck_assert_uint_eq(rocemu_pad_bytes(4096), 0);
}
END_TEST

/* ---------------- CRC-32 and ICRC ---------------- */

static uint32_t crc32_bitwise(const uint8_t *p, size_t len)
{
	uint32_t c = ~0u;

	while (len--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0xedb88320u : c >> 1;
	}
	return ~c;
}

START_TEST(test_crc32)
{
	static const uint8_t ff8[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t buf[600];

	ck_assert_uint_eq(rocemu_crc32(0, "123456789", 9), 0xcbf43926u);
	ck_assert_uint_eq(rocemu_crc32(0, "", 0), 0);
	/* Soft-RoCE's starting register: the state after the masked LRH */
	ck_assert_uint_eq(~rocemu_crc32(0, ff8, sizeof(ff8)), 0xdebb20e3u);

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + 7);
	for (size_t off = 0; off < 9; off++)
		for (size_t len = 0; len + off <= 300; len += 7) {
			uint32_t whole = rocemu_crc32(0, buf + off, len);
			size_t cut = len / 3;

			ck_assert_uint_eq(whole, crc32_bitwise(buf + off, len));
			ck_assert_uint_eq(rocemu_crc32(rocemu_crc32(0, buf + off, cut),
						       buf + off + cut, len - cut), whole);
		}
}
END_TEST

/* xorshift64: reproducible pseudo-random bytes. */
static void fill_random(uint8_t *p, size_t len, uint64_t seed)
{
	uint64_t x = seed | 1;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)(x >> 32);
	}
}

/* Whatever path the CPU takes (carry-less multiply or tables), every length,
 * alignment and chaining split gives the table implementation's value. */
START_TEST(test_crc32_matches_table)
{
	enum { MAX_LEN = 600, MAX_MISALIGN = 16 };
	static const size_t large[] = { 4096, 4096 + 1, 65536 - 3, 1 << 20, (1 << 20) + 77 };
	static uint8_t buf[(1 << 20) + 77 + MAX_MISALIGN];

	fill_random(buf, sizeof(buf), 0x9e3779b97f4a7c15ull);
	for (size_t off = 0; off < MAX_MISALIGN; off += (off < 8 ? 1 : 7))
		for (size_t len = 0; len <= MAX_LEN; len++) {
			const uint8_t *p = buf + off;
			uint32_t ref = rocemu_crc32_table(0, p, len);
			size_t cuts[] = { 1, 15, 64, len / 2, len - len / 5 };

			ck_assert_msg(rocemu_crc32(0, p, len) == ref, "len %zu off %zu", len, off);
			ck_assert_uint_eq(rocemu_crc32(0xdeadbeef, p, len),
					  rocemu_crc32_table(0xdeadbeef, p, len));
			for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
				size_t cut = cuts[c] < len ? cuts[c] : len;

				ck_assert_msg(rocemu_crc32(rocemu_crc32(0, p, cut), p + cut, len - cut) == ref,
					      "len %zu off %zu cut %zu", len, off, cut);
			}
		}
	for (size_t i = 0; i < sizeof(large) / sizeof(large[0]); i++)
		for (size_t off = 0; off < 4; off++) {
			const uint8_t *p = buf + off * 5;
			uint32_t ref = rocemu_crc32_table(0, p, large[i]);
			size_t cut = large[i] / 3 + off;

			ck_assert_uint_eq(rocemu_crc32(0, p, large[i]), ref);
			ck_assert_uint_eq(rocemu_crc32(rocemu_crc32(0, p, cut), p + cut, large[i] - cut), ref);
		}
	/* the reference itself against the bit-at-a-time definition */
	for (size_t len = 0; len <= MAX_LEN; len += 13)
		ck_assert_uint_eq(rocemu_crc32_table(0, buf + 3, len), crc32_bitwise(buf + 3, len));
}
END_TEST

START_TEST(test_icrc_known_answers)
{
	for (size_t i = 0; i < N_KATS; i++) {
		const struct kat *k = &kats[i];
		struct rocemu_ipv4_udp flow = kat_flow(k);
		uint8_t *p = kat_copy(k);
		static const uint8_t zero4[4];

		ck_assert_msg(rocemu_icrc_v4(&flow, p, k->len) == k->icrc, "%s: 0x%08x", k->name,
			      rocemu_icrc_v4(&flow, p, k->len));
		memset(p + k->len, 0, ROCEMU_ICRC_BYTES);
		ck_assert_uint_eq(rocemu_icrc_append_v4(&flow, p, k->len, 0), k->len + 4);
		/* least-significant byte first on the wire */
		ck_assert_uint_eq(p[k->len], k->icrc & 0xff);
		ck_assert_uint_eq(p[k->len + 1], (k->icrc >> 8) & 0xff);
		ck_assert_uint_eq(p[k->len + 2], (k->icrc >> 16) & 0xff);
		ck_assert_uint_eq(p[k->len + 3], k->icrc >> 24);
		ck_assert_int_eq(rocemu_icrc_check_v4(&flow, p, k->len + 4, NULL), 0);
		ck_assert_int_eq(rocemu_icrc_check_v4(&flow, p, 15, NULL), -EINVAL);
		ck_assert_int_eq(rocemu_icrc_check_v4(&flow, zero4, 4, NULL), -EINVAL);
		free(p);
	}
}
END_TEST

/*
 * Every bit the ICRC covers changes it; the masked F/B/reserved byte does
 * not. Under the header it was sent with every flip is caught; a receiver
 * that must find the ID takes a rare flip as another ID's packet (16 of 32
 * bits hold), never as one with the sender's own.
 */
START_TEST(test_icrc_bit_flips)
{
	for (size_t i = 0; i < N_KATS; i++) {
		const struct kat *k = &kats[i];
		struct rocemu_ipv4_udp flow = kat_flow(k), other;
		uint8_t *p = kat_copy(k);
		size_t len = rocemu_icrc_append_v4(&flow, p, k->len, 0), taken = 0;
		struct iphdr ip = kat_ip(&flow, len);
		struct udphdr udp = kat_udp(&flow, len);

		for (size_t byte = 0; byte < len; byte++)
			for (int bit = 0; bit < 8; bit++) {
				struct rocemu_ipv4_fields found;

				p[byte] ^= (uint8_t)(1u << bit);
				ck_assert_int_eq(rocemu_icrc_check_v4_hdrs(&ip, &udp, p, len),
						 byte == 4 ? 0 : -EBADMSG);
				if (byte != 4 && !rocemu_icrc_check_v4(&flow, p, len, &found)) {
					ck_assert(found.id != 0 || !found.df);
					taken++;
				}
				p[byte] ^= (uint8_t)(1u << bit);
			}
		ck_assert_uint_le(taken, 1 + len * 8 / 1000);
		ck_assert_int_eq(rocemu_icrc_check_v4(&flow, p, len, NULL), 0);

		other = flow;
		other.saddr ^= htonl(1);
		ck_assert_int_eq(rocemu_icrc_check_v4(&other, p, len, NULL), -EBADMSG);
		other = flow;
		other.daddr ^= htonl(0x100);
		ck_assert_int_eq(rocemu_icrc_check_v4(&other, p, len, NULL), -EBADMSG);
		other = flow;
		other.sport ^= htons(1);
		ck_assert_int_eq(rocemu_icrc_check_v4(&other, p, len, NULL), -EBADMSG);
		other = flow;
		other.dport = htons(4792);
		ck_assert_int_eq(rocemu_icrc_check_v4(&other, p, len, NULL), -EBADMSG);
		free(p);
	}
}
END_TEST

/*
 * A receiver finds the ID (and DF) the sender's header had, whichever it
 * was: rocemu's GSO segments, rxe's hashed counter, a peer without DF.
 */
START_TEST(test_icrc_finds_the_sender_id)
{
	static const uint16_t ids[] = { 0, 1, 2, 63, 0x1234, 0x8000, 0xbeef, 0xffff };

	for (size_t i = 0; i < N_KATS; i++) {
		const struct kat *k = &kats[i];
		struct rocemu_ipv4_udp flow = kat_flow(k);
		uint8_t *p = kat_copy(k);
		size_t len = k->len + ROCEMU_ICRC_BYTES;

		for (size_t j = 0; j < sizeof(ids) / sizeof(ids[0]); j++)
			for (int df = 0; df <= 1; df++) {
				struct iphdr ip = kat_ip_id(&flow, len, ids[j], df);
				struct udphdr udp = kat_udp(&flow, len);
				uint32_t icrc = htole32(rocemu_icrc_v4_hdrs(&ip, &udp, p, k->len));
				struct rocemu_ipv4_fields found = { 0 };

				memcpy(p + k->len, &icrc, sizeof(icrc));
				ck_assert_int_eq(rocemu_icrc_check_v4(&flow, p, len, &found), 0);
				ck_assert_uint_eq(found.id, ids[j]);
				ck_assert_int_eq(found.df, df);
				if (df) {
					/* what a sender makes for that place of a send */
					rocemu_icrc_append_v4(&flow, p, k->len, ids[j]);
					ck_assert_mem_eq(p + k->len, &icrc, sizeof(icrc));
				}
			}
		free(p);
	}
}
END_TEST

/* An ICRC moved to another ID is the one made for it; damage moves along unchanged. */
START_TEST(test_icrc_move_id)
{
	for (size_t i = 0; i < N_KATS; i++) {
		const struct kat *k = &kats[i];
		struct rocemu_ipv4_udp flow = kat_flow(k);
		uint8_t *p = kat_copy(k), want[4];
		size_t len = rocemu_icrc_append_v4(&flow, p, k->len, 7);
		struct rocemu_ipv4_fields found;

		rocemu_icrc_move_id(p, len, 7, 0);
		memcpy(want, p + k->len, 4);
		rocemu_icrc_append_v4(&flow, p, k->len, 0);
		ck_assert_mem_eq(p + k->len, want, 4);
		rocemu_icrc_move_id(p, len, 0, 0x4321);
		ck_assert_int_eq(rocemu_icrc_check_v4(&flow, p, len, &found), 0);
		ck_assert_uint_eq(found.id, 0x4321);
		p[ROCEMU_BTH_BYTES - 1] ^= 0x10;	/* the PSN's low byte */
		rocemu_icrc_move_id(p, len, 0x4321, 0);
		ck_assert_int_eq(rocemu_icrc_check_v4_hdrs(&(struct iphdr){ 0 }, &(struct udphdr){ 0 },
							   p, len), -EBADMSG);
		p[ROCEMU_BTH_BYTES - 1] ^= 0x10;
		ck_assert_int_eq(rocemu_icrc_check_v4(&flow, p, len, &found), 0);
		ck_assert_uint_eq(found.id, 0);
		free(p);
	}
}
END_TEST

/* Real hardware: the masks and byte order match a ConnectX-4 Lx. */
START_TEST(test_icrc_hardware_capture)
{
	struct iphdr ip;
	struct udphdr udp;

	memcpy(&ip, cnp_ip, sizeof(ip));
	memcpy(&udp, cnp_udp, sizeof(udp));
	ck_assert_uint_eq(rocemu_icrc_v4_hdrs(&ip, &udp, cnp_pkt, sizeof(cnp_pkt)), CNP_ICRC);
	/* TOS and TTL are masked: other values give the same ICRC */
	ip.tos = 0;
	ip.ttl = 1;
	ck_assert_uint_eq(rocemu_icrc_v4_hdrs(&ip, &udp, cnp_pkt, sizeof(cnp_pkt)), CNP_ICRC);
	/* the IP ID is not, and a receiver that sees no header finds the ConnectX's own */
	{
		const struct rocemu_ipv4_udp flow = { .saddr = ip.saddr, .daddr = ip.daddr,
						      .sport = udp.source, .dport = udp.dest };
		uint8_t pkt[sizeof(cnp_pkt) + ROCEMU_ICRC_BYTES];
		uint32_t icrc = htole32(CNP_ICRC);
		struct rocemu_ipv4_fields found;

		memcpy(pkt, cnp_pkt, sizeof(cnp_pkt));
		memcpy(pkt + sizeof(cnp_pkt), &icrc, sizeof(icrc));
		ck_assert_int_eq(rocemu_icrc_check_v4(&flow, pkt, sizeof(pkt), &found), 0);
		ck_assert_uint_eq(found.id, ntohs(ip.id));
		ck_assert_int_eq(found.df, (ntohs(ip.frag_off) & IP_DF) != 0);
	}
	ip.id ^= htons(1);
	ck_assert_uint_ne(rocemu_icrc_v4_hdrs(&ip, &udp, cnp_pkt, sizeof(cnp_pkt)), CNP_ICRC);
}
END_TEST

static Suite *roce_suite(void)
{
	Suite *s = suite_create("roce");
	TCase *tc;

	tc = tcase_create("opcode");
	tcase_add_test(tc, test_opcode_known_set);
	tcase_add_test(tc, test_opcode_lengths_offsets);
	tcase_add_test(tc, test_opcode_sample_layouts);
	tcase_add_test(tc, test_opcode_flags_match_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("hdr");
	tcase_add_test(tc, test_bth_round_trips);
	tcase_add_test(tc, test_bth_layout);
	tcase_add_test(tc, test_ext_round_trips);
	tcase_add_test(tc, test_ext_layout);
	tcase_add_test(tc, test_psn_arith);
	tcase_add_test(tc, test_aeth_syndrome);
	tcase_add_test(tc, test_rnr_timer_table);
	tcase_add_test(tc, test_kat_fields);
	tcase_add_test(tc, test_payload_len);
	suite_add_tcase(s, tc);

	tc = tcase_create("icrc");
	tcase_add_test(tc, test_crc32);
	tcase_add_test(tc, test_crc32_matches_table);
	tcase_add_test(tc, test_icrc_known_answers);
	tcase_add_test(tc, test_icrc_bit_flips);
	tcase_add_test(tc, test_icrc_finds_the_sender_id);
	tcase_add_test(tc, test_icrc_move_id);
	tcase_add_test(tc, test_icrc_hardware_capture);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(roce_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
