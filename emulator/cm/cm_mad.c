/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/cm/cm_mad.h"

#include <errno.h>
#include <string.h>

#include "emulator/core/device.h"
#include "emulator/core/sport.h"
#include "emulator/engine/egress.h"
#include "net/roce/icrc.h"
#include "net/roce/roce_opcode.h"
#include "net/roce/roce_text.h"
#include "net/udp/udp_port.h"

#define CM_PKT_MAX (ROCEMU_BTH_BYTES + ROCEMU_DETH_BYTES + CM_MAD_BYTES + ROCEMU_ICRC_BYTES)

/* QP1's next PSN per device (a UD QP's PSN only numbers its datagrams). */
static uint32_t gsi_psn[ROCEMU_MAX_DEVICES];

void cm_mad_init(uint8_t *mad, enum cm_attr attr, uint64_t tid)
{
	memset(mad, 0, CM_MAD_BYTES);
	mad[MAD_OFF_BASE_VERSION] = MAD_BASE_VERSION;
	mad[MAD_OFF_CLASS] = MAD_CLASS_CM;
	mad[MAD_OFF_CLASS_VERSION] = MAD_CM_CLASS_VERSION;
	mad[MAD_OFF_METHOD] = MAD_METHOD_SEND;
	rocemu_put_be64(&mad[MAD_OFF_TID], tid);
	rocemu_put_be16(&mad[MAD_OFF_ATTR_ID], attr);
}

bool cm_mad_valid(const uint8_t *mad, size_t len)
{
	return len >= CM_MAD_BYTES && mad[MAD_OFF_BASE_VERSION] == MAD_BASE_VERSION &&
	       mad[MAD_OFF_CLASS] == MAD_CLASS_CM &&
	       mad[MAD_OFF_CLASS_VERSION] == MAD_CM_CLASS_VERSION &&
	       mad[MAD_OFF_METHOD] == MAD_METHOD_SEND;
}

int cm_mad_send(struct rocemu_device *dev, uint32_t daddr, const uint8_t *mad)
{
	const struct rocemu_opcode_info *info = rocemu_opcode_info(ROCEMU_OP_UD_SEND_ONLY);
	struct rocemu_ipv4_udp flow = { .saddr = dev->ipv4, .daddr = daddr,
					.dport = htons(ROCEMU_ROCEV2_PORT) };
	uint8_t pkt[CM_PKT_MAX], *deth;
	uint16_t sport;
	size_t len;
	int fd, err;

	memset(pkt, 0, info->length);
	rocemu_bth_set_opcode(pkt, ROCEMU_OP_UD_SEND_ONLY);
	rocemu_bth_set_tver(pkt, ROCEMU_BTH_TVER);
	rocemu_bth_set_pkey(pkt, CM_PKEY_DEFAULT);
	rocemu_bth_set_destqp(pkt, CM_GSI_QPN);
	rocemu_bth_set_psn(pkt, gsi_psn[dev->index]);
	gsi_psn[dev->index] = rocemu_psn_add(gsi_psn[dev->index], 1);
	deth = rocemu_pkt_deth(pkt);
	rocemu_deth_set_qkey(deth, CM_GSI_QKEY);
	rocemu_deth_set_src_qp(deth, CM_GSI_QPN);
	memcpy(pkt + info->length, mad, CM_MAD_BYTES);
	fd = rocemu_sport_get(dev, CM_GSI_QPN, CM_GSI_QPN, &sport);
	flow.sport = htons(sport);
	len = rocemu_icrc_append_v4(&flow, pkt, info->length + CM_MAD_BYTES, rocemu_ipv4_send_id(0));
	err = rocemu_egress_send(dev, fd, &flow, pkt, len, 0);
	rocemu_sport_put(dev, sport);
	return err;
}

const char *cm_attr_name(uint16_t attr)
{
	return rocemu_cm_attr_name(attr);
}
