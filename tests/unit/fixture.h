/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The engine test fixture: an emulator with one device on a fake wire, a
 * client (its control connection a socketpair), a PD, an MR over the
 * test's own memory, a send and a receive CQ and an RC QP in RTS, all
 * made by the functions the control ops call. The test plays both the
 * shim (WQEs into the SQ/RQ rings in mlx5 format, doorbells, polling CQEs)
 * and the peer (packets into the receive path, packets out of the wire).
 * No daemon, no socket. Every call into the emulator is in fixture.c.
 */
#ifndef ROCEMU_TESTS_UNIT_FIXTURE_H
#define ROCEMU_TESTS_UNIT_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <check.h>
#include <infiniband/mlx5dv.h>

#include "emulator/ctrl/client_life.h"
#include "emulator/obj/cq.h"
#include "net/roce/icrc.h"
#include "net/roce/roce_hdr.h"

#define FX_DEV_IP "192.0.2.1"		/* TEST-NET-1: never a local address */
#define FX_PEER_IP "192.0.2.2"
#define FX_PEER_QPN 0x00abcdu
#define FX_PEER_SPORT 0xc123u		/* the peer's UDP source port */
#define FX_MTU IBV_MTU_1024
#define FX_MTU_BYTES 1024u
#define FX_SQ_PSN 0x000100u		/* our requester's first PSN */
#define FX_RQ_PSN 0x000200u		/* the PSN our responder expects first */
#define FX_MIN_RNR_TIMER 14		/* the code our responder puts in RNR NAKs */
#define FX_RD_ATOMIC 4			/* max_rd_atomic and max_dest_rd_atomic */
#define FX_BUF_BYTES (128u * 1024u)	/* the registered memory */
#define FX_QP_DEPTH 16			/* send and receive WRs */
#define FX_SGE_MAX 4
#define FX_INLINE_MAX 64
#define FX_CQE 32
#define FX_USER_QP 0x5150u		/* the "application's ibv_qp" in async events */
#define FX_USER_CQ 0xc0c0u		/* the "application's ibv_cq" in events */
#define FX_USER_SRQ 0x5e50u		/* the "application's ibv_srq" in async events */
#define FX_QKEY 0x0000beefu		/* a UD QP's Q_Key */
#define FX_PKT_MAX 4200u		/* one RoCE packet of the fixture's MTU and more */
#define FX_WIRE_MAX 256u		/* packets the fake wire keeps */

/* A packet on the fake wire (sent by the device) or built for its receive path. */
struct fx_pkt {
	struct rocemu_ipv4_udp flow;
	size_t len;			/* BTH to ICRC */
	uint8_t data[FX_PKT_MAX];
};

/* A CQ as the shim sees it: its own mapping of the memfd and its consumer index. */
struct fx_cq {
	uint32_t cqn;
	struct rocemu_cq_layout layout;
	uint8_t *map;
	uint32_t ci;
};

/* A QP as the shim sees it: its mapping of the rings and its producer counters. */
struct fx_qp {
	enum ibv_qp_type type;
	uint32_t qpn;
	struct rocemu_qp_layout layout;
	uint8_t *map;
	uint32_t sq_cur;		/* next BB to write (free-running) */
	uint32_t rq_head;		/* next receive WQE (free-running) */
};

/* An SRQ as the shim sees it: its mapping, its free list's head and the WQEs posted. */
struct fx_srq {
	uint32_t srqn;
	struct rocemu_srq_layout layout;
	uint8_t *map;
	uint16_t head;			/* the next WQE to fill, along the links */
	uint32_t posted;		/* the doorbell record's counter */
};

struct fx {
	struct rocemu_loop *loop;
	int stop_fd;			/* fx_run: ends the loop's run */
	struct rocemu_emu emu;
	struct rocemu_device *dev;
	struct rocemu_client *client;
	int ctrl_sock;			/* the shim's end of the control connection */
	int async_fd;			/* read end of the context's async event pipe */
	int kick_fd;
	struct rocemu_context_page *page;
	uint32_t pdn;
	uint8_t *buf;			/* FX_BUF_BYTES, registered with all access rights */
	bool rx_burst;			/* fx_rx: packets come in one turn of the loop */
	uint32_t lkey, rkey;
	struct fx_cq scq, rcq;
	struct fx_qp qp;
	struct fx_srq srq;		/* made by fx_srq_create, else unmapped */
	struct fx_pkt *wire;		/* what the device sent, in order */
	unsigned int nwire;
};

extern struct fx fx;

/* Checked fixture of every engine suite: everything above, the QP in RTS. */
void fx_setup(void);
/* The same with a UC QP. */
void fx_setup_uc(void);
/* The same with an XRC initiator (no receive queue). */
void fx_setup_xrc_ini(void);
/* The same with a DCI (no receive queue), with 2^FX_DCI_LOG_STREAMS streams or none. */
#define FX_DCI_LOG_STREAMS 2
void fx_setup_dci(void);
void fx_setup_dci_streams(void);
/* The same with a UD QP of Q_Key FX_QKEY; with _srq, receiving through fx.srq. */
void fx_setup_ud(void);
void fx_setup_ud_srq(void);
void fx_teardown(void);
/* Run suite s; the exit status of the test program. */
int fx_suite_run(Suite *s);

/* ---- the control ops (what the shim asks over the control connection) ---- */

/* Allocate a PD of client c; returns its number. */
uint32_t fx_pd_alloc(struct rocemu_client *c);
/* Register [addr, addr + len) for c in PD pdn with access; returns the key (lkey = rkey). */
uint32_t fx_mr_reg(struct rocemu_client *c, uint32_t pdn, void *addr, size_t len,
		   unsigned int access);
/* Create a CQ of FX_CQE entries; with channel_fd, on a new completion channel (its read end). */
void fx_cq_create(struct fx_cq *cq, int *channel_fd);
/* Modify fx.qp with attr and mask; returns 0 or -errno as the op answers. */
int fx_qp_modify(struct ibv_qp_attr *attr, int mask);
/* fx.qp's state as ibv_query_qp tells it. */
enum ibv_qp_state fx_qp_state(void);
/* The emulator's objects behind fx.qp and cq, for the engines' own functions. */
struct rocemu_qp *fx_emu_qp(void);
struct rocemu_cq *fx_emu_cq(const struct fx_cq *cq);
/* Another client of the same device (for keys another context owns). */
struct rocemu_client *fx_client_new(void);
/* Destroy fx.qp and create a QP of type in its place, in RESET. */
void fx_qp_replace(enum ibv_qp_type type);
/*
 * fx.srq: a basic SRQ of FX_QP_DEPTH WQEs of FX_SGE_MAX SGEs on fx.pdn, its
 * WQEs linked i -> i + 1 as mlx5_alloc_srq_buf links them.
 */
void fx_srq_create(void);
/* Arm fx.srq's limit (ibv_modify_srq IBV_SRQ_LIMIT); 0 or -errno as the op answers. */
int fx_srq_arm(uint32_t limit);
/*
 * Destroy fx.qp (if a failed create did not leave it gone) and create a
 * RAW_PACKET QP with create_flags and max_tso_header in its place, in
 * RESET; the create op's 0 or -errno (then fx.qp is gone).
 */
int fx_qp_replace_raw(uint32_t create_flags, uint32_t max_tso_header);
/* RAW_PACKET fx.qp RESET -> INIT (the port alone) -> RTR -> RTS. */
void fx_raw_to_rts(void);
/* As fx_qp_replace, the new QP receiving through fx.srq. */
void fx_qp_replace_srq(enum ibv_qp_type type);

/* ---- the shim's side of the rings ---- */

/* A send WQE as ibv_post_send describes it, in mlx5 terms. */
struct fx_wr {
	uint8_t opcode;			/* MLX5_OPCODE_* */
	uint8_t flags;			/* MLX5_WQE_CTRL_CQ_UPDATE, _FENCE, _SOLICITED */
	__be32 imm;
	uint64_t raddr;
	uint32_t rkey;
	uint64_t swap_add, compare;
	const struct ibv_sge *sge;
	unsigned int num_sge;
	const void *inline_data;	/* instead of sge when set */
	uint32_t inline_len;
	uint32_t xrc_srqn;		/* XRC initiator: the remote SRQ */
	uint64_t dc_key;		/* DCI: the key of the DCT (FX_PEER_QPN at FX_PEER_IP) */
	uint16_t dci_stream;
	/* RAW_PACKET: the Ethernet segment */
	const void *eth_hdr;		/* the inline header */
	uint16_t eth_hdr_len;
	uint8_t cs_flags;		/* MLX5_ETH_WQE_L3_CSUM, _L4_CSUM */
	uint16_t mss;			/* TSO */
};

/* Header bytes a mlx5_wqe_eth_seg holds itself (inline_hdr_start and inline_hdr). */
#define FX_ETH_SEG_HDR 18u

/* Write wr into the SQ as the shim does (not yet rung); returns its wqe_counter. */
uint16_t fx_post_send(const struct fx_wr *wr);
/* A 16-byte segment of the SQ, seg segments after the ctrl of BB bb (wrapping). */
void *fx_sq_seg(uint32_t bb, unsigned int seg);
/* Post a receive WQE of the given SGEs (not yet rung). */
void fx_post_recv(const struct ibv_sge *sge, unsigned int num_sge);
/*
 * Post a receive WQE of the given SGEs into fx.srq at its head and write
 * its doorbell record, as mlx5_post_srq_recv; returns the WQE's index, the
 * wqe_counter of its CQE.
 */
uint16_t fx_srq_post(const struct ibv_sge *sge, unsigned int num_sge);
/* Write both doorbell records and let the daemon's loop scan them. */
void fx_doorbell(void);
/* Run the daemon's loop for ns nanoseconds: timers due by then fire, then it goes idle once more. */
void fx_run(uint64_t ns);
/* Run one turn of the daemon's loop: the timers due now fire once (one burst of a READ owed). */
void fx_turn(void);
/* Take the next CQE of cq as the shim polls it; false if none. */
bool fx_poll(struct fx_cq *cq, struct mlx5_cqe64 *cqe);
/* Read the next async event of the context; false if none. */
bool fx_async_event(struct rocemu_async_record *rec);
/* fx.qp is in ERR and the next async event is type, for it. */
void fx_expect_qp_error(enum ibv_event_type type);
/*
 * Poll the next CQE of cq and check its opcode (MLX5_CQE_*), wqe_counter
 * and, for an error CQE, its syndrome. Returns it for further checks.
 */
struct mlx5_cqe64 fx_expect_cqe(struct fx_cq *cq, uint8_t op, uint16_t wqe_counter,
				uint8_t syndrome);

/* ---- the peer's side of the wire ---- */

/* Headers of a packet the peer sends; each goes where the opcode has it. */
struct fx_hdrs {
	uint32_t psn;
	bool ackreq;
	uint64_t va;			/* RETH, AtomicETH */
	uint32_t rkey, dma_len;
	uint8_t syndrome;		/* AETH */
	uint32_t msn;
	uint64_t swap_add, compare;	/* AtomicETH */
	uint64_t orig;			/* AtomicAckETH */
	uint32_t imm;			/* ImmDt, IETH */
	uint32_t qkey;			/* DETH (its source QP: FX_PEER_QPN) */
	uint32_t dest_qpn;		/* 0: fx.qp's (QP1 for the CM's MADs) */
};

/* Build the packet opcode/h/payload from the peer to fx.qp, with its ICRC. */
void fx_pkt_build(struct fx_pkt *p, uint8_t opcode, const struct fx_hdrs *h,
		  const void *payload, uint32_t paylen);
/*
 * Hand p to the device's receive path, as the UDP port would, then end the
 * loop's turn (what the transports held back is done), unless a burst is
 * open: between fx_rx_burst_begin and fx_rx_burst_end every packet comes
 * in the same turn.
 */
void fx_rx(const struct fx_pkt *p);
void fx_rx_burst_begin(void);
/* The RC QP to RESET and back to RTS, with the same attributes. */
void fx_qp_reset_to_rts(void);
void fx_rx_burst_end(void);
/* fx_pkt_build then fx_rx. */
void fx_rx_build(uint8_t opcode, const struct fx_hdrs *h, const void *payload, uint32_t paylen);
/* An ACK (or NAK, by syndrome) from the peer for psn. */
void fx_rx_ack(uint32_t psn, uint8_t syndrome, uint32_t msn);
/* Forget what the wire carried so far. */
void fx_wire_clear(void);
/*
 * Packet i the device sent: its BTH and payload length (checked
 * well-formed, ICRC good, to the peer's QP or QP1).
 */
const uint8_t *fx_wire_bth(unsigned int i);
uint32_t fx_wire_paylen(unsigned int i);
/* Check packet i's opcode, PSN, AckReq bit and payload length; returns its BTH. */
const uint8_t *fx_wire_expect(unsigned int i, uint8_t opcode, uint32_t psn, bool ackreq,
			      uint32_t paylen);

#endif /* ROCEMU_TESTS_UNIT_FIXTURE_H */
