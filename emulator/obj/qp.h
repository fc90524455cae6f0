/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Queue pairs: creation with mlx5 ring layout, the attributes
 * ibv_modify_qp sets (validated completely before any is changed), query
 * and destruction. Functions return 0 or -errno.
 */
#ifndef ROCEMU_EMULATOR_QP_H
#define ROCEMU_EMULATOR_QP_H

#include <stdint.h>

#include "emulator/core/client.h"
#include "emulator/core/object.h"
#include "emulator/dc/dc.h"
#include "emulator/mem/mkey.h"
#include "emulator/engine/transport.h"
#include "emulator/obj/qp_path.h"
#include "emulator/obj/qp_timer.h"
#include "emulator/rc/rc.h"
#include "emulator/ud/ud.h"

struct rocemu_qp {
	struct rocemu_client *owner;
	struct rocemu_list node;	/* in owner->qps */
	uint32_t qpn;
	struct rocemu_charge charge;	/* limits.h */
	enum ibv_qp_type type;
	uint32_t create_flags;		/* IBV_QP_CREATE_BLOCK_SELF_MCAST_LB, _SOURCE_QPN */
	uint32_t source_qpn;		/* UD: the source QPN its datagrams carry */
	const struct rocemu_transport_ops *ops;	/* the transport of its type */
	struct rocemu_pd *pd;
	struct rocemu_cq *send_cq, *recv_cq;
	struct rocemu_srq *srq;		/* receives come from it (no RQ); NULL: none. XRC target: the SRQ its last request named */
	uint32_t sq_sig_all;
	uint8_t cqe_scatter_res;	/* cs_res: bytes of a received SEND a CQE carries (qp_vendor_flags.h) */
	uint8_t cqe_scatter_req;	/* cs_req: bytes of a READ or atomic reply a CQE carries */
	uint64_t user_qp;		/* reported in async events */
	struct ibv_qp_cap cap;		/* granted */
	struct ibv_qp_attr attr;	/* current state and attributes */
	struct rocemu_qp_layout layout;
	struct rocemu_shm rings;
	bool direct;			/* handed out by mlx5dv_init_obj (direct.c) */
	uint64_t direct_seen;		/* its doorbell record as the scan last saw it */
	struct rocemu_qp_path path;	/* connected transports: the peer */
	struct rocemu_qp_timer timers[ROCEMU_QP_TIMER__COUNT];
	struct rocemu_xrcd_open *xrcd_open;	/* XRC target: its domain, through its owner's open */
	struct rocemu_list xrc_node;	/* XRC target: in its domain's tgt_qps */
	struct rocemu_list xrc_refs;	/* XRC target: ibv_open_qp references (xrc.h) */
	union {				/* the transport's own state, as ops says */
		struct rocemu_rc rc;	/* RC's, and UC's (uc.h) and XRC's (xrc.h) */
		struct rocemu_dc dc;	/* DC's: RC's first, so rc is dc.rc (dc.h) */
		struct rocemu_ud ud;
	};
};

/*
 * Create a QP: -EOPNOTSUPP for a type without a transport, -EINVAL for a PD, CQ
 * or SRQ c does not own or capabilities over the limits, -ENOMEM at the
 * device limit. On success *fd is the rings' memfd (to be sent and closed).
 */
int rocemu_qp_create(struct rocemu_client *c, const struct rocemu_create_qp_req *req,
		     struct rocemu_create_qp_resp *resp, int *fd);
/* Modify per IBTA: state machine masks first, then values; -EINVAL changes nothing. */
int rocemu_qp_modify(struct rocemu_client *c, const struct rocemu_modify_qp_req *req);
int rocemu_qp_query(struct rocemu_client *c, const struct rocemu_query_qp_req *req,
		    struct rocemu_query_qp_resp *resp);
int rocemu_qp_destroy(struct rocemu_client *c, uint32_t qpn);
/*
 * mlx5dv_modify_qp_udp_sport (qp_path.c): c's RC or UC QP in RTS sends from
 * UDP port req->udp_sport from now on. -EOPNOTSUPP for another type, -EINVAL
 * for no such QP, another state or port 0.
 */
int rocemu_qp_set_udp_sport(struct rocemu_client *c, const struct rocemu_qp_udp_sport_req *req);
struct rocemu_qp *rocemu_qp_lookup(struct rocemu_client *c, uint32_t qpn);
/* qp enters next, with one log line and one trace event saying why (what moved it). */
void rocemu_qp_enter_state(struct rocemu_qp *qp, enum ibv_qp_state next, const char *why);
void rocemu_qp_free(struct rocemu_emu *emu, struct rocemu_qp *qp);
/* c lets go of qp (its context closes): freed, unless an XRC target other references hold. */
void rocemu_qp_release(struct rocemu_client *c, struct rocemu_qp *qp);

/* QPs as objects of their context (object.h): its closing releases each (rocemu_qp_release). */
extern const struct rocemu_obj_kind rocemu_qp_kind;

/*
 * Whose memory a request to qp reaches and through which PD its keys are
 * checked, and where its receives complete: an XRC target's are those of
 * the SRQ the request named (IBTA A14), any other QP's its own.
 */
struct rocemu_client *rocemu_qp_mem_client(const struct rocemu_qp *qp);
const struct rocemu_pd *rocemu_qp_mem_pd(const struct rocemu_qp *qp);
/* Both, with qp's number, as keys and DMA take them (mkey.h). */
struct rocemu_mem_owner rocemu_qp_mem_owner(const struct rocemu_qp *qp);
struct rocemu_cq *rocemu_qp_recv_cq(const struct rocemu_qp *qp);
/*
 * The srqn of qp's receive CQEs: its SRQ's number (an XRC target's, the
 * one the request named), which a ConnectX writes into every CQE of a
 * receive from an SRQ (CQE version 0: mlx5's poller finds the SRQ by it);
 * 0 for a receive queue's.
 */
uint32_t rocemu_qp_recv_srqn(const struct rocemu_qp *qp);

/* "RC", "UC", "UD"... for logs and status. */
const char *rocemu_qp_type_name(enum ibv_qp_type type);

#endif /* ROCEMU_EMULATOR_QP_H */
