/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Extended polling of ibv_cq_ex: start_poll takes the CQ lock and parses
 * the first CQE with the parser of ibv_poll_cq (into the CQ's own ibv_wc,
 * which the read_*() functions return fields of), next_poll parses the
 * next, end_poll writes the consumer index and unlocks. When start_poll
 * finds nothing it unlocks itself and end_poll is not called. Completion
 * timestamps are the CQE's, in device cycles (include/rocemu/clock.h).
 */
#include "lib/shim.h"

#include "rocemu/clock.h"

/*
 * The WC parsed into ex_wc is the caller's: its timestamp is that of the
 * CQE consumed last (its slot stays ours until end_poll writes the index),
 * or the clock now for an error or a flush, whose CQE has no timestamp.
 */
static void cq_ex_took(struct rocemu_cq *cq, uint32_t index_before)
{
	const struct mlx5_cqe64 *cqe;

	cq->ibcq.wr_id = cq->ex_wc.wr_id;
	cq->ibcq.status = cq->ex_wc.status;
	if (cq->ex_wc.status == IBV_WC_SUCCESS && cq->cons_index != index_before) {
		cqe = rocemu_cqe_at(cq->buf, cq->cqe_size, cq->ncqe, cq->cons_index - 1);
		cq->ex_ts = be64toh(cqe->timestamp);
		cq->ex_flow_tag = rocemu_cqe_flow_tag(cqe);
		cq->ex_cvlan = be16toh(cqe->vlan_info);
	} else {
		cq->ex_ts = rocemu_clock_now();
		cq->ex_flow_tag = 0;
		cq->ex_cvlan = 0;
	}
}

/* The first CQE, keeping the lock (0), or ENOENT unlocked with *idle what the poller does next. */
static int cq_ex_first(struct ibv_cq_ex *ibcq, enum rocemu_poll_idle *idle)
{
	struct rocemu_cq *cq = to_rcq_ex(ibcq);
	uint32_t start;

	pthread_spin_lock(&cq->lock);
	cq->ex_qp = NULL;
	start = cq->cons_index;
	if (rocemu_cq_poll_one(cq, &cq->ex_wc, &cq->ex_qp)) {
		rocemu_cq_count_poll(cq, false);
		/* As mlx5: one clock info per poll, for every wall-clock read until end_poll. */
		if (cq->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
			rocemu_clock_info(&cq->ex_clock);
		cq_ex_took(cq, start);
		return 0;
	}
	/* CQEs of destroyed QPs may have been dropped: report the index anyway. */
	if (cq->cons_index != start)
		rocemu_cq_update_ci(cq);
	*idle = rocemu_cq_count_poll(cq, true);
	pthread_spin_unlock(&cq->lock);
	return ENOENT;
}

static int cq_ex_start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	enum rocemu_poll_idle idle = ROCEMU_POLL_BUSY;
	int ret;

	if (__builtin_expect(attr->comp_mask != 0, 0))
		return EINVAL;
	ret = cq_ex_first(ibcq, &idle);
	/* An empty answer tells the CQ as it is on return, not as it was before a yield. */
	if (ret && __builtin_expect(idle != ROCEMU_POLL_BUSY, 0)) {
		rocemu_cq_idle(to_rcq_ex(ibcq), idle);
		ret = cq_ex_first(ibcq, &idle);
	}
	return ret;
}

static int cq_ex_next_poll(struct ibv_cq_ex *ibcq)
{
	struct rocemu_cq *cq = to_rcq_ex(ibcq);
	uint32_t before = cq->cons_index;

	if (!rocemu_cq_poll_one(cq, &cq->ex_wc, &cq->ex_qp))
		return ENOENT;
	cq_ex_took(cq, before);
	return 0;
}

static void cq_ex_end_poll(struct ibv_cq_ex *ibcq)
{
	struct rocemu_cq *cq = to_rcq_ex(ibcq);

	rocemu_cq_update_ci(cq);
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode cq_ex_read_opcode(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->ex_wc.opcode;
}

static uint32_t cq_ex_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->ex_wc.vendor_err;
}

static uint32_t cq_ex_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->ex_wc.byte_len;
}

/* imm_data, or the invalidated rkey (host order) that shares its place */
static __be32 cq_ex_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->ex_wc.imm_data;
}

static uint32_t cq_ex_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->ex_wc.qp_num;
}

static uint32_t cq_ex_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->ex_wc.src_qp;
}

static unsigned int cq_ex_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->ex_wc.wc_flags;
}

static uint32_t cq_ex_read_slid(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->ex_wc.slid;
}

static uint8_t cq_ex_read_sl(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->ex_wc.sl;
}

static uint8_t cq_ex_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->ex_wc.dlid_path_bits;
}

/* As mlx5 reads them: the CQE's vlan_info (0 when nothing was stripped) and its flow tag. */
static uint16_t cq_ex_read_cvlan(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->ex_cvlan;
}

static uint32_t cq_ex_read_flow_tag(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->ex_flow_tag;
}

static uint64_t cq_ex_read_completion_ts(struct ibv_cq_ex *ibcq)
{
	return to_rcq_ex(ibcq)->ex_ts;
}

static uint64_t cq_ex_read_completion_wallclock_ns(struct ibv_cq_ex *ibcq)
{
	struct rocemu_cq *cq = to_rcq_ex(ibcq);

	return mlx5dv_ts_to_ns(&cq->ex_clock, cq->ex_ts);
}

void rocemu_cq_ex_set_poll_ops(struct ibv_cq_ex *cq)
{
	cq->start_poll = cq_ex_start_poll;
	cq->next_poll = cq_ex_next_poll;
	cq->end_poll = cq_ex_end_poll;
	cq->read_opcode = cq_ex_read_opcode;
	cq->read_vendor_err = cq_ex_read_vendor_err;
	cq->read_byte_len = cq_ex_read_byte_len;
	cq->read_imm_data = cq_ex_read_imm_data;
	cq->read_qp_num = cq_ex_read_qp_num;
	cq->read_src_qp = cq_ex_read_src_qp;
	cq->read_wc_flags = cq_ex_read_wc_flags;
	cq->read_slid = cq_ex_read_slid;
	cq->read_sl = cq_ex_read_sl;
	cq->read_dlid_path_bits = cq_ex_read_dlid_path_bits;
	cq->read_completion_ts = cq_ex_read_completion_ts;
	cq->read_cvlan = cq_ex_read_cvlan;
	cq->read_flow_tag = cq_ex_read_flow_tag;
	cq->read_completion_wallclock_ns = cq_ex_read_completion_wallclock_ns;
}
