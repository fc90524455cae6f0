/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The RC transport of one QP: the state its requester (rc_req.c),
 * responder (rc_resp.c) and completer (rc_comp.c) keep, the packet
 * transmitter they share (rc_tx.c) and the error/flush rules (rc_qp.c).
 * Packets come in through rx.c, and the rest of the emulator calls RC
 * through its transport ops (rocemu_rc_transport). Everything runs on the
 * daemon's one loop.
 */
#ifndef ROCEMU_EMULATOR_RC_H
#define ROCEMU_EMULATOR_RC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>
#include <infiniband/verbs.h>

#include "emulator/core/device.h"
#include "emulator/engine/cqe_scatter.h"
#include "emulator/ring/format.h"
#include "emulator/mem/dma.h"
#include "emulator/obj/qp_timer.h"
#include "emulator/rc/resp_atomic.h"

struct rocemu_cq;
struct rocemu_pkt;
struct rocemu_qp;
struct rocemu_cqe_info;
struct rocemu_device;

/* Packets sent but not yet acknowledged, at most: a huge post must not flood. */
#define ROCEMU_RC_WINDOW 512u
/*
 * The window after a go-back-N resend, doubling with each acknowledgment
 * that moves the oldest unacknowledged PSN: a resend does not pile a whole
 * window behind packets still on their way, which losses would multiply.
 * Any ROCEMU_RC_ACK_EVERY packets in a row hold one asking for an ACK, so
 * a window of that many always brings one back.
 */
#define ROCEMU_RC_WINDOW_RESTART ROCEMU_RC_ACK_EVERY
/* The requester asks for an ACK at least this often within a message. */
#define ROCEMU_RC_ACK_EVERY 64u
/* READ response packets per turn of the loop: a long READ never holds the daemon. */
#define ROCEMU_RC_RESP_BURST 64u

/* A requester WQE in flight, in posting order; the WQE itself stays in the SQ ring. */
struct rocemu_rc_wqe {
	uint32_t bb;			/* free-running counter of its first BB */
	uint32_t first_psn, last_psn;
	uint32_t length;
	uint16_t wqe_counter;
	uint8_t opcode;			/* the ring format's (struct rocemu_send_wqe) */
	uint8_t bbs;			/* its size when taken: a parse again reads no further */
	bool signaled;
	bool fence;			/* waits for earlier READs and atomics */
};

/*
 * The requester's working memory, allocated when it takes its first WQE
 * (most QPs of a large job never send): a QP costs it only once it sends.
 */
struct rocemu_rc_req_mem {
	struct rocemu_send_wqe wqe;	/* parse cache of the WQE at the cursor */
	struct rocemu_send_wqe comp_wqe;	/* parse cache of the READ being filled */
	struct rocemu_rc_wqe fifo[];	/* sq_wqe_cnt entries */
};

/*
 * Requester and completer. fifo holds the fetched WQEs [tail, head)
 * (free-running); cursor is the one being sent and cursor_psn its next
 * PSN, so a rewind (NAK, RNR, later a timeout) only moves the cursor back.
 * fifo, wqe and comp_wqe point into mem, NULL until it exists: before,
 * tail == head and nothing reads them.
 */
struct rocemu_rc_req {
	struct rocemu_rc_req_mem *mem;
	struct rocemu_rc_wqe *fifo;
	struct rocemu_send_wqe *wqe, *comp_wqe;
	uint32_t fifo_mask;		/* sq_wqe_cnt - 1 */
	uint32_t tail, cursor, head;
	uint32_t sq_bb;			/* next BB to fetch from the SQ ring */
	uint32_t cursor_psn;
	uint32_t next_psn;		/* first PSN of the next fetched WQE */
	uint32_t una_psn;		/* oldest PSN not acknowledged */
	uint32_t sent_psn;		/* one past the newest PSN ever sent: [una, sent) may be answered */
	uint32_t reads_out;		/* READ and atomic requests sent, not completed */
	uint32_t window;		/* packets it may have in flight: ROCEMU_RC_WINDOW_RESTART..WINDOW */
	uint32_t rnr_retries;		/* RNR NAKs in a row */
	uint32_t retry_una;		/* una_psn when the local ACK timer was armed */
	uint32_t retries;		/* timeouts in a row */
	bool gap_rewound;		/* lost responses asked again from gap_psn... */
	uint32_t gap_psn;		/* ...the una_psn then: once per gap */
	bool draining;			/* SQD: WQEs posted before it still to finish */
	uint16_t sqd_db;		/* SQ doorbell at RTS->SQD: the drain point */
	uint32_t cqe_data_len;		/* the reply of the READ or atomic at the head, for its CQE (cs_req) */
	uint8_t cqe_data[ROCEMU_CQE_SCATTER_MAX];
};

enum rocemu_rc_msg_kind { RC_MSG_NONE, RC_MSG_SEND, RC_MSG_WRITE };

enum rocemu_rc_res_kind { RC_RES_READ, RC_RES_ATOMIC };

/*
 * A responder resource (rxe's resp_res): a READ or atomic accepted whose
 * answer has not all gone out, and the ACK or NAK owed right after it (a
 * newer one replaces it: an acknowledge covers every PSN before its own).
 * A READ answers [psn, last_psn] from RETH va/rkey/length, next counting
 * the packets sent; a duplicate in [first_psn, last_psn] restarts it.
 */
struct rocemu_rc_res {
	enum rocemu_rc_res_kind kind;
	bool replay;			/* READ of a duplicate: dropped, never a NAK, when it fails */
	uint32_t first_psn, last_psn;	/* READ: its PSNs */
	uint32_t psn;			/* READ: of its first response (since a restart); atomic: its own */
	uint32_t msn;			/* of its AETH */
	uint64_t va;
	uint32_t rkey, length;
	uint32_t next;			/* READ: packets sent */
	uint64_t orig;			/* atomic: the value before */
	bool ack_owed;			/* an ACK/NAK follows: */
	uint8_t ack_syndrome;
	uint32_t ack_psn, ack_msn;
};

/*
 * The responder's READ and atomic memory, allocated when the first READ
 * or atomic takes a resource: a QP that is only sent to never needs it.
 */
struct rocemu_rc_resp_mem {
	struct rocemu_atomic_replay atomics[ROCEMU_ATOMIC_REPLAY_MAX];
	struct rocemu_rc_res res[ROCEMU_MAX_RD_ATOM];
};

/* Responder: expected PSN, MSN, the message in progress and the responses owed. */
struct rocemu_rc_resp {
	uint32_t epsn;
	uint32_t msn;
	bool nak_sent;			/* PSN sequence NAK sent; quiet until epsn comes */
	bool dropping;			/* UC: the rest of a broken message is dropped */
	enum rocemu_rc_msg_kind in_msg;
	uint32_t rq_ci;			/* next receive WQE counter */
	bool has_recv;			/* recv holds the consumed WQE of the message */
	struct rocemu_recv_wqe recv;
	uint32_t offset;		/* bytes of the message so far */
	uint32_t cqe_data_len;		/* a SEND small enough for its CQE (cs_res): its bytes */
	uint8_t cqe_data[ROCEMU_CQE_SCATTER_MAX];
	uint64_t write_va;		/* RDMA WRITE: next address, rkey, bytes left */
	uint32_t write_rkey;
	uint32_t write_left;
	struct rocemu_rc_resp_mem *mem;	/* NULL until the first READ or atomic */
	uint32_t atomic_next;		/* the replay entry to overwrite next */
	/* Owed in PSN order (mem->res): [res_tail, res_head), free-running, at most max_dest_rd_atomic. */
	uint32_t res_tail, res_head;
	bool ack_deferred;		/* an ACK waits for the turn's end (resp_ack.c): */
	uint8_t ack_syndrome;
	uint32_t ack_psn, ack_msn;
};

struct rocemu_rc_variant;

struct rocemu_rc {
	struct rocemu_rc_req req;
	struct rocemu_rc_resp resp;
	bool comm_est;			/* COMM_EST given since RTR */
	uint8_t opclass;		/* of what it sends: ROCEMU_OP_TRANSPORT_RC, or _XRC (xrc.h), _DC (dc.h) */
	const struct rocemu_rc_variant *variant;	/* DC's or XRC's ways; NULL: RC's */
	/* DC (dc.h): what a DCI's requests carry, in DCETH and RDETH */
	uint64_t dc_key;		/* the DCT's access key */
	uint32_t dc_conn;		/* the number of the DCI's connection to it */
	uint32_t dc_connect_psn;	/* the connection's first PSN: its packets say "connect" */
};

/*
 * Errors as values, mapped in one place (rc_qp.c) to the CQE syndrome,
 * the NAK the responder sends and the log name.
 */
enum rocemu_rc_err {
	RC_ERR_NONE,
	RC_ERR_LOC_LEN,
	RC_ERR_LOC_QP_OP,
	RC_ERR_LOC_PROT,
	RC_ERR_WR_FLUSH,
	RC_ERR_REM_INV_REQ,
	RC_ERR_REM_ACCESS,
	RC_ERR_REM_OP,
	RC_ERR_RETRY_EXC,
	RC_ERR_RNR_RETRY_EXC,
	RC_ERR_MW_BIND,
	RC_ERR__COUNT,
};

/* Whether the requester fetches the send WQE it is at. */
enum rocemu_rc_fetch {
	ROCEMU_RC_FETCH_GO,		/* now */
	ROCEMU_RC_FETCH_WAIT,		/* once what is in flight completed (a DCI's next DCT or stream) */
	ROCEMU_RC_FETCH_FLUSH,		/* never: it completes with WR_FLUSH_ERR (a DCI's stream in error) */
};

/*
 * What a transport on RC's engines does its own way (dc/, xrc/): its init
 * sets qp->rc->variant; a NULL member, or no variant, is RC's way.
 */
struct rocemu_rc_variant {
	/* Whether the requester fetches the send WQE at bb (RC: at once). */
	enum rocemu_rc_fetch (*fetch)(struct rocemu_qp *qp, uint32_t bb);
	/* The WQE at FIFO position pos failed with err: true when the variant took it; false: the QP fails. */
	bool (*req_fail)(struct rocemu_qp *qp, uint32_t pos, enum rocemu_rc_err err);
	/* The responder fails with err, in place of the QP (RC: the QP fails). */
	void (*resp_fail)(struct rocemu_qp *qp, enum rocemu_rc_err err);
	/* A request's XRCETH names srqn: the message's receive WQE comes from there. 0 or -EINVAL. */
	int (*srq_select)(struct rocemu_qp *qp, uint32_t srqn);
};

/* ---- rc_qp.c (and rocemu_rc_transport, its ops) ---- */
/*
 * The QP's life, shared with UC (uc_qp.c), which keeps its state in struct
 * rocemu_rc too: set up and give back the requester FIFO, follow
 * ibv_modify_qp (the path at RTR, PSNs at RTS, the SQD drain point, RESET
 * and ERR; the QP's own ops->post sends), flush both queues in ERR.
 */
int rocemu_rc_init(struct rocemu_qp *qp);
void rocemu_rc_destroy(struct rocemu_qp *qp);
/*
 * For a transport whose state holds RC's (dc.h): rc, which it allocated
 * zeroed, is qp's from now on; stop gives back what RC's engines took, and
 * the transport frees its state itself.
 */
void rocemu_rc_start(struct rocemu_qp *qp, struct rocemu_rc *rc);
void rocemu_rc_stop(struct rocemu_qp *qp);
void rocemu_rc_modified(struct rocemu_qp *qp, enum ibv_qp_state cur, enum ibv_qp_state next);
void rocemu_rc_flush(struct rocemu_qp *qp);
bool rocemu_rc_sq_draining(const struct rocemu_qp *qp);
/* Move qp to ERR (logged with why) and flush both queues. */
void rocemu_rc_qp_error(struct rocemu_qp *qp, enum rocemu_rc_err why);
/* WQE at FIFO position pos failed with err: earlier ones flush, then the QP goes to ERR. */
void rocemu_rc_req_fail(struct rocemu_qp *qp, uint32_t pos, enum rocemu_rc_err err);
/* The responder found why: ERR with the async event of that error class. */
void rocemu_rc_resp_error(struct rocemu_qp *qp, enum rocemu_rc_err why);
/* The responder takes packets in RTR and after, while its process lives (RC and UC). */
bool rocemu_rc_resp_active(const struct rocemu_qp *qp);
/* A packet reached the QP: COMM_EST the first time in RTR. */
void rocemu_rc_qp_rx(struct rocemu_qp *qp);
/* Requests to the responder, acknowledges and responses to the completer (RC's and XRC's rx). */
void rocemu_rc_rx(struct rocemu_qp *qp, const struct rocemu_pkt *pkt);
/* CQE syndrome, AETH NAK code (-1: none) and name of an error. */
enum ibv_wc_status rocemu_rc_err_status(enum rocemu_rc_err err);
int rocemu_rc_err_nak(enum rocemu_rc_err err);
const char *rocemu_rc_err_name(enum rocemu_rc_err err);
/*
 * Write a CQE of qp into cq. When the CQ is in error the QP fails too
 * (IBTA: local work queue catastrophic error, QP_FATAL), once the
 * current pass of the engines is over.
 */
void rocemu_rc_cqe(struct rocemu_qp *qp, struct rocemu_cq *cq, const struct rocemu_cqe_info *info);
/* Receive CQE of qp: to its SRQ's CQ, naming the SRQ, when that is an XRC SRQ (else to its own). */
void rocemu_rc_recv_cqe(struct rocemu_qp *qp, struct rocemu_cqe_info *info);
/* Requester CQE (err RC_ERR_NONE: success) for e, unless success of an unsignaled WQE. */
void rocemu_rc_complete_send(struct rocemu_qp *qp, const struct rocemu_rc_wqe *e,
			     enum rocemu_rc_err err);

/*
 * Allocate the responder's memory (rocemu_rc_resp_mem) if qp has none
 * yet: 0 or -ENOMEM. It goes at RESET and destruction, as the requester's.
 */
int rocemu_rc_resp_mem_get(struct rocemu_qp *qp);

/* ---- rc_req.c ---- */
/* The requester works in RTS and, draining what came before, in SQD. */
bool rocemu_rc_sq_active(const struct rocemu_qp *qp);
/* The requester may fetch the WQE at SQ BB counter bb (not past the SQD drain point). */
bool rocemu_rc_sq_may_fetch(const struct rocemu_qp *qp, uint32_t bb);
/* SQD: once every WQE before the drain point completed, SQ_DRAINED (if asked). */
void rocemu_rc_sqd_check(struct rocemu_qp *qp);
/*
 * Allocate the requester's memory (rocemu_rc_req_mem) if qp has none yet:
 * 0 or -ENOMEM. It goes at RESET and destruction.
 */
int rocemu_rc_req_mem_get(struct rocemu_qp *qp);
/* Packets sent and not acknowledged, or WQEs sent and not completed. */
bool rocemu_rc_req_outstanding(const struct rocemu_rc_req *req);
/* Arm the local ACK timeout if packets are outstanding and it is not armed. */
void rocemu_rc_retry_arm(struct rocemu_qp *qp);
/* Send what the window allows of the SQ. */
void rocemu_rc_req_run(struct rocemu_qp *qp);
/* Resend from psn (go-back-N), which must lie in a WQE in flight. */
void rocemu_rc_req_rewind(struct rocemu_qp *qp, uint32_t psn);
/*
 * Take the WQE at the SQ fetch point to the FIFO's head, parsed into the
 * cache (req.wqe), with its PSN range (none for a local operation).
 * *posted is the format's sq_posted count, read once per run (so a run
 * takes at most one ring of WQEs), less what the run took: the WQE's
 * BBs come off it. *err is what the WQE fails with: a local QP operation
 * error when it does not parse, a local length error when it is longer
 * than max_msg_sz; the entry is taken anyway, to complete in error. A
 * *posted of -EINVAL, a doorbell past the ring, is logged and takes
 * nothing (NULL): the queue is broken, a local QP operation error.
 */
struct rocemu_rc_wqe *rocemu_rc_req_take(struct rocemu_qp *qp, int *posted,
					 enum rocemu_rc_err *err);
/* Execute a LOCAL_INV or window bind WQE: RC_ERR_NONE, or the error it completes with. */
enum rocemu_rc_err rocemu_rc_local_execute(struct rocemu_qp *qp, const struct rocemu_send_wqe *w);
/* READ or atomic: takes a max_rd_atomic credit and waits for response data. */
bool rocemu_rc_wqe_is_rd_atomic(const struct rocemu_qp *qp, const struct rocemu_rc_wqe *e);

/* ---- rc_timer.c ---- */
/* RNR NAK: wait us microseconds (the local ACK timer stopped), then resend. */
void rocemu_rc_rnr_wait(struct rocemu_qp *qp, uint32_t us);
/* Cancel the RNR wait and the local ACK timeout. */
void rocemu_rc_req_timers_cancel(struct rocemu_qp *qp);
/* The transport's timer hook: kind of qp expired. */
void rocemu_rc_timer(struct rocemu_qp *qp, enum rocemu_qp_timer_kind kind);

/* ---- resp_place.c: what the RC and UC responders share of SEND and WRITE ---- */
/*
 * The receive WQE the message needs (the first packet of a SEND, a WRITE
 * with immediate): 0 when it has one, taking the next if it must;
 * rocemu_recv_wqe_next's -EAGAIN when none is posted, -EINVAL when the
 * queue is broken.
 */
int rocemu_resp_recv_ready(struct rocemu_qp *qp, struct rocemu_rc_resp *resp, uint32_t flags);
/* First packet of a WRITE: its RETH into resp, the whole range checked; 0 or the R_Key's -errno. */
int rocemu_resp_write_begin(struct rocemu_qp *qp, struct rocemu_rc_resp *resp, const uint8_t *reth);
/*
 * SEND data into the receive WQE at resp->offset: 0, -EMSGSIZE past its
 * end, or the DMA's -errno. pkt (RC's, NULL for UC) lets the copy wait to
 * land with the next packets of its message (see resp_place.c); then
 * -ECANCELED says an earlier packet's copy failed and failed the QP.
 */
int rocemu_resp_place_send(struct rocemu_qp *qp, struct rocemu_rc_resp *resp,
			   const struct iovec *data, const struct rocemu_pkt *pkt);
/* WRITE data at the next address: 0, -EMSGSIZE past the RETH's length, the R_Key's or DMA's
 * -errno; pkt as above. */
int rocemu_resp_place_write(struct rocemu_qp *qp, struct rocemu_rc_resp *resp,
			    const struct iovec *data, const struct rocemu_pkt *pkt);
/* Land every held copy. */
void rocemu_resp_hold_flush(void);
/* The receive buffer ends: held data it holds are copied aside, or land when they do not fit. */
void rocemu_resp_hold_own(void);
/* qp goes away: what it holds is dropped. */
void rocemu_resp_hold_forget(const struct rocemu_qp *qp);
/* Last packet pkt of a message: the CQE of its receive WQE (if any), and the message is over. */
void rocemu_resp_complete(struct rocemu_qp *qp, struct rocemu_rc_resp *resp,
			  const struct rocemu_pkt *pkt);
/* The responder fails the QP with err: the receive WQE the message took (if any) completes with it. */
void rocemu_resp_recv_fail(struct rocemu_qp *qp, struct rocemu_rc_resp *resp,
			   enum rocemu_rc_err err);

/* ---- rc_resp.c / rc_comp.c: one received packet for qp ---- */
void rocemu_rc_resp_packet(struct rocemu_qp *qp, const struct rocemu_pkt *pkt);
/* A held copy of packet psn (opcode, at MSN msn) of qp failed (dma_err): fail qp as at its arrival. */
void rocemu_rc_resp_place_failed(struct rocemu_qp *qp, uint32_t psn, uint32_t msn, uint8_t opcode,
				 int dma_err);

/* ---- resp_ack.c: acknowledges coalesced until the turn of the loop ends ---- */
/* Whether what qp's responder owes (an ACK, held data) may wait past its packet: not on a DCT. */
bool rocemu_rc_resp_may_wait(const struct rocemu_qp *qp);
/* The ACK (syndrome) of psn at msn waits, replacing one waiting; false: send it now. */
bool rocemu_rc_ack_defer(struct rocemu_qp *qp, uint32_t psn, uint8_t syndrome, uint32_t msn);
/* The ACK waiting for qp is dropped (the QP goes away or is reset). */
void rocemu_rc_ack_forget(struct rocemu_qp *qp);
/* Before qp's responder sends or fails: held data land, then the ACK waiting for qp leaves. */
void rocemu_rc_resp_settle(struct rocemu_qp *qp);
/* The turn ends, or a control request comes: everything held lands and every ACK waiting leaves. */
void rocemu_rc_settle_all(void);
void rocemu_rc_comp_packet(struct rocemu_qp *qp, const struct rocemu_pkt *pkt);
/*
 * Send what the responder owes, in PSN order, at most ROCEMU_RC_RESP_BURST
 * READ response packets; the rest on the next turn (ROCEMU_QP_TIMER_RESP).
 */
void rocemu_rc_resp_drain(struct rocemu_qp *qp);
/* The QP went to ERR or RESET: nothing owed is sent any more. */
void rocemu_rc_resp_forget(struct rocemu_qp *qp);

/* ---- rc_tx.c ---- */

/* Where a message's payload comes from. */
enum rocemu_rc_src { RC_SRC_NONE, RC_SRC_WQE, RC_SRC_RKEY };

/* One message for the segmenter: SEND, WRITE, READ request or READ response. */
struct rocemu_rc_msg {
	const uint8_t *ops;		/* [first, middle, last, only] opcodes */
	uint32_t psn;			/* PSN of byte 0 */
	uint32_t length;
	enum rocemu_rc_src src;
	const struct rocemu_send_wqe *wqe;	/* WQE: its inline bytes and SGEs */
	uint64_t src_va;		/* RKEY: READ response bytes from src_va through src_rkey */
	uint32_t src_rkey;
	uint64_t reth_va;		/* RETH of the first packet */
	uint32_t reth_rkey, reth_len;
	__be32 imm;			/* ImmDt of the last packet */
	uint32_t ieth_rkey;		/* IETH of the last packet (SEND with invalidate) */
	uint32_t xrc_srqn;		/* XRCETH of every packet, when the opcode carries one */
	uint64_t atomic_swap_add, atomic_compare;	/* AtomicETH */
	uint8_t syndrome;		/* AETH of a READ response */
	uint32_t msn;
	bool se;			/* solicited event on the last packet */
	bool ackreq;			/* request ACKs (last packet, and every ACK_EVERY) */
};

/*
 * Opcode rows for rocemu_rc_msg.ops: the segmenter serves RC and UC alike,
 * and XRC with RC's rows in its QP's class (rocemu_rc.opclass).
 */
extern const uint8_t rocemu_rc_ops_send[4], rocemu_rc_ops_send_imm[4],
	rocemu_rc_ops_write[4], rocemu_rc_ops_write_imm[4], rocemu_rc_ops_read_req[4],
	rocemu_rc_ops_read_resp[4], rocemu_rc_ops_send_inv[4], rocemu_rc_ops_cmp_swap[4],
	rocemu_rc_ops_fetch_add[4];
extern const uint8_t rocemu_uc_ops_send[4], rocemu_uc_ops_send_imm[4], rocemu_uc_ops_write[4],
	rocemu_uc_ops_write_imm[4];

/*
 * Send packets of m from byte offset (a multiple of the MTU) on, at most
 * max_pkts of them; *sent counts them. Returns 0, or -errno of the DMA
 * read (rocemu_dma_* codes) with nothing of the failing batch sent.
 */
int rocemu_rc_send_msg(struct rocemu_qp *qp, const struct rocemu_rc_msg *m, uint32_t offset,
		       uint32_t max_pkts, uint32_t *sent);
/* One message of a list sent at once: m's packets from offset, at most max_pkts; sent counts them. */
struct rocemu_rc_tx {
	struct rocemu_rc_msg m;
	uint32_t offset, max_pkts;
	uint32_t sent;
};
/*
 * rocemu_rc_send_msg for n messages of qp in order, the payload of several
 * read by one process_vm_readv. Returns 0, or -errno of the DMA read of
 * message *failed: those before it all sent, nothing of it from the failing
 * batch on, nothing after it.
 */
int rocemu_rc_send_msgs(struct rocemu_qp *qp, struct rocemu_rc_tx *tx, unsigned int n,
			unsigned int *failed);
/* Send an ACK, RNR NAK or NAK (syndrome) for psn with msn. */
void rocemu_rc_send_ack(struct rocemu_qp *qp, uint32_t psn, uint8_t syndrome, uint32_t msn);
/* Atomic Acknowledge of psn carrying the original value orig. */
void rocemu_rc_send_atomic_ack(struct rocemu_qp *qp, uint32_t psn, uint32_t msn, uint64_t orig);
/* Packets of a message of len bytes at this QP's MTU (at least 1). */
uint32_t rocemu_rc_npkts(const struct rocemu_qp *qp, uint32_t len);

/* ---- rc_tx.c: messages of one run of the requester, staged and sent together ---- */
/* Messages staged at most: one round of rocemu_rc_send_msgs holds as many packets. */
#define ROCEMU_RC_STAGE_MSGS 64u
/* Hold the stage for qp's run: false when a run already holds it (this one sends at once). */
bool rocemu_rc_stage_claim(const struct rocemu_qp *qp);
/* Give the stage back: only the run that claimed it, after its last flush. */
void rocemu_rc_stage_release(void);
/*
 * Stage m (its WQE copied) from offset on, at most max_pkts, as the
 * message at qp's cursor: false when qp holds no stage or it is full.
 */
bool rocemu_rc_stage_add(const struct rocemu_qp *qp, const struct rocemu_rc_msg *m,
			 uint32_t offset, uint32_t max_pkts);
/*
 * Send what is staged, in order. Returns 0, or the -errno of the message
 * whose read failed: those before it sent, nothing after it, and the
 * requester's cursor, cursor_psn and sent_psn put back to its start.
 */
int rocemu_rc_stage_flush(struct rocemu_qp *qp);

#endif /* ROCEMU_EMULATOR_RC_H */
