/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The DC transport (mlx5 Dynamically Connected, mlx5dv_create_qp(3)).
 * A DCI is an RC requester whose peer changes with its WQEs: each send
 * WQE names a DCT by address vector, DCT number and access key, and the
 * DCI serves one DCT at a time (dci.c), as a ConnectX's DCI does. A DCT
 * is an RC responder on an SRQ that answers any DCI presenting its
 * access key, keeping one responder context per DCI connection (dct.c).
 * Both run RC's engines (rc/), fed DC's differences as data: the opcode
 * class 0x40, the key, connection number and connect mark of a request
 * (struct rocemu_rc), and which context and path are loaded into the QP.
 * Functions return 0 or -errno.
 */
#ifndef ROCEMU_EMULATOR_DC_H
#define ROCEMU_EMULATOR_DC_H

#include <stdbool.h>
#include <stdint.h>

#include "emulator/obj/qp_path.h"
#include "emulator/rc/rc.h"
#include "rocemu/ctrl.h"

struct rocemu_pkt;
struct rocemu_qp;

/* Responder contexts a DCT keeps: one per DCI connection, the least recently used goes. */
#define ROCEMU_DCT_CONNS 64

/* A DCT's responder context for one connection of one DCI. */
struct rocemu_dct_conn {
	bool used;
	uint32_t saddr;			/* the DCI's device, network order */
	uint32_t dci_qpn;
	uint32_t conn;			/* the DCI's connection number (RDETH) */
	uint64_t last_rx;		/* of the DCT's request count: the LRU order */
	struct rocemu_rc_resp resp;
	struct rocemu_qp_path path;	/* back to the DCI */
};

struct rocemu_dc {
	struct rocemu_rc rc;		/* qp->rc points here: RC's engines run on it */
	/* DCI: the connection of the moment and the streams */
	bool connected;
	uint32_t daddr, dctn;
	uint16_t stream;		/* its stream id (mlx5dv_wr_set_dc_addr_stream), as given */
	uint8_t log_concurrent, log_errored;
	uint16_t errored[1u << ROCEMU_DCI_MAX_LOG_STREAMS];	/* stream ids in error */
	uint32_t nerrored;
	/* DCT */
	uint64_t access_key;
	struct rocemu_dct_conn *conns;	/* ROCEMU_DCT_CONNS */
	struct rocemu_dct_conn *active;	/* the one in qp->rc->resp and qp->path */
	uint64_t requests;
};

/* ---- dci.c ---- */
/*
 * The send WQE at bb goes on the connection of the moment (connecting to
 * its DCT if it must), waits for what is in flight (another DCT or
 * stream), or is flushed (its stream is in error).
 */
enum rocemu_rc_fetch rocemu_dci_route(struct rocemu_qp *qp, uint32_t bb);
/*
 * The WQE at FIFO position pos failed with err: with streams, it and the
 * rest of its stream in flight complete (err, WR_FLUSH_ERR), the stream
 * is in error and the DCI goes on with the others. False without streams
 * or once 1 << log_num_errored streams are in error: the DCI fails as RC
 * does (mlx5dv_dci_stream_id_reset(3)).
 */
bool rocemu_dci_stream_fail(struct rocemu_qp *qp, uint32_t pos, enum rocemu_rc_err err);
/* mlx5dv_dci_stream_id_reset: -EINVAL for no DCI with streams or a stream not in error. */
int rocemu_dci_stream_reset(struct rocemu_qp *qp, uint16_t stream);
/* Responses and acknowledges of the DCT the DCI is connected to. */
void rocemu_dci_rx(struct rocemu_qp *qp, const struct rocemu_pkt *pkt);

/* ---- dct.c ---- */
/* A request: its key checked, its DCI's context loaded, then RC's responder. */
void rocemu_dct_rx(struct rocemu_qp *qp, const struct rocemu_pkt *pkt);
/* The responder failed the loaded context with err: that connection ends, the DCT goes on. */
void rocemu_dct_conn_fail(struct rocemu_qp *qp, enum rocemu_rc_err err);
/* Send what every context owes (the responder timer). */
void rocemu_dct_drain(struct rocemu_qp *qp);
/* Forget every context (RESET, ERR, destroy). */
void rocemu_dct_forget(struct rocemu_qp *qp);

#endif /* ROCEMU_EMULATOR_DC_H */
