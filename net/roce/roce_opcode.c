/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Protocol facts as tables: opcode properties and the RNR timer codes. */
#include "net/roce/roce_opcode.h"
#include "net/roce/roce_hdr.h"

#define F(flag) ROCEMU_OPF_##flag
#define H(hdr) ROCEMU_HDRM_##hdr

/* Headers are laid out in enum rocemu_hdr order, so each offset is the
 * sum of the present headers before it: computed here, never typed. */
#define LEN_IF(m, hdr) (((m) & H(hdr)) ? ROCEMU_##hdr##_BYTES : 0)
#define BEFORE_DCETH(m)   LEN_IF(m, BTH)
#define BEFORE_RDETH(m)   (BEFORE_DCETH(m) + LEN_IF(m, DCETH))
#define BEFORE_DETH(m)    (BEFORE_RDETH(m) + LEN_IF(m, RDETH))
#define BEFORE_XRCETH(m)  (BEFORE_DETH(m) + LEN_IF(m, DETH))
#define BEFORE_RETH(m)    (BEFORE_XRCETH(m) + LEN_IF(m, XRCETH))
#define BEFORE_ATMETH(m)  (BEFORE_RETH(m) + LEN_IF(m, RETH))
#define BEFORE_AETH(m)    (BEFORE_ATMETH(m) + LEN_IF(m, ATMETH))
#define BEFORE_ATMACK(m)  (BEFORE_AETH(m) + LEN_IF(m, AETH))
#define BEFORE_IMMDT(m)   (BEFORE_ATMACK(m) + LEN_IF(m, ATMACK))
#define BEFORE_IETH(m)    (BEFORE_IMMDT(m) + LEN_IF(m, IMMDT))
#define BEFORE_PAYLOAD(m) (BEFORE_IETH(m) + LEN_IF(m, IETH))
#define OFFSET(m, hdr) (((m) & H(hdr)) ? BEFORE_##hdr(m) : 0)

#define OP(code, opname, hdrs, opflags) \
	OP_MASK(code, opname, H(BTH) | (hdrs), opflags)
#define OP_MASK(code, opname, m, opflags) \
	[code] = { \
		.name = opname, \
		.hdr_mask = (m), \
		.flags = (opflags), \
		.length = BEFORE_PAYLOAD(m), \
		.offset = { \
			[ROCEMU_HDR_BTH] = 0, \
			[ROCEMU_HDR_DCETH] = OFFSET(m, DCETH), \
			[ROCEMU_HDR_RDETH] = OFFSET(m, RDETH), \
			[ROCEMU_HDR_DETH] = OFFSET(m, DETH), \
			[ROCEMU_HDR_XRCETH] = OFFSET(m, XRCETH), \
			[ROCEMU_HDR_RETH] = OFFSET(m, RETH), \
			[ROCEMU_HDR_ATMETH] = OFFSET(m, ATMETH), \
			[ROCEMU_HDR_AETH] = OFFSET(m, AETH), \
			[ROCEMU_HDR_ATMACK] = OFFSET(m, ATMACK), \
			[ROCEMU_HDR_IMMDT] = OFFSET(m, IMMDT), \
			[ROCEMU_HDR_IETH] = OFFSET(m, IETH), \
			[ROCEMU_HDR_PAYLOAD] = BEFORE_PAYLOAD(m), \
		}, \
	}

/*
 * Send and RDMA Write opcodes are the same on RC, UC and XRC (IBTA 9.2);
 * X is the headers every request of the transport carries (XRC: XRCETH).
 */
#define SEND_WRITE_OPS(T, X) \
	OP(ROCEMU_OP_##T##_SEND_FIRST, #T " Send First", (X) | H(PAYLOAD), \
	   F(T) | F(REQ) | F(SEND) | F(START)), \
	OP(ROCEMU_OP_##T##_SEND_MIDDLE, #T " Send Middle", (X) | H(PAYLOAD), \
	   F(T) | F(REQ) | F(SEND) | F(MIDDLE)), \
	OP(ROCEMU_OP_##T##_SEND_LAST, #T " Send Last", (X) | H(PAYLOAD), \
	   F(T) | F(REQ) | F(SEND) | F(END)), \
	OP(ROCEMU_OP_##T##_SEND_LAST_WITH_IMMEDIATE, #T " Send Last Immediate", \
	   (X) | H(IMMDT) | H(PAYLOAD), F(T) | F(REQ) | F(SEND) | F(END) | F(IMM)), \
	OP(ROCEMU_OP_##T##_SEND_ONLY, #T " Send Only", (X) | H(PAYLOAD), \
	   F(T) | F(REQ) | F(SEND) | F(START) | F(END)), \
	OP(ROCEMU_OP_##T##_SEND_ONLY_WITH_IMMEDIATE, #T " Send Only Immediate", \
	   (X) | H(IMMDT) | H(PAYLOAD), \
	   F(T) | F(REQ) | F(SEND) | F(START) | F(END) | F(IMM)), \
	OP(ROCEMU_OP_##T##_RDMA_WRITE_FIRST, #T " RDMA Write First", \
	   (X) | H(RETH) | H(PAYLOAD), F(T) | F(REQ) | F(WRITE) | F(START)), \
	OP(ROCEMU_OP_##T##_RDMA_WRITE_MIDDLE, #T " RDMA Write Middle", (X) | H(PAYLOAD), \
	   F(T) | F(REQ) | F(WRITE) | F(MIDDLE)), \
	OP(ROCEMU_OP_##T##_RDMA_WRITE_LAST, #T " RDMA Write Last", (X) | H(PAYLOAD), \
	   F(T) | F(REQ) | F(WRITE) | F(END)), \
	OP(ROCEMU_OP_##T##_RDMA_WRITE_LAST_WITH_IMMEDIATE, \
	   #T " RDMA Write Last Immediate", (X) | H(IMMDT) | H(PAYLOAD), \
	   F(T) | F(REQ) | F(WRITE) | F(END) | F(IMM)), \
	OP(ROCEMU_OP_##T##_RDMA_WRITE_ONLY, #T " RDMA Write Only", \
	   (X) | H(RETH) | H(PAYLOAD), F(T) | F(REQ) | F(WRITE) | F(START) | F(END)), \
	OP(ROCEMU_OP_##T##_RDMA_WRITE_ONLY_WITH_IMMEDIATE, \
	   #T " RDMA Write Only Immediate", (X) | H(RETH) | H(IMMDT) | H(PAYLOAD), \
	   F(T) | F(REQ) | F(WRITE) | F(START) | F(END) | F(IMM))

/*
 * What RC, XRC and DC have beyond SEND and WRITE: READ, atomics and
 * acknowledges. R is the headers of every response but the Acknowledge,
 * A the Acknowledge's (DC: as Wireshark reads them).
 */
#define RELIABLE_OPS(T, X, R, A) \
	OP(ROCEMU_OP_##T##_RDMA_READ_REQUEST, #T " RDMA Read Request", (X) | H(RETH), \
	   F(T) | F(REQ) | F(READ) | F(START) | F(END)), \
	OP(ROCEMU_OP_##T##_RDMA_READ_RESPONSE_FIRST, #T " RDMA Read Response First", \
	   (R) | H(AETH) | H(PAYLOAD), F(T) | F(RESP) | F(READ) | F(START)), \
	OP(ROCEMU_OP_##T##_RDMA_READ_RESPONSE_MIDDLE, #T " RDMA Read Response Middle", \
	   (R) | H(PAYLOAD), F(T) | F(RESP) | F(READ) | F(MIDDLE)), \
	OP(ROCEMU_OP_##T##_RDMA_READ_RESPONSE_LAST, #T " RDMA Read Response Last", \
	   (R) | H(AETH) | H(PAYLOAD), F(T) | F(RESP) | F(READ) | F(END)), \
	OP(ROCEMU_OP_##T##_RDMA_READ_RESPONSE_ONLY, #T " RDMA Read Response Only", \
	   (R) | H(AETH) | H(PAYLOAD), F(T) | F(RESP) | F(READ) | F(START) | F(END)), \
	OP(ROCEMU_OP_##T##_ACKNOWLEDGE, #T " Acknowledge", (A) | H(AETH), \
	   F(T) | F(RESP) | F(ACK) | F(START) | F(END)), \
	OP(ROCEMU_OP_##T##_ATOMIC_ACKNOWLEDGE, #T " Atomic Acknowledge", \
	   (R) | H(AETH) | H(ATMACK), \
	   F(T) | F(RESP) | F(ACK) | F(ATOMIC) | F(START) | F(END)), \
	OP(ROCEMU_OP_##T##_COMPARE_SWAP, #T " Compare Swap", (X) | H(ATMETH), \
	   F(T) | F(REQ) | F(ATOMIC) | F(START) | F(END)), \
	OP(ROCEMU_OP_##T##_FETCH_ADD, #T " Fetch Add", (X) | H(ATMETH), \
	   F(T) | F(REQ) | F(ATOMIC) | F(START) | F(END))

/* SEND with invalidate: RC and XRC (DC has no opcode for it). */
#define INVALIDATE_OPS(T, X) \
	OP(ROCEMU_OP_##T##_SEND_LAST_WITH_INVALIDATE, #T " Send Last Invalidate", \
	   (X) | H(IETH) | H(PAYLOAD), F(T) | F(REQ) | F(SEND) | F(END) | F(INV)), \
	OP(ROCEMU_OP_##T##_SEND_ONLY_WITH_INVALIDATE, #T " Send Only Invalidate", \
	   (X) | H(IETH) | H(PAYLOAD), \
	   F(T) | F(REQ) | F(SEND) | F(START) | F(END) | F(INV))

const struct rocemu_opcode_info rocemu_opcode_table[256] = {
	SEND_WRITE_OPS(RC, 0),
	RELIABLE_OPS(RC, 0, 0, 0),
	INVALIDATE_OPS(RC, 0),

	SEND_WRITE_OPS(UC, 0),

	OP(ROCEMU_OP_UD_SEND_ONLY, "UD Send Only", H(DETH) | H(PAYLOAD),
	   F(UD) | F(REQ) | F(SEND) | F(START) | F(END)),
	OP(ROCEMU_OP_UD_SEND_ONLY_WITH_IMMEDIATE, "UD Send Only Immediate",
	   H(DETH) | H(IMMDT) | H(PAYLOAD),
	   F(UD) | F(REQ) | F(SEND) | F(START) | F(END) | F(IMM)),

	SEND_WRITE_OPS(XRC, H(XRCETH)),
	RELIABLE_OPS(XRC, H(XRCETH), 0, 0),
	INVALIDATE_OPS(XRC, H(XRCETH)),

	SEND_WRITE_OPS(DC, H(DCETH) | H(RDETH) | H(DETH)),
	RELIABLE_OPS(DC, H(DCETH) | H(RDETH) | H(DETH), H(DCETH) | H(RDETH), H(DCETH)),
};

/* RNR NAK timer encodings (IBTA 9.7.5, roce-wire.md), in microseconds. */
const uint32_t rocemu_rnr_timer_us[ROCEMU_RNR_TIMER_CODES] = {
	655360,     10,     20,     30,     40,     60,     80,    120,
	   160,    240,    320,    480,    640,    960,   1280,   1920,
	  2560,   3840,   5120,   7680,  10240,  15360,  20480,  30720,
	 40960,  61440,  81920, 122880, 163840, 245760, 327680, 491520,
};
