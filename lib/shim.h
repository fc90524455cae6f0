/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Internal header of the verbs shim: the emulated objects (each embeds the
 * public libibverbs object it stands for, converted back with to_r*()),
 * the daemon connection, and real-function resolution. Every exported
 * verb asks "is this object's context ours?" and forwards to the real
 * libibverbs when it is not.
 */
#ifndef ROCEMU_SHIM_H
#define ROCEMU_SHIM_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "config.h"

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx4dv.h>
#include <infiniband/mlx5dv.h>

#include "rocemu/ctrl.h"
#include "rocemu/ring.h"
#include "rocemu/ring_mlx4.h"
#include "lib/dv/real_dv.h"

/* The shim defines the exported functions behind these verbs.h macros. */
#undef ibv_get_device_list
#undef ibv_query_port
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* ---- real libibverbs functions (real.c) ---- */

/*
 * Exported by libibverbs but declared only in rdma-core's private
 * driver.h; *type is 0 for IB/RoCE v1 and 1 for RoCE v2 there.
 */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, int *type);
enum { ROCEMU_GID_TYPE_SYSFS_ROCE_V1 = 0, ROCEMU_GID_TYPE_SYSFS_ROCE_V2 = 1 };

/* Everything below is internal to the shim: not exported from librocemu.so. */
#pragma GCC visibility push(hidden)

/* name, symbol version (NULL: the default version, for private symbols) */
#define ROCEMU_REAL_FUNCS(X)						\
	X(ibv_get_device_list, "IBVERBS_1.1")				\
	X(ibv_free_device_list, "IBVERBS_1.1")				\
	X(ibv_get_device_guid, "IBVERBS_1.1")				\
	X(ibv_get_device_index, "IBVERBS_1.9")				\
	X(ibv_open_device, "IBVERBS_1.1")				\
	X(ibv_close_device, "IBVERBS_1.1")				\
	X(ibv_query_device, "IBVERBS_1.1")				\
	X(ibv_query_port, "IBVERBS_1.1")				\
	X(ibv_query_gid, "IBVERBS_1.1")					\
	X(ibv_query_gid_type, NULL)					\
	X(_ibv_query_gid_ex, "IBVERBS_1.11")				\
	X(_ibv_query_gid_table, "IBVERBS_1.11")				\
	X(ibv_query_pkey, "IBVERBS_1.1")				\
	X(ibv_alloc_pd, "IBVERBS_1.1")					\
	X(ibv_dealloc_pd, "IBVERBS_1.1")				\
	X(ibv_reg_mr, "IBVERBS_1.1")					\
	X(ibv_reg_mr_iova, "IBVERBS_1.7")				\
	X(ibv_reg_mr_iova2, "IBVERBS_1.8")				\
	X(ibv_rereg_mr, "IBVERBS_1.1")					\
	X(ibv_dereg_mr, "IBVERBS_1.1")					\
	X(ibv_create_comp_channel, "IBVERBS_1.0")			\
	X(ibv_destroy_comp_channel, "IBVERBS_1.0")			\
	X(ibv_create_cq, "IBVERBS_1.1")					\
	X(ibv_resize_cq, "IBVERBS_1.1")					\
	X(ibv_destroy_cq, "IBVERBS_1.1")				\
	X(ibv_get_cq_event, "IBVERBS_1.1")				\
	X(ibv_get_async_event, "IBVERBS_1.1")				\
	X(ibv_create_qp, "IBVERBS_1.1")					\
	X(ibv_query_qp, "IBVERBS_1.1")					\
	X(ibv_modify_qp, "IBVERBS_1.1")					\
	X(ibv_destroy_qp, "IBVERBS_1.1")				\
	X(ibv_qp_to_qp_ex, "IBVERBS_1.6")				\
	X(ibv_create_srq, "IBVERBS_1.1")				\
	X(ibv_modify_srq, "IBVERBS_1.1")				\
	X(ibv_query_srq, "IBVERBS_1.1")					\
	X(ibv_destroy_srq, "IBVERBS_1.1")				\
	X(ibv_create_ah, "IBVERBS_1.1")					\
	X(ibv_create_ah_from_wc, "IBVERBS_1.1")				\
	X(ibv_destroy_ah, "IBVERBS_1.1")				\
	X(ibv_init_ah_from_wc, "IBVERBS_1.1")				\
	X(ibv_attach_mcast, "IBVERBS_1.1")				\
	X(ibv_detach_mcast, "IBVERBS_1.1")				\
	X(ibv_query_ece, "IBVERBS_1.10")				\
	X(ibv_set_ece, "IBVERBS_1.10")					\
	X(ibv_import_device, "IBVERBS_1.10")				\
	X(ibv_import_pd, "IBVERBS_1.10")				\
	X(ibv_unimport_pd, "IBVERBS_1.10")				\
	X(ibv_import_mr, "IBVERBS_1.10")				\
	X(ibv_unimport_mr, "IBVERBS_1.10")				\
	X(ibv_import_dm, "IBVERBS_1.13")				\
	X(ibv_unimport_dm, "IBVERBS_1.13")				\
	X(ibv_reg_dmabuf_mr, "IBVERBS_1.12")				\
	X(ibv_query_qp_data_in_order, "IBVERBS_1.14")

#define ROCEMU_REAL_ENUM(name, version) ROCEMU_REAL_##name,
#define ROCEMU_REAL_DV_ENUM(name, version, lib) ROCEMU_REAL_##name,
enum rocemu_real_fn {
	ROCEMU_REAL_FUNCS(ROCEMU_REAL_ENUM)
	ROCEMU_REAL_DV_FUNCS(ROCEMU_REAL_DV_ENUM)
	ROCEMU_REAL__COUNT
};
#undef ROCEMU_REAL_DV_ENUM
#undef ROCEMU_REAL_ENUM

/* The real function, resolved on first use (thread-safe; aborts if absent). */
void *rocemu_real(enum rocemu_real_fn fn);
#define REAL(name) ((__typeof__(&name))rocemu_real(ROCEMU_REAL_##name))

/* ---- daemon connection (conn.c, autostart.c) ---- */

struct rocemu_conn {
	int fd;
	uint32_t seq;
	pid_t pid;		/* the process whose connection fd is: a forked child may not use it */
	bool lost;		/* the daemon hung up: set once, never cleared */
	const char *name;	/* the device, for log lines (NULL before OPEN_DEVICE) */
	pthread_mutex_t lock;	/* one request/response at a time */
	/* A forked child's first call: make fd a connection of its own (0 or -errno); NULL: EIO. */
	int (*adopt)(struct rocemu_conn *conn);
};

/* Connect to the daemon, starting it if nobody answers. Returns fd or -errno. */
int rocemu_daemon_connect(void);
/* Connect conn (autostarting the daemon). Returns 0 or -errno. */
int rocemu_conn_open(struct rocemu_conn *conn);
void rocemu_conn_close(struct rocemu_conn *conn);
/*
 * One request/response of op; body sizes come from rocemu_ctrl_body_size.
 * On success exactly nfds descriptors are stored in fds. Returns 0, the
 * daemon's -errno, or -EIO/-EPROTO when the daemon is gone or garbled.
 * A forked child never touches its parent's connection: its first call
 * adopts conn (conn->adopt), or fails with -EIO when conn has no adopt.
 */
int rocemu_conn_call(struct rocemu_conn *conn, enum rocemu_ctrl_op op,
		     const void *req, void *resp, int *fds, int nfds);
/*
 * mem_proof.c: fill p, inside request req, for OPEN_DEVICE or
 * IMPORT_DEVICE (ctrl.h); once the call returned, done closes what fill
 * opened.
 */
void rocemu_mem_proof_fill(struct rocemu_mem_proof *p, const void *req);
/*
 * mem_proof.c: a userfaultfd of this process for user-mode faults, with
 * features (UFFDIO_API), or -1 where the kernel gives none (seccomp, an
 * old kernel).
 */
int rocemu_uffd_open(uint64_t features);
void rocemu_mem_proof_done(struct rocemu_mem_proof *p);
/* The same with send_fd passed along with the request (SCM_RIGHTS); -1 passes none. */
int rocemu_conn_call_fd(struct rocemu_conn *conn, enum rocemu_ctrl_op op,
			const void *req, void *resp, int send_fd);
/* Record that the daemon is gone (logged once). */
void rocemu_conn_set_lost(struct rocemu_conn *conn);
/* A non-blocking look at the connection: a hang-up marks it lost. */
void rocemu_conn_check(struct rocemu_conn *conn);

static inline bool rocemu_conn_is_lost(struct rocemu_conn *conn)
{
	return __atomic_load_n(&conn->lost, __ATOMIC_RELAXED);
}

/* ---- objects ---- */

struct rocemu_qp;

/* qpn (24 bits) = chunk index << ROCEMU_QP_TABLE_SHIFT | slot */
enum {
	ROCEMU_QP_TABLE_SHIFT = 12,
	ROCEMU_QP_TABLE_CHUNKS = 1 << (24 - ROCEMU_QP_TABLE_SHIFT),
};

struct rocemu_device {
	struct ibv_device ibdev;
	struct rocemu_dev_info info;
};

/* A context's huge page segments for queue buffers (lib/verbs/queue_buf.c): mlx5's hugetlb_list. */
struct rocemu_huge_pool {
	pthread_mutex_t lock;
	struct rocemu_huge_seg *segs;
};

struct rocemu_context {
	struct verbs_context vctx;	/* ibv_context must end it: keep first */
	struct rocemu_conn conn;
	struct rocemu_device *dev;
	struct rocemu_dev_info info;
	int kick_fd;
	struct rocemu_context_page *page;
	size_t page_size;
	bool fatal_reported;		/* IBV_EVENT_DEVICE_FATAL given once */
	struct rocemu_huge_pool huge_pool;
	/* QPs by qpn for the poller: chunks of 4096 slots, changed under context mutex. */
	struct rocemu_qp **qp_table[ROCEMU_QP_TABLE_CHUNKS];
	/* mlx4dv_set_context_attr's, kept as libmlx4 keeps them for its WQs and buffers */
	uint8_t mlx4_log_wqs_range_sz;
	struct mlx4dv_ctx_allocators mlx4_allocators;
	struct rocemu_context *uar_next;	/* lib/mlx4/uar_map.c's list of cx3 contexts */
};

/*
 * A PD, or a parent domain (protection_domain set): that is a PD to every
 * verb, with its PD's pdn, so the daemon never hears of it (mlx5's
 * struct mlx5_pd and mlx5_parent_domain).
 */
struct rocemu_pd {
	struct ibv_pd ibpd;
	uint32_t pdn;
	uint32_t holders;		/* parent domains on a PD; CQs, QPs, SRQs on a parent domain */
	struct rocemu_pd *protection_domain;	/* NULL for a PD */
};

struct rocemu_td {
	struct ibv_td ibtd;
	uint32_t holders;		/* parent domains on it */
};

struct rocemu_parent_domain {
	struct rocemu_pd rpd;
	struct rocemu_td *td;
	void *pd_context;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size, size_t alignment,
		       uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr, uint64_t resource_type);
};

/* The huge page chunks a queue buffer holds (lib/verbs/queue_buf.c); seg NULL: none. */
struct rocemu_queue_buf {
	struct rocemu_huge_pool *pool;
	struct rocemu_huge_seg *seg;
	uint32_t first, count;
};

/*
 * What a CQ, QP or SRQ takes for the buffer and doorbell record mlx5
 * would allocate (lib/verbs/domain.c): from the allocators of the parent
 * domain it was created on, with a hold on it, or as MLX_*_ALLOC_TYPE
 * says. The rings stay in the daemon's memfd (lib/README.md, "Thread
 * domains and parent domains", says why).
 */
struct rocemu_domain_res {
	struct rocemu_queue_buf queue_buf;	/* when no allocator gave the buffer */
	struct rocemu_parent_domain *domain;	/* NULL: created on a plain PD */
	uint64_t type;				/* MLX5DV_RES_TYPE_* of buf */
	void *buf;				/* NULL: none, or IBV_ALLOCATOR_USE_DEFAULT said */
	void *dbr;
};

struct rocemu_mr {
	struct ibv_mr ibmr;
	bool imported;			/* ibv_import_mr's: libibverbs' IBV_MR_TYPE_IMPORTED_MR */
};

struct rocemu_channel {
	struct ibv_comp_channel ibch;
	uint32_t handle;
};

struct rocemu_cq {
	struct ibv_cq_ex ibcq;		/* ibv_cq is its prefix */
	uint32_t cqn;
	uint32_t ncqe;
	uint32_t cons_index;		/* owned by the app's poller */
	uint32_t arm_sn;		/* bumped per completion event, as mlx5 does */
	uint64_t wc_flags;
	void *map;
	size_t map_size;
	void *buf;			/* ncqe entries of cqe_size bytes */
	uint32_t cqe_size;		/* 64, or 128 from mlx5dv_create_cq */
	__be32 *dbrec;
	pthread_spinlock_t lock;	/* one poller at a time, as mlx5's cq->lock */
	uint32_t empty_polls;		/* consecutive empty polls by empty_poller */
	uint32_t idle_yields;		/* yields since the daemon was last looked at */
	pthread_t empty_poller;
	struct ibv_wc ex_wc;		/* the CQE start_poll/next_poll parsed, for read_*() */
	uint32_t ex_flow_tag;		/* its flow tag and stripped VLAN (RAW_PACKET receives) */
	uint16_t ex_cvlan;
	uint64_t ex_ts;			/* its completion timestamp, device cycles */
	struct mlx5dv_clock_info ex_clock;	/* read by start_poll for the wall-clock ns */
	struct rocemu_qp *ex_qp;	/* last QP found, a cache for the next CQE */
	struct rocemu_domain_res domain_res;	/* of IBV_CQ_INIT_ATTR_MASK_PD's parent domain */
	bool dv_owned;			/* mlx5dv_init_obj gave the consumer index to the program */
	struct rocemu_srq *xrc_srqs;	/* XRC SRQs completing here, linked by xrc_next (under lock) */
	struct rocemu_wq *wqs;		/* WQs completing here, linked by cq_next (under lock) */
	bool mlx4;			/* a ConnectX-3's: struct mlx4_cqe entries of 32 or 64 bytes */
};

/*
 * One send WQE as both posting APIs describe it. Data is sge[num]
 * or, for inline data, sge[num] (ibv_post_send) or buf[num] (wr API).
 */
struct rocemu_wqe {
	uint64_t wr_id;
	unsigned int flags;		/* enum ibv_send_flags */
	enum ibv_wr_opcode opcode;
	__be32 imm;			/* imm_data, or htobe32(rkey) to invalidate */
	uint32_t rkey;
	uint64_t raddr;
	uint64_t compare_add;		/* atomics: compare (CS) or add (FA) */
	uint64_t swap;
	/* BIND_MW: the window, its rkey once bound, where it opens */
	const struct ibv_mw *mw;
	uint32_t bind_rkey;
	const struct ibv_mw_bind_info *bind_info;
	/* UD: the address handle, destination QP and its Q_Key; DCI: the DCT's AH, number, key, stream */
	struct ibv_ah *ah;
	uint32_t remote_qpn, remote_qkey;
	uint64_t dc_key;
	uint16_t dci_stream;
	uint32_t remote_srqn;		/* XRC: the SRQ at the target */
	/* TSO: the frame's header, copied inline whole, and the segment size */
	const void *tso_hdr;
	uint16_t tso_hdr_sz, tso_mss;
	size_t num;
	const struct ibv_sge *sge;
	const struct ibv_data_buf *buf;
};

/*
 * Send queue, in basic blocks (BBs) of 64 bytes. cur_post is the
 * poster's free-running BB counter; tail the poller's (the BB after the
 * last completed WQE). Per BB index of a WQE's first BB: wrid, wqe_head
 * (counter of the WQE's last BB, so tail = wqe_head + 1 on completion)
 * and the WR opcode.
 */
struct rocemu_sq {
	pthread_spinlock_t lock;	/* posters, ibv_post_send or wr_start..wr_complete */
	char *buf;
	char *qend;
	uint32_t wqe_cnt;		/* BBs, a power of two (0: no send queue) */
	uint32_t wqe_shift;		/* log2 of an entry: 6, or a ConnectX-3's WQE stride */
	uint32_t spare;			/* ConnectX-3: entries of prefetch headroom never posted into */
	uint32_t max_wqe_bbs;		/* BBs of the largest WQE the granted caps allow */
	uint32_t max_sge;
	int32_t state_max_sge;		/* max_sge from RTS on, -1 before and from RESET (mlx5) */
	uint32_t max_inline;
	uint32_t cur_post;		/* written by the poster */
	uint32_t tail;			/* written by the poller (release), read by the poster */
	uint64_t *wrid;
	uint32_t *wqe_head;
	uint8_t *wr_opcode;
	bool raw_wqes;			/* mlx5dv_wr_raw_wqe may have posted some (ROCEMU_WR_RAW_WQE) */
	struct mlx5_wqe_ctrl_seg *last_ctrl;	/* the WQE the BlueFlame copy carries */
	char *bf;
	uint32_t bf_toggle;		/* offset of the BlueFlame half to write next */
	uint32_t bf_half;
	/* wr_start..wr_complete batch of the ibv_qp_ex API (lib/datapath/wr.c) */
	uint32_t batch_start;		/* cur_post at wr_start: wr_abort rolls back to it */
	int batch_err;			/* first error of the batch */
	bool wr_pending;		/* a builder ran, its data setter not yet */
	struct rocemu_wqe pending;	/* what the builder recorded */
};

/* Receive queue: head is the poster's WQE counter, tail the poller's. */
struct rocemu_rq {
	pthread_spinlock_t lock;
	char *buf;
	uint32_t wqe_cnt;		/* a power of two (0: no receive queue) */
	uint32_t wqe_shift;
	uint32_t max_sge;
	int32_t state_max_sge;		/* max_sge from INIT on, -1 before and from RESET (mlx5) */
	uint32_t head;			/* written by the poster */
	uint32_t tail;			/* written by the poller (release), read by the poster */
	uint64_t *wrid;
};

struct rocemu_qp {
	struct ibv_qp_ex qpx;		/* qp_base first */
	/* What its queues are laid out by: qp_base.qp_type, or ROCEMU_QPT_DCI/DCT (then IBV_QPT_DRIVER) */
	enum ibv_qp_type type;
	uint32_t qpn;
	bool has_qpx;			/* created with send_ops_flags */
	struct ibv_qp_cap cap;
	int sq_sig_all;
	struct rocemu_qp_layout layout;
	void *map;
	__be32 *dbrec;			/* [MLX5_RCV_DBR], [MLX5_SND_DBR] */
	struct rocemu_sq sq;
	struct rocemu_rq rq;
	struct rocemu_domain_res domain_res;	/* of a parent domain given as its PD */
	bool dv_direct;			/* mlx5dv_init_obj handed out its rings */
	/* mlx5dv_qp_ex_from_ibv_qp_ex: the mlx5 send ops it has (mkey ones, a DCI's DC address) */
	struct mlx5dv_qp_ex dv_qpx;
	struct rocemu_umr_builder *umr;	/* mkey send ops (lib/dv/mlx5dv_mkey.c), or NULL */
	/* RAW_PACKET (lib/verbs/qp_raw.c): what mlx5 learns at create and at modify with a port */
	uint32_t max_tso_header;	/* header bytes a TSO WQE may carry inline */
	uint32_t max_tso;		/* bytes a TSO WQE's data may have: 0 until the port is set */
	bool raw_csum;			/* IBV_SEND_IP_CSUM taken, IBV_WC_IP_CSUM_OK reported */
	bool rss;			/* an RSS QP: no queues of its own */
};

/* An address handle is a userspace object on mlx5 and mlx4: the AV UD WQEs carry. */
struct rocemu_ah {
	struct ibv_ah ibah;
	struct mlx5_wqe_av av;
	struct mlx4_av mlx4_av;		/* the same address as libmlx4's mlx4_create_ah writes it */
};

static inline struct rocemu_ah *to_rah(struct ibv_ah *ah)
{
	return container_of(ah, struct rocemu_ah, ibah);
}

/*
 * Shared receive queue (mlx5 srq.c; ring.h): WQEs linked into a free list
 * by next_wqe_index. The poster fills head and follows its link; the
 * poller links the WQE a CQE names after tail (head == tail: full).
 */
struct rocemu_srq {
	struct ibv_srq ibsrq;
	uint32_t srqn;
	struct rocemu_srq_layout layout;
	void *map;
	char *buf;
	__be32 *db;			/* one word: the posted-WQE counter */
	uint32_t max_gs;		/* data segments per WQE (granted max_sge) */
	uint32_t head, tail;		/* WQE indices; both under lock */
	uint32_t counter;		/* WQEs posted */
	uint64_t *wrid;			/* by WQE index */
	pthread_spinlock_t lock;	/* posters and the poller's frees, as mlx5's srq->lock */
	struct rocemu_domain_res domain_res;	/* of a parent domain given as its PD */
	struct rocemu_cq *xrc_cq;	/* XRC: where its receives complete (their CQEs name it) */
	struct rocemu_srq *xrc_next;	/* in xrc_cq->xrc_srqs */
};

/* A receive WQ (ibv_create_wq): an RQ of its own, posted as a QP's. */
struct rocemu_wq {
	struct ibv_wq ibwq;
	void *map;
	uint64_t map_size;
	__be32 *dbrec;			/* one word: the posted-WQE counter */
	struct rocemu_rq rq;
	struct rocemu_wq *cq_next;	/* in its CQ's wqs: a CQE names the WQ by its number */
};

static inline struct rocemu_wq *to_rwq(struct ibv_wq *wq)
{
	return container_of(wq, struct rocemu_wq, ibwq);
}

struct rocemu_xrcd {
	struct ibv_xrcd ibxrcd;
	uint32_t handle;		/* this open, in the daemon */
	uint32_t xrcdn;			/* the domain, the same for every open of one file */
};

static inline struct rocemu_xrcd *to_rxrcd(struct ibv_xrcd *xrcd)
{
	return container_of(xrcd, struct rocemu_xrcd, ibxrcd);
}

static inline struct rocemu_context *to_rctx(struct ibv_context *ctx)
{
	return container_of(ctx, struct rocemu_context, vctx.context);
}

static inline struct rocemu_pd *to_rpd(struct ibv_pd *pd)
{
	return container_of(pd, struct rocemu_pd, ibpd);
}

static inline struct rocemu_td *to_rtd(struct ibv_td *td)
{
	return container_of(td, struct rocemu_td, ibtd);
}

/* pd's parent domain, or NULL for a plain PD. */
static inline struct rocemu_parent_domain *to_rparent_domain(struct ibv_pd *pd)
{
	struct rocemu_pd *rpd = to_rpd(pd);

	return rpd->protection_domain ? container_of(rpd, struct rocemu_parent_domain, rpd) : NULL;
}

static inline struct rocemu_mr *to_rmr(struct ibv_mr *mr)
{
	return container_of(mr, struct rocemu_mr, ibmr);
}

static inline struct rocemu_channel *to_rchannel(struct ibv_comp_channel *ch)
{
	return container_of(ch, struct rocemu_channel, ibch);
}

static inline struct rocemu_cq *to_rcq(struct ibv_cq *cq)
{
	return container_of((struct ibv_cq_ex *)cq, struct rocemu_cq, ibcq);
}

static inline struct rocemu_cq *to_rcq_ex(struct ibv_cq_ex *cq)
{
	return container_of(cq, struct rocemu_cq, ibcq);
}

static inline struct rocemu_srq *to_rsrq(struct ibv_srq *srq)
{
	return container_of(srq, struct rocemu_srq, ibsrq);
}

static inline struct rocemu_qp *to_rqp(struct ibv_qp *qp)
{
	return container_of(qp, struct rocemu_qp, qpx.qp_base);
}

static inline struct rocemu_qp *to_rqp_ex(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct rocemu_qp, qpx);
}

/* lib/verbs/device.c: the emulated device behind dev, or NULL for a real one. */
struct rocemu_device *rocemu_device_of(struct ibv_device *dev);
/*
 * The emulated device listed so far whose name (by_dev_name: its uverbs
 * dev_name) is the len bytes at name, or NULL: nothing is emulated before
 * the program asked for the device list.
 */
const struct ibv_device *rocemu_device_named(const char *name, size_t len, bool by_dev_name);
/* True once this process has listed an emulated device. */
bool rocemu_devices_listed(void);

/* ---- the files programs probe for RDMA devices (dev_files.c) ---- */

/* What a probed path is: nothing of ours, an emulated device's node, or a file of one. */
enum rocemu_dev_file { ROCEMU_DEV_FILE_OTHER, ROCEMU_DEV_FILE_NODE, ROCEMU_DEV_FILE_SYSFS };
/*
 * Classify path. For a device node *dev is the device; for a sysfs path
 * sysfs holds the daemon's file that stands for it (*dev is NULL when this
 * process listed no devices and the runtime dir's tree has it).
 */
enum rocemu_dev_file rocemu_dev_file_probe(const char *path, const struct ibv_device **dev,
					   char sysfs[PATH_MAX]);
/* True when path is the RDMA CM file and this process has listed emulated devices. */
bool rocemu_dev_file_is_ucma(const char *path);
/* The uverbs character device as stat(2) shows it. */
void rocemu_dev_node_stat(const struct ibv_device *dev, struct stat64 *st);
/* access(2) of a mode 0666 node: read and write, not execute. */
int rocemu_dev_node_access(int mode);

/* ---- libc's own functions, past the shim's overrides (libc_overrides.c) ---- */

/* For the shim's own descriptors, which the overrides would look up in vain. */
ssize_t rocemu_libc_write(int fd, const void *buf, size_t n);
int rocemu_libc_close(int fd);

/* A context of a device that plays a ConnectX-3 (mlx4 rings, include/rocemu/ring_mlx4.h). */
static inline bool rocemu_ctx_is_mlx4(struct ibv_context *ctx)
{
	return container_of(ctx, struct rocemu_context, vctx.context)->info.model ==
	       ROCEMU_MODEL_CX3;
}

/* log2 of an SQ entry of a QP of ctx laid out as l: mlx5's BB, or a ConnectX-3's WQE stride. */
static inline uint32_t rocemu_sq_entry_shift(struct ibv_context *ctx,
					     const struct rocemu_qp_layout *l)
{
	return rocemu_ctx_is_mlx4(ctx) ? l->sq_wqe_shift : MLX5_SEND_WQE_SHIFT;
}

static inline bool rocemu_ctx_is_ours(struct ibv_context *ctx)
{
	return ctx && rocemu_device_of(ctx->device) != NULL;
}

static inline bool rocemu_pd_is_ours(struct ibv_pd *pd)
{
	return pd && rocemu_ctx_is_ours(pd->context);
}

/* Turn a daemon answer (0 or -errno) into the errno value int verbs return. */
static inline int rocemu_errno_value(int ret)
{
	return ret < 0 ? -ret : 0;
}

/*
 * lib/verbs/context.c: after writing a doorbell record or CQ arm word,
 * tell the daemon (context page doorbell_seq) and wake it if it sleeps.
 */
void rocemu_ctx_doorbell(struct rocemu_context *rctx);
/*
 * The same after a receive doorbell, which wakes a sleeping daemon only
 * while it flushes receives (a QP in ERR: context page recv_kick); else
 * the daemon reads the receive queue when a packet needs it.
 */
void rocemu_ctx_recv_doorbell(struct rocemu_context *rctx);

/* Map a daemon memfd of size bytes (the fd is closed). NULL + errno on failure. */
void *rocemu_map_shared(int fd, uint64_t size);

/* ---- verbs_context / context ops (filled by lib/verbs/context.c) ---- */
int rocemu_query_port_op(struct ibv_context *context, uint8_t port_num,
			 struct ibv_port_attr *port_attr, size_t port_attr_len);
int rocemu_query_device_ex_op(struct ibv_context *context,
			      const struct ibv_query_device_ex_input *input,
			      struct ibv_device_attr_ex *attr, size_t attr_size);
struct ibv_cq_ex *rocemu_create_cq_ex_op(struct ibv_context *context,
					 struct ibv_cq_init_attr_ex *attr);
/*
 * lib/verbs/qp.c: create a QP with mlx5's vendor flags
 * (ROCEMU_QP_VENDOR_*), the default ones those of mlx5's create_qp
 * (scatter to CQE unless MLX5_SCATTER_TO_CQE=0). NULL and errno on
 * failure.
 */
uint32_t rocemu_qp_vendor_default(void);
struct ibv_qp *rocemu_qp_create(struct ibv_context *context, struct ibv_qp_init_attr_ex *want,
				uint32_t vendor_flags);
/*
 * The same for mlx4dv_create_qp: no mlx5 vendor flags, receive WQEs of
 * at least inl_recv_sz bytes (the layout's rq_wqe_shift is what was granted).
 */
struct ibv_qp *rocemu_qp_create_inl_recv(struct ibv_context *context,
					 struct ibv_qp_init_attr_ex *want, uint16_t inl_recv_sz);
/* lib/verbs/flow.c: steering rules, NULL and errno (destroy: the errno value) as libibverbs. */
struct ibv_flow *rocemu_create_flow_op(struct ibv_qp *qp, struct ibv_flow_attr *attr);
int rocemu_destroy_flow_op(struct ibv_flow *flow);
/* lib/verbs/qp_raw.c: RAW_PACKET and RSS QPs (TSO data per WQE at most, as tso_caps.max_tso) */
#define ROCEMU_TSO_MAX 262144
bool rocemu_qp_is_rss(const struct ibv_qp_init_attr_ex *attr);
/* 0, or the errno libmlx5 or mlx5_ib gives for the RAW_PACKET and RSS parts of attr. */
int rocemu_qp_raw_check(struct ibv_context *context, const struct ibv_qp_init_attr_ex *attr);
void rocemu_qp_raw_req(struct rocemu_create_qp_req *req, const struct ibv_qp_init_attr_ex *attr);
void rocemu_qp_raw_port_set(struct rocemu_qp *qp);
/* ibv_query_device_ex's TSO, RSS, WQ and raw packet caps of a ConnectX-5 on Ethernet. */
void rocemu_raw_caps(struct ibv_device_attr_ex *attr);
struct ibv_qp *rocemu_create_qp_ex_op(struct ibv_context *context,
				      struct ibv_qp_init_attr_ex *attr);
/* A DC QP's own attributes (mlx5dv_create_qp's dc_init_attr) on top of attr. */
struct rocemu_dc_attr {
	enum ibv_qp_type type;		/* ROCEMU_QPT_DCI or ROCEMU_QPT_DCT */
	uint64_t dct_access_key;
	uint8_t log_concurrent, log_errored;
};
/* lib/verbs/qp.c: a DC QP, IBV_QPT_DRIVER to the application; NULL and errno as mlx5. */
struct ibv_qp *rocemu_create_qp_dc(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr,
				   uint32_t vendor_flags, const struct rocemu_dc_attr *dc);
/*
 * lib/dv/mlx5dv_dc.c: mlx5dv_create_qp of a DC QP
 * (MLX5DV_QP_INIT_ATTR_MASK_DC), NULL and errno as mlx5.
 */
struct ibv_qp *rocemu_dc_qp_create(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr,
				   const struct mlx5dv_qp_init_attr *dv, uint32_t vendor_flags);
/* A DCI's mlx5dv_qp_ex setters. */
void rocemu_dci_wr_ops_init(struct rocemu_qp *qp);

struct ibv_qp *rocemu_open_qp_op(struct ibv_context *context, struct ibv_qp_open_attr *attr);
int rocemu_req_notify_cq_op(struct ibv_cq *cq, int solicited_only);
/*
 * lib/verbs/cq.c: create_cq_ex with CQEs of cqe_size bytes (64 or 128,
 * mlx5dv_create_cq; 0: EINVAL, after the flags' checks, as libmlx5).
 */
struct ibv_cq_ex *rocemu_cq_create_ex(struct ibv_context *context,
				      struct ibv_cq_init_attr_ex *attr, uint32_t cqe_size);
/* libmlx5's CQE size unless the caller chose one: MLX5_CQE_SIZE, 64 or 128 (64 unset); 0 if bad. */
uint32_t rocemu_cqe_size_env(void);

/* ---- data path ---- */

/* lib/datapath/post.c: ibv_post_send / ibv_post_recv. */
/* lib/datapath/wqe.c: bytes of data element i of wqe (SGE or inline buffer), and where they are. */
size_t rocemu_wqe_elem(const struct rocemu_wqe *wqe, size_t i, const void **addr);
/* Copy len bytes into the send ring at dst, going on at BB 0 past the end; returns the end. */
char *rocemu_sq_copy(const struct rocemu_sq *sq, char *dst, const void *src, size_t len);

/*
 * Where a send WQE's data part starts: element first, offset bytes into
 * it (a RAW_PACKET send's first bytes went into its Ethernet segment,
 * mlx5's sg_copy_ptr).
 */
struct rocemu_data_start {
	size_t first;
	size_t offset;
};

/*
 * lib/datapath/eth_seg.c: a RAW_PACKET send's Ethernet segment. The check
 * gives 0 with the segment's ds and where the data goes on, or the errno
 * mlx5's post_send gives; the writer fills the segment at seg and returns
 * where the data segments go.
 */
int rocemu_eth_seg_check(const struct rocemu_qp *qp, const struct rocemu_wqe *wqe, bool inl,
			 struct rocemu_data_start *from, uint32_t *eth_ds);
void *rocemu_eth_seg_write(const struct rocemu_sq *sq, void *seg, const struct rocemu_wqe *wqe,
			   uint32_t eth_ds);
int rocemu_post_send_op(struct ibv_qp *qp, struct ibv_send_wr *wr,
			struct ibv_send_wr **bad_wr);
int rocemu_post_recv_op(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);
/* Post wr to rq, its counter to dbrec, and tell the daemon (a QP's RQ, a WQ): 0 or an errno. */
int rocemu_rq_post(struct rocemu_rq *rq, __be32 *dbrec, struct ibv_context *context,
		   struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);

/*
 * lib/verbs/wq.c: receive WQs and RSS indirection tables (context ops
 * create_wq, modify_wq, destroy_wq, create_rwq_ind_table,
 * destroy_rwq_ind_table); a table's daemon handle is its ind_tbl_handle.
 */
struct ibv_wq *rocemu_create_wq_op(struct ibv_context *context, struct ibv_wq_init_attr *attr);
int rocemu_modify_wq_op(struct ibv_wq *wq, struct ibv_wq_attr *attr);
int rocemu_destroy_wq_op(struct ibv_wq *wq);
struct ibv_rwq_ind_table *rocemu_create_rwq_ind_table_op(struct ibv_context *context,
							 struct ibv_rwq_ind_table_init_attr *attr);
int rocemu_destroy_rwq_ind_table_op(struct ibv_rwq_ind_table *table);

/*
 * lib/verbs/srq.c: shared receive queues (context ops create_srq_ex,
 * post_srq_recv, get_srq_num).
 */
struct ibv_srq *rocemu_create_srq_ex_op(struct ibv_context *context,
					struct ibv_srq_init_attr_ex *attr);
int rocemu_post_srq_recv_op(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			    struct ibv_recv_wr **bad_wr);
int rocemu_get_srq_num_op(struct ibv_srq *srq, uint32_t *srq_num);
/*
 * Post wr to srq (the WQE bytes are mlx5's and mlx4's alike): 0, or
 * err_sge for too many SGEs and err_full for a full SRQ, as the provider
 * answers (mlx5: EINVAL, ENOMEM; mlx4: -1 for both).
 */
int rocemu_srq_post(struct rocemu_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr,
		    int err_sge, int err_full);
/* The wr_id of WQE wqe_counter (a receive CQE's), which is free again (mlx5_free_srq_wqe). */
uint64_t rocemu_srq_complete(struct rocemu_srq *srq, uint16_t wqe_counter);

/* lib/verbs/dm.c: mlx5dv_init_obj of device memory (mlx5dv_get_dm): its mapping and length. */
int rocemu_dm_dv(struct ibv_dm *dm, struct mlx5dv_dm *out);

/*
 * lib/datapath/cqe_scatter.c: data a CQE carries (scatter to CQE), NULL
 * when none; and its copy to the buffers of the WQE the CQE names, before
 * that WQE is given back. Each returns IBV_WC_SUCCESS or the completion's
 * error status.
 */
const void *rocemu_cqe_scatter_data(const struct mlx5_cqe64 *cqe);
enum ibv_wc_status rocemu_cqe_scatter_to_rq(const struct rocemu_rq *rq, uint16_t wqe_counter,
					    const void *data, uint32_t len);
enum ibv_wc_status rocemu_cqe_scatter_to_srq(const struct rocemu_srq *srq, uint16_t wqe_index,
					     const void *data, uint32_t len);
enum ibv_wc_status rocemu_cqe_scatter_to_sq(const struct rocemu_qp *qp, uint16_t wqe_counter,
					    const void *data, uint32_t len);

/* lib/verbs/domain.c: thread domains and parent domains (verbs_context ops). */
struct ibv_td *rocemu_alloc_td_op(struct ibv_context *context, struct ibv_td_init_attr *init_attr);
int rocemu_dealloc_td_op(struct ibv_td *td);
struct ibv_pd *rocemu_alloc_parent_domain_op(struct ibv_context *context,
					     struct ibv_parent_domain_init_attr *attr);
/* ibv_dealloc_pd of a parent domain: EBUSY while objects hold it. */
int rocemu_parent_domain_dealloc(struct rocemu_parent_domain *domain);
/*
 * Take what a resource of type (MLX5DV_RES_TYPE_QP, _CQ, _SRQ) of context
 * whose ring has size bytes takes, on pd, a parent domain or not: its
 * allocators are called as mlx5 calls them (buffer, page aligned, then an
 * 8-byte doorbell record), or, when it has none or they say
 * IBV_ALLOCATOR_USE_DEFAULT for the buffer, mlx5's default allocation of
 * the type MLX_*_ALLOC_TYPE names. Returns 0, ENOMEM (an allocator said
 * NULL), or the errno of huge or contiguous pages that type requires.
 */
int rocemu_domain_res_take(struct rocemu_domain_res *res, struct ibv_context *context,
			   struct ibv_pd *pd, uint64_t type, size_t size);
/* Give it back: the allocator's free or the huge pages, then the hold. */
void rocemu_domain_res_give(struct rocemu_domain_res *res);

/* lib/verbs/queue_buf.c: a queue buffer's memory as MLX_CQ/QP/SRQ_ALLOC_TYPE says. */
void rocemu_huge_pool_init(struct rocemu_huge_pool *pool);
/*
 * Take for a buffer of res_type (MLX5DV_RES_TYPE_*) and length bytes what
 * libmlx5's default allocation would. Returns 0 or the errno value its
 * create would fail with (huge pages: shmget's, contiguous pages: ENOSYS).
 */
int rocemu_queue_buf_take(struct rocemu_context *rctx, uint64_t res_type, size_t length,
			  struct rocemu_queue_buf *buf);
void rocemu_queue_buf_give(struct rocemu_queue_buf *buf);

/* lib/verbs/odp.c: on-demand paging (verbs_context op advise_mr, odp_caps of query_device_ex). */
int rocemu_advise_mr_op(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
			struct ibv_sge *sg_list, uint32_t num_sge);
/* Fill attr's odp_caps (and xrc_odp_caps when XRC is listed) as a ConnectX-5 on RoCE. */
void rocemu_odp_caps(struct ibv_device_attr_ex *attr);
/* ODP caps of XRC and DC, a ConnectX-5's: SRQ receives, no plain receive queue. */
#define ROCEMU_SRQ_TRANSPORT_ODP_CAPS                                                        \
	(IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |               \
	 IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV)

/* lib/dv/mlx5dv_clock.c: the device clock (include/rocemu/clock.h) as mlx5 exposes it. */
void rocemu_clock_info(struct mlx5dv_clock_info *info);
/* How often a clock info must be read again at the least (max_clock_info_update_nsec). */
uint64_t rocemu_clock_info_update_nsec(void);
int rocemu_query_rt_values_op(struct ibv_context *context, struct ibv_values_ex *values);

/*
 * lib/verbs/pd_mr.c: the MR the daemon answers op (REG_MR, REG_DM_MR,
 * IMPORT_MR) with, its keys, handle and length from the answer, addr as
 * given. NULL and errno on failure.
 */
struct ibv_mr *rocemu_mr_new(struct ibv_pd *pd, enum rocemu_ctrl_op op, const void *req, void *addr);

/* lib/verbs/dm.c: device memory (verbs_context ops alloc_dm, free_dm, reg_dm_mr). */
struct ibv_dm *rocemu_alloc_dm_op(struct ibv_context *context, struct ibv_alloc_dm_attr *attr);
int rocemu_free_dm_op(struct ibv_dm *dm);
struct ibv_mr *rocemu_reg_dm_mr_op(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t dm_offset,
				   size_t length, unsigned int access);

/* lib/verbs/xrcd.c: XRC domains (verbs_context ops open_xrcd, close_xrcd). */
struct ibv_xrcd *rocemu_open_xrcd_op(struct ibv_context *context,
				     struct ibv_xrcd_init_attr *attr);
int rocemu_close_xrcd_op(struct ibv_xrcd *xrcd);

/* lib/datapath/wqe.c: the send queue writer both posting APIs share, and queue set-up. */
/* Set up the queues of a mapped QP (qp->layout, qp->cap). Returns 0 or errno. */
int rocemu_qp_queues_init(struct rocemu_qp *qp);
/* After RESET: both queues empty from index 0, as mlx5_init_qp_indices. */
void rocemu_qp_queues_reset(struct rocemu_qp *qp);
void rocemu_qp_queues_state(struct rocemu_qp *qp, enum ibv_qp_state state);
void rocemu_qp_queues_free(struct rocemu_qp *qp);
/*
 * With sq.lock held: write wqe at cur_post and advance it (no doorbell).
 * Returns 0, EINVAL (bad opcode, no AH, too big for the QP) or ENOMEM
 * (queue full, too many SGEs, inline too long, as libmlx5); on error
 * nothing is written.
 */
int rocemu_sq_write(struct rocemu_qp *qp, const struct rocemu_wqe *wqe);
/*
 * With sq.lock held: write a WQE of opcode made of a ctrl segment (fence
 * bits and imm added to what flags ask) and len bytes of segs (a multiple
 * of 16), completing as wr_opcode. Returns 0, EINVAL (too big) or ENOMEM.
 */
int rocemu_sq_write_segs(struct rocemu_qp *qp, uint8_t opcode, uint8_t fence, __be32 imm,
			 const void *segs, size_t len, uint64_t wr_id, unsigned int flags,
			 enum ibv_wr_opcode wr_opcode);
/* With sq.lock held, after at least one rocemu_sq_write: tell the daemon. */
void rocemu_sq_ring(struct rocemu_qp *qp);

/* lib/datapath/wr.c: fill the ibv_qp_ex work-request ops. */
#define ROCEMU_QP_SEND_OPS_FLAGS						\
	((uint64_t)(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |	\
		    IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |		\
		    IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |	\
		    IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_SEND_WITH_INV |	\
		    IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW))
/* What a UC QP takes: no READ or atomics (mlx5's MLX5_SUPPORTED_SEND_OPS_FLAGS_UC). */
#define ROCEMU_QP_SEND_OPS_FLAGS_UC						\
	((uint64_t)(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |	\
		    IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |		\
		    IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_LOCAL_INV |		\
		    IBV_QP_EX_WITH_BIND_MW))
/* The send ops mlx5 takes for a QP type (MLX5_SUPPORTED_SEND_OPS_FLAGS_*): each has its builder. */
uint64_t rocemu_qp_type_send_ops(enum ibv_qp_type type);
void rocemu_qp_wr_ops_init(struct rocemu_qp *qp);
/* The first error of a wr_start..wr_complete batch is the one wr_complete returns. */
void rocemu_sq_batch_fail(struct rocemu_sq *sq, int err);

/* lib/dv/mlx5dv_mkey.c: indirect mkeys and the UMR send ops of mlx5dv_create_qp. */
#define ROCEMU_DV_MKEY_OPS                                                              \
	((uint64_t)(MLX5DV_QP_EX_WITH_MR_INTERLEAVED | MLX5DV_QP_EX_WITH_MR_LIST |     \
		    MLX5DV_QP_EX_WITH_MKEY_CONFIGURE))
/* lib/dv/mlx5dv_raw_wqe.c: mlx5dv_wr_raw_wqe on qp; its WQEs complete as IBV_WC_DRIVER2. */
#define ROCEMU_WR_RAW_WQE ((enum ibv_wr_opcode)0xff)	/* in sq.wr_opcode: no verbs opcode */
void rocemu_dv_raw_wqe_enable(struct ibv_qp *qp);
/* An RC QP with the mkey send ops (ROCEMU_DV_MKEY_OPS) and vendor_flags; NULL with errno. */
struct ibv_qp *rocemu_dv_mkey_qp_create(struct ibv_context *context,
					struct ibv_qp_init_attr_ex *attr, uint32_t vendor_flags);

/* lib/verbs/mw.c: memory windows (context ops alloc_mw, dealloc_mw, bind_mw). */
struct ibv_mw *rocemu_alloc_mw_op(struct ibv_pd *pd, enum ibv_mw_type type);
int rocemu_dealloc_mw_op(struct ibv_mw *mw);
int rocemu_bind_mw_op(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);

/* lib/datapath/qp_table.c: the context's QPs by qpn. Insert returns 0 or ENOMEM. */
int rocemu_qp_table_insert(struct rocemu_context *rctx, struct rocemu_qp *qp);
void rocemu_qp_table_remove(struct rocemu_context *rctx, struct rocemu_qp *qp);
struct rocemu_qp *rocemu_qp_table_find(struct rocemu_context *rctx, uint32_t qpn);
/* The first QP (in qpn order) for which match(qp, arg) holds, or NULL. */
struct rocemu_qp *rocemu_qp_table_first(struct rocemu_context *rctx,
					bool (*match)(struct rocemu_qp *qp, void *arg), void *arg);
void rocemu_qp_table_free(struct rocemu_context *rctx);

/* lib/datapath/poll.c: ibv_poll_cq, and the CQE parser the extended polling shares. */
int rocemu_poll_cq_op(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
/* The CQE at free-running index i if the daemon has handed it to the shim, else NULL. */
static inline struct mlx5_cqe64 *rocemu_cqe_sw(struct rocemu_cq *cq, uint32_t i)
{
	struct mlx5_cqe64 *cqe = rocemu_cqe_at(cq->buf, cq->cqe_size, cq->ncqe, i);
	/* Acquire: pairs with the daemon's release store of op_own, written last. */
	uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);

	return rocemu_cqe_ready(op_own, i, cq->ncqe) ? cqe : NULL;
}
/*
 * With cq->lock held: parse the CQE at the consumer index into wc and
 * consume it. Returns false when the CQ is empty. *qp caches the last QP.
 */
bool rocemu_cq_poll_one(struct rocemu_cq *cq, struct ibv_wc *wc, struct rocemu_qp **qp);
/*
 * ibv_poll_cq of a CQ whose entries poll_one parses (rocemu_cq_poll_one,
 * or a ConnectX-3's rocemu_mlx4_cq_poll_one): the lock, the consumer
 * index record once per call, the yield of an idle poller.
 */
typedef bool rocemu_cq_poll_one_fn(struct rocemu_cq *cq, struct ibv_wc *wc, struct rocemu_qp **qp);
int rocemu_cq_poll(struct rocemu_cq *cq, int num_entries, struct ibv_wc *wc,
		   rocemu_cq_poll_one_fn *poll_one);
/* With cq->lock held: the wr_id of the SQ entry a send CQE's 16-bit index names; it and those before it are done. */
uint64_t rocemu_sq_complete(struct rocemu_sq *sq, uint16_t wqe_counter);
/* With cq->lock held: the receive completed next (the daemon consumes an RQ in order). */
uint64_t rocemu_rq_complete(struct rocemu_rq *rq);
/* With cq->lock held: the XRC SRQ srqn that completes to cq, or NULL. */
struct rocemu_srq *rocemu_cq_xrc_srq(const struct rocemu_cq *cq, uint32_t srqn);
/* The QP of qpn, through the one-entry cache of a poll call; NULL if none. */
struct rocemu_qp *rocemu_cq_qp(struct rocemu_cq *cq, uint32_t qpn, struct rocemu_qp **cache);
/* With cq->lock held: the consumer index record, written once per poll. */
void rocemu_cq_update_ci(struct rocemu_cq *cq);
/* What a poller does once it has unlocked the CQ. */
enum rocemu_poll_idle {
	ROCEMU_POLL_BUSY,	/* nothing: completions are flowing */
	ROCEMU_POLL_YIELD,	/* give the CPU away (DESIGN.md: 2-core machines) */
	ROCEMU_POLL_CHECK,	/* yield, and see whether the daemon is still there */
};
/* With cq->lock held: count a poll. */
enum rocemu_poll_idle rocemu_cq_count_poll(struct rocemu_cq *cq, bool empty);
/* Without the lock: act on what rocemu_cq_count_poll said. */
void rocemu_cq_idle(struct rocemu_cq *cq, enum rocemu_poll_idle idle);
/*
 * lib/verbs/cq.c: drop the CQEs of qpn not yet polled (QP moved to RESET or
 * destroyed), as mlx5_cq_clean; receive ones free their WQE of srq (or NULL).
 * A CQ the program owns (dv_owned) is left alone, as mlx5 leaves it.
 */
void rocemu_cq_clean(struct rocemu_cq *cq, uint32_t qpn, struct rocemu_srq *srq);
/* What the sweep of rocemu_cq_clean asks of a CQE format, with cq->lock held. */
struct rocemu_cqe_sweep_ops {
	bool (*ready)(struct rocemu_cq *cq, uint32_t i);	/* the CQE at i is software's */
	/* The CQE at i is num's (a QP's, or with wq a WQ's): it goes, its receive WQE back to srq. */
	bool (*drop)(struct rocemu_cq *cq, uint32_t i, uint32_t num, bool wq,
		     struct rocemu_srq *srq);
	void (*move)(struct rocemu_cq *cq, uint32_t from, uint32_t to);	/* keeping to's owner bit */
};
/* The same for the CQEs of WQ wqn (its reset or destroy, as mlx5_modify_wq and mlx5_destroy_wq). */
void rocemu_cq_clean_wq(struct rocemu_cq *cq, uint32_t wqn);

/*
 * lib/datapath/flush.c, with cq->lock held, once the daemon is gone: the
 * next WR still outstanding on a QP of cq, completed with WR_FLUSH_ERR;
 * false if none.
 */
bool rocemu_cq_flush_one(struct rocemu_cq *cq, struct ibv_wc *wc);

/* lib/datapath/cq_ex.c: start_poll/next_poll/end_poll and read_*() of ibv_cq_ex. */
void rocemu_cq_ex_set_poll_ops(struct ibv_cq_ex *cq);

/* ---- a ConnectX-3's data path (lib/mlx4/): libmlx4's formats, sizes and errnos ---- */

/* lib/mlx4/post.c: the context ops post_send, post_recv, post_srq_recv. */
int rocemu_mlx4_post_send_op(struct ibv_qp *qp, struct ibv_send_wr *wr,
			     struct ibv_send_wr **bad_wr);
int rocemu_mlx4_post_recv_op(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);
int rocemu_mlx4_post_srq_recv_op(struct ibv_srq *srq, struct ibv_recv_wr *wr,
				 struct ibv_recv_wr **bad_wr);

/*
 * lib/mlx4/uar_map.c: a cx3 context's cmd_fd maps its QPs' UAR and
 * BlueFlame pages. rocemu_mlx4_uar_mmap: false when fd is no such cmd_fd,
 * else true with *mapped the mapping or MAP_FAILED and errno.
 */
void rocemu_mlx4_uar_register(struct rocemu_context *rctx);
void rocemu_mlx4_uar_unregister(struct rocemu_context *rctx);

/* QP qpn's UAR page is page 2 qpn + 2 of cmd_fd, its BlueFlame the next; 0 to 3 are libmlx4's own. */
#define ROCEMU_MLX4_UAR_FIRST_PAGE 2
static inline off_t rocemu_mlx4_uar_offset(uint32_t qpn)
{
	return (off_t)(2 * (uint64_t)qpn + ROCEMU_MLX4_UAR_FIRST_PAGE) * sysconf(_SC_PAGESIZE);
}
bool rocemu_mlx4_uar_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset,
			  void **mapped);

/* lib/mlx4/sq.c: the SQ entry at free-running index i; its stamp (libmlx4 stamp_send_wqe). */
struct mlx4_wqe_ctrl_seg *rocemu_mlx4_sq_wqe(const struct rocemu_sq *sq, uint32_t i);
void rocemu_mlx4_sq_stamp(const struct rocemu_sq *sq, uint32_t i);
/*
 * The SQ of a mapped QP as libmlx4 starts it (at creation and at RESET):
 * its spare entries, each entry's owner bit set, size the stride, stamped
 * (mlx4_qp_init_sq_ownership).
 */
void rocemu_mlx4_sq_init(struct rocemu_qp *qp);

/* The CQE at free-running index i if the daemon has handed it to the shim, else NULL. */
static inline struct mlx4_cqe *rocemu_mlx4_cqe_sw(struct rocemu_cq *cq, uint32_t i)
{
	struct mlx4_cqe *cqe = rocemu_mlx4_cqe_at(cq->buf, cq->cqe_size, cq->ncqe, i);
	/* Acquire: pairs with the daemon's release store of owner_sr_opcode, written last. */
	uint8_t owner = __atomic_load_n(&cqe->owner_sr_opcode, __ATOMIC_ACQUIRE);

	return rocemu_mlx4_cqe_ready(owner, i, cq->ncqe) ? cqe : NULL;
}

static inline bool rocemu_mlx4_cqe_is_send(const struct mlx4_cqe *cqe)
{
	return cqe->owner_sr_opcode & MLX4_CQE_IS_SEND_MASK;
}

/* lib/mlx4/poll.c: the context ops poll_cq and req_notify_cq, and one CQE's parse. */
int rocemu_mlx4_poll_cq_op(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
bool rocemu_mlx4_cq_poll_one(struct rocemu_cq *cq, struct ibv_wc *wc, struct rocemu_qp **qp);
int rocemu_mlx4_req_notify_cq_op(struct ibv_cq *cq, int solicited_only);
/* lib/mlx4/cq_clean.c: how rocemu_cq_clean sweeps a ConnectX-3 CQ's entries (__mlx4_cq_clean). */
extern const struct rocemu_cqe_sweep_ops rocemu_mlx4_cqe_sweep_ops;

#pragma GCC visibility pop

#endif /* ROCEMU_SHIM_H */
