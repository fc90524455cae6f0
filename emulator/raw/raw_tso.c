/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A TSO WQE (MLX5_OPCODE_TSO) onto the port: net/eth/tso.h cuts its
 * payload, gathered from the WQE's data as it goes, into frames of mss
 * bytes behind its inline header; each frame leaves as any other.
 */
#include <errno.h>
#include <linux/if_ether.h>

#include "emulator/engine/wqe_gather.h"
#include "emulator/obj/qp.h"
#include "emulator/raw/raw.h"
#include "emulator/ring/format.h"
#include "net/eth/tso.h"

/* One frame is built here: a header and a 64 KiB mss at most, with room for Ethernet's least. */
static uint8_t seg[ROCEMU_RAW_MAX_TSO_HEADER + UINT16_MAX + ETH_ZLEN];

struct tso_run {
	struct rocemu_qp *qp;
	const struct rocemu_send_wqe *w;
	int gather_err;			/* the WQE's data could not be read: its -errno */
};

static int tso_gather(void *arg, uint32_t off, uint8_t *dst, uint32_t len)
{
	struct tso_run *run = arg;
	struct iovec local = { dst, len };

	run->gather_err = rocemu_wqe_gather(run->qp, run->w, off, len, &local, 1);
	return run->gather_err;
}

/* Each frame is built in seg, which has room to pad it. */
static int tso_emit(void *arg, const uint8_t *frame, uint32_t len)
{
	struct tso_run *run = arg;

	(void)frame;
	rocemu_raw_frame_out(run->qp, seg, len, false, false);
	return 0;
}

enum ibv_wc_status rocemu_raw_tso_out(struct rocemu_qp *qp, const struct rocemu_send_wqe *w)
{
	struct tso_run run = { qp, w, 0 };
	const struct rocemu_tso_io io = { tso_gather, tso_emit, &run };
	int err;

	if (w->eth.hdr_len + (uint32_t)w->eth.mss > rocemu_raw_frame_max(qp->owner->dev))
		return IBV_WC_LOC_LEN_ERR;
	err = rocemu_tso(w->eth.hdr, w->eth.hdr_len, w->length, w->eth.mss, seg,
			 sizeof(seg) - ETH_ZLEN, &io);
	if (run.gather_err)
		return run.gather_err == -EMSGSIZE ? IBV_WC_LOC_LEN_ERR : IBV_WC_LOC_PROT_ERR;
	return err ? IBV_WC_LOC_QP_OP_ERR : IBV_WC_SUCCESS;
}
