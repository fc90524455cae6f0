/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* BTH opcodes and their properties (IBTA Vol. 1 9.2) as data. */
#ifndef ROCEMU_NET_ROCE_OPCODE_H
#define ROCEMU_NET_ROCE_OPCODE_H

#include <stddef.h>
#include <stdint.h>

/* Bits 7:5 of the opcode select the transport (IBTA 9.2.1; CNP: RoCEv2 annex A17.9.2). */
#define ROCEMU_OP_TRANSPORT_MASK  0xe0
#define ROCEMU_OP_TRANSPORT_SHIFT 5
#define ROCEMU_OP_TRANSPORT_RC    0x00
#define ROCEMU_OP_TRANSPORT_UC    0x20
#define ROCEMU_OP_TRANSPORT_RD    0x40
#define ROCEMU_OP_TRANSPORT_UD    0x60
#define ROCEMU_OP_TRANSPORT_CNP   0x80
#define ROCEMU_OP_TRANSPORT_XRC   0xa0
/* mlx5 DC takes the RD class on the wire (Wireshark's DctOpCodeMap): no RD here. */
#define ROCEMU_OP_TRANSPORT_DC    ROCEMU_OP_TRANSPORT_RD

enum rocemu_opcode {
	ROCEMU_OP_RC_SEND_FIRST				= 0x00,
	ROCEMU_OP_RC_SEND_MIDDLE			= 0x01,
	ROCEMU_OP_RC_SEND_LAST				= 0x02,
	ROCEMU_OP_RC_SEND_LAST_WITH_IMMEDIATE		= 0x03,
	ROCEMU_OP_RC_SEND_ONLY				= 0x04,
	ROCEMU_OP_RC_SEND_ONLY_WITH_IMMEDIATE		= 0x05,
	ROCEMU_OP_RC_RDMA_WRITE_FIRST			= 0x06,
	ROCEMU_OP_RC_RDMA_WRITE_MIDDLE			= 0x07,
	ROCEMU_OP_RC_RDMA_WRITE_LAST			= 0x08,
	ROCEMU_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE	= 0x09,
	ROCEMU_OP_RC_RDMA_WRITE_ONLY			= 0x0a,
	ROCEMU_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE	= 0x0b,
	ROCEMU_OP_RC_RDMA_READ_REQUEST			= 0x0c,
	ROCEMU_OP_RC_RDMA_READ_RESPONSE_FIRST		= 0x0d,
	ROCEMU_OP_RC_RDMA_READ_RESPONSE_MIDDLE		= 0x0e,
	ROCEMU_OP_RC_RDMA_READ_RESPONSE_LAST		= 0x0f,
	ROCEMU_OP_RC_RDMA_READ_RESPONSE_ONLY		= 0x10,
	ROCEMU_OP_RC_ACKNOWLEDGE			= 0x11,
	ROCEMU_OP_RC_ATOMIC_ACKNOWLEDGE			= 0x12,
	ROCEMU_OP_RC_COMPARE_SWAP			= 0x13,
	ROCEMU_OP_RC_FETCH_ADD				= 0x14,
	ROCEMU_OP_RC_SEND_LAST_WITH_INVALIDATE		= 0x16,
	ROCEMU_OP_RC_SEND_ONLY_WITH_INVALIDATE		= 0x17,

	ROCEMU_OP_UC_SEND_FIRST				= 0x20,
	ROCEMU_OP_UC_SEND_MIDDLE			= 0x21,
	ROCEMU_OP_UC_SEND_LAST				= 0x22,
	ROCEMU_OP_UC_SEND_LAST_WITH_IMMEDIATE		= 0x23,
	ROCEMU_OP_UC_SEND_ONLY				= 0x24,
	ROCEMU_OP_UC_SEND_ONLY_WITH_IMMEDIATE		= 0x25,
	ROCEMU_OP_UC_RDMA_WRITE_FIRST			= 0x26,
	ROCEMU_OP_UC_RDMA_WRITE_MIDDLE			= 0x27,
	ROCEMU_OP_UC_RDMA_WRITE_LAST			= 0x28,
	ROCEMU_OP_UC_RDMA_WRITE_LAST_WITH_IMMEDIATE	= 0x29,
	ROCEMU_OP_UC_RDMA_WRITE_ONLY			= 0x2a,
	ROCEMU_OP_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE	= 0x2b,

	ROCEMU_OP_UD_SEND_ONLY				= 0x64,
	ROCEMU_OP_UD_SEND_ONLY_WITH_IMMEDIATE		= 0x65,

	/* XRC: RC's opcodes in class 0xa0; requests carry XRCETH (IBTA 9.2, 9.3.6). */
	ROCEMU_OP_XRC_SEND_FIRST			= 0xa0,
	ROCEMU_OP_XRC_SEND_MIDDLE			= 0xa1,
	ROCEMU_OP_XRC_SEND_LAST				= 0xa2,
	ROCEMU_OP_XRC_SEND_LAST_WITH_IMMEDIATE		= 0xa3,
	ROCEMU_OP_XRC_SEND_ONLY				= 0xa4,
	ROCEMU_OP_XRC_SEND_ONLY_WITH_IMMEDIATE		= 0xa5,
	ROCEMU_OP_XRC_RDMA_WRITE_FIRST			= 0xa6,
	ROCEMU_OP_XRC_RDMA_WRITE_MIDDLE			= 0xa7,
	ROCEMU_OP_XRC_RDMA_WRITE_LAST			= 0xa8,
	ROCEMU_OP_XRC_RDMA_WRITE_LAST_WITH_IMMEDIATE	= 0xa9,
	ROCEMU_OP_XRC_RDMA_WRITE_ONLY			= 0xaa,
	ROCEMU_OP_XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE	= 0xab,
	ROCEMU_OP_XRC_RDMA_READ_REQUEST			= 0xac,
	ROCEMU_OP_XRC_RDMA_READ_RESPONSE_FIRST		= 0xad,
	ROCEMU_OP_XRC_RDMA_READ_RESPONSE_MIDDLE		= 0xae,
	ROCEMU_OP_XRC_RDMA_READ_RESPONSE_LAST		= 0xaf,
	ROCEMU_OP_XRC_RDMA_READ_RESPONSE_ONLY		= 0xb0,
	ROCEMU_OP_XRC_ACKNOWLEDGE			= 0xb1,
	ROCEMU_OP_XRC_ATOMIC_ACKNOWLEDGE		= 0xb2,
	ROCEMU_OP_XRC_COMPARE_SWAP			= 0xb3,
	ROCEMU_OP_XRC_FETCH_ADD				= 0xb4,
	ROCEMU_OP_XRC_SEND_LAST_WITH_INVALIDATE		= 0xb6,
	ROCEMU_OP_XRC_SEND_ONLY_WITH_INVALIDATE		= 0xb7,

	/*
	 * DC (mlx5 Dynamically Connected): RC's opcodes in the RD class 0x40,
	 * as Wireshark's dissector decodes a ConnectX's DC packets; every
	 * packet has DCETH after BTH, requests RDETH and DETH (emulator/dc/README.md).
	 */
	ROCEMU_OP_DC_SEND_FIRST				= 0x40,
	ROCEMU_OP_DC_SEND_MIDDLE			= 0x41,
	ROCEMU_OP_DC_SEND_LAST				= 0x42,
	ROCEMU_OP_DC_SEND_LAST_WITH_IMMEDIATE		= 0x43,
	ROCEMU_OP_DC_SEND_ONLY				= 0x44,
	ROCEMU_OP_DC_SEND_ONLY_WITH_IMMEDIATE		= 0x45,
	ROCEMU_OP_DC_RDMA_WRITE_FIRST			= 0x46,
	ROCEMU_OP_DC_RDMA_WRITE_MIDDLE			= 0x47,
	ROCEMU_OP_DC_RDMA_WRITE_LAST			= 0x48,
	ROCEMU_OP_DC_RDMA_WRITE_LAST_WITH_IMMEDIATE	= 0x49,
	ROCEMU_OP_DC_RDMA_WRITE_ONLY			= 0x4a,
	ROCEMU_OP_DC_RDMA_WRITE_ONLY_WITH_IMMEDIATE	= 0x4b,
	ROCEMU_OP_DC_RDMA_READ_REQUEST			= 0x4c,
	ROCEMU_OP_DC_RDMA_READ_RESPONSE_FIRST		= 0x4d,
	ROCEMU_OP_DC_RDMA_READ_RESPONSE_MIDDLE		= 0x4e,
	ROCEMU_OP_DC_RDMA_READ_RESPONSE_LAST		= 0x4f,
	ROCEMU_OP_DC_RDMA_READ_RESPONSE_ONLY		= 0x50,
	ROCEMU_OP_DC_ACKNOWLEDGE			= 0x51,
	ROCEMU_OP_DC_ATOMIC_ACKNOWLEDGE			= 0x52,
	ROCEMU_OP_DC_COMPARE_SWAP			= 0x53,
	ROCEMU_OP_DC_FETCH_ADD				= 0x54,
};

/* Headers a packet may carry, in the order they appear on the wire. */
enum rocemu_hdr {
	ROCEMU_HDR_BTH,
	ROCEMU_HDR_DCETH,	/* DC: 8 bytes Wireshark counts into a DC packet's BTH */
	ROCEMU_HDR_RDETH,
	ROCEMU_HDR_DETH,
	ROCEMU_HDR_XRCETH,
	ROCEMU_HDR_RETH,
	ROCEMU_HDR_ATMETH,
	ROCEMU_HDR_AETH,
	ROCEMU_HDR_ATMACK,
	ROCEMU_HDR_IMMDT,
	ROCEMU_HDR_IETH,
	ROCEMU_HDR_PAYLOAD,	/* not a header: offset[] gives where data starts */
	ROCEMU_HDR_COUNT,
};

/* Header sizes in bytes (IBTA 9.2, 9.3). */
#define ROCEMU_BTH_BYTES    12
#define ROCEMU_DCETH_BYTES   8
#define ROCEMU_RDETH_BYTES   4
#define ROCEMU_DETH_BYTES    8
#define ROCEMU_XRCETH_BYTES  4
#define ROCEMU_RETH_BYTES   16
#define ROCEMU_ATMETH_BYTES 28
#define ROCEMU_AETH_BYTES    4
#define ROCEMU_ATMACK_BYTES  8
#define ROCEMU_IMMDT_BYTES   4
#define ROCEMU_IETH_BYTES    4
#define ROCEMU_ICRC_BYTES    4

#define ROCEMU_HDRM(h) (1u << ROCEMU_HDR_##h)
#define ROCEMU_HDRM_BTH     ROCEMU_HDRM(BTH)
#define ROCEMU_HDRM_DCETH   ROCEMU_HDRM(DCETH)
#define ROCEMU_HDRM_RDETH   ROCEMU_HDRM(RDETH)
#define ROCEMU_HDRM_DETH    ROCEMU_HDRM(DETH)
#define ROCEMU_HDRM_XRCETH  ROCEMU_HDRM(XRCETH)
#define ROCEMU_HDRM_RETH    ROCEMU_HDRM(RETH)
#define ROCEMU_HDRM_ATMETH  ROCEMU_HDRM(ATMETH)
#define ROCEMU_HDRM_AETH    ROCEMU_HDRM(AETH)
#define ROCEMU_HDRM_ATMACK  ROCEMU_HDRM(ATMACK)
#define ROCEMU_HDRM_IMMDT   ROCEMU_HDRM(IMMDT)
#define ROCEMU_HDRM_IETH    ROCEMU_HDRM(IETH)
#define ROCEMU_HDRM_PAYLOAD ROCEMU_HDRM(PAYLOAD)

/*
 * What an opcode means, for engines that test properties instead of
 * listing opcodes. REQ: requester to responder; RESP: responder to
 * requester (acknowledges, read responses, atomic acknowledge). READ and
 * ATOMIC mark both the request and its response, so "READ and RESP" is a
 * read response. ACK marks the two Acknowledge opcodes.
 */
enum rocemu_opcode_flag {
	ROCEMU_OPF_REQ		= 1u << 0,
	ROCEMU_OPF_RESP		= 1u << 1,
	ROCEMU_OPF_START	= 1u << 2,	/* first packet of a message */
	ROCEMU_OPF_MIDDLE	= 1u << 3,
	ROCEMU_OPF_END		= 1u << 4,	/* last packet (ONLY = START|END) */
	ROCEMU_OPF_SEND		= 1u << 5,
	ROCEMU_OPF_WRITE	= 1u << 6,
	ROCEMU_OPF_READ		= 1u << 7,
	ROCEMU_OPF_ATOMIC	= 1u << 8,
	ROCEMU_OPF_IMM		= 1u << 9,
	ROCEMU_OPF_INV		= 1u << 10,
	ROCEMU_OPF_ACK		= 1u << 11,
	ROCEMU_OPF_RC		= 1u << 12,
	ROCEMU_OPF_UC		= 1u << 13,
	ROCEMU_OPF_UD		= 1u << 14,
	ROCEMU_OPF_XRC		= 1u << 15,
	ROCEMU_OPF_DC		= 1u << 16,
};

struct rocemu_opcode_info {
	const char *name;		/* Wireshark's, e.g. "RC Send Only" */
	uint16_t hdr_mask;		/* ROCEMU_HDRM_* */
	uint32_t flags;			/* ROCEMU_OPF_* */
	uint8_t length;			/* BTH + extension headers, bytes */
	/* From the BTH; 0 when absent; offset[PAYLOAD] == length always. */
	uint8_t offset[ROCEMU_HDR_COUNT];
};

/* Indexed by opcode; entries of unknown opcodes have name NULL. */
extern const struct rocemu_opcode_info rocemu_opcode_table[256];

/* Properties of opcode op, or NULL when rocemu does not know it. */
static inline const struct rocemu_opcode_info *rocemu_opcode_info(uint8_t op)
{
	const struct rocemu_opcode_info *info = &rocemu_opcode_table[op];

	return info->name ? info : NULL;
}

/* Name of opcode op, "Unknown" when rocemu does not know it. */
static inline const char *rocemu_opcode_name(uint8_t op)
{
	const struct rocemu_opcode_info *info = rocemu_opcode_info(op);

	return info ? info->name : "Unknown";
}

/* Name of the transport opcode op belongs to: "RC", "UD"... */
static inline const char *rocemu_op_transport_name(uint8_t op)
{
	static const char *const names[] = { "RC", "UC", "DC", "UD", "CNP", "XRC",
					     "vendor", "vendor" };

	return names[(op & ROCEMU_OP_TRANSPORT_MASK) >> ROCEMU_OP_TRANSPORT_SHIFT];
}

/* Size in bytes of header h (ROCEMU_HDR_*; 0 for PAYLOAD). */
static inline size_t rocemu_hdr_bytes(enum rocemu_hdr h)
{
	static const uint8_t bytes[ROCEMU_HDR_COUNT] = {
		[ROCEMU_HDR_BTH] = ROCEMU_BTH_BYTES,
		[ROCEMU_HDR_DCETH] = ROCEMU_DCETH_BYTES,
		[ROCEMU_HDR_RDETH] = ROCEMU_RDETH_BYTES,
		[ROCEMU_HDR_DETH] = ROCEMU_DETH_BYTES,
		[ROCEMU_HDR_XRCETH] = ROCEMU_XRCETH_BYTES,
		[ROCEMU_HDR_RETH] = ROCEMU_RETH_BYTES,
		[ROCEMU_HDR_ATMETH] = ROCEMU_ATMETH_BYTES,
		[ROCEMU_HDR_AETH] = ROCEMU_AETH_BYTES,
		[ROCEMU_HDR_ATMACK] = ROCEMU_ATMACK_BYTES,
		[ROCEMU_HDR_IMMDT] = ROCEMU_IMMDT_BYTES,
		[ROCEMU_HDR_IETH] = ROCEMU_IETH_BYTES,
	};

	return h < ROCEMU_HDR_COUNT ? bytes[h] : 0;
}

#endif /* ROCEMU_NET_ROCE_OPCODE_H */
