/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "tests/unit/fixture.h"

#include <arpa/inet.h>
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emulator/core/device.h"
#include "emulator/ctrl/emu_life.h"
#include "emulator/engine/egress.h"
#include "emulator/engine/rx.h"
#include "emulator/engine/transport.h"
#include "emulator/mem/pd_mr.h"
#include "emulator/obj/comp_channel.h"
#include "emulator/obj/qp.h"
#include "emulator/obj/srq.h"
#include "net/udp/udp_port.h"
#include "rocemu/ring.h"

#define SEG_SIZE 16
#define CQ_DBR_SET_CI 0
#define CQ_INDEX_MASK 0xffffffu
#define ALL_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
/* 4.096 us * 2^0: the local ACK timeout is infinite, so no test resends by the clock. */
#define FX_TIMEOUT 0
#define FX_RETRY_CNT 7

struct fx fx;

/* The fake wire: keep every packet the device sends, one per GSO segment. */
static int wire_send(void *arg, const struct rocemu_ipv4_udp *flow, const void *buf, size_t len,
		     uint16_t gso)
{
	size_t seg = gso ? gso : len, off, n;
	struct fx_pkt *p;

	for (off = 0; off < len; off += seg) {
		n = len - off < seg ? len - off : seg;
		ck_assert_uint_lt(fx.nwire, FX_WIRE_MAX);
		ck_assert_uint_le(n, FX_PKT_MAX);
		p = &fx.wire[fx.nwire++];
		p->flow = *flow;
		p->len = n;
		memcpy(p->data, (const uint8_t *)buf + off, n);
	}
	return 0;
}

static void *map_fd(int fd, size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	ck_assert_ptr_ne(p, MAP_FAILED);
	close(fd);
	return p;
}

/* OPEN_DEVICE of device 0 for c, proven as the shim proves it (no userfaultfd). */
static void client_open(struct rocemu_client *c, struct rocemu_open_device_resp *resp, int *fds,
			int *nfds)
{
	struct rocemu_open_device_req req = { .pid = (uint32_t)getpid() };

	req.mem = (struct rocemu_mem_proof){ .self = (uintptr_t)&req, .uffd = -1, .guard_fd = -1 };
	memcpy(req.mem.nonce, &c, sizeof(c));
	ck_assert_int_eq(rocemu_client_open_device(c, 0, &req, sizeof(req), &req.mem, resp, fds,
						   nfds), 0);
}

static void open_client(void)
{
	struct rocemu_open_device_resp resp;
	int sv[2], fds[4], nfds = 0;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	fx.client = rocemu_client_new(&fx.emu, sv[0], getpid(), getuid());
	ck_assert_ptr_nonnull(fx.client);
	fx.ctrl_sock = sv[1];
	client_open(fx.client, &resp, fds, &nfds);
	ck_assert_int_eq(nfds, 4);
	close(fds[3]);	/* the cmd_fd: nobody imports here */
	fx.async_fd = fds[0];
	fx.kick_fd = fds[1];
	ck_assert_int_eq(fcntl(fx.async_fd, F_SETFL, O_NONBLOCK), 0);
	fx.page = map_fd(fds[2], resp.context_page_size);
}

struct rocemu_client *fx_client_new(void)
{
	struct rocemu_open_device_resp resp;
	struct rocemu_client *c;
	int sv[2], fds[4], nfds = 0, i;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	c = rocemu_client_new(&fx.emu, sv[0], getpid(), getuid());
	ck_assert_ptr_nonnull(c);
	close(sv[1]);
	client_open(c, &resp, fds, &nfds);
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	return c;
}

uint32_t fx_pd_alloc(struct rocemu_client *c)
{
	uint32_t pdn;

	ck_assert_int_eq(rocemu_pd_alloc(c, &pdn), 0);
	return pdn;
}

uint32_t fx_mr_reg(struct rocemu_client *c, uint32_t pdn, void *addr, size_t len,
		   unsigned int access)
{
	const struct rocemu_reg_mr_req req = { .pdn = pdn, .access = access,
					       .addr = (uintptr_t)addr, .length = len,
					       .iova = (uintptr_t)addr };
	struct rocemu_reg_mr_resp resp;

	ck_assert_int_eq(rocemu_mr_reg(c, &req, &resp), 0);
	ck_assert_uint_eq(resp.lkey, resp.rkey);
	return resp.lkey;
}

void fx_cq_create(struct fx_cq *cq, int *channel_fd)
{
	struct rocemu_create_cq_req req = { .cqe = FX_CQE, .channel = ROCEMU_NO_HANDLE,
					    .user_cq = FX_USER_CQ };
	int fd;

	if (channel_fd)
		ck_assert_int_eq(rocemu_channel_create(fx.client, &req.channel, channel_fd), 0);
	ck_assert_int_eq(rocemu_cq_create(fx.client, &req, &cq->layout, &fd), 0);
	cq->cqn = cq->layout.cqn;
	cq->map = map_fd(fd, cq->layout.size);
	cq->ci = 0;
}

struct rocemu_cq *fx_emu_cq(const struct fx_cq *cq)
{
	return rocemu_cq_lookup(fx.client, cq->cqn);
}

struct rocemu_qp *fx_emu_qp(void)
{
	return rocemu_qp_lookup(fx.client, fx.qp.qpn);
}

enum ibv_qp_state fx_qp_state(void)
{
	const struct rocemu_query_qp_req req = { .qpn = fx.qp.qpn };
	struct rocemu_query_qp_resp resp;

	ck_assert_int_eq(rocemu_qp_query(fx.client, &req, &resp), 0);
	return resp.attr.qp_state;
}

int fx_qp_modify(struct ibv_qp_attr *attr, int mask)
{
	struct rocemu_modify_qp_req req = { .qpn = fx.qp.qpn, .attr_mask = (uint32_t)mask,
					    .attr = *attr };

	return rocemu_qp_modify(fx.client, &req);
}

static uint8_t dci_log_streams;	/* of the next DCI qp_create makes */

/* The request of fx.qp's kind: of type, receiving through srqn (or ROCEMU_NO_HANDLE). */
static struct rocemu_create_qp_req qp_req(enum ibv_qp_type type, uint32_t srqn)
{
	return (struct rocemu_create_qp_req){
		.dci_log_concurrent = dci_log_streams, .dci_log_errored = dci_log_streams,
		.pdn = fx.pdn, .qp_type = type, .send_cqn = fx.scq.cqn,
		.recv_cqn = fx.rcq.cqn, .srqn = srqn, .user_qp = FX_USER_QP,
		.cap = { .max_send_wr = FX_QP_DEPTH, .max_recv_wr = FX_QP_DEPTH,
			 .max_send_sge = FX_SGE_MAX, .max_recv_sge = FX_SGE_MAX,
			 .max_inline_data = FX_INLINE_MAX },
		.rwq_ind_tbl = ROCEMU_NO_HANDLE,
	};
}

/* Make fx.qp as req asks; 0 or the op's -errno (then fx.qp is not touched). */
static int qp_create_req(const struct rocemu_create_qp_req *req)
{
	struct rocemu_create_qp_resp resp;
	int fd, err = rocemu_qp_create(fx.client, req, &resp, &fd);

	if (err)
		return err;
	memset(&fx.qp, 0, sizeof(fx.qp));
	fx.qp.type = req->qp_type;
	fx.qp.qpn = resp.layout.qpn;
	fx.qp.layout = resp.layout;
	fx.qp.map = map_fd(fd, resp.layout.size);
	return 0;
}

static void qp_create(enum ibv_qp_type type, uint32_t srqn)
{
	const struct rocemu_create_qp_req req = qp_req(type, srqn);

	ck_assert_int_eq(qp_create_req(&req), 0);
}

int fx_qp_replace_raw(uint32_t create_flags, uint32_t max_tso_header)
{
	struct rocemu_create_qp_req req = qp_req(IBV_QPT_RAW_PACKET, ROCEMU_NO_HANDLE);

	req.create_flags = create_flags;
	req.max_tso_header = max_tso_header;
	if (fx.qp.map) {	/* gone already when a create before this one failed */
		ck_assert_int_eq(rocemu_qp_destroy(fx.client, fx.qp.qpn), 0);
		munmap(fx.qp.map, fx.qp.layout.size);
		fx.qp.map = NULL;
	}
	return qp_create_req(&req);
}

void fx_raw_to_rts(void)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = ROCEMU_PORT_NUM };

	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE | IBV_QP_PORT), 0);
	attr.qp_state = IBV_QPS_RTR;
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
	attr.qp_state = IBV_QPS_RTS;
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
}

/*
 * RESET -> INIT -> RTR -> RTS with what ibv_rc_pingpong sets, towards the
 * peer; a UC QP without what only RC has (IBTA 11.2.5.1).
 */
static void qp_to_rts(enum ibv_qp_type type)
{
	/* An XRC initiator's requester is RC's (the daemon drops its responder's attributes). */
	int rc_only = type == IBV_QPT_RC || type == IBV_QPT_XRC_SEND || type == ROCEMU_QPT_DCI ?
			      ~0 : 0;
	/* A DCI names no peer at RTR (each WQE does) and has no responder. */
	int peer_only = type == ROCEMU_QPT_DCI ? 0 : ~0;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = ROCEMU_PORT_NUM,
				    .qp_access_flags = ALL_ACCESS };
	uint32_t peer = inet_addr(FX_PEER_IP);

	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					     IBV_QP_ACCESS_FLAGS), 0);
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = FX_MTU;
	attr.dest_qp_num = FX_PEER_QPN;
	attr.rq_psn = FX_RQ_PSN;
	attr.max_dest_rd_atomic = FX_RD_ATOMIC;
	attr.min_rnr_timer = FX_MIN_RNR_TIMER;
	attr.ah_attr.is_global = 1;
	attr.ah_attr.port_num = ROCEMU_PORT_NUM;
	/* RoCEv2 GID of an IPv4 address: ::ffff:a.b.c.d */
	attr.ah_attr.grh.dgid.raw[10] = 0xff;
	attr.ah_attr.grh.dgid.raw[11] = 0xff;
	memcpy(&attr.ah_attr.grh.dgid.raw[12], &peer, sizeof(peer));
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					     (peer_only & (IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
							   (rc_only & (IBV_QP_MAX_DEST_RD_ATOMIC |
								       IBV_QP_MIN_RNR_TIMER))))),
			 0);
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = FX_SQ_PSN;
	attr.timeout = FX_TIMEOUT;
	attr.retry_cnt = FX_RETRY_CNT;
	attr.rnr_retry = FX_RETRY_CNT;
	attr.max_rd_atomic = FX_RD_ATOMIC;
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE | IBV_QP_SQ_PSN |
					     (rc_only & (IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
							 IBV_QP_RNR_RETRY |
							 IBV_QP_MAX_QP_RD_ATOMIC))), 0);
}

void fx_qp_reset_to_rts(void)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };

	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
	qp_to_rts(IBV_QPT_RC);
}

static void run_stop(void *arg, int fd, uint32_t revents)
{
	eventfd_t n;

	ck_assert_int_eq(eventfd_read(fd, &n), 0);
	rocemu_loop_stop(fx.loop);
}

/* Stop through an fd, not from the timer: the loop goes idle (and scans) once more first. */
static void run_deadline(void *arg)
{
	ck_assert_int_eq(eventfd_write(fx.stop_fd, 1), 0);
}

void fx_run(uint64_t ns)
{
	ck_assert_uint_ne(rocemu_loop_timer_add(fx.loop, rocemu_now_ns() + ns, run_deadline, NULL),
			  0);
	ck_assert_int_eq(rocemu_loop_run(fx.loop), 0);
}

/* Due after every timer armed before it: ends the turn they fire in. */
static void turn_end(void *arg)
{
	rocemu_loop_stop(fx.loop);
}

void fx_turn(void)
{
	ck_assert_uint_ne(rocemu_loop_timer_add(fx.loop, rocemu_now_ns(), turn_end, NULL), 0);
	ck_assert_int_eq(rocemu_loop_run(fx.loop), 0);
}

static void setup(enum ibv_qp_type type)
{
	struct rocemu_device dev;

	memset(&fx, 0, sizeof(fx));
	fx.wire = calloc(FX_WIRE_MAX, sizeof(*fx.wire));
	ck_assert_ptr_nonnull(fx.wire);
	fx.loop = rocemu_loop_new(ROCEMU_LOOP_EPOLL);
	ck_assert_ptr_nonnull(fx.loop);
	fx.stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ck_assert_int_ge(fx.stop_fd, 0);
	ck_assert_int_eq(rocemu_loop_watch_fd(fx.loop, fx.stop_fd, run_stop, NULL), 0);
	rocemu_device_init(&dev, 0, "rocemu0", inet_addr(FX_DEV_IP), ROCEMU_DEFAULT_NETDEV_MTU);
	ck_assert_int_eq(rocemu_emu_setup(&fx.emu, fx.loop, &dev, 1), 0);
	fx.dev = &fx.emu.devices[0];
	fx.dev->wire = (struct rocemu_wire){ .send = wire_send, .arg = &fx };
	open_client();
	fx.pdn = fx_pd_alloc(fx.client);
	fx.buf = mmap(NULL, FX_BUF_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	ck_assert_ptr_ne(fx.buf, MAP_FAILED);
	fx.lkey = fx.rkey = fx_mr_reg(fx.client, fx.pdn, fx.buf, FX_BUF_BYTES, ALL_ACCESS);
	fx_cq_create(&fx.scq, NULL);
	fx_cq_create(&fx.rcq, NULL);
	qp_create(type, ROCEMU_NO_HANDLE);
	qp_to_rts(type);
}

void fx_setup(void)
{
	setup(IBV_QPT_RC);
}

void fx_setup_uc(void)
{
	setup(IBV_QPT_UC);
}

void fx_setup_xrc_ini(void)
{
	setup(IBV_QPT_XRC_SEND);
}

void fx_setup_dci(void)
{
	dci_log_streams = 0;
	setup(ROCEMU_QPT_DCI);
}

void fx_setup_dci_streams(void)
{
	dci_log_streams = FX_DCI_LOG_STREAMS;
	setup(ROCEMU_QPT_DCI);
}

static void ud_to_rts(void)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = ROCEMU_PORT_NUM,
				    .qkey = FX_QKEY };

	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					     IBV_QP_QKEY), 0);
	attr.qp_state = IBV_QPS_RTR;
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE), 0);
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = FX_SQ_PSN;
	ck_assert_int_eq(fx_qp_modify(&attr, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
}

void fx_setup_ud(void)
{
	fx_setup();
	fx_qp_replace(IBV_QPT_UD);
	ud_to_rts();
}

void fx_setup_ud_srq(void)
{
	fx_setup();
	fx_srq_create();
	fx_qp_replace_srq(IBV_QPT_UD);
	ud_to_rts();
}

void fx_qp_replace(enum ibv_qp_type type)
{
	ck_assert_int_eq(rocemu_qp_destroy(fx.client, fx.qp.qpn), 0);
	munmap(fx.qp.map, fx.qp.layout.size);
	qp_create(type, ROCEMU_NO_HANDLE);
}

void fx_qp_replace_srq(enum ibv_qp_type type)
{
	ck_assert_ptr_nonnull(fx.srq.map);
	ck_assert_int_eq(rocemu_qp_destroy(fx.client, fx.qp.qpn), 0);
	munmap(fx.qp.map, fx.qp.layout.size);
	qp_create(type, fx.srq.srqn);
	ck_assert_uint_eq(fx.qp.layout.rq_wqe_cnt, 0);	/* no RQ of its own */
}

static struct mlx5_wqe_srq_next_seg *srq_wqe(uint16_t index)
{
	return (void *)(fx.srq.map + fx.srq.layout.buf_offset +
			((size_t)index << fx.srq.layout.wqe_shift));
}

void fx_srq_create(void)
{
	const struct rocemu_create_srq_req req = {
		.pdn = fx.pdn, .attr = { .max_wr = FX_QP_DEPTH, .max_sge = FX_SGE_MAX },
		.user_srq = FX_USER_SRQ, .srq_type = IBV_SRQT_BASIC,
	};
	struct rocemu_create_srq_resp resp;
	int fd;

	ck_assert_int_eq(rocemu_srq_create(fx.client, &req, &resp, &fd), 0);
	fx.srq = (struct fx_srq){ .srqn = resp.layout.srqn, .layout = resp.layout };
	fx.srq.map = map_fd(fd, resp.layout.size);
	for (uint32_t i = 0; i < fx.srq.layout.wqe_cnt; i++)
		srq_wqe((uint16_t)i)->next_wqe_index =
			htobe16((uint16_t)((i + 1) & (fx.srq.layout.wqe_cnt - 1)));
}

int fx_srq_arm(uint32_t limit)
{
	const struct rocemu_modify_srq_req req = { .srqn = fx.srq.srqn, .attr_mask = IBV_SRQ_LIMIT,
						   .attr = { .srq_limit = limit } };

	return rocemu_srq_modify(fx.client, &req);
}

uint16_t fx_srq_post(const struct ibv_sge *sge, unsigned int num_sge)
{
	uint16_t index = fx.srq.head;
	struct mlx5_wqe_srq_next_seg *next = srq_wqe(index);
	struct mlx5_wqe_data_seg *d = (struct mlx5_wqe_data_seg *)(next + 1);
	uint32_t slots = ((1u << fx.srq.layout.wqe_shift) - sizeof(*next)) / sizeof(*d);
	__be32 *db = (__be32 *)(fx.srq.map + fx.srq.layout.dbrec_offset);
	unsigned int i;

	ck_assert_uint_le(num_sge, slots);
	for (i = 0; i < num_sge; i++)
		mlx5dv_set_data_seg(&d[i], sge[i].length, sge[i].lkey, sge[i].addr);
	if (i < slots)
		mlx5dv_set_data_seg(&d[i], 0, MLX5_INVALID_LKEY, 0);
	fx.srq.head = be16toh(next->next_wqe_index) & (fx.srq.layout.wqe_cnt - 1);
	__atomic_store_n(db, rocemu_wq_dbrec_word(++fx.srq.posted), __ATOMIC_RELEASE);
	return index;
}

void fx_teardown(void)
{
	rocemu_emu_fini(&fx.emu);
	if (fx.qp.map)
		munmap(fx.qp.map, fx.qp.layout.size);
	if (fx.srq.map)
		munmap(fx.srq.map, fx.srq.layout.size);
	munmap(fx.scq.map, fx.scq.layout.size);
	munmap(fx.rcq.map, fx.rcq.layout.size);
	munmap(fx.buf, FX_BUF_BYTES);
	munmap(fx.page, sizeof(*fx.page));
	close(fx.ctrl_sock);
	close(fx.async_fd);
	close(fx.kick_fd);
	rocemu_loop_unwatch_fd(fx.loop, fx.stop_fd);
	close(fx.stop_fd);
	rocemu_loop_free(fx.loop);
	free(fx.wire);
}

int fx_suite_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* ---- the shim's side ---- */

void *fx_sq_seg(uint32_t bb, unsigned int seg)
{
	size_t ring = (size_t)fx.qp.layout.sq_wqe_cnt * MLX5_SEND_WQE_BB;
	size_t off = ((size_t)(bb & (fx.qp.layout.sq_wqe_cnt - 1)) * MLX5_SEND_WQE_BB +
		      (size_t)seg * SEG_SIZE) % ring;

	return fx.qp.map + fx.qp.layout.sq_offset + off;
}

static bool carries_raddr(uint8_t opcode)
{
	return opcode == MLX5_OPCODE_RDMA_WRITE || opcode == MLX5_OPCODE_RDMA_WRITE_IMM ||
	       opcode == MLX5_OPCODE_RDMA_READ || opcode == MLX5_OPCODE_ATOMIC_CS ||
	       opcode == MLX5_OPCODE_ATOMIC_FA;
}

uint16_t fx_post_send(const struct fx_wr *wr)
{
	struct mlx5_wqe_ctrl_seg *ctrl = fx_sq_seg(fx.qp.sq_cur, 0);
	uint32_t bb = fx.qp.sq_cur, ds = 1, i;
	/* The shim numbers a WQE by its first BB. */
	uint16_t counter = (uint16_t)bb;

	if (fx.qp.type == IBV_QPT_XRC_SEND) {	/* the XRC segment, right after ctrl */
		struct rocemu_wqe_xrc_seg *x = fx_sq_seg(bb, ds++);

		memset(x, 0, sizeof(*x));
		x->xrc_srqn = htobe32(wr->xrc_srqn);
	}
	if (fx.qp.type == ROCEMU_QPT_DCI) {	/* the datagram segment: the peer is the DCT */
		struct mlx5_wqe_av *av = fx_sq_seg(bb, ds);
		uint32_t peer = inet_addr(FX_PEER_IP);

		memset(av, 0, sizeof(*av));
		av->key.dc_key = htobe64(wr->dc_key);
		av->dqp_dct = htobe32(FX_PEER_QPN | MLX5_EXTENDED_UD_AV);
		av->rgid[10] = av->rgid[11] = 0xff;
		memcpy(&av->rgid[12], &peer, sizeof(peer));
		ds += sizeof(struct mlx5_wqe_datagram_seg) / SEG_SIZE;
	}
	if (fx.qp.type == IBV_QPT_RAW_PACKET) {	/* the Ethernet segment, its header running on */
		struct mlx5_wqe_eth_seg *e = fx_sq_seg(bb, ds);
		uint32_t at = offsetof(struct mlx5_wqe_eth_seg, inline_hdr_start);

		memset(e, 0, SEG_SIZE);
		e->cs_flags = wr->cs_flags;
		e->mss = htobe16(wr->mss);
		e->inline_hdr_sz = htobe16(wr->eth_hdr_len);
		for (i = 0; i < wr->eth_hdr_len; i++, at++)
			*((uint8_t *)fx_sq_seg(bb, ds + at / SEG_SIZE) + at % SEG_SIZE) =
				((const uint8_t *)wr->eth_hdr)[i];
		/* mlx5: the whole segment, then the header's bytes past its 18, padded to 16 */
		ds += sizeof(*e) / SEG_SIZE;
		if (wr->eth_hdr_len > FX_ETH_SEG_HDR)
			ds += (wr->eth_hdr_len - FX_ETH_SEG_HDR + SEG_SIZE - 1) / SEG_SIZE;
	}
	if (carries_raddr(wr->opcode)) {
		struct mlx5_wqe_raddr_seg *r = fx_sq_seg(bb, ds++);

		r->raddr = htobe64(wr->raddr);
		r->rkey = htobe32(wr->rkey);
		r->reserved = 0;
	}
	if (wr->opcode == MLX5_OPCODE_ATOMIC_CS || wr->opcode == MLX5_OPCODE_ATOMIC_FA) {
		struct mlx5_wqe_atomic_seg *a = fx_sq_seg(bb, ds++);

		a->swap_add = htobe64(wr->swap_add);
		a->compare = htobe64(wr->compare);
	}
	if (wr->inline_data) {
		struct mlx5_wqe_inl_data_seg *h = fx_sq_seg(bb, ds);
		uint32_t at = sizeof(*h);

		h->byte_count = htobe32(wr->inline_len | MLX5_INLINE_SEG);
		/* Byte by byte through the segment helper: inline data wraps like the rest. */
		for (i = 0; i < wr->inline_len; i++, at++)
			*((uint8_t *)fx_sq_seg(bb, ds + at / SEG_SIZE) + at % SEG_SIZE) =
				((const uint8_t *)wr->inline_data)[i];
		ds += (at + SEG_SIZE - 1) / SEG_SIZE;
	}
	for (i = 0; i < wr->num_sge; i++) {
		struct mlx5_wqe_data_seg *d = fx_sq_seg(bb, ds++);

		d->byte_count = htobe32(wr->sge[i].length);
		d->lkey = htobe32(wr->sge[i].lkey);
		d->addr = htobe64(wr->sge[i].addr);
	}
	ctrl->opmod_idx_opcode = htobe32((uint32_t)counter << 8 | wr->opcode);
	ctrl->qpn_ds = htobe32(fx.qp.qpn << 8 | ds);
	ctrl->signature = 0;
	ctrl->dci_stream_channel_id = htobe16(wr->dci_stream);
	ctrl->fm_ce_se = wr->flags;
	ctrl->imm = wr->imm;
	fx.qp.sq_cur += (ds * SEG_SIZE + MLX5_SEND_WQE_BB - 1) / MLX5_SEND_WQE_BB;
	return counter;
}

void fx_post_recv(const struct ibv_sge *sge, unsigned int num_sge)
{
	uint32_t stride = 1u << fx.qp.layout.rq_wqe_shift;
	struct mlx5_wqe_data_seg *d = (void *)(fx.qp.map + fx.qp.layout.rq_offset +
					       (size_t)(fx.qp.rq_head &
							(fx.qp.layout.rq_wqe_cnt - 1)) * stride);
	unsigned int i;

	for (i = 0; i < num_sge; i++) {
		d[i].byte_count = htobe32(sge[i].length);
		d[i].lkey = htobe32(sge[i].lkey);
		d[i].addr = htobe64(sge[i].addr);
	}
	if (i < stride / SEG_SIZE)
		d[i] = (struct mlx5_wqe_data_seg){ .lkey = htobe32(MLX5_INVALID_LKEY) };
	fx.qp.rq_head++;
}

void fx_doorbell(void)
{
	__be32 *dbrec = (__be32 *)(fx.qp.map + fx.qp.layout.dbrec_offset);
	uint32_t seq;

	__atomic_store_n(&dbrec[MLX5_RCV_DBR], htobe32(fx.qp.rq_head & 0xffff), __ATOMIC_RELEASE);
	__atomic_store_n(&dbrec[MLX5_SND_DBR], htobe32(fx.qp.sq_cur & 0xffff), __ATOMIC_RELEASE);
	seq = __atomic_add_fetch(&fx.page->doorbell_seq, 1, __ATOMIC_RELEASE);
	/* The scan runs when the loop goes idle, which a timer falling due puts off: wait for it. */
	do
		fx_run(0);
	while (fx.client->doorbell_seq_seen != seq);
}

bool fx_poll(struct fx_cq *cq, struct mlx5_cqe64 *out)
{
	uint32_t ncqe = cq->layout.ncqe;
	struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)(cq->map + cq->layout.buf_offset) +
				 (cq->ci & (ncqe - 1));
	__be32 *dbrec = (__be32 *)(cq->map + cq->layout.dbrec_offset);
	uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);

	if (op_own >> 4 == MLX5_CQE_INVALID ||
	    (op_own & MLX5_CQE_OWNER_MASK) != !!(cq->ci & ncqe))
		return false;
	*out = *cqe;
	cq->ci++;
	__atomic_store_n(&dbrec[CQ_DBR_SET_CI], htobe32(cq->ci & CQ_INDEX_MASK), __ATOMIC_RELEASE);
	return true;
}

bool fx_async_event(struct rocemu_async_record *rec)
{
	return read(fx.async_fd, rec, sizeof(*rec)) == sizeof(*rec);
}

void fx_expect_qp_error(enum ibv_event_type type)
{
	struct rocemu_async_record ev;

	ck_assert_int_eq(fx_qp_state(), IBV_QPS_ERR);
	ck_assert_msg(fx_async_event(&ev), "no async event");
	ck_assert_uint_eq(ev.element, FX_USER_QP);
	ck_assert_uint_eq(ev.event_type, type);
}

struct mlx5_cqe64 fx_expect_cqe(struct fx_cq *cq, uint8_t op, uint16_t wqe_counter,
				uint8_t syndrome)
{
	struct mlx5_cqe64 cqe;
	const struct mlx5_err_cqe *err = (const void *)&cqe;

	ck_assert_msg(fx_poll(cq, &cqe), "cq 0x%06x: no CQE at %u", cq->cqn, cq->ci);
	ck_assert_uint_eq(cqe.op_own >> 4, op);
	ck_assert_uint_eq(be16toh(cqe.wqe_counter), wqe_counter);
	if (op == MLX5_CQE_REQ_ERR || op == MLX5_CQE_RESP_ERR)
		ck_assert_uint_eq(err->syndrome, syndrome);
	return cqe;
}

/* ---- the peer's side ---- */

static struct rocemu_ipv4_udp peer_flow(void)
{
	return (struct rocemu_ipv4_udp){ .saddr = inet_addr(FX_PEER_IP), .daddr = fx.dev->ipv4,
					 .sport = htons(FX_PEER_SPORT),
					 .dport = htons(ROCEMU_ROCEV2_PORT) };
}

void fx_pkt_build(struct fx_pkt *p, uint8_t opcode, const struct fx_hdrs *h,
		  const void *payload, uint32_t paylen)
{
	const struct rocemu_opcode_info *info = rocemu_opcode_info(opcode);
	uint8_t *pkt = p->data, *x;
	size_t len = rocemu_pkt_wire_len(info, paylen);

	ck_assert_uint_le(len, FX_PKT_MAX);
	memset(pkt, 0, len);
	rocemu_bth_set_opcode(pkt, opcode);
	rocemu_bth_set_padcnt(pkt, rocemu_pad_bytes(paylen));
	rocemu_bth_set_tver(pkt, ROCEMU_BTH_TVER);
	rocemu_bth_set_pkey(pkt, 0xffff);
	rocemu_bth_set_destqp(pkt, h->dest_qpn ? h->dest_qpn : fx.qp.qpn);
	rocemu_bth_set_ackreq(pkt, h->ackreq);
	rocemu_bth_set_psn(pkt, h->psn);
	if ((x = rocemu_pkt_reth(pkt))) {
		rocemu_reth_set_va(x, h->va);
		rocemu_reth_set_rkey(x, h->rkey);
		rocemu_reth_set_dma_len(x, h->dma_len);
	}
	if ((x = rocemu_pkt_atmeth(pkt))) {
		rocemu_atmeth_set_va(x, h->va);
		rocemu_atmeth_set_rkey(x, h->rkey);
		rocemu_atmeth_set_swap_add(x, h->swap_add);
		rocemu_atmeth_set_compare(x, h->compare);
	}
	if ((x = rocemu_pkt_aeth(pkt))) {
		rocemu_aeth_set_syndrome(x, h->syndrome);
		rocemu_aeth_set_msn(x, h->msn);
	}
	if ((x = rocemu_pkt_atmack(pkt)))
		rocemu_atmack_set_orig(x, h->orig);
	if ((x = rocemu_pkt_deth(pkt))) {
		rocemu_deth_set_qkey(x, h->qkey);
		rocemu_deth_set_src_qp(x, FX_PEER_QPN);
	}
	if ((x = rocemu_pkt_immdt(pkt)))
		rocemu_immdt_set_imm(x, h->imm);
	if ((x = rocemu_pkt_ieth(pkt)))
		rocemu_ieth_set_rkey(x, h->imm);
	if (paylen)
		memcpy(pkt + info->length, payload, paylen);
	p->flow = peer_flow();
	p->len = rocemu_icrc_append_v4(&p->flow, pkt, len - ROCEMU_ICRC_BYTES, 0);
}

void fx_rx(const struct fx_pkt *p)
{
	const struct rocemu_dgram d = {
		.data = p->data, .len = p->len,
		.src = { .sin_family = AF_INET, .sin_port = p->flow.sport,
			 .sin_addr.s_addr = p->flow.saddr },
	};

	rocemu_rx_datagram(fx.dev, &d);
	if (!fx.rx_burst)
		rocemu_transport_settle();
}

void fx_rx_burst_begin(void)
{
	fx.rx_burst = true;
}

void fx_rx_burst_end(void)
{
	fx.rx_burst = false;
	rocemu_transport_settle();
}

void fx_rx_build(uint8_t opcode, const struct fx_hdrs *h, const void *payload, uint32_t paylen)
{
	static struct fx_pkt p;

	fx_pkt_build(&p, opcode, h, payload, paylen);
	fx_rx(&p);
}

void fx_rx_ack(uint32_t psn, uint8_t syndrome, uint32_t msn)
{
	const struct fx_hdrs h = { .psn = psn, .syndrome = syndrome, .msn = msn };

	fx_rx_build(ROCEMU_OP_RC_ACKNOWLEDGE, &h, NULL, 0);
}

void fx_wire_clear(void)
{
	fx.nwire = 0;
}

const uint8_t *fx_wire_bth(unsigned int i)
{
	const struct fx_pkt *p = &fx.wire[i];
	const struct rocemu_ipv4_udp to_peer = {
		.saddr = fx.dev->ipv4, .daddr = inet_addr(FX_PEER_IP),
		.sport = p->flow.sport, .dport = htons(ROCEMU_ROCEV2_PORT),
	};

	ck_assert_uint_lt(i, fx.nwire);
	ck_assert_mem_eq(&p->flow, &to_peer, sizeof(to_peer));
	ck_assert_int_eq(rocemu_icrc_check_v4(&p->flow, p->data, p->len, NULL), 0);
	ck_assert_int_ge(rocemu_pkt_payload_len(p->data, p->len), 0);
	/* The peer's QP, or its QP1 for the CM's MADs. */
	ck_assert(rocemu_bth_destqp(p->data) == FX_PEER_QPN || rocemu_bth_destqp(p->data) == 1);
	return p->data;
}

uint32_t fx_wire_paylen(unsigned int i)
{
	return (uint32_t)rocemu_pkt_payload_len(fx_wire_bth(i), fx.wire[i].len);
}

const uint8_t *fx_wire_expect(unsigned int i, uint8_t opcode, uint32_t psn, bool ackreq,
			      uint32_t paylen)
{
	const uint8_t *bth = fx_wire_bth(i);

	ck_assert_msg(rocemu_bth_opcode(bth) == opcode, "packet %u: %s, not %s", i,
		      rocemu_opcode_name(rocemu_bth_opcode(bth)), rocemu_opcode_name(opcode));
	ck_assert_msg(rocemu_bth_psn(bth) == psn, "packet %u: psn 0x%06x, not 0x%06x", i,
		      rocemu_bth_psn(bth), psn);
	ck_assert_msg(rocemu_bth_ackreq(bth) == ackreq, "packet %u: ackreq %d", i,
		      rocemu_bth_ackreq(bth));
	ck_assert_msg(fx_wire_paylen(i) == paylen, "packet %u: %u payload bytes, not %u", i,
		      fx_wire_paylen(i), paylen);
	return bth;
}
