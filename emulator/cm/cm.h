/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The RDMA CM, as the kernel's rdma_ucm, rdma_cm and ib_cm are one stack:
 * - ucma.c: the rdma_cm file a process opens and each command of the
 *   ABI librdmacm writes to it, which drive the files below;
 * - cm_addr.c: addresses to devices, ports, the route (path record) and
 *   the QP attributes each QP state takes (rdma_init_qp_attr);
 * - cm_proto.c: the connection handshake on the wire (REQ, REP, RTU, REJ,
 *   DREQ, DREP as CM MADs on QP1, cm_mad.c), its retries and timewait,
 *   and the events it raises; the end of an id (cm_id_destroy);
 * - cm_id.c: an id's life (made, freed) and the events queued to its file.
 * Each file calls only those listed after it (tests/circles.sh).
 * An id is both the rdma_cm id and its ib_cm id: a ucma handle, and a
 * local communication ID drawn as the kernel's cm.c does (cyclic, XORed
 * with a random operand), so that a late MAD of a gone id finds no other.
 */
#ifndef ROCEMU_EMULATOR_CM_H
#define ROCEMU_EMULATOR_CM_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <rdma/rdma_cma_abi.h>

#include "emulator/base/list.h"
#include "emulator/cm/cm_mad.h"
#include "emulator/core/limits.h"
#include "emulator/core/object.h"

/* The path packet life the kernel's cma gives a RoCE route (4.096 us * 2^16). */
#define CMA_IBOE_PACKET_LIFETIME 16

struct rocemu_client;
struct rocemu_device;
struct rocemu_emu;
struct rocemu_pkt;
struct rocemu_ucma_write_req;
struct rocemu_ucma_write_resp;

/* The rdma_cm id's own states (the kernel's enum rdma_cm_state; queries finish at once). */
enum cma_state {
	CMA_IDLE,
	CMA_ADDR_BOUND,
	CMA_ADDR_RESOLVED,
	CMA_ROUTE_RESOLVED,
	CMA_LISTEN,
	CMA_CONNECT,
	CMA_DISCONNECT,
};

/* The connection's states (IBTA 12.9.6, the kernel's enum ib_cm_state). */
enum cm_state {
	CM_IDLE,
	CM_REQ_SENT,
	CM_REQ_RCVD,
	CM_REP_SENT,
	CM_REP_RCVD,
	CM_ESTABLISHED,
	CM_DREQ_SENT,
	CM_DREQ_RCVD,
	CM_TIMEWAIT,
};

struct rocemu_cm_file {
	struct rocemu_client *client;
	uint32_t id;			/* the shim's name for it in MIGRATE_ID */
	int event_fd;			/* write end of the event pipe: a byte per event queued */
	struct rocemu_list ids;		/* struct rocemu_cm_id.file_node */
	struct rocemu_list events;	/* struct rocemu_cm_event.node, oldest first */
	uint32_t last_mcast_handle;	/* handles of joins, a space of their own as the kernel's */
};

/* A multicast group an id joined (rdma_join_multicast): RoCE joins are local, no SA. */
struct rocemu_cm_mcast {
	struct rocemu_list node;	/* in id->mcasts */
	uint32_t handle;
	uint64_t uid;			/* the application's value, returned in its events */
	struct sockaddr_in addr;	/* the IPv4 group; its MGID is ::ffff:addr */
	uint32_t events_reported;
};

struct rocemu_cm_event {
	struct rocemu_list node;
	struct rocemu_cm_id *owner;	/* whose uid it carries, counted in its events_reported */
	struct rocemu_cm_id *id;	/* the id it names: a new connection's for CONNECT_REQUEST */
	struct rocemu_cm_mcast *mc;	/* the join a MULTICAST_JOIN is for, else NULL */
	struct ucma_abi_event_resp resp;
};

struct rocemu_cm_id {
	struct rocemu_emu *emu;
	struct rocemu_cm_file *file;
	struct rocemu_list file_node;	/* in file->ids */
	struct rocemu_list emu_node;	/* in emu->cm_ids_all, where MADs look for their id */
	uint32_t handle;		/* the ucma id, reused once freed */
	struct rocemu_charge charge;	/* limits.h: to the process that made it or listened */
	uint32_t local_comm_id;		/* the CM's, cyclic over 2^32 so stale MADs find nobody */
	uint64_t uid;			/* the application's value, returned in events */
	uint16_t ps;			/* enum rdma_port_space */
	uint8_t qp_type;		/* enum ibv_qp_type */
	enum cma_state state;
	enum cm_state cm;
	struct rocemu_device *dev;	/* bound or resolved to; NULL before */
	struct sockaddr_in src, dst;
	uint32_t events_reported;
	uint32_t backlog;
	struct rocemu_cm_id *listener;	/* a request not yet accepted: the id it came to */
	struct rocemu_list mcasts;	/* struct rocemu_cm_mcast.node */
	bool passive;			/* made by a request: shares its listener's port */
	bool reuseaddr;
	uint8_t tos;
	uint8_t ack_timeout;		/* RDMA_OPTION_ID_ACK_TIMEOUT, 0: the handshake's */
	/* what the handshake agreed */
	uint32_t remote_comm_id, local_qpn, remote_qpn;
	/*
	 * The PSN this side's receive queue starts at: random, drawn when the
	 * id is made (the kernel's seq_num), and the Starting PSN of the REQ or
	 * REP this side sends. The peer's Starting PSN is where this side's
	 * sends start: sq_psn.
	 */
	uint32_t rq_psn, sq_psn;
	uint64_t remote_tid;		/* the peer's REQ, SIDR REQ, then DREQ transaction, echoed in answers */
	uint8_t responder_resources, initiator_depth, retry_count, rnr_retry_count;
	bool srq, flow_control;
	uint8_t mtu;			/* enum ibv_mtu */
	uint8_t timeout;		/* the QP's local ACK timeout (the kernel's cm av.timeout); timewait lasts as long */
	uint32_t qkey;			/* a UD id's Q_Key: 0 until its QP's INIT or a SIDR REP sets it */
	/* how its REQ, REP or DREQ is resent: the passive side as the peer's REQ asks */
	unsigned int resend_ms;
	uint8_t max_cm_retries;
	/* the MAD that waits for an answer, resent until retries run out */
	uint8_t mad[CM_MAD_BYTES];
	unsigned int retries_left;
	uint64_t timer;			/* the loop's timer: retry or timewait; 0 when none */
};

/* ---- ucma.c ---- */

/* Make c an rdma_cm file; *read_fd is its event pipe's read end for the client. */
int rocemu_ucma_open(struct rocemu_client *c, int *read_fd, uint32_t *file_id);
/* Run one command of c's file: 0 with resp filled, or -errno. */
int rocemu_ucma_write(struct rocemu_client *c, const struct rocemu_ucma_write_req *req,
		      struct rocemu_ucma_write_resp *resp);
/* Destroy c's file and every id in it (the connection closed). */
void rocemu_ucma_close(struct rocemu_client *c);

/* ---- cm_id.c ---- */

/* Queue an event of type for id (owner: whose uid it carries); NULL (logged) when out of memory. */
struct rocemu_cm_event *cm_event_add(struct rocemu_cm_id *owner, struct rocemu_cm_id *id,
				     uint32_t type, int32_t status);
/* Queue an event as cm_event_add does; its resp for the caller to fill (a scratch one if lost). */
struct ucma_abi_event_resp *cm_event_queue(struct rocemu_cm_id *owner, struct rocemu_cm_id *id,
					   uint32_t type, int32_t status);
/*
 * A new id in file (a request's connection), charged to its process. NULL
 * with errno set: ENOMEM out of memory or handles, EAGAIN past the limit.
 */
struct rocemu_cm_id *cm_id_new(struct rocemu_cm_file *file, uint64_t uid, uint16_t ps,
			       uint8_t qp_type);
/* Free id: its timer, its queued events, its joins, its handle. The handshake is the caller's. */
void cm_id_free(struct rocemu_cm_id *id);
/* Ids as objects of their rdma_cm file (object.h). */
extern const struct rocemu_obj_kind rocemu_cm_id_kind;
const char *cm_state_name(enum cm_state s);
/* One line for `rocemu status`: the id's state, addresses and handshake state. */
void cm_id_describe(const struct rocemu_cm_id *id, char *buf, size_t len);

/* ---- cm_addr.c ---- */

/* Bind id to addr: the device that has it (any, or loopback of none: no device yet) and a free port. 0 or -errno. */
int cm_bind(struct rocemu_cm_id *id, const struct sockaddr_in *addr);
/* Pick id's device and source address for dst, as the kernel's route lookup would. 0 or -errno. */
int cm_resolve_addr(struct rocemu_cm_id *id, const struct sockaddr_in *dst);
/* QUERY_ROUTE's answer for id. */
void cm_query_route(const struct rocemu_cm_id *id, struct ucma_abi_query_route_resp *resp);
/* The address vector from id's source to its destination (GRH, GID index 0, port 1). */
void cm_fill_ah(const struct rocemu_cm_id *id, struct ib_uverbs_ah_attr *ah);
/* rdma_init_qp_attr for id and qp_state: 0 with resp filled, or -EINVAL. A UD id takes its Q_Key. */
int cm_init_qp_attr(struct rocemu_cm_id *id, uint32_t qp_state, struct ib_uverbs_qp_attr *resp);
/* The listening id a request for (ps, port) at addr on dev goes to, or NULL. */
struct rocemu_cm_id *cm_find_listener(struct rocemu_emu *emu, struct rocemu_device *dev,
				      uint16_t ps, uint16_t port, uint32_t addr);
/*
 * Whether an id listens on (ps, port) on dev, at any address: the kernel's
 * ib_cm then has a listener for the service ID on the device, and a
 * request the rdma_cm finds no id for is refused by the consumer, not as
 * an invalid service ID.
 */
bool cm_port_listened(struct rocemu_emu *emu, struct rocemu_device *dev, uint16_t ps,
		      uint16_t port);

/* ---- cm_proto.c ---- */

/*
 * Start the CM of emu: daemon-wide settings from the environment
 * (ROCEMU_CM_TIMEOUT_MS, ROCEMU_CM_RETRIES), and QP1's datagrams to it.
 */
void cm_proto_start(struct rocemu_emu *emu);
/* rdma_connect: send the REQ, with the ECE of rdma_set_local_ece. 0 or -errno. */
int cm_connect(struct rocemu_cm_id *id, const struct ucma_abi_conn_param *param,
	       const struct ucma_abi_ece *ece);
/* rdma_accept: the passive side's REP (with param and its ECE), or the active side's RTU (without). */
int cm_accept(struct rocemu_cm_id *id, const struct ucma_abi_conn_param *param,
	      const struct ucma_abi_ece *ece);
/* rdma_reject with a reason and private data. */
int cm_reject(struct rocemu_cm_id *id, uint8_t reason, const uint8_t *data, uint8_t len);
/* rdma_disconnect: DREQ, or DREP to the peer's DREQ. */
int cm_disconnect(struct rocemu_cm_id *id);
/* rdma_notify (IB_EVENT_COMM_EST): data came before the RTU. */
int cm_establish(struct rocemu_cm_id *id);
/* The id goes away: end its handshake as the kernel's cm_destroy_id does (REJ, DREQ, DREP). */
void cm_abandon(struct rocemu_cm_id *id);
/*
 * DESTROY_ID, or its file closed: end id's handshake, refuse the requests
 * still waiting for it as a listener (the kernel's cma_cancel_listens) and
 * free it.
 */
void cm_id_destroy(struct rocemu_cm_id *id);

#endif /* ROCEMU_EMULATOR_CM_H */
