/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A raw packet program as DPDK's mlx5 driver is one: the RAW_PACKET QP,
 * its CQs and a flow are made with verbs, then the data path goes through
 * mlx5dv_init_obj alone. The program writes send WQEs with the Ethernet
 * segment itself (the first 18 bytes of the frame inline, the rest by a
 * data segment, checksum flags), receive WQEs, the doorbell records and
 * the BlueFlame register, and reads CQEs itself (owner bit, opcode, byte
 * count, wqe_counter, the L3/L4 type and checksum-ok bits). Frames go both
 * ways with a verbs raw QP on the other device, enough of them that every
 * ring wraps. Arguments: DEVICE_A (the mlx5dv side) DEVICE_B.
 */
#include <endian.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "tests/e2e/harness/verbs_pair.h"
#include "tests/e2e/raw/raw_frame.h"
#include "tests/e2e/raw/raw_port.h"

#define FRAMES 300		/* more than each ring holds: they all wrap */
#define INLINE_HDR 18		/* MLX5_ETH_L2_INLINE_HEADER_SIZE: Ethernet header and a VLAN tag's room */
#define CQE_L4_UDP 2		/* the CQE's l4_hdr_type for UDP (mlx5 PRM) */

struct dv_cq {
	struct mlx5dv_cq dv;
	uint32_t ci;
};

static struct dv_side {
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct buf *tx, *rx;
	struct mlx5dv_qp dv;
	struct dv_cq send, recv;
	uint32_t sq_pi, rq_head, bf_offset;
	uint8_t mac[ETH_ALEN];
	uint32_t addr;
} s;
static struct raw_port peer;

static bool dv_open(void)
{
	struct mlx5dv_obj obj = { .qp = { NULL, &s.dv }, .cq = { NULL, &s.send.dv } };
	struct mlx5dv_obj robj = { .cq = { NULL, &s.recv.dv } };
	int ret;

	memset(&s, 0, sizeof(s));
	memcpy(&s.addr, &dev_a.gid.raw[12], 4);
	s.mac[0] = 0x02;
	memcpy(&s.mac[2], &dev_a.gid.raw[12], 4);
	s.scq = ibv_create_cq(dev_a.ctx, 64, NULL, NULL, 0);
	s.rcq = ibv_create_cq(dev_a.ctx, 128, NULL, NULL, 0);
	s.qp = s.scq && s.rcq ? raw_qp_create(&dev_a, s.scq, s.rcq, 0) : NULL;
	if (!s.qp || raw_qp_to_rts(s.qp)) {
		check(false, "%s: a RAW_PACKET QP in RTS: %s", dev_a.name, strerror(errno));
		return false;
	}
	s.tx = buf_new(&dev_a, RAW_SLOT, RAW_SLOT, IBV_ACCESS_LOCAL_WRITE, 0);
	s.rx = buf_new(&dev_a, (size_t)RAW_SLOT * RAW_RX_DEPTH, (size_t)RAW_SLOT * RAW_RX_DEPTH,
		       IBV_ACCESS_LOCAL_WRITE, 0);
	if (!s.tx || !s.rx)
		return false;
	obj.qp.in = s.qp;
	obj.cq.in = s.scq;
	robj.cq.in = s.rcq;
	ret = mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ);
	if (!ret)
		ret = mlx5dv_init_obj(&robj, MLX5DV_OBJ_CQ);
	check(ret == 0 && s.dv.sq.stride == 64 && s.dv.rq.wqe_cnt >= 1 && s.dv.bf.reg,
	      "mlx5dv_init_obj of the RAW_PACKET QP and its CQs: %s (sq %u x %u, rq %u x %u)", strerror(ret),
	      s.dv.sq.wqe_cnt, s.dv.sq.stride, s.dv.rq.wqe_cnt, s.dv.rq.stride);
	return ret == 0;
}

/* ---- the rings, by mlx5dv.h's formats ---- */

/* Receive WQE at the RQ's head over slot head % depth, then the doorbell record. */
static void rq_post(void)
{
	uint32_t idx = s.rq_head & (s.dv.rq.wqe_cnt - 1);
	struct mlx5_wqe_data_seg *seg = (struct mlx5_wqe_data_seg *)((uint8_t *)s.dv.rq.buf + idx * s.dv.rq.stride);
	size_t slot = idx % RAW_RX_DEPTH;

	seg->byte_count = htobe32(RAW_SLOT);
	seg->lkey = htobe32(s.rx->mr->lkey);
	seg->addr = htobe64((uintptr_t)s.rx->p + slot * RAW_SLOT);
	/* A stride of room for more segments ends at one of the invalid lkey. */
	if (s.dv.rq.stride > sizeof(*seg)) {
		seg[1].byte_count = 0;
		seg[1].lkey = htobe32(MLX5_INVALID_LKEY);
		seg[1].addr = 0;
	}
	s.rq_head++;
	__atomic_store_n(&s.dv.dbrec[MLX5_RCV_DBR], htobe32(s.rq_head & 0xffff), __ATOMIC_RELEASE);
}

/* One send WQE of frame f (len bytes, cs_flags): ctrl, Ethernet segment, data segment; its index. */
static uint16_t sq_post(const uint8_t *f, size_t len, uint8_t cs_flags)
{
	uint16_t idx = (uint16_t)s.sq_pi;
	uint8_t *wqe = (uint8_t *)s.dv.sq.buf + (size_t)(s.sq_pi & (s.dv.sq.wqe_cnt - 1)) * s.dv.sq.stride;
	struct mlx5_wqe_ctrl_seg *ctrl = (struct mlx5_wqe_ctrl_seg *)wqe;
	struct mlx5_wqe_eth_seg *eth = (struct mlx5_wqe_eth_seg *)(ctrl + 1);
	struct mlx5_wqe_data_seg *data = (struct mlx5_wqe_data_seg *)(eth + 1);

	memset(wqe, 0, 64);
	ctrl->opmod_idx_opcode = htobe32((uint32_t)idx << 8 | MLX5_OPCODE_SEND);
	ctrl->qpn_ds = htobe32(s.qp->qp_num << 8 | 4);	/* 4 segments of 16 bytes */
	ctrl->fm_ce_se = MLX5_WQE_CTRL_CQ_UPDATE;
	eth->cs_flags = cs_flags;
	eth->inline_hdr_sz = htobe16(INLINE_HDR);
	memcpy(eth->inline_hdr_start, f, INLINE_HDR);	/* runs on into inline_hdr[] */
	memcpy(s.tx->p, f + INLINE_HDR, len - INLINE_HDR);
	data->byte_count = htobe32((uint32_t)(len - INLINE_HDR));
	data->lkey = htobe32(s.tx->mr->lkey);
	data->addr = htobe64((uintptr_t)s.tx->p);
	s.sq_pi++;
	/* The WQE is in memory before the doorbell record says so; then BlueFlame. */
	__atomic_store_n(&s.dv.dbrec[MLX5_SND_DBR], htobe32(s.sq_pi & 0xffff), __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memcpy((uint8_t *)s.dv.bf.reg + s.bf_offset, wqe, 64);
	s.bf_offset ^= s.dv.bf.size;
	return idx;
}

/* The next CQE of c within RAW_WAIT_MS, copied out, its slot given back: false when none came. */
static bool cqe_poll(struct dv_cq *c, struct mlx5_cqe64 *out)
{
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		uint8_t *entry = (uint8_t *)c->dv.buf + (size_t)(c->ci & (c->dv.cqe_cnt - 1)) * c->dv.cqe_size;
		struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)(entry + c->dv.cqe_size - sizeof(*cqe));
		uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);

		if ((op_own >> 4) != MLX5_CQE_INVALID && (op_own & MLX5_CQE_OWNER_MASK) == !!(c->ci & c->dv.cqe_cnt)) {
			*out = *cqe;
			c->ci++;
			/* Word 0 of the doorbell record is the consumer index (mlx5's MLX5_CQ_SET_CI). */
			__atomic_store_n(&c->dv.dbrec[0], htobe32(c->ci & 0xffffff), __ATOMIC_RELEASE);
			return true;
		}
		if (elapsed_ms(&start) >= RAW_WAIT_MS)
			return false;
		sched_yield();	/* leave the daemon a core on a small machine */
	}
}

/* ---- frames ---- */

static size_t frame_of(uint8_t *f, const uint8_t *dst, const uint8_t *src, uint32_t saddr, uint32_t daddr,
		       unsigned int i)
{
	struct frame_desc d = { .saddr = saddr, .daddr = daddr, .proto = IPPROTO_UDP, .sport = 9000,
				.dport = (uint16_t)(9000 + i), .ip_id = (uint16_t)i, .payload = 20 + (i * 37) % 1400,
				.seed = i };

	memcpy(d.dst, dst, ETH_ALEN);
	memcpy(d.src, src, ETH_ALEN);
	return frame_build(f, &d);
}

/* Frames written as mlx5 WQEs reach the verbs peer; every other one with zeroed checksums and cs_flags. */
static void dv_sends(void)
{
	static uint8_t f[RAW_SLOT], got[RAW_SLOT];
	unsigned int right = 0, i;

	for (i = 0; i < FRAMES; i++) {
		size_t len = frame_of(f, peer.mac, s.mac, s.addr, peer.addr, i);
		uint8_t cs = 0;
		struct mlx5_cqe64 cqe;
		struct ibv_wc wc;
		uint16_t idx;

		if (i & 1) {
			static uint8_t zeroed[RAW_SLOT];

			memcpy(zeroed, f, len);
			frame_ip(zeroed, len)->check = 0;
			((frame_udphdr *)frame_l4(zeroed, len))->uh_sum = 0;
			cs = MLX5_ETH_WQE_L3_CSUM | MLX5_ETH_WQE_L4_CSUM;
			idx = sq_post(zeroed, len, cs);
		} else {
			idx = sq_post(f, len, 0);
		}
		if (!cqe_poll(&s.send, &cqe) || (cqe.op_own >> 4) != MLX5_CQE_REQ ||
		    be16toh(cqe.wqe_counter) != idx) {
			check(false, "send %u: a requester CQE of wqe_counter %u (opcode %u)", i, idx, cqe.op_own >> 4);
			return;
		}
		if (raw_recv(&peer, &wc, NULL, got, RAW_WAIT_MS) != 1) {
			check(false, "send %u: never reached %s", i, dev_b.name);
			return;
		}
		if (wc.status == IBV_WC_SUCCESS && wc.byte_len == len && !memcmp(got, f, len))
			right++;
		else
			printf("  frame %u (cs_flags 0x%x): status %d, %u of %zu bytes\n", i, cs, wc.status,
			       wc.byte_len, len);
	}
	check(right == FRAMES, "%u of %u frames sent by mlx5 WQEs arrived as the model's byte for byte", right,
	      FRAMES);
}

/* Frames from the verbs peer land in the RQ, told by mlx5 CQEs. */
static void dv_receives(void)
{
	static uint8_t f[RAW_SLOT];
	unsigned int right = 0, typed = 0, i;

	for (i = 0; i < FRAMES; i++) {
		size_t len = frame_of(f, s.mac, peer.mac, peer.addr, s.addr, i);
		struct mlx5_cqe64 cqe;
		int status = raw_send(&peer, f, len, 0);
		uint16_t slot;

		if (status != IBV_WC_SUCCESS || !cqe_poll(&s.recv, &cqe)) {
			check(false, "frame %u: sent (status %d) and a CQE for it", i, status);
			return;
		}
		slot = (uint16_t)(be16toh(cqe.wqe_counter) & (s.dv.rq.wqe_cnt - 1)) % RAW_RX_DEPTH;
		if ((cqe.op_own >> 4) == MLX5_CQE_RESP_SEND && be32toh(cqe.byte_cnt) == len &&
		    !memcmp(s.rx->p + (size_t)slot * RAW_SLOT, f, len))
			right++;
		else
			printf("  frame %u: opcode %u, %u of %zu bytes\n", i, cqe.op_own >> 4, be32toh(cqe.byte_cnt),
			       len);
		if (((cqe.l4_hdr_type_etc >> 2) & 3) == MLX5_CQE_L3_HDR_TYPE_IPV4 &&
		    ((cqe.l4_hdr_type_etc >> 4) & 7) == CQE_L4_UDP &&
		    (cqe.hds_ip_ext & (MLX5_CQE_L3_OK | MLX5_CQE_L4_OK)) == (MLX5_CQE_L3_OK | MLX5_CQE_L4_OK))
			typed++;
		rq_post();
	}
	check(right == FRAMES, "%u of %u frames received in the RQ, told by mlx5 CQEs", right, FRAMES);
	check(typed == FRAMES, "%u of %u CQEs say IPv4, UDP, L3 and L4 checksums OK", typed, FRAMES);
}

static void run(void)
{
	struct ibv_flow *to_dv = NULL, *to_peer = NULL;

	if (dv_open() && raw_port_open(&peer, &dev_b, 0)) {
		for (uint32_t i = 0; i < s.dv.rq.wqe_cnt; i++)
			rq_post();
		to_dv = raw_flow_to_mac(s.qp, s.mac);
		to_peer = raw_flow_to_mac(peer.qp, peer.mac);
		check(to_dv && to_peer, "flows to both ports' MACs");
		if (to_dv && to_peer) {
			dv_sends();
			dv_receives();
		}
	}
	if (to_dv)
		ibv_destroy_flow(to_dv);
	if (to_peer)
		ibv_destroy_flow(to_peer);
	raw_port_close(&peer);
	if (s.qp)
		ibv_destroy_qp(s.qp);
	if (s.scq)
		ibv_destroy_cq(s.scq);
	if (s.rcq)
		ibv_destroy_cq(s.rcq);
	bufs_free();
}

int main(int argc, char **argv)
{
	static const struct named_check checks[] = { { "a raw packet program on mlx5dv_init_obj", run } };

	return run_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]));
}
