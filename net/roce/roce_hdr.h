/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * RoCEv2 transport headers on a byte buffer. Two layers, as in Soft-RoCE:
 * rocemu_<hdr>_<field>() read and rocemu_<hdr>_set_<field>() write one
 * big-endian field of a header at any alignment (values in host order);
 * rocemu_pkt_<hdr>() finds that header in a packet through the opcode
 * table. A "packet" is the UDP payload: it starts at the BTH.
 */
#ifndef ROCEMU_NET_ROCE_HDR_H
#define ROCEMU_NET_ROCE_HDR_H

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "net/roce/roce_opcode.h"

/* ---- byte order at any alignment ---- */

static inline uint16_t rocemu_get_be16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return be16toh(v);
}

static inline uint32_t rocemu_get_be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t rocemu_get_be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

static inline uint64_t rocemu_get_be64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

static inline void rocemu_put_be16(uint8_t *p, uint16_t v)
{
	v = htobe16(v);
	memcpy(p, &v, sizeof(v));
}

/* Stores the low 24 bits of v. */
static inline void rocemu_put_be24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static inline void rocemu_put_be32(uint8_t *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void rocemu_put_be64(uint8_t *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, sizeof(v));
}

/* Bits [shift, shift + width) of one byte, MSB = bit 7. */
static inline uint8_t rocemu_get_bits(const uint8_t *p, unsigned int shift,
				      unsigned int width)
{
	return (uint8_t)((*p >> shift) & ((1u << width) - 1));
}

/* Writes those bits from v, leaving the other bits of the byte alone. */
static inline void rocemu_set_bits(uint8_t *p, unsigned int shift,
				   unsigned int width, unsigned int v)
{
	unsigned int mask = ((1u << width) - 1) << shift;

	*p = (uint8_t)((*p & ~mask) | ((v << shift) & mask));
}

/* ---- BTH (IBTA 9.2): opcode; SE M PadCnt TVer; P_Key; F B resv DestQP; A resv PSN ---- */

#define ROCEMU_QPN_MASK 0xffffffu
#define ROCEMU_PSN_MASK 0xffffffu
#define ROCEMU_BTH_TVER 0	/* the only transport version (IBTA 9.2) */

static inline uint8_t rocemu_bth_opcode(const uint8_t *bth) { return bth[0]; }
static inline void rocemu_bth_set_opcode(uint8_t *bth, uint8_t v) { bth[0] = v; }
static inline bool rocemu_bth_se(const uint8_t *bth) { return rocemu_get_bits(&bth[1], 7, 1); }
static inline void rocemu_bth_set_se(uint8_t *bth, bool v) { rocemu_set_bits(&bth[1], 7, 1, v); }
static inline bool rocemu_bth_m(const uint8_t *bth) { return rocemu_get_bits(&bth[1], 6, 1); }
static inline void rocemu_bth_set_m(uint8_t *bth, bool v) { rocemu_set_bits(&bth[1], 6, 1, v); }
static inline uint8_t rocemu_bth_padcnt(const uint8_t *bth) { return rocemu_get_bits(&bth[1], 4, 2); }
static inline void rocemu_bth_set_padcnt(uint8_t *bth, uint8_t v) { rocemu_set_bits(&bth[1], 4, 2, v); }
static inline uint8_t rocemu_bth_tver(const uint8_t *bth) { return rocemu_get_bits(&bth[1], 0, 4); }
static inline void rocemu_bth_set_tver(uint8_t *bth, uint8_t v) { rocemu_set_bits(&bth[1], 0, 4, v); }
static inline uint16_t rocemu_bth_pkey(const uint8_t *bth) { return rocemu_get_be16(&bth[2]); }
static inline void rocemu_bth_set_pkey(uint8_t *bth, uint16_t v) { rocemu_put_be16(&bth[2], v); }
static inline bool rocemu_bth_fecn(const uint8_t *bth) { return rocemu_get_bits(&bth[4], 7, 1); }
static inline void rocemu_bth_set_fecn(uint8_t *bth, bool v) { rocemu_set_bits(&bth[4], 7, 1, v); }
static inline bool rocemu_bth_becn(const uint8_t *bth) { return rocemu_get_bits(&bth[4], 6, 1); }
static inline void rocemu_bth_set_becn(uint8_t *bth, bool v) { rocemu_set_bits(&bth[4], 6, 1, v); }
static inline uint32_t rocemu_bth_destqp(const uint8_t *bth) { return rocemu_get_be24(&bth[5]); }
static inline void rocemu_bth_set_destqp(uint8_t *bth, uint32_t v) { rocemu_put_be24(&bth[5], v); }
static inline bool rocemu_bth_ackreq(const uint8_t *bth) { return rocemu_get_bits(&bth[8], 7, 1); }
static inline void rocemu_bth_set_ackreq(uint8_t *bth, bool v) { rocemu_set_bits(&bth[8], 7, 1, v); }
static inline uint32_t rocemu_bth_psn(const uint8_t *bth) { return rocemu_get_be24(&bth[9]); }
static inline void rocemu_bth_set_psn(uint8_t *bth, uint32_t v) { rocemu_put_be24(&bth[9], v); }

/* PSN arithmetic is modulo 2^24 (IBTA 9.7). */
static inline uint32_t rocemu_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & ROCEMU_PSN_MASK;
}

/* a - b as a signed distance in [-2^23, 2^23): < 0 when a is older than b. */
static inline int32_t rocemu_psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

/* ---- RETH (IBTA 9.3): VA(64) R_Key(32) DMA length(32) ---- */

static inline uint64_t rocemu_reth_va(const uint8_t *h) { return rocemu_get_be64(&h[0]); }
static inline void rocemu_reth_set_va(uint8_t *h, uint64_t v) { rocemu_put_be64(&h[0], v); }
static inline uint32_t rocemu_reth_rkey(const uint8_t *h) { return rocemu_get_be32(&h[8]); }
static inline void rocemu_reth_set_rkey(uint8_t *h, uint32_t v) { rocemu_put_be32(&h[8], v); }
static inline uint32_t rocemu_reth_dma_len(const uint8_t *h) { return rocemu_get_be32(&h[12]); }
static inline void rocemu_reth_set_dma_len(uint8_t *h, uint32_t v) { rocemu_put_be32(&h[12], v); }

/* ---- AETH (IBTA 9.3): syndrome(8) MSN(24) ---- */

static inline uint8_t rocemu_aeth_syndrome(const uint8_t *h) { return h[0]; }
static inline void rocemu_aeth_set_syndrome(uint8_t *h, uint8_t v) { h[0] = v; }
static inline uint32_t rocemu_aeth_msn(const uint8_t *h) { return rocemu_get_be24(&h[1]); }
static inline void rocemu_aeth_set_msn(uint8_t *h, uint32_t v) { rocemu_put_be24(&h[1], v); }

/* ---- AtomicETH (IBTA 9.3): VA(64) R_Key(32) swap/add(64) compare(64) ---- */

static inline uint64_t rocemu_atmeth_va(const uint8_t *h) { return rocemu_get_be64(&h[0]); }
static inline void rocemu_atmeth_set_va(uint8_t *h, uint64_t v) { rocemu_put_be64(&h[0], v); }
static inline uint32_t rocemu_atmeth_rkey(const uint8_t *h) { return rocemu_get_be32(&h[8]); }
static inline void rocemu_atmeth_set_rkey(uint8_t *h, uint32_t v) { rocemu_put_be32(&h[8], v); }
static inline uint64_t rocemu_atmeth_swap_add(const uint8_t *h) { return rocemu_get_be64(&h[12]); }
static inline void rocemu_atmeth_set_swap_add(uint8_t *h, uint64_t v) { rocemu_put_be64(&h[12], v); }
static inline uint64_t rocemu_atmeth_compare(const uint8_t *h) { return rocemu_get_be64(&h[20]); }
static inline void rocemu_atmeth_set_compare(uint8_t *h, uint64_t v) { rocemu_put_be64(&h[20], v); }

/* ---- AtomicAckETH (IBTA 9.3): original remote data(64) ---- */

static inline uint64_t rocemu_atmack_orig(const uint8_t *h) { return rocemu_get_be64(&h[0]); }
static inline void rocemu_atmack_set_orig(uint8_t *h, uint64_t v) { rocemu_put_be64(&h[0], v); }

/* ---- XRCETH (IBTA 9.3.6): resv(8) XRC SRQ number(24) ---- */

static inline uint32_t rocemu_xrceth_srqn(const uint8_t *h) { return rocemu_get_be24(&h[1]); }
static inline void rocemu_xrceth_set_srqn(uint8_t *h, uint32_t v) { rocemu_put_be24(&h[1], v); }

/*
 * ---- DCETH (mlx5 DC, rocemu's encoding): the DC access key(64) of a
 * request, 0 on responses; Wireshark skips these 8 bytes as part of the BTH ----
 */

static inline uint64_t rocemu_dceth_key(const uint8_t *h) { return rocemu_get_be64(&h[0]); }
static inline void rocemu_dceth_set_key(uint8_t *h, uint64_t v) { rocemu_put_be64(&h[0], v); }

/*
 * ---- RDETH (IBTA 9.3.2): resv(8) EE context(24). DC has no EE context:
 * rocemu puts there the number of the DCI's connection a request belongs
 * to, and marks the connection's first PSN in bit 0 of resv ----
 */

#define ROCEMU_RDETH_DC_CONNECT 0x01

static inline bool rocemu_rdeth_dc_connect(const uint8_t *h) { return h[0] & ROCEMU_RDETH_DC_CONNECT; }
static inline uint32_t rocemu_rdeth_eecn(const uint8_t *h) { return rocemu_get_be24(&h[1]); }
static inline void rocemu_rdeth_set_eecn(uint8_t *h, uint32_t v) { rocemu_put_be24(&h[1], v); }
static inline void rocemu_rdeth_set_dc_connect(uint8_t *h, bool v)
{
	h[0] = (uint8_t)((h[0] & ~ROCEMU_RDETH_DC_CONNECT) | (v ? ROCEMU_RDETH_DC_CONNECT : 0));
}

/* ---- DETH (IBTA 9.3): Q_Key(32) resv(8) source QP(24) ---- */

static inline uint32_t rocemu_deth_qkey(const uint8_t *h) { return rocemu_get_be32(&h[0]); }
static inline void rocemu_deth_set_qkey(uint8_t *h, uint32_t v) { rocemu_put_be32(&h[0], v); }
static inline uint32_t rocemu_deth_src_qp(const uint8_t *h) { return rocemu_get_be24(&h[5]); }
static inline void rocemu_deth_set_src_qp(uint8_t *h, uint32_t v) { rocemu_put_be24(&h[5], v); }

/* ---- ImmDt and IETH (IBTA 9.3): one 32-bit field each ---- */

/* Host order; verbs hand imm_data around in network order (htobe32 it). */
static inline uint32_t rocemu_immdt_imm(const uint8_t *h) { return rocemu_get_be32(h); }
static inline void rocemu_immdt_set_imm(uint8_t *h, uint32_t v) { rocemu_put_be32(h, v); }
static inline uint32_t rocemu_ieth_rkey(const uint8_t *h) { return rocemu_get_be32(h); }
static inline void rocemu_ieth_set_rkey(uint8_t *h, uint32_t v) { rocemu_put_be32(h, v); }

/* ---- AETH syndrome (IBTA 9.7.5, AETH syndrome encoding) ---- */

/* Bits 7:5 of the syndrome. */
enum rocemu_aeth_type {
	ROCEMU_AETH_ACK		= 0,	/* bits 4:0: credit count */
	ROCEMU_AETH_RNR_NAK	= 1,	/* bits 4:0: RNR timer code */
	ROCEMU_AETH_NAK		= 3,	/* bits 4:0: enum rocemu_nak_code */
};

enum rocemu_nak_code {
	ROCEMU_NAK_PSN_SEQ_ERROR	= 0,
	ROCEMU_NAK_INVALID_REQUEST	= 1,
	ROCEMU_NAK_REMOTE_ACCESS_ERROR	= 2,
	ROCEMU_NAK_REMOTE_OP_ERROR	= 3,
	ROCEMU_NAK_INVALID_RD_REQUEST	= 4,
};

#define ROCEMU_AETH_CREDITS_INVALID 0x1f	/* no end-to-end credits */

static inline uint8_t rocemu_aeth_syndrome_make(enum rocemu_aeth_type type, uint8_t value)
{
	return (uint8_t)((unsigned int)type << 5 | (value & 0x1f));
}

static inline enum rocemu_aeth_type rocemu_aeth_syndrome_type(uint8_t syndrome)
{
	return (enum rocemu_aeth_type)(syndrome >> 5);
}

/* Credits, RNR timer code or NAK code, by type. */
static inline uint8_t rocemu_aeth_syndrome_value(uint8_t syndrome)
{
	return syndrome & 0x1f;
}

/* ---- timers ---- */

#define ROCEMU_RNR_TIMER_CODES 32

/* RNR NAK timer code -> microseconds (IBTA 9.7.5); code 0 is the longest. */
extern const uint32_t rocemu_rnr_timer_us[ROCEMU_RNR_TIMER_CODES];

static inline uint32_t rocemu_rnr_timer_to_us(uint8_t code)
{
	return rocemu_rnr_timer_us[code % ROCEMU_RNR_TIMER_CODES];
}

/* Local ACK timeout 4.096 us * 2^timeout in ns; 0 means infinite (IBTA 9.7). */
static inline uint64_t rocemu_ack_timeout_ns(uint8_t timeout)
{
	return timeout ? 4096ull << (timeout & 31) : 0;
}

/* ---- packet level: headers found through the opcode table ---- */

static inline const struct rocemu_opcode_info *rocemu_pkt_info(const uint8_t *pkt)
{
	return rocemu_opcode_info(rocemu_bth_opcode(pkt));
}

/* Header h of packet pkt, or NULL when its opcode does not carry it. */
static inline uint8_t *rocemu_pkt_hdr(uint8_t *pkt, enum rocemu_hdr h)
{
	const struct rocemu_opcode_info *info = rocemu_pkt_info(pkt);

	if (!info || !(info->hdr_mask & (1u << h)))
		return NULL;
	return pkt + info->offset[h];
}

static inline uint8_t *rocemu_pkt_dceth(uint8_t *pkt) { return rocemu_pkt_hdr(pkt, ROCEMU_HDR_DCETH); }
static inline uint8_t *rocemu_pkt_rdeth(uint8_t *pkt) { return rocemu_pkt_hdr(pkt, ROCEMU_HDR_RDETH); }
static inline uint8_t *rocemu_pkt_deth(uint8_t *pkt) { return rocemu_pkt_hdr(pkt, ROCEMU_HDR_DETH); }
static inline uint8_t *rocemu_pkt_xrceth(uint8_t *pkt) { return rocemu_pkt_hdr(pkt, ROCEMU_HDR_XRCETH); }
static inline uint8_t *rocemu_pkt_reth(uint8_t *pkt) { return rocemu_pkt_hdr(pkt, ROCEMU_HDR_RETH); }
static inline uint8_t *rocemu_pkt_atmeth(uint8_t *pkt) { return rocemu_pkt_hdr(pkt, ROCEMU_HDR_ATMETH); }
static inline uint8_t *rocemu_pkt_aeth(uint8_t *pkt) { return rocemu_pkt_hdr(pkt, ROCEMU_HDR_AETH); }
static inline uint8_t *rocemu_pkt_atmack(uint8_t *pkt) { return rocemu_pkt_hdr(pkt, ROCEMU_HDR_ATMACK); }
static inline uint8_t *rocemu_pkt_immdt(uint8_t *pkt) { return rocemu_pkt_hdr(pkt, ROCEMU_HDR_IMMDT); }
static inline uint8_t *rocemu_pkt_ieth(uint8_t *pkt) { return rocemu_pkt_hdr(pkt, ROCEMU_HDR_IETH); }
static inline uint8_t *rocemu_pkt_payload(uint8_t *pkt) { return rocemu_pkt_hdr(pkt, ROCEMU_HDR_PAYLOAD); }

/* Pad bytes that bring a payload of paylen bytes to a 4-byte boundary. */
static inline uint8_t rocemu_pad_bytes(size_t paylen)
{
	return (uint8_t)(-paylen & 3);
}

/* Packet bytes (BTH to ICRC included) for opcode info carrying paylen bytes. */
static inline size_t rocemu_pkt_wire_len(const struct rocemu_opcode_info *info, size_t paylen)
{
	return info->length + paylen + rocemu_pad_bytes(paylen) + ROCEMU_ICRC_BYTES;
}

/*
 * Payload bytes of a packet of len bytes (BTH to ICRC included), pad and
 * ICRC excluded. Returns the count, -EPROTO for an unknown opcode or a
 * transport version other than 0, -EINVAL when len does not fit the
 * opcode's headers, pad and ICRC or is not a multiple of
 * 4, or when an opcode without payload carries some.
 */
static inline ssize_t rocemu_pkt_payload_len(const uint8_t *pkt, size_t len)
{
	const struct rocemu_opcode_info *info;
	size_t overhead;

	if (len < ROCEMU_BTH_BYTES + ROCEMU_ICRC_BYTES)
		return -EINVAL;
	info = rocemu_pkt_info(pkt);
	if (!info || rocemu_bth_tver(pkt) != ROCEMU_BTH_TVER)
		return -EPROTO;
	overhead = info->length + rocemu_bth_padcnt(pkt) + ROCEMU_ICRC_BYTES;
	if (len < overhead || len % 4)
		return -EINVAL;
	if (!(info->hdr_mask & ROCEMU_HDRM_PAYLOAD) && len != overhead)
		return -EINVAL;
	return (ssize_t)(len - overhead);
}

#endif /* ROCEMU_NET_ROCE_HDR_H */
