/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * ibv_modify_qp: check the transition and masks against the state table,
 * then every attribute value against the device, and only then commit
 * (a failed modify changes nothing, as rxe_qp_chk_attr before
 * rxe_qp_from_attr).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "emulator/obj/qp.h"
#include "emulator/obj/qp_state.h"
#include "rocemu/log.h"
#include "rocemu/ring.h"

#define PSN_MASK 0xffffff
/*
 * Every flag ibv_access_flags names, as mlx5 takes them: it acts on the
 * remote ones and ignores the rest (the ODP tests of rdma-core pass
 * IBV_ACCESS_ON_DEMAND here). Bits no flag names are refused.
 */
#define QP_ACCESS_SUPPORTED (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
			     IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED | \
			     IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB | \
			     IBV_ACCESS_OPTIONAL_RANGE)

enum attr_check {
	CHECK_RANGE,	/* min <= value <= max */
	CHECK_MTU,	/* an IB MTU no larger than the port's active MTU */
	CHECK_AV,	/* a RoCE address vector through GID 0 of port 1 */
	CHECK_ACCESS,	/* only remote/local access bits a QP takes */
	CHECK_REFUSE,	/* not supported: alternate paths (no APM) */
};

/* One row per attribute ibv_modify_qp can set: where it lives and how it is checked. */
static const struct qp_attr_field {
	int mask;
	size_t offset, size;
	enum attr_check check;
	uint32_t min, max;
} qp_attr_fields[] = {
#define FIELD(m) offsetof(struct ibv_qp_attr, m), sizeof(((struct ibv_qp_attr *)0)->m)
	{ IBV_QP_ACCESS_FLAGS, FIELD(qp_access_flags), CHECK_ACCESS, 0, 0 },
	{ IBV_QP_PKEY_INDEX, FIELD(pkey_index), CHECK_RANGE, 0, 0 },	/* one P_Key */
	{ IBV_QP_PORT, FIELD(port_num), CHECK_RANGE, 1, 1 },
	{ IBV_QP_QKEY, FIELD(qkey), CHECK_RANGE, 0, UINT32_MAX },
	{ IBV_QP_AV, FIELD(ah_attr), CHECK_AV, 0, 0 },
	{ IBV_QP_PATH_MTU, FIELD(path_mtu), CHECK_MTU, 0, 0 },
	{ IBV_QP_TIMEOUT, FIELD(timeout), CHECK_RANGE, 0, 31 },
	{ IBV_QP_RETRY_CNT, FIELD(retry_cnt), CHECK_RANGE, 0, 7 },
	{ IBV_QP_RNR_RETRY, FIELD(rnr_retry), CHECK_RANGE, 0, 7 },
	{ IBV_QP_RQ_PSN, FIELD(rq_psn), CHECK_RANGE, 0, UINT32_MAX },	/* masked to 24 bits */
	{ IBV_QP_MAX_QP_RD_ATOMIC, FIELD(max_rd_atomic), CHECK_RANGE, 0, 16 },
	{ IBV_QP_ALT_PATH, FIELD(alt_ah_attr), CHECK_REFUSE, 0, 0 },
	{ IBV_QP_MIN_RNR_TIMER, FIELD(min_rnr_timer), CHECK_RANGE, 0, 31 },
	{ IBV_QP_SQ_PSN, FIELD(sq_psn), CHECK_RANGE, 0, UINT32_MAX },	/* masked to 24 bits */
	{ IBV_QP_MAX_DEST_RD_ATOMIC, FIELD(max_dest_rd_atomic), CHECK_RANGE, 0, 16 },
	{ IBV_QP_PATH_MIG_STATE, FIELD(path_mig_state), CHECK_RANGE, IBV_MIG_MIGRATED, IBV_MIG_ARMED },
	{ IBV_QP_DEST_QPN, FIELD(dest_qp_num), CHECK_RANGE, 0, PSN_MASK },
	{ IBV_QP_EN_SQD_ASYNC_NOTIFY, FIELD(en_sqd_async_notify), CHECK_RANGE, 0, 1 },
#undef FIELD
};

#define QP_ATTR_FIELD_COUNT (sizeof(qp_attr_fields) / sizeof(qp_attr_fields[0]))

static uint32_t field_value(const struct ibv_qp_attr *attr, const struct qp_attr_field *f)
{
	const char *p = (const char *)attr + f->offset;
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;

	switch (f->size) {
	case 1:
		memcpy(&v8, p, 1);
		return v8;
	case 2:
		memcpy(&v16, p, 2);
		return v16;
	default:
		memcpy(&v32, p, 4);
		return v32;
	}
}

/*
 * RoCE needs a GRH where the kernel resolves the peer's MAC, on connected
 * QPs (ib_resolve_eth_dmac); a DC QP's AV names no peer (UCX's DC probe
 * gives none). The source GID is GID 0 of port 1, the only one there is.
 */
static int av_check(const struct rocemu_qp *qp, const struct ibv_ah_attr *ah)
{
	bool dc = qp->type == ROCEMU_QPT_DCI || qp->type == ROCEMU_QPT_DCT;

	if ((!ah->is_global && !dc) || (ah->is_global && ah->grh.sgid_index >= 1) ||
	    ah->port_num != 1)
		return -EINVAL;
	return 0;
}

static int field_check(const struct rocemu_qp *qp, const struct ibv_qp_attr *attr,
		       const struct qp_attr_field *f)
{
	uint32_t v;

	switch (f->check) {
	case CHECK_RANGE:
		v = field_value(attr, f);
		return v < f->min || v > f->max ? -EINVAL : 0;
	case CHECK_MTU:
		return attr->path_mtu < IBV_MTU_256 ||
		       attr->path_mtu > qp->owner->dev->active_mtu ? -EINVAL : 0;
	case CHECK_AV:
		return av_check(qp, &attr->ah_attr);
	case CHECK_ACCESS:
		return (unsigned)attr->qp_access_flags & ~QP_ACCESS_SUPPORTED ? -EINVAL : 0;
	case CHECK_REFUSE:
	default:
		return -EINVAL;
	}
}

int rocemu_qp_modify(struct rocemu_client *c, const struct rocemu_modify_qp_req *req)
{
	struct rocemu_qp *qp = rocemu_qp_lookup(c, req->qpn);
	const struct ibv_qp_attr *attr = &req->attr;
	int mask = (int)req->attr_mask, err;
	enum ibv_qp_state cur, next, prev;
	char why[48];
	unsigned int i;

	if (!qp)
		return -EINVAL;
	mask = rocemu_qp_modify_mask(qp->type, mask);
	/* The caller may name the current state it believes in (IBTA 11.2.5.1). */
	cur = mask & IBV_QP_CUR_STATE ? attr->cur_qp_state : qp->attr.qp_state;
	next = mask & IBV_QP_STATE ? attr->qp_state : cur;
	if ((unsigned)cur > IBV_QPS_ERR || (unsigned)next > IBV_QPS_ERR)
		return -EINVAL;
	err = rocemu_qp_modify_mask_check(qp->type, cur, next, mask);
	if (err)
		return err;
	for (i = 0; i < QP_ATTR_FIELD_COUNT; i++) {
		if (mask & qp_attr_fields[i].mask) {
			err = field_check(qp, attr, &qp_attr_fields[i]);
			if (err)
				return err;
		}
	}

	/* Commit. Reset forgets every attribute, as a fresh QP. */
	prev = qp->attr.qp_state;
	if (next == IBV_QPS_RESET)
		memset(&qp->attr, 0, sizeof(qp->attr));
	for (i = 0; i < QP_ATTR_FIELD_COUNT; i++) {
		const struct qp_attr_field *f = &qp_attr_fields[i];

		if (mask & f->mask)
			memcpy((char *)&qp->attr + f->offset, (const char *)attr + f->offset, f->size);
	}
	qp->attr.rq_psn &= PSN_MASK;
	qp->attr.sq_psn &= PSN_MASK;
	/* RESET cleared the state with the rest: the move is from the one before. */
	qp->attr.qp_state = prev;
	snprintf(why, sizeof(why), "ibv_modify_qp, mask 0x%x", mask);
	rocemu_qp_enter_state(qp, next, why);
	qp->ops->modified(qp, prev, next);
	return 0;
}
