/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/engine/transport.h"

#include "emulator/obj/qp.h"
#include "emulator/ring/format.h"
#include "rocemu/log.h"
#include "rocemu/ring.h"

/* Indexed by enum ibv_qp_type (IBV_QPT_DRIVER is 0xff). */
static const struct rocemu_transport_ops *const by_qp_type[256] = {
	[IBV_QPT_RC] = &rocemu_rc_transport,
	[IBV_QPT_UC] = &rocemu_uc_transport,
	[IBV_QPT_UD] = &rocemu_ud_transport,
	[IBV_QPT_RAW_PACKET] = &rocemu_raw_transport,
	[IBV_QPT_XRC_SEND] = &rocemu_xrc_transport,
	[IBV_QPT_XRC_RECV] = &rocemu_xrc_transport,
	[ROCEMU_QPT_DCI] = &rocemu_dc_transport,
	[ROCEMU_QPT_DCT] = &rocemu_dc_transport,
};

/* Indexed by the opcode class, bits 7:5 of the BTH opcode (IBTA 9.2.1). */
static const struct rocemu_transport_ops *const by_opcode_class[8] = {
	[ROCEMU_OP_TRANSPORT_RC >> ROCEMU_OP_TRANSPORT_SHIFT] = &rocemu_rc_transport,
	[ROCEMU_OP_TRANSPORT_UC >> ROCEMU_OP_TRANSPORT_SHIFT] = &rocemu_uc_transport,
	[ROCEMU_OP_TRANSPORT_UD >> ROCEMU_OP_TRANSPORT_SHIFT] = &rocemu_ud_transport,
	[ROCEMU_OP_TRANSPORT_XRC >> ROCEMU_OP_TRANSPORT_SHIFT] = &rocemu_xrc_transport,
	[ROCEMU_OP_TRANSPORT_DC >> ROCEMU_OP_TRANSPORT_SHIFT] = &rocemu_dc_transport,
};

const struct rocemu_transport_ops *rocemu_transport_of_qp_type(enum ibv_qp_type type)
{
	return (unsigned)type < sizeof(by_qp_type) / sizeof(by_qp_type[0]) ? by_qp_type[type]
									   : NULL;
}

const struct rocemu_transport_ops *rocemu_transport_of_opcode(uint8_t opcode)
{
	unsigned int class = (opcode & ROCEMU_OP_TRANSPORT_MASK) >> ROCEMU_OP_TRANSPORT_SHIFT;

	return by_opcode_class[class];
}

/* Each transport has one opcode class: the loops below ask each once. */
#define NCLASSES (sizeof(by_opcode_class) / sizeof(by_opcode_class[0]))

void rocemu_transport_rx_buffer_end(void)
{
	for (size_t i = 0; i < NCLASSES; i++)
		if (by_opcode_class[i] && by_opcode_class[i]->rx_buffer_end)
			by_opcode_class[i]->rx_buffer_end();
}

void rocemu_transport_settle(void)
{
	for (size_t i = 0; i < NCLASSES; i++)
		if (by_opcode_class[i] && by_opcode_class[i]->settle)
			by_opcode_class[i]->settle();
}

void rocemu_sq_broken_log(const struct rocemu_qp *qp, uint32_t psn, uint32_t bb)
{
	rocemu_log(ROCEMU_LOG_INFO, "%s qp 0x%06x psn 0x%06x: send doorbell 0x%04x is past the %u BBs of the ring from 0x%04x",
		   qp->owner->dev->name, qp->qpn, psn, qp->owner->dev->format->sq_doorbell(qp, bb),
		   qp->layout.sq_wqe_cnt, (uint16_t)bb);
}
