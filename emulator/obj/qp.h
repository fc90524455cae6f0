/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Queue pairs: creation with mlx5 ring layout, the attributes
 * ibv_modify_qp sets (validated completely before any is changed), query
 * and destruction. Functions return 0 or -errno. A QP's life calls its
 * transport through the table below, which each transport fills in
 * (engine/transport.h finds them); the transport's own state is its own,
 * behind a pointer its init sets.
 */
#ifndef ROCEMU_EMULATOR_QP_H
#define ROCEMU_EMULATOR_QP_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "emulator/core/client.h"
#include "emulator/core/object.h"
#include "emulator/mem/mkey.h"
#include "emulator/obj/qp_path.h"
#include "emulator/obj/qp_timer.h"
#include "emulator/ring/format.h"

struct rocemu_create_qp_req;
struct rocemu_dc;
struct rocemu_eth_frame;
struct rocemu_pkt;
struct rocemu_qp;
struct rocemu_raw;
struct rocemu_rc;
struct rocemu_ud;

/* The create flags of RAW_PACKET QPs alone (mlx5's process_create_flags: another type's is EOPNOTSUPP). */
#define ROCEMU_QP_CREATE_RAW_FLAGS (IBV_QP_CREATE_SCATTER_FCS | IBV_QP_CREATE_CVLAN_STRIPPING | \
				    IBV_QP_CREATE_PCI_WRITE_END_PADDING)

/* A transport as the QP's life, the doorbell scan and the receive path call it. */
struct rocemu_transport_ops {
	const char *name;		/* "RC", for logs */
	/* One peer: packets from any other address are dropped (rxe's check_addr). */
	bool connected;
	/* Create, before anything is made: c may and the request's own attributes hold (NULL: none). 0 or -errno. */
	int (*create_check)(const struct rocemu_client *c, const struct rocemu_create_qp_req *req);
	/* Create: the transport's state, allocated into qp->rc, dc or ud (qp->layout is set). 0 or -errno. */
	int (*init)(struct rocemu_qp *qp);
	/* Create, qp made (owner, PD, CQs, SRQ, an XRC target's xrcd_open): what req says of it (NULL: none). */
	void (*created)(struct rocemu_qp *qp, const struct rocemu_create_qp_req *req);
	/* Whether c reaches qp without owning it (ibv_open_qp). NULL: never. */
	bool (*opened_by)(const struct rocemu_qp *qp, const struct rocemu_client *c);
	/* c lets go of qp (destroy, its context closes): whether qp is freed now. NULL: it is. */
	bool (*release)(struct rocemu_client *c, struct rocemu_qp *qp);
	/* qp->srq goes while qp lives (an XRC target's; others hold theirs): forget it. */
	void (*srq_gone)(struct rocemu_qp *qp);
	/* Destroy: give back what init and the QP's life took, the state too. */
	void (*destroy)(struct rocemu_qp *qp);
	/* ibv_modify_qp committed cur -> next: set the engines up, or flush on ERR. */
	void (*modified)(struct rocemu_qp *qp, enum ibv_qp_state cur, enum ibv_qp_state next);
	/* The doorbell moved (or may have): fetch new WQEs and send what may go. */
	void (*post)(struct rocemu_qp *qp);
	/* In ERR: complete every WQE posted since the last flush with WR_FLUSH_ERR. */
	void (*flush)(struct rocemu_qp *qp);
	/* One packet of this transport for qp. */
	void (*rx)(struct rocemu_qp *qp, const struct rocemu_pkt *pkt);
	/* RAW_PACKET: one Ethernet frame the port steered to qp, with the flow tag its rule set (0: none). */
	void (*rx_frame)(struct rocemu_qp *qp, const struct rocemu_eth_frame *f, uint32_t flow_tag);
	/* A timer of qp (qp_timer.c) expired. */
	void (*timer)(struct rocemu_qp *qp, enum rocemu_qp_timer_kind kind);
	/* SQD: WQEs posted before the transition are still to finish (ibv_query_qp). */
	bool (*sq_draining)(const struct rocemu_qp *qp);
	/*
	 * Work held back within one turn by every QP of this transport and of
	 * those on its engines (NULL: none): the receive buffer a datagram
	 * came in ends; the turn ends or a control request is to be served.
	 */
	void (*rx_buffer_end)(void);
	void (*settle)(void);
};

struct rocemu_qp {
	struct rocemu_client *owner;
	struct rocemu_list node;	/* in owner->qps */
	uint32_t qpn;
	struct rocemu_charge charge;	/* limits.h */
	enum ibv_qp_type type;
	uint32_t create_flags;		/* IBV_QP_CREATE_BLOCK_SELF_MCAST_LB, _SOURCE_QPN */
	uint32_t source_qpn;		/* UD: the source QPN its datagrams carry */
	unsigned int mcast_groups;	/* UD: multicast groups it is attached to (mcast.c) */
	unsigned int flows;		/* steering rules to it (eth/flow.c): it is not destroyed while any */
	const struct rocemu_transport_ops *ops;	/* the transport of its type */
	struct rocemu_pd *pd;
	/*
	 * Whose memory a request to it reaches and through which PD its keys
	 * are checked, as keys and DMA take it (mkey.h): an XRC target's are
	 * those of the SRQ the request named (IBTA A14), any other QP's its own.
	 */
	struct rocemu_mem_owner mem;
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
	struct rocemu_direct direct;	/* handed out by mlx5dv_init_obj (direct.c) */
	uint64_t direct_seen;		/* its doorbell record as the scan last saw it */
	struct rocemu_qp_path path;	/* connected transports: the peer */
	struct rocemu_qp_timer timers[ROCEMU_QP_TIMER__COUNT];
	struct rocemu_xrcd_open *xrcd_open;	/* XRC target: its domain, through its owner's open */
	struct rocemu_list xrc_node;	/* XRC target: in its domain's tgt_qps */
	struct rocemu_list xrc_refs;	/* XRC target: ibv_open_qp references (xrc.h) */
	/* The transport's own state: its init allocates it, its destroy frees it */
	struct rocemu_rc *rc;		/* RC's engines': RC, UC (uc.h), XRC (xrc.h), and DC's dc->rc */
	struct rocemu_dc *dc;		/* DC's (dc.h) */
	struct rocemu_ud *ud;		/* UD's (ud.h) */
	struct rocemu_raw *raw;		/* RAW_PACKET's (raw.h) */
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

/* Set qp->mem again once what it follows changed: its owner, or an XRC target's SRQ. */
void rocemu_qp_mem_update(struct rocemu_qp *qp);
/* Where its receives complete: an XRC target's, in the CQ of the SRQ the request named. */
struct rocemu_cq *rocemu_qp_recv_cq(const struct rocemu_qp *qp);
/* The QP's RQ as the ring format reads it (wqe_cnt 0: none). */
static inline struct rocemu_rq_ring rocemu_qp_rq_ring(const struct rocemu_qp *qp)
{
	return (struct rocemu_rq_ring){
		.buf = (const uint8_t *)qp->rings.addr + qp->layout.rq_offset,
		.dbrec = (const uint8_t *)qp->rings.addr + qp->layout.dbrec_offset,
		.wqe_cnt = qp->layout.rq_wqe_cnt,
		.wqe_shift = qp->layout.rq_wqe_shift,
		.num = qp->qpn,
	};
}

/* Receive WQEs posted in the QP's RQ past counter (the format's rq_posted). */
static inline int rocemu_qp_rq_posted(const struct rocemu_qp *qp, uint32_t counter)
{
	struct rocemu_rq_ring rq = rocemu_qp_rq_ring(qp);

	return qp->owner->dev->format->rq_posted(&rq, counter);
}

/*
 * The srqn of qp's receive CQEs: its SRQ's number (an XRC target's, the
 * one the request named), which a ConnectX writes into every CQE of a
 * receive from an SRQ (CQE version 0: mlx5's poller finds the SRQ by it);
 * 0 for a receive queue's.
 */
uint32_t rocemu_qp_recv_srqn(const struct rocemu_qp *qp);

/* Arm qp's timer of kind to expire at deadline_ns (rocemu_now_ns() time), unless it is armed. */
static inline void rocemu_qp_timer_arm(struct rocemu_qp *qp, enum rocemu_qp_timer_kind kind,
				       uint64_t deadline_ns)
{
	rocemu_loop_timer_arm(qp->owner->emu->loop, &qp->timers[kind].timer, deadline_ns);
}

/* Cancel kind; nothing happens if it is not armed. */
static inline void rocemu_qp_timer_cancel(struct rocemu_qp *qp, enum rocemu_qp_timer_kind kind)
{
	rocemu_loop_timer_disarm(qp->owner->emu->loop, &qp->timers[kind].timer);
}

static inline bool rocemu_qp_timer_armed(const struct rocemu_qp *qp,
					 enum rocemu_qp_timer_kind kind)
{
	return rocemu_loop_timer_armed(&qp->timers[kind].timer);
}

/* "RC", "UC", "UD"... for logs and status. */
const char *rocemu_qp_type_name(enum ibv_qp_type type);

#endif /* ROCEMU_EMULATOR_QP_H */
