/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The daemon's half of the rings for the shim's suites: the emulator's
 * own mlx5 ring format (rocemu_ring_mlx5, emulator/mlx5/) run over rings
 * in the test's memory, so that what the shim writes is read by the
 * daemon's parser and what the shim polls was written by the daemon's
 * CQE writer. The emulator's objects and the shim's share names (struct
 * rocemu_qp, rocemu_cq), so this file speaks in types of its own and
 * daemon_rings.c alone includes the emulator's headers.
 */
#ifndef ROCEMU_TESTS_UNIT_LIB_DAEMON_RINGS_H
#define ROCEMU_TESTS_UNIT_LIB_DAEMON_RINGS_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "rocemu/ctrl.h"

/* The emulator's ROCEMU_MAX_SGE and ROCEMU_MAX_INLINE (daemon_rings.c checks they agree). */
#define DAEMON_MAX_SGE 30
#define DAEMON_MAX_INLINE 512

/* ---- completions: the daemon writes CQEs ---- */

struct daemon_cq;

/* A CQ of ncqe CQEs of cqe_size bytes at ring, its doorbell record at dbrec, new as the daemon makes it. */
struct daemon_cq *daemon_cq_new(void *ring, void *dbrec, uint32_t cqe_size, uint32_t ncqe);
void daemon_cq_free(struct daemon_cq *cq);

/* The emulator's enum rocemu_cqe_kind, one for one. */
enum daemon_cqe_kind {
	DAEMON_CQE_SEND_DONE,
	DAEMON_CQE_RECV_SEND,
	DAEMON_CQE_RECV_SEND_IMM,
	DAEMON_CQE_RECV_SEND_INV,
	DAEMON_CQE_RECV_WRITE_IMM,
	DAEMON_CQE_SEND_ERR,
	DAEMON_CQE_RECV_ERR,
};

/* What the emulator's struct rocemu_cqe_info says of a completion. */
struct daemon_cqe {
	enum daemon_cqe_kind kind;
	enum ibv_wc_status status;	/* error kinds */
	uint8_t wqe_opcode;		/* send kinds: the WQE's MLX5_OPCODE_* */
	uint32_t qpn;
	uint16_t wqe_counter;
	uint32_t byte_cnt;
	__be32 imm;			/* as on the wire */
	uint32_t src_qp;
	uint32_t srqn;
	bool grh_ipv4;
	bool solicited;
	const void *scatter;		/* data the CQE carries, or NULL */
	uint32_t scatter_len;
};

/* Write one CQE at the producer index as the daemon does; false when the CQ is in error. */
bool daemon_cqe_write(struct daemon_cq *cq, const struct daemon_cqe *c);

/* ---- work requests: the daemon parses WQEs ---- */

struct daemon_qp;

/* A QP of type and qpn whose rings are mapped at map as layout says. */
struct daemon_qp *daemon_qp_new(void *map, const struct rocemu_qp_layout *layout,
				enum ibv_qp_type type);
void daemon_qp_free(struct daemon_qp *qp);

struct daemon_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t key;
};

/* What the emulator's struct rocemu_send_wqe says of a send WQE. */
struct daemon_send_wqe {
	uint32_t bbs;
	uint16_t wqe_counter;
	uint8_t opcode;
	bool signaled, solicited, fence;
	__be32 imm;
	uint64_t raddr;
	uint32_t rkey;
	uint64_t swap_add, compare;
	uint32_t bind_mw_key, bind_new_rkey, bind_mr_key, bind_access;
	uint64_t bind_addr, bind_length;
	uint32_t dqpn, qkey;		/* UD, DCI */
	uint64_t dc_key;
	uint8_t rgid[16];
	uint32_t xrc_srqn;
	uint32_t length, inline_len;
	unsigned int num_sge;
	struct daemon_sge sge[DAEMON_MAX_SGE];
	uint8_t inline_data[DAEMON_MAX_INLINE];
	/* A UMR of an indirect mkey: its segments as mlx5dv.h has them, the translation inline. */
	bool umr;
	uint32_t umr_key;
	struct mlx5_wqe_umr_ctrl_seg umr_ctrl;
	struct mlx5_wqe_mkey_context_seg umr_mkc;
	uint32_t umr_xlat_len;
	_Alignas(16) uint8_t umr_xlat[DAEMON_MAX_INLINE];	/* read as its segments */
};

struct daemon_recv_wqe {
	uint64_t length;
	unsigned int num_sge;
	struct daemon_sge sge[DAEMON_MAX_SGE];
};

/* Send BBs the doorbell record says are posted past BB counter bb (-EINVAL past the ring). */
int daemon_sq_posted(const struct daemon_qp *qp, uint32_t bb);
/* The send WQE at bb of posted BBs: 0, -EINVAL or -EOPNOTSUPP, as the daemon parses it. */
int daemon_parse_send(const struct daemon_qp *qp, uint32_t bb, uint32_t posted,
		      struct daemon_send_wqe *w);
/* A DCI's WQE at bb, its first BB only (dqpn, dc_key, rgid and the stream), as the DC engine peeks. */
void daemon_peek_dc(const struct daemon_qp *qp, uint32_t bb, struct daemon_send_wqe *w,
		    uint16_t *stream);
/* Receive WQEs the doorbell record says are posted past counter. */
int daemon_rq_posted(const struct daemon_qp *qp, uint32_t counter);
/* Receive WQE number counter, as the daemon parses it. */
void daemon_parse_recv(const struct daemon_qp *qp, uint32_t counter, struct daemon_recv_wqe *w);

#endif /* ROCEMU_TESTS_UNIT_LIB_DAEMON_RINGS_H */
