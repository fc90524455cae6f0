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

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

#include "rocemu/ctrl.h"

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
	X(ibv_qp_to_qp_ex, "IBVERBS_1.6")

#define ROCEMU_REAL_ENUM(name, version) ROCEMU_REAL_##name,
enum rocemu_real_fn { ROCEMU_REAL_FUNCS(ROCEMU_REAL_ENUM) ROCEMU_REAL__COUNT };
#undef ROCEMU_REAL_ENUM

/* The real function, resolved on first use (thread-safe; aborts if absent). */
void *rocemu_real(enum rocemu_real_fn fn);
#define REAL(name) ((__typeof__(&name))rocemu_real(ROCEMU_REAL_##name))

/* ---- daemon connection (conn.c, autostart.c) ---- */

struct rocemu_conn {
	int fd;
	uint32_t seq;
	pthread_mutex_t lock;	/* one request/response at a time */
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
 */
int rocemu_conn_call(struct rocemu_conn *conn, enum rocemu_ctrl_op op,
		     const void *req, void *resp, int *fds, int nfds);

/* ---- objects ---- */

struct rocemu_device {
	struct ibv_device ibdev;
	struct rocemu_dev_info info;
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
};

struct rocemu_pd {
	struct ibv_pd ibpd;
	uint32_t pdn;
};

struct rocemu_mr {
	struct ibv_mr ibmr;
};

struct rocemu_channel {
	struct ibv_comp_channel ibch;
	uint32_t handle;
};

/* The CQ doorbell record: two big-endian words, as ctrl.h lays them out. */
enum { ROCEMU_CQ_DBR_SET_CI = 0, ROCEMU_CQ_DBR_ARM = 1 };

struct rocemu_cq {
	struct ibv_cq_ex ibcq;		/* ibv_cq is its prefix */
	uint32_t cqn;
	uint32_t ncqe;
	uint32_t cons_index;		/* owned by the app's poller */
	uint32_t arm_sn;		/* bumped per completion event, as mlx5 does */
	uint64_t wc_flags;
	void *map;
	size_t map_size;
	struct mlx5_cqe64 *buf;
	__be32 *dbrec;
};

struct rocemu_qp {
	struct ibv_qp_ex qpx;		/* qp_base first */
	uint32_t qpn;
	bool has_qpx;			/* created with send_ops_flags */
	uint64_t send_ops_flags;
	struct ibv_qp_cap cap;
	int sq_sig_all;
	struct rocemu_qp_layout layout;
	void *map;
};

static inline struct rocemu_context *to_rctx(struct ibv_context *ctx)
{
	return container_of(ctx, struct rocemu_context, vctx.context);
}

static inline struct rocemu_pd *to_rpd(struct ibv_pd *pd)
{
	return container_of(pd, struct rocemu_pd, ibpd);
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

static inline struct rocemu_qp *to_rqp(struct ibv_qp *qp)
{
	return container_of(qp, struct rocemu_qp, qpx.qp_base);
}

/* device.c: the emulated device behind dev, or NULL for a real one. */
struct rocemu_device *rocemu_device_of(struct ibv_device *dev);

static inline bool rocemu_ctx_is_ours(struct ibv_context *ctx)
{
	return ctx && rocemu_device_of(ctx->device) != NULL;
}

/* Turn a daemon answer (0 or -errno) into the errno value int verbs return. */
static inline int rocemu_errno_value(int ret)
{
	return ret < 0 ? -ret : 0;
}

/*
 * context.c: after writing a doorbell record or CQ arm word, tell the
 * daemon (context page doorbell_seq) and wake it if it sleeps.
 */
void rocemu_ctx_doorbell(struct rocemu_context *rctx);

/* Map a daemon memfd of size bytes (the fd is closed). NULL + errno on failure. */
void *rocemu_map_shared(int fd, uint64_t size);

/* ---- verbs_context / context ops (filled by context.c) ---- */
int rocemu_query_port_op(struct ibv_context *context, uint8_t port_num,
			 struct ibv_port_attr *port_attr, size_t port_attr_len);
int rocemu_query_device_ex_op(struct ibv_context *context,
			      const struct ibv_query_device_ex_input *input,
			      struct ibv_device_attr_ex *attr, size_t attr_size);
struct ibv_cq_ex *rocemu_create_cq_ex_op(struct ibv_context *context,
					 struct ibv_cq_init_attr_ex *attr);
struct ibv_qp *rocemu_create_qp_ex_op(struct ibv_context *context,
				      struct ibv_qp_init_attr_ex *attr);
int rocemu_req_notify_cq_op(struct ibv_cq *cq, int solicited_only);

/* datapath.c: rings not yet driven; these answer "nothing done". */
int rocemu_poll_cq_op(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int rocemu_post_send_op(struct ibv_qp *qp, struct ibv_send_wr *wr,
			struct ibv_send_wr **bad_wr);
int rocemu_post_recv_op(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);
void rocemu_cq_ex_set_poll_ops(struct ibv_cq_ex *cq);

#pragma GCC visibility pop

#endif /* ROCEMU_SHIM_H */
