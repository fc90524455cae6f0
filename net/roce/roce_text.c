/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "net/roce/roce_text.h"

#include <stdio.h>

#include "net/roce/roce_hdr.h"

#define MAD_ATTR_ID_OFFSET 16	/* in the common MAD header (IBTA 13.4.2) */
#define CM_ATTR_FIRST 0x0010
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

void rocemu_aeth_text(uint8_t syndrome, char *buf, size_t cap)
{
	static const char *const naks[] = {
		[ROCEMU_NAK_PSN_SEQ_ERROR] = "PSN sequence error",
		[ROCEMU_NAK_INVALID_REQUEST] = "invalid request",
		[ROCEMU_NAK_REMOTE_ACCESS_ERROR] = "remote access error",
		[ROCEMU_NAK_REMOTE_OP_ERROR] = "remote operational error",
		[ROCEMU_NAK_INVALID_RD_REQUEST] = "invalid RD request",
	};
	uint8_t value = rocemu_aeth_syndrome_value(syndrome);

	switch (rocemu_aeth_syndrome_type(syndrome)) {
	case ROCEMU_AETH_ACK:
		snprintf(buf, cap, "ACK");
		break;
	case ROCEMU_AETH_RNR_NAK:
		snprintf(buf, cap, "RNR NAK %.2f ms", rocemu_rnr_timer_to_us(value) / 1000.0);
		break;
	case ROCEMU_AETH_NAK:
		snprintf(buf, cap, "NAK %s", value < ARRAY_SIZE(naks) ? naks[value] : "reserved code");
		break;
	default:
		snprintf(buf, cap, "reserved syndrome 0x%02x", syndrome);
	}
}

const char *rocemu_cm_attr_name(uint16_t attr)
{
	static const char *const names[] = { "REQ", "MRA", "REJ", "REP", "RTU", "DREQ", "DREP",
					     "SIDR_REQ", "SIDR_REP" };

	if (attr < CM_ATTR_FIRST || attr >= CM_ATTR_FIRST + ARRAY_SIZE(names))
		return "?";
	return names[attr - CM_ATTR_FIRST];
}

uint16_t rocemu_mad_attr(const uint8_t *mad, size_t len)
{
	return len >= MAD_ATTR_ID_OFFSET + 2 ? rocemu_get_be16(mad + MAD_ATTR_ID_OFFSET) : 0;
}
