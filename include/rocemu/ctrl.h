/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The control protocol between the shim (lib/, the "driver") and rocemud
 * (the "hardware"): fixed, versioned binary messages over a Unix
 * SOCK_SEQPACKET socket, one connection per opened context (plus short
 * connections for device listing and the CLI). File descriptors travel as
 * SCM_RIGHTS ancillary data. Every request gets exactly one response with
 * the same op and seq; status is 0 or a negative errno.
 *
 * Verbs attribute structs come from <infiniband/verbs.h> and are carried
 * as they are (they hold no pointers); nothing here re-declares them.
 */
#ifndef ROCEMU_CTRL_H
#define ROCEMU_CTRL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#define ROCEMU_CTRL_MAGIC 0x52434d55u /* "RCMU" */
#define ROCEMU_CTRL_VERSION 7
#define ROCEMU_CTRL_SOCKET "ctrl.sock"  /* inside the runtime dir */
#define ROCEMU_CTRL_LOCK "autostart.lock"
#define ROCEMU_MAX_DEVICES 16
#define ROCEMU_DEV_NAME_MAX 64
#define ROCEMU_CTRL_MAX_FDS 4
/* Largest message body; text reports of any size come in pages of at most this. */
#define ROCEMU_CTRL_MSG_MAX (64 * 1024)
#define ROCEMU_NO_HANDLE 0xffffffffu
/* RSS: the Toeplitz key's bytes at most (mlx5 takes exactly 40) */
#define ROCEMU_RSS_KEY_MAX 40

enum rocemu_ctrl_op {
	ROCEMU_OP_HELLO = 1,		/* list devices; no fds */
	ROCEMU_OP_OPEN_DEVICE,		/* binds the connection to a device; fds: async pipe, kick eventfd, context page memfd */
	ROCEMU_OP_QUERY_DEVICE,
	ROCEMU_OP_QUERY_PORT,
	ROCEMU_OP_ALLOC_PD,
	ROCEMU_OP_DEALLOC_PD,
	ROCEMU_OP_REG_MR,
	ROCEMU_OP_REREG_MR,
	ROCEMU_OP_DEREG_MR,
	ROCEMU_OP_CREATE_COMP_CHANNEL,	/* fd: read end of the event pipe */
	ROCEMU_OP_DESTROY_COMP_CHANNEL,
	ROCEMU_OP_CREATE_CQ,		/* fd: memfd holding CQE ring and doorbell record */
	ROCEMU_OP_RESIZE_CQ,		/* fd: the new memfd */
	ROCEMU_OP_DESTROY_CQ,
	ROCEMU_OP_CREATE_QP,		/* fd: memfd holding SQ, RQ, doorbell record, BlueFlame page */
	ROCEMU_OP_MODIFY_QP,
	ROCEMU_OP_QUERY_QP,
	ROCEMU_OP_DESTROY_QP,
	ROCEMU_OP_STATUS,		/* text report for `rocemu status` */
	ROCEMU_OP_SET_PORT_STATE,	/* `rocemu up|down DEV` */
	ROCEMU_OP_SHUTDOWN,		/* ask the daemon to exit */
	ROCEMU_OP_ALLOC_MW,
	ROCEMU_OP_DEALLOC_MW,
	ROCEMU_OP_SET_FAULTS,		/* `rocemu fault DEV SPEC` */
	ROCEMU_OP_STATS,		/* text report for `rocemu stats` */
	ROCEMU_OP_CREATE_SRQ,		/* fd: memfd holding the WQE ring and doorbell record */
	ROCEMU_OP_MODIFY_SRQ,
	ROCEMU_OP_QUERY_SRQ,
	ROCEMU_OP_DESTROY_SRQ,
	ROCEMU_OP_OPEN_XRCD,
	ROCEMU_OP_CLOSE_XRCD,
	ROCEMU_OP_ATTACH_MCAST,
	ROCEMU_OP_DETACH_MCAST,
	ROCEMU_OP_ADVISE_MR,		/* ibv_advise_mr: the daemon checks, the shim prefetches */
	ROCEMU_OP_ALLOC_DM,		/* fd: memfd of the device memory */
	ROCEMU_OP_FREE_DM,
	ROCEMU_OP_REG_DM_MR,
	ROCEMU_OP_IMPORT_DEVICE,	/* as OPEN_DEVICE, into the object space a cmd_fd names */
	ROCEMU_OP_IMPORT_PD,
	ROCEMU_OP_IMPORT_MR,
	ROCEMU_OP_IMPORT_DM,		/* fd: memfd of the device memory */
	ROCEMU_OP_UCMA_OPEN,		/* binds the connection to an rdma_cm file; fd: read end of its event pipe */
	ROCEMU_OP_UCMA_WRITE,		/* one write() of the kernel's rdma_cm ABI (<rdma/rdma_cma_abi.h>) */
	ROCEMU_OP_DIRECT_DOORBELLS,	/* a QP or CQ handed out by mlx5dv_init_obj: watch its doorbells */
	ROCEMU_OP_OPEN_QP,		/* ibv_open_qp: a reference to an XRC target */
	ROCEMU_OP_SET_CAPTURE,		/* `rocemu capture DEV -w FILE|stop` */
	ROCEMU_OP_TRACE,		/* `rocemu trace`: fd: the socket the events come on */
	ROCEMU_OP_CREATE_MKEY,		/* mlx5dv_create_mkey: an indirect key, free until a UMR */
	ROCEMU_OP_DESTROY_MKEY,
	ROCEMU_OP_QP_UDP_SPORT,		/* mlx5dv_modify_qp_udp_sport: an RC/UC QP's UDP source port */
	ROCEMU_OP_RESERVED_QPN_ALLOC,	/* mlx5dv_reserved_qpn_alloc: a QPN no QP gets */
	ROCEMU_OP_RESERVED_QPN_DEALLOC,
	ROCEMU_OP_DCI_STREAM_RESET,	/* mlx5dv_dci_stream_id_reset */
	ROCEMU_OP_CREATE_FLOW,		/* ibv_create_flow: a steering rule to a RAW_PACKET QP */
	ROCEMU_OP_DESTROY_FLOW,
	ROCEMU_OP_CREATE_WQ,		/* fd: memfd holding the WQ's ring and doorbell record */
	ROCEMU_OP_MODIFY_WQ,
	ROCEMU_OP_DESTROY_WQ,
	ROCEMU_OP_CREATE_RWQ_IND_TABLE,	/* ibv_create_rwq_ind_table */
	ROCEMU_OP_DESTROY_RWQ_IND_TABLE,
	ROCEMU_OP__COUNT
};

struct rocemu_msg_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t op;
	uint32_t seq;
	int32_t status;		/* responses: 0 or -errno; requests: 0 */
	uint32_t len;		/* bytes of body after this header */
	uint32_t reserved;
};

/* --- bodies: *_req sent by the shim, *_resp by the daemon --- */

struct rocemu_hello_req {
	uint32_t pid;
	uint32_t flags;
};

/* The adapter a device plays (ROCEMU_DEVICES name=ip@cx5 or @cx3): its caps and ring format. */
enum rocemu_model {
	ROCEMU_MODEL_CX5,	/* ConnectX-5, mlx5 rings (include/rocemu/ring.h); the default */
	ROCEMU_MODEL_CX3,	/* ConnectX-3 Pro, mlx4 rings (include/rocemu/ring_mlx4.h) */
};

struct rocemu_dev_info {
	char name[ROCEMU_DEV_NAME_MAX];
	uint32_t index;
	uint32_t ipv4;		/* network byte order */
	uint32_t netdev_mtu;	/* the Ethernet MTU the port is configured with */
	uint32_t active_mtu;	/* enum ibv_mtu */
	uint32_t port_state;	/* enum ibv_port_state */
	uint32_t model;		/* enum rocemu_model: which adapter it plays, which rings it has */
	uint64_t node_guid;	/* network byte order, as ibv_get_device_guid() returns */
	uint8_t mac[6];
	uint8_t pad[2];
};

struct rocemu_hello_resp {
	uint32_t daemon_pid;
	uint32_t num_devices;
	char ibdev_root[128];	/* dir holding <dev>/board_id, fw_ver... (ibdev_path) */
	struct rocemu_dev_info devices[ROCEMU_MAX_DEVICES];
};

/*
 * What binds a context to its process's memory, in OPEN_DEVICE and
 * IMPORT_DEVICE: the daemon opens /proc/PID/mem and reads the whole
 * request back at self, which only the requester's address space holds
 * (nonce is random); it takes fd uffd of the requester (pidfd_getfd), a
 * userfaultfd reporting unmaps, or -1; and fd guard_fd, a sealed memfd of
 * one page the requester maps shared at guard, or -1: a copy by pid that
 * passes through that page reached this address space (emulator/mem/mm_guard.h).
 */
#define ROCEMU_MEM_NONCE_LEN 16

struct rocemu_mem_proof {
	uint64_t self;
	uint64_t guard;
	uint8_t nonce[ROCEMU_MEM_NONCE_LEN];
	int32_t uffd;
	int32_t guard_fd;
};

struct rocemu_open_device_req {
	uint32_t dev_index;
	uint32_t pid;
	struct rocemu_mem_proof mem;
};

/* fds: [0] async event pipe (read end), [1] kick eventfd, [2] context page memfd, [3] cmd_fd */
struct rocemu_open_device_resp {
	struct rocemu_dev_info dev;
	uint32_t context_page_size;
	uint32_t reserved;
};

/* Layout of the context page shared between shim and daemon. */
struct rocemu_context_page {
	/* Written by the daemon, read by the shim: nonzero while the daemon
	 * sleeps, so a post must write the kick eventfd to wake it. */
	uint32_t daemon_sleeping;
	/* Written by the shim after each doorbell record or CQ arm: the
	 * daemon scans only the contexts whose value changed. */
	uint32_t doorbell_seq;
	/* Written by the daemon: nonzero while one of its QPs is in ERR, whose
	 * receives it flushes; only then does a receive doorbell wake it. */
	uint32_t recv_kick;
	uint32_t reserved[13];
};

/*
 * A context's cmd_fd: a sealed memfd holding this header. Whoever holds
 * the fd can read the token, and IMPORT_DEVICE with the token opens a
 * context on the same objects, as the kernel's uverbs file does.
 */
#define ROCEMU_CMD_FILE_MAGIC 0x52434d46u /* "RCMF" */
#define ROCEMU_CMD_TOKEN_LEN 16

struct rocemu_cmd_file_hdr {
	uint32_t magic;
	uint32_t dev_index;
	uint8_t token[ROCEMU_CMD_TOKEN_LEN];
};

struct rocemu_import_device_req {
	uint8_t token[ROCEMU_CMD_TOKEN_LEN];
	uint32_t pid;
	uint32_t reserved;
	struct rocemu_mem_proof mem;
};

struct rocemu_query_device_resp {
	struct ibv_device_attr attr;
};

struct rocemu_query_port_req {
	uint32_t port_num;
	uint32_t reserved;
};

struct rocemu_query_port_resp {
	struct ibv_port_attr attr;
};

struct rocemu_handle_req {	/* dealloc_pd, dereg_mr, destroy_cq, destroy_qp, destroy channel */
	uint32_t handle;
	uint32_t reserved;
};

struct rocemu_alloc_pd_resp {
	uint32_t pdn;
	uint32_t reserved;
};

struct rocemu_reg_mr_req {
	uint32_t pdn;
	uint32_t access;	/* enum ibv_access_flags */
	uint64_t addr;		/* address in the client's address space */
	uint64_t length;
	uint64_t iova;		/* address the keys are used with on the wire */
};

struct rocemu_reg_mr_resp {	/* reg_mr, rereg_mr, reg_dm_mr, import_mr */
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t reserved;
	uint64_t length;
};

struct rocemu_rereg_mr_req {
	uint32_t handle;
	uint32_t flags;		/* enum ibv_rereg_mr_flags */
	uint32_t pdn;
	uint32_t access;
	uint64_t addr;
	uint64_t length;
	uint64_t iova;
};

struct rocemu_create_comp_channel_resp {
	uint32_t handle;
	uint32_t reserved;
};

struct rocemu_create_cq_req {
	uint32_t cqe;		/* as the app asked */
	uint32_t channel;	/* comp channel handle or ROCEMU_NO_HANDLE */
	uint32_t comp_vector;
	uint32_t cqe_size;	/* 64 or 128 bytes (mlx5dv_create_cq); 0 is 64 */
	uint64_t user_cq;	/* the app's struct ibv_cq *, written to the channel per event */
};

/*
 * The memfd holds ring (ncqe entries of cqe_size bytes, each ending in a
 * struct mlx5_cqe64) at buf_offset and the two 32-bit big-endian doorbell
 * words (consumer index, arm) at dbrec_offset.
 */
struct rocemu_cq_layout {
	uint32_t cqn;
	uint32_t ncqe;		/* power of two; the app sees cqe = ncqe - 1 */
	uint32_t cqe_size;	/* 64 or 128 */
	uint32_t reserved;
	uint64_t size;		/* bytes to mmap */
	uint64_t buf_offset;
	uint64_t dbrec_offset;
};

struct rocemu_create_cq_resp {
	struct rocemu_cq_layout layout;
};

struct rocemu_resize_cq_req {
	uint32_t cqn;
	uint32_t cqe;
};

struct rocemu_resize_cq_resp {
	struct rocemu_cq_layout layout;
};

struct rocemu_create_qp_req {
	uint32_t pdn;
	uint32_t qp_type;	/* enum ibv_qp_type */
	uint32_t send_cqn;
	uint32_t recv_cqn;
	uint32_t srqn;		/* ROCEMU_NO_HANDLE when none */
	uint32_t sq_sig_all;
	struct ibv_qp_cap cap;
	uint64_t user_qp;	/* the app's struct ibv_qp *, reported in async events */
	uint32_t create_flags;	/* IBV_QP_CREATE_BLOCK_SELF_MCAST_LB, IBV_QP_CREATE_SOURCE_QPN */
	uint32_t source_qpn;	/* with IBV_QP_CREATE_SOURCE_QPN */
	uint32_t xrcd;		/* XRC target: the handle of an open of its domain (no PD, CQ, SRQ) */
	uint32_t vendor_flags;	/* ROCEMU_QP_VENDOR_*: the mlx5 flags its driver gives the kernel */
	uint8_t dci_log_concurrent;	/* DCI: mlx5dv_dci_streams (0, 0: no streams), each at most: */
#define ROCEMU_DCI_MAX_LOG_STREAMS 6
	uint8_t dci_log_errored;
	uint16_t inl_recv_sz;	/* mlx4dv_create_qp: bytes a receive WQE holds at least (0: none) */
	uint64_t dct_access_key;	/* DCT: what every request must carry */
	/* RAW_PACKET: create_flags may add SCATTER_FCS, CVLAN_STRIPPING, PCI_WRITE_END_PADDING */
	uint32_t max_tso_header;	/* ibv_qp_init_attr_ex's, 0: no TSO */
	uint32_t rwq_ind_tbl;		/* RSS: the indirection table's handle, or ROCEMU_NO_HANDLE */
	uint64_t rx_hash_fields_mask;	/* RSS: enum ibv_rx_hash_fields */
	uint8_t rx_hash_function;	/* RSS: enum ibv_rx_hash_function_flags */
	uint8_t rx_hash_key_len;
	uint8_t reserved2[6];
	uint8_t rx_hash_key[ROCEMU_RSS_KEY_MAX];
};

/*
 * ibv_create_flow: the rule's attributes and its specs, copied as the
 * caller laid them after its struct ibv_flow_attr (each spec begins with
 * its type and size, <infiniband/verbs.h>); the daemon checks them all.
 */
#define ROCEMU_FLOW_SPECS_MAX 1024

struct rocemu_create_flow_req {
	uint32_t qpn;
	uint32_t type;		/* enum ibv_flow_attr_type */
	uint32_t flags;		/* enum ibv_flow_flags */
	uint16_t priority;
	uint8_t port;
	uint8_t num_of_specs;
	uint32_t specs_len;	/* bytes of specs used */
	uint32_t reserved;
	uint8_t specs[ROCEMU_FLOW_SPECS_MAX];
};

struct rocemu_create_flow_resp {
	uint32_t handle;
	uint32_t reserved;
};

/* ibv_create_wq: a receive WQ (IBV_WQT_RQ) in mlx5's RQ format. */
struct rocemu_create_wq_req {
	uint32_t pdn;
	uint32_t cqn;
	uint32_t wq_type;	/* enum ibv_wq_type */
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t create_flags;	/* enum ibv_wq_flags */
	uint64_t user_wq;	/* the app's struct ibv_wq *, reported in async events */
};

/* The memfd holds wqe_cnt entries of 1 << wqe_shift bytes at 0, then the doorbell record at dbrec_offset. */
struct rocemu_create_wq_resp {
	uint32_t wqn;
	uint32_t wqe_cnt;
	uint32_t wqe_shift;
	uint32_t max_wr;	/* granted */
	uint32_t max_sge;
	uint32_t reserved;
	uint64_t size;
	uint64_t dbrec_offset;
};

struct rocemu_modify_wq_req {
	uint32_t wqn;
	uint32_t attr_mask;	/* enum ibv_wq_attr_mask */
	uint32_t wq_state;	/* enum ibv_wq_state */
	uint32_t curr_wq_state;
	uint32_t flags;		/* enum ibv_wq_flags */
	uint32_t flags_mask;
};

/* ibv_create_rwq_ind_table: 1 << log_size WQs, by their numbers. */
#define ROCEMU_RWQ_IND_TABLE_MAX_LOG 11

struct rocemu_create_rwq_ind_table_req {
	uint32_t log_size;
	uint32_t reserved;
	uint32_t wqns[1u << ROCEMU_RWQ_IND_TABLE_MAX_LOG];
};

struct rocemu_create_rwq_ind_table_resp {
	uint32_t handle;
	uint32_t reserved;
};

/* mlx5dv_dci_stream_id_reset: stream of the DCI qpn takes work again. */
struct rocemu_dci_stream_reset_req {
	uint32_t qpn;
	uint16_t stream_id;
	uint16_t reserved;
};

/* mlx5's vendor create flags (MLX5_QP_FLAG_*), as the mlx5 provider sets them for the kernel. */
enum {
	ROCEMU_QP_VENDOR_SCATTER_CQE = 1 << 0,		/* small data may land in the CQE */
	ROCEMU_QP_VENDOR_ALLOW_SCATTER_CQE = 1 << 1,	/* also READ/atomic replies without sig_all */
	ROCEMU_QP_VENDOR_PACKET_BASED_CREDIT = 1 << 2,	/* end-to-end credits count packets (RC) */
};

/*
 * The memfd holds the SQ (sq_wqe_cnt entries of 1 << sq_wqe_shift bytes:
 * mlx5's basic blocks, mlx4's WQEs) at sq_offset, the RQ (rq_wqe_cnt entries of 1 << rq_wqe_shift bytes) at
 * rq_offset, the doorbell record (MLX5_RCV_DBR, MLX5_SND_DBR words) at
 * dbrec_offset (mlx4: the RQ's word only) and the BlueFlame page at
 * bf_offset (mlx4: the UAR page, its send doorbell at MLX4_SEND_DOORBELL).
 */
struct rocemu_qp_layout {
	uint32_t qpn;
	uint32_t sq_wqe_cnt;
	uint32_t rq_wqe_cnt;
	uint32_t rq_wqe_shift;
	uint64_t size;
	uint64_t sq_offset;
	uint64_t rq_offset;
	uint64_t dbrec_offset;
	uint64_t bf_offset;
	uint32_t bf_size;
	uint32_t sq_wqe_shift;	/* log2 of an SQ entry: 6 (mlx5's BB), mlx4's WQE stride */
};

struct rocemu_create_qp_resp {
	struct rocemu_qp_layout layout;
	struct ibv_qp_cap cap;	/* what was granted, rounded up */
};

/* ibv_open_qp: the XRC target qpn of the domain open xrcd. */
struct rocemu_open_qp_req {
	uint32_t xrcd;
	uint32_t qpn;
	uint32_t qp_type;
	uint32_t reserved;
	uint64_t user_qp;	/* the app's struct ibv_qp *, reported in async events */
};

struct rocemu_modify_qp_req {
	uint32_t qpn;
	uint32_t attr_mask;	/* enum ibv_qp_attr_mask */
	struct ibv_qp_attr attr;
};

struct rocemu_query_qp_req {
	uint32_t qpn;
	uint32_t attr_mask;
};

struct rocemu_query_qp_resp {
	struct ibv_qp_attr attr;
	struct ibv_qp_cap cap;
	uint32_t sq_sig_all;
	uint32_t qp_type;
};

struct rocemu_create_srq_req {
	uint32_t pdn;
	uint32_t reserved;
	struct ibv_srq_attr attr;	/* max_wr, max_sge asked; srq_limit ignored (IBTA) */
	uint64_t user_srq;	/* the app's struct ibv_srq *, reported in async events */
	uint32_t srq_type;	/* enum ibv_srq_type: BASIC or XRC */
	uint32_t xrcd;		/* XRC: the handle of an open of its domain */
	uint32_t cqn;		/* XRC: the CQ its receives complete to */
	uint32_t reserved2;
};

/*
 * The memfd holds the WQE ring (wqe_cnt entries of 1 << wqe_shift bytes,
 * each a struct mlx5_wqe_srq_next_seg and data segments; ring.h) at
 * buf_offset and the doorbell record (one big-endian word) at dbrec_offset.
 */
struct rocemu_srq_layout {
	uint32_t srqn;
	uint32_t wqe_cnt;
	uint32_t wqe_shift;
	uint32_t reserved;
	uint64_t size;
	uint64_t buf_offset;
	uint64_t dbrec_offset;
};

struct rocemu_create_srq_resp {
	struct rocemu_srq_layout layout;
	struct ibv_srq_attr attr;	/* what was granted */
};

struct rocemu_modify_srq_req {
	uint32_t srqn;
	uint32_t attr_mask;	/* enum ibv_srq_attr_mask */
	struct ibv_srq_attr attr;
};

/* What mlx5dv_init_obj handed to the program; its doorbells ring without a kick. */
enum rocemu_direct_kind {
	ROCEMU_DIRECT_QP,	/* send doorbell record and BlueFlame */
	ROCEMU_DIRECT_CQ,	/* arm word */
};

/*
 * With a userfaultfd passed along (SCM_RIGHTS), registered for write
 * protection over the program's [wp_addr, wp_addr + wp_len), every page
 * its doorbells are written in: an idle daemon protects them and sleeps.
 */
struct rocemu_direct_doorbells_req {
	uint32_t kind;		/* enum rocemu_direct_kind */
	uint32_t handle;	/* qpn or cqn */
	uint64_t wp_addr;
	uint64_t wp_len;	/* 0 with no userfaultfd: the daemon polls */
};

struct rocemu_qp_udp_sport_req {
	uint32_t qpn;
	uint16_t udp_sport;	/* host order */
	uint16_t reserved;
};

struct rocemu_reserved_qpn_resp {
	uint32_t qpn;
	uint32_t reserved;
};

struct rocemu_query_srq_resp {
	struct ibv_srq_attr attr;
};

/*
 * ibv_open_xrcd: with shared set, the request carries the caller's fd
 * (SCM_RIGHTS), as proof it may open the file, and the XRCD is that of
 * the file's inode, found or made as oflags (O_CREAT, O_EXCL) say.
 */
struct rocemu_open_xrcd_req {
	uint32_t oflags;
	uint32_t shared;	/* 0: fd -1, a domain of this context's own */
};

struct rocemu_open_xrcd_resp {
	uint32_t handle;	/* this open of the domain, for CLOSE_XRCD */
	uint32_t xrcdn;		/* the domain, the same for every open of one file */
};

/* Device memory: the MEMIC of a ConnectX-5 (max_dm_size), allocated in 64-byte units. */
#define ROCEMU_DM_MAX_SIZE (128 * 1024)
#define ROCEMU_DM_UNIT 64
/* Largest log_align_req: a page, where every region starts. */
#define ROCEMU_DM_MAX_LOG_ALIGN 12

struct rocemu_alloc_dm_req {
	uint64_t length;
	uint32_t log_align_req;
	uint32_t reserved;
};

/* fd: the memfd; the region is its first length bytes. */
struct rocemu_dm_resp {	/* alloc_dm, import_dm */
	uint32_t handle;
	uint32_t reserved;
	uint64_t length;
	uint64_t map_size;	/* bytes to mmap */
};

struct rocemu_reg_dm_mr_req {
	uint32_t pdn;
	uint32_t dm;
	uint64_t offset;
	uint64_t length;
	uint32_t access;
	uint32_t reserved;
};

struct rocemu_mcast_req {	/* attach_mcast, detach_mcast */
	uint32_t qpn;
	uint32_t reserved;
	uint8_t mgid[16];
};

/* SGEs per ADVISE_MR message; the shim sends a longer list in pieces. */
#define ROCEMU_ADVISE_MR_MAX_SGE 16

struct rocemu_advise_mr_req {
	uint32_t pdn;
	uint32_t advice;	/* enum ibv_advise_mr_advice */
	uint32_t flags;		/* IBV_ADVISE_MR_FLAG_FLUSH */
	uint32_t num_sge;	/* 1..ROCEMU_ADVISE_MR_MAX_SGE */
	struct ibv_sge sge[ROCEMU_ADVISE_MR_MAX_SGE];	/* lkeys and iova ranges */
};

struct rocemu_advise_mr_resp {
	struct {		/* what to fault in, per SGE, in the client's memory (length 0: nothing) */
		uint64_t addr;
		uint64_t length;
	} range[ROCEMU_ADVISE_MR_MAX_SGE];
};

struct rocemu_set_port_state_req {
	char dev_name[ROCEMU_DEV_NAME_MAX];
	uint32_t port_state;	/* IBV_PORT_ACTIVE or IBV_PORT_DOWN */
	uint32_t reserved;
};

struct rocemu_alloc_mw_req {
	uint32_t pdn;
	uint32_t type;		/* enum ibv_mw_type */
};

struct rocemu_alloc_mw_resp {
	uint32_t handle;
	uint32_t rkey;
};

/* KLM entries an indirect mkey holds at most (its max_klm_list_size): a UMR carries them inline. */
#define ROCEMU_MKEY_MAX_ENTRIES 16

struct rocemu_create_mkey_req {
	uint32_t pdn;
	uint32_t create_flags;	/* enum mlx5dv_mkey_init_attr_flags */
	uint32_t max_entries;	/* KLM entries asked */
	uint32_t reserved;
};

struct rocemu_create_mkey_resp {
	uint32_t handle;
	uint32_t key;		/* lkey and rkey, variant 0 as mlx5's */
	uint32_t max_entries;	/* granted: a multiple of 4 */
	uint32_t reserved;
};

struct rocemu_set_faults_req {
	char dev_name[ROCEMU_DEV_NAME_MAX];
	char spec[256];		/* "drop=0.05,dup=0.02,...,seed=7"; "" clears */
};

#define ROCEMU_TRACE_ANY_QP 0xffffffffu

/* What `rocemu trace` shows. */
enum rocemu_trace_kind {
	ROCEMU_TRACE_PACKET = 1 << 0,
	ROCEMU_TRACE_QP = 1 << 1,	/* QP state changes */
	ROCEMU_TRACE_CQE = 1 << 2,
	ROCEMU_TRACE_ASYNC = 1 << 3,
	ROCEMU_TRACE_ALL = (1 << 4) - 1,
};

struct rocemu_trace_req {
	char dev_name[ROCEMU_DEV_NAME_MAX];	/* "" for every device */
	uint32_t qpn;				/* ROCEMU_TRACE_ANY_QP, or events of this QP only */
	uint32_t kinds;				/* enum rocemu_trace_kind bits */
};

#define ROCEMU_CAPTURE_PATH_MAX 2048	/* a request fits in the daemon's 4 KiB */

struct rocemu_set_capture_req {
	char dev_name[ROCEMU_DEV_NAME_MAX];
	char path[ROCEMU_CAPTURE_PATH_MAX];	/* absolute; "" stops the device's capture */
};

/*
 * STATUS and STATS: a text report of any size, read in pages over one
 * connection. The request at offset 0 takes a snapshot of the report; the
 * requests at later offsets read that snapshot, so the pages fit together.
 */
struct rocemu_text_req {
	uint64_t offset;	/* 0, then the sum of the page lengths received so far */
};

/* The page at the requested offset: up to ROCEMU_TEXT_PAGE_MAX bytes of text, no NUL. */
struct rocemu_text_resp {
	uint64_t total;		/* length of the whole report */
	char text[];
};

#define ROCEMU_TEXT_PAGE_MAX (ROCEMU_CTRL_MSG_MAX - sizeof(struct rocemu_text_resp))

/*
 * Async event record, as the kernel's uverbs writes it to async_fd:
 * element is the app's object pointer (struct ibv_qp *, struct ibv_cq *,
 * struct ibv_srq *) or the port number, per event type.
 * Completion channels carry one uint64_t per event: the app's struct ibv_cq *.
 */
struct rocemu_async_record {
	uint64_t element;
	uint32_t event_type;	/* enum ibv_event_type */
	uint32_t reserved;
};

/*
 * The rdma_cm file: each write() librdmacm makes on /dev/infiniband/rdma_cm
 * travels as it is (a struct ucma_abi_cmd_hdr and its body); the daemon
 * answers with the bytes the kernel would copy to the command's response
 * address. The event pipe carries one byte per event queued.
 */
#define ROCEMU_UCMA_CMD_MAX 512
#define ROCEMU_UCMA_OPT_MAX 256
#define ROCEMU_UCMA_RESP_MAX 1024

/* fd: the event pipe's read end */
struct rocemu_ucma_open_resp {
	uint32_t file_id;	/* names the file to MIGRATE_ID, in place of its descriptor */
	uint32_t reserved;
};

struct rocemu_ucma_write_req {
	uint32_t len;		/* bytes of cmd */
	uint32_t optlen;	/* SET_OPTION: bytes of the value at its optval, copied to opt */
	uint8_t cmd[ROCEMU_UCMA_CMD_MAX];
	uint8_t opt[ROCEMU_UCMA_OPT_MAX];
};

struct rocemu_ucma_write_resp {
	uint64_t response;	/* the address the command names for its response */
	uint32_t len;		/* bytes of data for it (at most the command's out) */
	uint32_t reserved;
	uint8_t data[ROCEMU_UCMA_RESP_MAX];
};

/* Body sizes by op: [0] request, [1] response. ~0: a text page (struct rocemu_text_resp). */
#define ROCEMU_VARLEN UINT32_MAX
static const uint32_t rocemu_ctrl_body_size[ROCEMU_OP__COUNT][2] = {
	[ROCEMU_OP_HELLO] = { sizeof(struct rocemu_hello_req), sizeof(struct rocemu_hello_resp) },
	[ROCEMU_OP_OPEN_DEVICE] = { sizeof(struct rocemu_open_device_req), sizeof(struct rocemu_open_device_resp) },
	[ROCEMU_OP_QUERY_DEVICE] = { 0, sizeof(struct rocemu_query_device_resp) },
	[ROCEMU_OP_QUERY_PORT] = { sizeof(struct rocemu_query_port_req), sizeof(struct rocemu_query_port_resp) },
	[ROCEMU_OP_ALLOC_PD] = { 0, sizeof(struct rocemu_alloc_pd_resp) },
	[ROCEMU_OP_DEALLOC_PD] = { sizeof(struct rocemu_handle_req), 0 },
	[ROCEMU_OP_REG_MR] = { sizeof(struct rocemu_reg_mr_req), sizeof(struct rocemu_reg_mr_resp) },
	[ROCEMU_OP_REREG_MR] = { sizeof(struct rocemu_rereg_mr_req), sizeof(struct rocemu_reg_mr_resp) },
	[ROCEMU_OP_DEREG_MR] = { sizeof(struct rocemu_handle_req), 0 },
	[ROCEMU_OP_CREATE_COMP_CHANNEL] = { 0, sizeof(struct rocemu_create_comp_channel_resp) },
	[ROCEMU_OP_DESTROY_COMP_CHANNEL] = { sizeof(struct rocemu_handle_req), 0 },
	[ROCEMU_OP_CREATE_CQ] = { sizeof(struct rocemu_create_cq_req), sizeof(struct rocemu_create_cq_resp) },
	[ROCEMU_OP_RESIZE_CQ] = { sizeof(struct rocemu_resize_cq_req), sizeof(struct rocemu_resize_cq_resp) },
	[ROCEMU_OP_DESTROY_CQ] = { sizeof(struct rocemu_handle_req), 0 },
	[ROCEMU_OP_CREATE_QP] = { sizeof(struct rocemu_create_qp_req), sizeof(struct rocemu_create_qp_resp) },
	[ROCEMU_OP_MODIFY_QP] = { sizeof(struct rocemu_modify_qp_req), 0 },
	[ROCEMU_OP_QUERY_QP] = { sizeof(struct rocemu_query_qp_req), sizeof(struct rocemu_query_qp_resp) },
	[ROCEMU_OP_DESTROY_QP] = { sizeof(struct rocemu_handle_req), 0 },
	[ROCEMU_OP_STATUS] = { sizeof(struct rocemu_text_req), ROCEMU_VARLEN },
	[ROCEMU_OP_SET_PORT_STATE] = { sizeof(struct rocemu_set_port_state_req), 0 },
	[ROCEMU_OP_SHUTDOWN] = { 0, 0 },
	[ROCEMU_OP_ALLOC_MW] = { sizeof(struct rocemu_alloc_mw_req), sizeof(struct rocemu_alloc_mw_resp) },
	[ROCEMU_OP_DEALLOC_MW] = { sizeof(struct rocemu_handle_req), 0 },
	[ROCEMU_OP_SET_FAULTS] = { sizeof(struct rocemu_set_faults_req), 0 },
	[ROCEMU_OP_STATS] = { sizeof(struct rocemu_text_req), ROCEMU_VARLEN },
	[ROCEMU_OP_CREATE_SRQ] = { sizeof(struct rocemu_create_srq_req), sizeof(struct rocemu_create_srq_resp) },
	[ROCEMU_OP_MODIFY_SRQ] = { sizeof(struct rocemu_modify_srq_req), 0 },
	[ROCEMU_OP_QUERY_SRQ] = { sizeof(struct rocemu_handle_req), sizeof(struct rocemu_query_srq_resp) },
	[ROCEMU_OP_DESTROY_SRQ] = { sizeof(struct rocemu_handle_req), 0 },
	[ROCEMU_OP_OPEN_XRCD] = { sizeof(struct rocemu_open_xrcd_req), sizeof(struct rocemu_open_xrcd_resp) },
	[ROCEMU_OP_CLOSE_XRCD] = { sizeof(struct rocemu_handle_req), 0 },
	[ROCEMU_OP_ATTACH_MCAST] = { sizeof(struct rocemu_mcast_req), 0 },
	[ROCEMU_OP_DETACH_MCAST] = { sizeof(struct rocemu_mcast_req), 0 },
	[ROCEMU_OP_ADVISE_MR] = { sizeof(struct rocemu_advise_mr_req), sizeof(struct rocemu_advise_mr_resp) },
	[ROCEMU_OP_ALLOC_DM] = { sizeof(struct rocemu_alloc_dm_req), sizeof(struct rocemu_dm_resp) },
	[ROCEMU_OP_FREE_DM] = { sizeof(struct rocemu_handle_req), 0 },
	[ROCEMU_OP_REG_DM_MR] = { sizeof(struct rocemu_reg_dm_mr_req), sizeof(struct rocemu_reg_mr_resp) },
	[ROCEMU_OP_IMPORT_DEVICE] = { sizeof(struct rocemu_import_device_req), sizeof(struct rocemu_open_device_resp) },
	[ROCEMU_OP_IMPORT_PD] = { sizeof(struct rocemu_handle_req), sizeof(struct rocemu_alloc_pd_resp) },
	[ROCEMU_OP_IMPORT_MR] = { sizeof(struct rocemu_handle_req), sizeof(struct rocemu_reg_mr_resp) },
	[ROCEMU_OP_IMPORT_DM] = { sizeof(struct rocemu_handle_req), sizeof(struct rocemu_dm_resp) },
	[ROCEMU_OP_UCMA_OPEN] = { 0, sizeof(struct rocemu_ucma_open_resp) },
	[ROCEMU_OP_UCMA_WRITE] = { sizeof(struct rocemu_ucma_write_req), sizeof(struct rocemu_ucma_write_resp) },
	[ROCEMU_OP_DIRECT_DOORBELLS] = { sizeof(struct rocemu_direct_doorbells_req), 0 },
	[ROCEMU_OP_OPEN_QP] = { sizeof(struct rocemu_open_qp_req), 0 },
	[ROCEMU_OP_SET_CAPTURE] = { sizeof(struct rocemu_set_capture_req), 0 },
	[ROCEMU_OP_TRACE] = { sizeof(struct rocemu_trace_req), 0 },
	[ROCEMU_OP_CREATE_MKEY] = { sizeof(struct rocemu_create_mkey_req), sizeof(struct rocemu_create_mkey_resp) },
	[ROCEMU_OP_DESTROY_MKEY] = { sizeof(struct rocemu_handle_req), 0 },
	[ROCEMU_OP_QP_UDP_SPORT] = { sizeof(struct rocemu_qp_udp_sport_req), 0 },
	[ROCEMU_OP_RESERVED_QPN_ALLOC] = { 0, sizeof(struct rocemu_reserved_qpn_resp) },
	[ROCEMU_OP_RESERVED_QPN_DEALLOC] = { sizeof(struct rocemu_handle_req), 0 },
	[ROCEMU_OP_DCI_STREAM_RESET] = { sizeof(struct rocemu_dci_stream_reset_req), 0 },
	[ROCEMU_OP_CREATE_FLOW] = { sizeof(struct rocemu_create_flow_req), sizeof(struct rocemu_create_flow_resp) },
	[ROCEMU_OP_DESTROY_FLOW] = { sizeof(struct rocemu_handle_req), 0 },
	[ROCEMU_OP_CREATE_WQ] = { sizeof(struct rocemu_create_wq_req), sizeof(struct rocemu_create_wq_resp) },
	[ROCEMU_OP_MODIFY_WQ] = { sizeof(struct rocemu_modify_wq_req), 0 },
	[ROCEMU_OP_DESTROY_WQ] = { sizeof(struct rocemu_handle_req), 0 },
	[ROCEMU_OP_CREATE_RWQ_IND_TABLE] = { sizeof(struct rocemu_create_rwq_ind_table_req), sizeof(struct rocemu_create_rwq_ind_table_resp) },
	[ROCEMU_OP_DESTROY_RWQ_IND_TABLE] = { sizeof(struct rocemu_handle_req), 0 },
};

static const char *const rocemu_ctrl_op_names[ROCEMU_OP__COUNT] = {
	[ROCEMU_OP_HELLO] = "HELLO",
	[ROCEMU_OP_OPEN_DEVICE] = "OPEN_DEVICE",
	[ROCEMU_OP_QUERY_DEVICE] = "QUERY_DEVICE",
	[ROCEMU_OP_QUERY_PORT] = "QUERY_PORT",
	[ROCEMU_OP_ALLOC_PD] = "ALLOC_PD",
	[ROCEMU_OP_DEALLOC_PD] = "DEALLOC_PD",
	[ROCEMU_OP_REG_MR] = "REG_MR",
	[ROCEMU_OP_REREG_MR] = "REREG_MR",
	[ROCEMU_OP_DEREG_MR] = "DEREG_MR",
	[ROCEMU_OP_CREATE_COMP_CHANNEL] = "CREATE_COMP_CHANNEL",
	[ROCEMU_OP_DESTROY_COMP_CHANNEL] = "DESTROY_COMP_CHANNEL",
	[ROCEMU_OP_CREATE_CQ] = "CREATE_CQ",
	[ROCEMU_OP_RESIZE_CQ] = "RESIZE_CQ",
	[ROCEMU_OP_DESTROY_CQ] = "DESTROY_CQ",
	[ROCEMU_OP_CREATE_QP] = "CREATE_QP",
	[ROCEMU_OP_MODIFY_QP] = "MODIFY_QP",
	[ROCEMU_OP_QUERY_QP] = "QUERY_QP",
	[ROCEMU_OP_DESTROY_QP] = "DESTROY_QP",
	[ROCEMU_OP_STATUS] = "STATUS",
	[ROCEMU_OP_SET_PORT_STATE] = "SET_PORT_STATE",
	[ROCEMU_OP_SHUTDOWN] = "SHUTDOWN",
	[ROCEMU_OP_ALLOC_MW] = "ALLOC_MW",
	[ROCEMU_OP_DEALLOC_MW] = "DEALLOC_MW",
	[ROCEMU_OP_SET_FAULTS] = "SET_FAULTS",
	[ROCEMU_OP_STATS] = "STATS",
	[ROCEMU_OP_CREATE_SRQ] = "CREATE_SRQ",
	[ROCEMU_OP_MODIFY_SRQ] = "MODIFY_SRQ",
	[ROCEMU_OP_QUERY_SRQ] = "QUERY_SRQ",
	[ROCEMU_OP_DESTROY_SRQ] = "DESTROY_SRQ",
	[ROCEMU_OP_OPEN_XRCD] = "OPEN_XRCD",
	[ROCEMU_OP_CLOSE_XRCD] = "CLOSE_XRCD",
	[ROCEMU_OP_ATTACH_MCAST] = "ATTACH_MCAST",
	[ROCEMU_OP_DETACH_MCAST] = "DETACH_MCAST",
	[ROCEMU_OP_ADVISE_MR] = "ADVISE_MR",
	[ROCEMU_OP_ALLOC_DM] = "ALLOC_DM",
	[ROCEMU_OP_FREE_DM] = "FREE_DM",
	[ROCEMU_OP_REG_DM_MR] = "REG_DM_MR",
	[ROCEMU_OP_IMPORT_DEVICE] = "IMPORT_DEVICE",
	[ROCEMU_OP_IMPORT_PD] = "IMPORT_PD",
	[ROCEMU_OP_IMPORT_MR] = "IMPORT_MR",
	[ROCEMU_OP_IMPORT_DM] = "IMPORT_DM",
	[ROCEMU_OP_UCMA_OPEN] = "UCMA_OPEN",
	[ROCEMU_OP_UCMA_WRITE] = "UCMA_WRITE",
	[ROCEMU_OP_DIRECT_DOORBELLS] = "DIRECT_DOORBELLS",
	[ROCEMU_OP_OPEN_QP] = "OPEN_QP",
	[ROCEMU_OP_SET_CAPTURE] = "SET_CAPTURE",
	[ROCEMU_OP_TRACE] = "TRACE",
	[ROCEMU_OP_CREATE_MKEY] = "CREATE_MKEY",
	[ROCEMU_OP_DESTROY_MKEY] = "DESTROY_MKEY",
	[ROCEMU_OP_QP_UDP_SPORT] = "QP_UDP_SPORT",
	[ROCEMU_OP_RESERVED_QPN_ALLOC] = "RESERVED_QPN_ALLOC",
	[ROCEMU_OP_RESERVED_QPN_DEALLOC] = "RESERVED_QPN_DEALLOC",
	[ROCEMU_OP_DCI_STREAM_RESET] = "DCI_STREAM_RESET",
	[ROCEMU_OP_CREATE_FLOW] = "CREATE_FLOW",
	[ROCEMU_OP_DESTROY_FLOW] = "DESTROY_FLOW",
	[ROCEMU_OP_CREATE_WQ] = "CREATE_WQ",
	[ROCEMU_OP_MODIFY_WQ] = "MODIFY_WQ",
	[ROCEMU_OP_DESTROY_WQ] = "DESTROY_WQ",
	[ROCEMU_OP_CREATE_RWQ_IND_TABLE] = "CREATE_RWQ_IND_TABLE",
	[ROCEMU_OP_DESTROY_RWQ_IND_TABLE] = "DESTROY_RWQ_IND_TABLE",
};

/* Fill a header for op with a body of len bytes. */
static inline void rocemu_msg_init(struct rocemu_msg_hdr *h, uint16_t op,
				   uint32_t seq, int32_t status, uint32_t len)
{
	h->magic = ROCEMU_CTRL_MAGIC;
	h->version = ROCEMU_CTRL_VERSION;
	h->op = op;
	h->seq = seq;
	h->status = status;
	h->len = len;
	h->reserved = 0;
}

/*
 * Validate a received message of n bytes: magic, version, op, and a body
 * length that matches the op (is_response picks the column). A failed
 * response carries no body. Returns 0 or a negative errno: -EPROTO for a
 * foreign or truncated message, -EPROTONOSUPPORT for another version,
 * -EOPNOTSUPP for an unknown op, -EMSGSIZE for a wrong body size.
 */
static inline int rocemu_msg_check(const void *buf, size_t n, int is_response)
{
	const struct rocemu_msg_hdr *h = (const struct rocemu_msg_hdr *)buf;
	uint32_t want;

	if (n < sizeof(*h) || h->magic != ROCEMU_CTRL_MAGIC)
		return -EPROTO;
	if (h->version != ROCEMU_CTRL_VERSION)
		return -EPROTONOSUPPORT;
	if (h->op == 0 || h->op >= ROCEMU_OP__COUNT)
		return -EOPNOTSUPP;
	if ((size_t)h->len != n - sizeof(*h))
		return -EPROTO;
	if (is_response && h->status != 0)
		return h->len == 0 ? 0 : -EMSGSIZE;
	want = rocemu_ctrl_body_size[h->op][is_response ? 1 : 0];
	if (want == ROCEMU_VARLEN)
		return h->len >= sizeof(struct rocemu_text_resp) && h->len <= ROCEMU_CTRL_MSG_MAX ?
			0 : -EMSGSIZE;
	return h->len == want ? 0 : -EMSGSIZE;
}

#endif /* ROCEMU_CTRL_H */
