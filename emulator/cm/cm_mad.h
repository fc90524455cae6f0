/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Communication Management MADs (IBTA vol. 1 chapter 12) as they travel
 * on QP1 over RoCEv2: a UD SEND to QP 1 with the GSI Q_Key, carrying a
 * 256-byte MAD of the CM class. Fields are read and written through the
 * byte offsets of the spec's tables (the kernel's ibta_vol1_c12.h), each
 * counted here from the start of the MAD.
 */
#ifndef ROCEMU_EMULATOR_CM_MAD_H
#define ROCEMU_EMULATOR_CM_MAD_H

#include <stdint.h>
#include <netinet/in.h>

#include "net/roce/roce_hdr.h"

struct rocemu_device;

#define CM_MAD_BYTES 256
#define CM_GSI_QPN 1
#define CM_GSI_QKEY 0x80010000u
#define CM_PKEY_DEFAULT 0xffff

/* MAD common header (IBTA 13.4.3) */
#define MAD_BASE_VERSION 1
#define MAD_CLASS_CM 0x07
#define MAD_CM_CLASS_VERSION 2
#define MAD_METHOD_SEND 0x03
#define MAD_OFF_BASE_VERSION 0
#define MAD_OFF_CLASS 1
#define MAD_OFF_CLASS_VERSION 2
#define MAD_OFF_METHOD 3
#define MAD_OFF_TID 8
#define MAD_OFF_ATTR_ID 16
#define MAD_OFF_ATTR_MOD 20	/* REQ, REP: the ECE options (the kernel's cm_format_req) */
#define MAD_HDR_BYTES 24

/* CM attribute IDs (IBTA table 103) */
enum cm_attr {
	CM_ATTR_REQ = 0x0010,
	CM_ATTR_MRA = 0x0011,
	CM_ATTR_REJ = 0x0012,
	CM_ATTR_REP = 0x0013,
	CM_ATTR_RTU = 0x0014,
	CM_ATTR_DREQ = 0x0015,
	CM_ATTR_DREP = 0x0016,
	CM_ATTR_SIDR_REQ = 0x0017,
	CM_ATTR_SIDR_REP = 0x0018,
};

/* Byte offsets in the MAD of each message's fields (tables 106-113). */
#define CM_OFF(x) (MAD_HDR_BYTES + (x))
#define CM_LOCAL_COMM_ID CM_OFF(0)		/* every message but REQ's is its first field too */
#define CM_REMOTE_COMM_ID CM_OFF(4)
/* REQ */
#define CM_REQ_VENDOR_ID CM_OFF(5)		/* 24 bits: the ECE vendor */
#define CM_REQ_SERVICE_ID CM_OFF(8)
#define CM_REQ_LOCAL_CA_GUID CM_OFF(16)
#define CM_REQ_LOCAL_QKEY CM_OFF(28)
#define CM_REQ_LOCAL_QPN CM_OFF(32)		/* 24 bits, then responder resources */
#define CM_REQ_RESPONDER_RESOURCES CM_OFF(35)
#define CM_REQ_INITIATOR_DEPTH CM_OFF(39)
#define CM_REQ_TIMEOUT_TYPE_FC CM_OFF(43)	/* remote CM response timeout:5, transport:2, flow control:1 */
#define CM_REQ_STARTING_PSN CM_OFF(44)		/* 24 bits, then local CM response timeout:5, retry:3 */
#define CM_REQ_TIMEOUT_RETRY CM_OFF(47)
#define CM_REQ_PKEY CM_OFF(48)
#define CM_REQ_MTU_RNR CM_OFF(50)		/* MTU:4, RDC:1, RNR retry:3 */
#define CM_REQ_RETRIES_SRQ CM_OFF(51)		/* max CM retries:4, SRQ:1, extended transport:3 */
/* Transport service types (IBTA table 106) and XRC's extended transport type (annex A14) */
#define CM_TST_RC 0
#define CM_TST_UC 1
#define CM_TST_EXTENDED 3
#define CM_ETT_XRC 1
#define CM_REQ_PRIMARY_SLID CM_OFF(52)
#define CM_REQ_PRIMARY_DLID CM_OFF(54)
#define CM_REQ_PRIMARY_SGID CM_OFF(56)
#define CM_REQ_PRIMARY_DGID CM_OFF(72)
#define CM_REQ_PRIMARY_FLOW_RATE CM_OFF(88)	/* flow label:20, resv:6, rate:6 */
#define CM_REQ_PRIMARY_TCLASS CM_OFF(92)
#define CM_REQ_PRIMARY_HOP_LIMIT CM_OFF(93)
#define CM_REQ_PRIMARY_SL CM_OFF(94)		/* SL:4, subnet local:1 */
#define CM_REQ_PRIMARY_ACK_TIMEOUT CM_OFF(95)	/* local ACK timeout:5 */
#define CM_REQ_PRIVATE_DATA CM_OFF(140)
#define CM_REQ_PRIVATE_BYTES 92
/* REJ */
#define CM_REJ_MSG_REJECTED CM_OFF(8)		/* 2 bits: 0 REQ, 1 REP, 2 other */
#define CM_REJ_INFO_LEN CM_OFF(9)		/* 7 bits */
#define CM_REJ_REASON CM_OFF(10)
#define CM_REJ_PRIVATE_DATA CM_OFF(84)
#define CM_REJ_PRIVATE_BYTES 148
/* REP */
#define CM_REP_LOCAL_QKEY CM_OFF(8)
#define CM_REP_LOCAL_QPN CM_OFF(12)
#define CM_REP_LOCAL_EECN CM_OFF(16)		/* 24 bits: an XRC target's QPN (the kernel's cm_format_rep) */
#define CM_REP_VENDOR_ID_H CM_OFF(15)		/* the ECE vendor, a byte after each 24-bit field */
#define CM_REP_VENDOR_ID_M CM_OFF(19)
#define CM_REP_VENDOR_ID_L CM_OFF(23)
#define CM_REP_STARTING_PSN CM_OFF(20)
#define CM_REP_RESPONDER_RESOURCES CM_OFF(24)
#define CM_REP_INITIATOR_DEPTH CM_OFF(25)
#define CM_REP_ACK_DELAY_FO_FC CM_OFF(26)	/* target ACK delay:5, failover:2, flow control:1 */
#define CM_REP_RNR_SRQ CM_OFF(27)		/* RNR retry:3, SRQ:1 */
#define CM_REP_LOCAL_CA_GUID CM_OFF(28)
#define CM_REP_PRIVATE_DATA CM_OFF(36)
#define CM_REP_PRIVATE_BYTES 196
/* RTU, DREQ, DREP */
#define CM_RTU_PRIVATE_DATA CM_OFF(8)
#define CM_RTU_PRIVATE_BYTES 224
#define CM_DREQ_REMOTE_QPN CM_OFF(8)
#define CM_DREQ_PRIVATE_DATA CM_OFF(12)
#define CM_DREQ_PRIVATE_BYTES 220
#define CM_DREP_PRIVATE_DATA CM_OFF(8)
#define CM_DREP_PRIVATE_BYTES 224

/* SIDR_REQ, SIDR_REP (tables 119, 120) */
#define CM_SIDR_REQUEST_ID CM_OFF(0)
#define CM_SIDR_REQ_PKEY CM_OFF(4)
#define CM_SIDR_REQ_SERVICE_ID CM_OFF(8)
#define CM_SIDR_REQ_PRIVATE_DATA CM_OFF(16)
#define CM_SIDR_REQ_PRIVATE_BYTES 216
#define CM_SIDR_REP_STATUS CM_OFF(4)
#define CM_SIDR_REP_VENDOR_ID_H CM_OFF(6)	/* 16 bits: the ECE vendor's high two bytes */
#define CM_SIDR_REP_QPN CM_OFF(8)		/* 24 bits, then the ECE vendor's low byte */
#define CM_SIDR_REP_VENDOR_ID_L CM_OFF(11)
#define CM_SIDR_REP_SERVICE_ID CM_OFF(12)
#define CM_SIDR_REP_QKEY CM_OFF(20)
#define CM_SIDR_REP_PRIVATE_DATA CM_OFF(96)
#define CM_SIDR_REP_PRIVATE_BYTES 136
/* SIDR_REP status values (IBTA table 121) */
#define CM_SIDR_SUCCESS 0
#define CM_SIDR_UNSUPPORTED 1
#define CM_SIDR_REJECT 2

/* REJ reasons (IBTA table 112) the CM uses */
#define CM_REJ_TIMEOUT 1
#define CM_REJ_INVALID_SERVICE_ID 8
#define CM_REJ_STALE_CONN 10
#define CM_REJ_CONSUMER_DEFINED 28
/* MsgRejected values */
#define CM_REJ_MSG_REQ 0
#define CM_REJ_MSG_REP 1
#define CM_REJ_MSG_OTHER 2

/*
 * The RDMA CM's IP service IDs and the header it puts first in a REQ's
 * private data (the kernel's cma.c): version 0, IP version in the high
 * nibble, the source port, then source and destination addresses, IPv4
 * in the last 4 bytes of 16.
 */
#define CMA_SERVICE_ID_PS_SHIFT 16
#define CMA_SERVICE_ID_PREFIX 0x0000000001000000ull
#define CMA_HDR_BYTES 36
#define CMA_HDR_VERSION 0x00
#define CMA_HDR_IPV4 0x40
#define CMA_HDR_OFF_VERSION 0
#define CMA_HDR_OFF_IP_VERSION 1
#define CMA_HDR_OFF_PORT 2
#define CMA_HDR_OFF_SRC_V4 16
#define CMA_HDR_OFF_DST_V4 32

static inline uint64_t cma_service_id(uint16_t ps, uint16_t port)
{
	return ((uint64_t)ps << CMA_SERVICE_ID_PS_SHIFT) | port;
}

/* The port space of an RDMA CM IP service ID, or 0 for another service. */
static inline uint16_t cma_service_ps(uint64_t sid)
{
	if ((sid & ~0xffffffull) != CMA_SERVICE_ID_PREFIX)
		return 0;
	return (uint16_t)(sid >> CMA_SERVICE_ID_PS_SHIFT);
}

static inline uint16_t cm_mad_attr(const uint8_t *mad) { return rocemu_get_be16(&mad[MAD_OFF_ATTR_ID]); }

/* A fresh MAD of attribute attr and transaction tid, all fields 0. */
void cm_mad_init(uint8_t *mad, enum cm_attr attr, uint64_t tid);

/* Whether mad (len bytes) is a CM class SEND MAD this CM speaks. */
bool cm_mad_valid(const uint8_t *mad, size_t len);

/*
 * Send mad from dev's QP1 to QP1 at daddr (network order), as a RoCEv2
 * UD SEND ONLY with the GSI Q_Key: counted, captured, fault-injected like
 * every datagram of dev. Returns 0 or -errno.
 */
int cm_mad_send(struct rocemu_device *dev, uint32_t daddr, const uint8_t *mad);

/* Text name of a CM attribute, for logs ("REQ"...). */
const char *cm_attr_name(uint16_t attr);

#endif /* ROCEMU_EMULATOR_CM_MAD_H */
