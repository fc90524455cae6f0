/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Fuzz of the packet path of the transports other than RC (rc_fuzz.c has
 * RC): mutated packets with a correct ICRC, from device B's address, at a
 * UD QP, a UC QP, an XRC target and a DCT of device A, each with receives
 * posted. Mostly opcodes of the target's own transport, else of any or of
 * none; Q_Keys, SRQ numbers, DC access keys and rkeys right or wrong; PSNs
 * near the start or anywhere; payloads of every size, truncated packets.
 * An MR with no remote rights lies beside the one with every right: it
 * may not change. The UD QP, which receives through the SRQ, stays in
 * RTS: a receive fits any datagram, and its responder drops what it cannot
 * take (the UC QP may fail, as a SEND longer than its receive is a local
 * length error there). After PACKETS fuzz packets reached the daemon
 * (its port counters say so) it must answer `rocemu status`.
 *
 *   transport_fuzz DEVICE_A DEVICE_B ROCEMU [PACKETS [SEED]]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/mlx5dv.h>

#include "tests/e2e/harness/forge.h"
#include "tests/e2e/harness/fuzz.h"
#include "tests/e2e/harness/verbs_pair.h"

#define QKEY 0x11111111u
#define DC_KEY 0x5ca1ab1eull
#define MEM_LEN 65536
#define SLOT 8192		/* a receive buffer: the GRH and any UD payload fit */
#define RECVS 64		/* receives kept posted per SRQ */
#define PAYLOAD_MAX 4200	/* past the MTU of 4096 */
#define BATCH 64		/* fuzz packets between two looks at the CQ */

enum target { T_UD, T_UC, T_XRC, T_DCT, NTARGETS };
static const char *const target_names[NTARGETS] = { "UD", "UC", "XRC target", "DCT" };

static struct ibv_qp *targets[NTARGETS];
static struct ibv_qp *uc_peer;
static struct ibv_cq *cq, *peer_cq;
static struct ibv_srq *srq, *xrc_srq;
static struct ibv_xrcd *xrcd;
static uint32_t xrc_srqn;
static struct buf *rw, *ro, *local;
static uint8_t ops[NTARGETS][256];
static uint32_t n_ops[NTARGETS], n_known;
static uint8_t known[256];
static uint8_t pkt[FORGE_MAX];

/* The target an opcode's transport serves: BTH's class, DC by its DCETH. */
static int target_of_opcode(uint8_t op, const struct rocemu_opcode_info *info)
{
	if (info->hdr_mask & ROCEMU_HDRM_DCETH)
		return T_DCT;
	switch (op & 0xe0) {
	case 0x60: return T_UD;
	case 0x20: return T_UC;
	case 0xa0: return T_XRC;
	default: return -1;
	}
}

static void opcodes_init(void)
{
	for (unsigned int op = 0; op < 256; op++) {
		const struct rocemu_opcode_info *info = rocemu_opcode_info((uint8_t)op);
		int t;

		if (!info)
			continue;
		known[n_known++] = (uint8_t)op;
		t = target_of_opcode((uint8_t)op, info);
		if (t >= 0)
			ops[t][n_ops[t]++] = (uint8_t)op;
	}
}

static void post_srq_recvs(struct ibv_srq *s, uint64_t tag, int n)
{
	for (int i = 0; i < n; i++) {
		struct ibv_sge sge = sge_of(local, (size_t)fuzz_below(MEM_LEN / SLOT) * SLOT, SLOT);
		struct ibv_recv_wr wr = { .wr_id = tag, .sg_list = &sge, .num_sge = 1 }, *bad;

		if (ibv_post_srq_recv(s, &wr, &bad))
			return;
	}
}

/* Between two batches: every completion gives its receive back to its SRQ; the fuzz goes on. */
static bool recvs_service(void)
{
	struct ibv_wc wc[32];
	int n;

	while ((n = ibv_poll_cq(cq, 32, wc)) > 0)
		for (int i = 0; i < n; i++)
			post_srq_recvs(wc[i].wr_id ? xrc_srq : srq, wc[i].wr_id, 1);
	return true;
}

static bool modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask, const char *what)
{
	int ret = ibv_modify_qp(qp, a, mask);

	if (ret)
		check(false, "%s: %s", what, strerror(ret));
	return !ret;
}

static bool to_init(struct ibv_qp *qp, enum target t)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY,
				 .qp_access_flags = t == T_UC ? IBV_ACCESS_REMOTE_WRITE :
					IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
					IBV_ACCESS_REMOTE_ATOMIC };

	return modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		      (t == T_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS), "to INIT");
}

/* RTR towards dqpn on gid (UD: neither), and RTS where the target sends. */
static bool to_rts(struct ibv_qp *qp, enum target t, const union ibv_gid *gid, uint32_t dqpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096,
				 .dest_qp_num = dqpn, .max_dest_rd_atomic = 4, .min_rnr_timer = 1,
				 .ah_attr = { .is_global = 1, .port_num = 1,
					      .grh = { .dgid = *gid, .hop_limit = 64 } } };
	int path = IBV_QP_PATH_MTU | IBV_QP_AV;
	int mask = t == T_UD ? 0 :
		   t == T_UC ? path | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN :
		   t == T_DCT ? path | IBV_QP_MIN_RNR_TIMER :
		   path | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			   IBV_QP_MIN_RNR_TIMER;

	if (!to_init(qp, t) || !modify(qp, &a, IBV_QP_STATE | mask, "to RTR"))
		return false;
	if (t == T_XRC || t == T_DCT)
		return true;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS };
	return modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN, "to RTS");
}

static bool targets_open(void)
{
	struct ibv_srq_init_attr sattr = { .attr = { .max_wr = RECVS + 1, .max_sge = 1 } };
	struct ibv_qp_init_attr attr = { .cap = { .max_send_wr = 4, .max_send_sge = 1 } };
	struct ibv_qp_init_attr_ex dct = { .qp_type = IBV_QPT_DRIVER, .pd = dev_a.pd,
					   .comp_mask = IBV_QP_INIT_ATTR_PD };
	struct mlx5dv_qp_init_attr dv = { .comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
					  .dc_init_attr = { .dc_type = MLX5DV_DCTYPE_DCT,
							    .dct_access_key = DC_KEY } };
	struct ibv_qp_init_attr_ex tgt = { .qp_type = IBV_QPT_XRC_RECV,
					   .comp_mask = IBV_QP_INIT_ATTR_XRCD };
	struct ibv_srq_init_attr_ex xattr = {
		.attr = { .max_wr = RECVS + 1, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
			     IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = dev_a.pd,
	};

	cq = ibv_create_cq(dev_a.ctx, 4 * RECVS, NULL, NULL, 0);
	peer_cq = ibv_create_cq(dev_b.ctx, 4, NULL, NULL, 0);
	srq = ibv_create_srq(dev_a.pd, &sattr);
	xrcd = xrcd_open(dev_a.ctx, -1, 0);
	xattr.xrcd = xrcd;
	xattr.cq = cq;
	xrc_srq = xrcd && cq ? ibv_create_srq_ex(dev_a.ctx, &xattr) : NULL;
	if (!cq || !peer_cq || !srq || !xrc_srq || ibv_get_srq_num(xrc_srq, &xrc_srqn)) {
		check(false, "CQs, SRQ, XRC domain and SRQ: %s", strerror(errno));
		return false;
	}
	attr.send_cq = attr.recv_cq = cq;
	attr.srq = srq;
	attr.qp_type = IBV_QPT_UD;
	targets[T_UD] = ibv_create_qp(dev_a.pd, &attr);
	attr.qp_type = IBV_QPT_UC;
	targets[T_UC] = ibv_create_qp(dev_a.pd, &attr);
	tgt.xrcd = xrcd;
	targets[T_XRC] = ibv_create_qp_ex(dev_a.ctx, &tgt);
	dct.send_cq = dct.recv_cq = cq;
	dct.srq = srq;
	targets[T_DCT] = mlx5dv_create_qp(dev_a.ctx, &dct, &dv);
	attr.send_cq = attr.recv_cq = peer_cq;
	attr.srq = NULL;
	attr.cap.max_recv_wr = attr.cap.max_recv_sge = 1;
	uc_peer = ibv_create_qp(dev_b.pd, &attr);
	for (int t = 0; t < NTARGETS; t++)
		if (!targets[t]) {
			check(false, "create the %s: %s", target_names[t], strerror(errno));
			return false;
		}
	if (!uc_peer || !to_rts(uc_peer, T_UC, &dev_a.gid, targets[T_UC]->qp_num))
		return false;
	for (int t = 0; t < NTARGETS; t++)
		if (!to_rts(targets[t], (enum target)t, &dev_b.gid,
			    t == T_UC ? uc_peer->qp_num : 0x100))
			return false;
	post_srq_recvs(srq, 0, RECVS);
	post_srq_recvs(xrc_srq, 1, RECVS);
	check(true, "UD 0x%06x, UC 0x%06x, XRC target 0x%06x (SRQ %u), DCT 0x%06x",
	      targets[T_UD]->qp_num, targets[T_UC]->qp_num, targets[T_XRC]->qp_num, xrc_srqn,
	      targets[T_DCT]->qp_num);
	return true;
}

/* An address in the MR with every right, in the one with none, or anywhere. */
static uint64_t pick_va(void)
{
	if (fuzz_chance(60))
		return raddr_of(rw, fuzz_below(MEM_LEN));
	if (fuzz_chance(50))
		return raddr_of(ro, fuzz_below(MEM_LEN));
	return fuzz_rnd();
}

static uint32_t pick_rkey(void)
{
	return fuzz_chance(50) ? rw->mr->rkey : fuzz_chance(50) ? ro->mr->rkey : (uint32_t)fuzz_rnd();
}

/* Fill the extension headers the opcode carries, each right or wrong. */
static void headers_fuzz(uint8_t *p)
{
	uint8_t *h;

	if ((h = rocemu_pkt_deth(p))) {
		rocemu_deth_set_qkey(h, fuzz_chance(70) ? QKEY : (uint32_t)fuzz_rnd());
		rocemu_deth_set_src_qp(h, (uint32_t)fuzz_rnd() & ROCEMU_QPN_MASK);
	}
	if ((h = rocemu_pkt_xrceth(p)))
		rocemu_xrceth_set_srqn(h, fuzz_chance(70) ? xrc_srqn : (uint32_t)fuzz_rnd());
	if ((h = rocemu_pkt_dceth(p)))
		rocemu_dceth_set_key(h, fuzz_chance(70) ? DC_KEY : fuzz_rnd());
	if ((h = rocemu_pkt_reth(p))) {
		rocemu_reth_set_va(h, pick_va());
		rocemu_reth_set_rkey(h, pick_rkey());
		rocemu_reth_set_dma_len(h, fuzz_chance(50) ? fuzz_below(2 * PAYLOAD_MAX) :
							   (uint32_t)fuzz_rnd());
	}
	if ((h = rocemu_pkt_atmeth(p))) {
		rocemu_atmeth_set_va(h, fuzz_chance(80) ? pick_va() & ~7ull : pick_va());
		rocemu_atmeth_set_rkey(h, pick_rkey());
		rocemu_atmeth_set_swap_add(h, fuzz_rnd());
		rocemu_atmeth_set_compare(h, fuzz_rnd());
	}
	if ((h = rocemu_pkt_aeth(p))) {
		rocemu_aeth_set_syndrome(h, (uint8_t)fuzz_rnd());
		rocemu_aeth_set_msn(h, (uint32_t)fuzz_rnd());
	}
	if ((h = rocemu_pkt_immdt(p)))
		rocemu_immdt_set_imm(h, (uint32_t)fuzz_rnd());
	if ((h = rocemu_pkt_ieth(p)))
		rocemu_ieth_set_rkey(h, (uint32_t)fuzz_rnd());
}

/* One mutated packet at pkt; returns its length without the ICRC. */
static size_t fuzz_packet(void)
{
	enum target t = (enum target)fuzz_below(NTARGETS);
	uint8_t op = fuzz_chance(80) ? ops[t][fuzz_below(n_ops[t])] : known[fuzz_below(n_known)];
	const struct rocemu_opcode_info *info = rocemu_opcode_info(op);
	uint32_t paylen = 0, qpn, psn;
	size_t len;

	if (info->hdr_mask & ROCEMU_HDRM_PAYLOAD)
		paylen = fuzz_chance(50) ? fuzz_below(64) : fuzz_below(PAYLOAD_MAX);
	qpn = fuzz_chance(90) ? targets[t]->qp_num : (uint32_t)fuzz_rnd() & ROCEMU_QPN_MASK;
	psn = fuzz_chance(70) ? fuzz_below(64) : (uint32_t)fuzz_rnd() & ROCEMU_PSN_MASK;
	len = forge_build(pkt, op, qpn, psn, fuzz_chance(50), paylen, (uint8_t)fuzz_rnd());
	headers_fuzz(pkt);
	if (fuzz_chance(3))
		rocemu_bth_set_opcode(pkt, (uint8_t)fuzz_rnd());	/* anything, known or not */
	if (fuzz_chance(5))
		rocemu_bth_set_padcnt(pkt, (uint8_t)fuzz_below(4));
	if (fuzz_chance(3))
		rocemu_bth_set_pkey(pkt, (uint16_t)fuzz_rnd());
	return fuzz_damage(pkt, len);
}

static struct forge from_b = { .fd = -1 };
static uint32_t dev_a_addr;

static void next_packet(struct fuzz_packet *p)
{
	*p = (struct fuzz_packet){ .data = pkt, .len = fuzz_packet(), .from = &from_b,
				   .dst = dev_a_addr };
}

static void after_checks(void)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	check_untouched(ro->p, MEM_LEN, UNTOUCHED, "the MR without remote rights");
	check(!ibv_query_qp(targets[T_UD], &a, IBV_QP_STATE, &init) && a.qp_state == IBV_QPS_RTS,
	      "the UD QP is still in RTS");
}

static void close_all(void)
{
	struct ibv_async_event ev;

	for (int t = 0; t < NTARGETS; t++)
		if (targets[t])
			ibv_destroy_qp(targets[t]);
	if (uc_peer)
		ibv_destroy_qp(uc_peer);
	if (xrc_srq)
		ibv_destroy_srq(xrc_srq);
	if (srq)
		ibv_destroy_srq(srq);
	if (xrcd)
		ibv_close_xrcd(xrcd);
	if (cq)
		ibv_destroy_cq(cq);
	if (peer_cq)
		ibv_destroy_cq(peer_cq);
	while (dev_a.ctx && ibv_get_async_event(dev_a.ctx, &ev) == 0)
		ibv_ack_async_event(&ev);
}

int main(int argc, char **argv)
{
	const struct fuzz_source src = { .service = recvs_service, .next = next_packet,
					 .batch = BATCH };
	unsigned long want;

	if (!fuzz_args(argc, argv, &want))
		return 2;
	opcodes_init();
	if (!dev_open(&dev_a, argv[1]) || !dev_open(&dev_b, argv[2]) ||
	    !forge_open(&from_b, gid_ipv4(&dev_b.gid), 0))
		goto out;
	dev_a_addr = gid_ipv4(&dev_a.gid);
	fcntl(dev_a.ctx->async_fd, F_SETFL, O_NONBLOCK);
	rw = buf_new(&dev_a, MEM_LEN, MEM_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC, 0);
	ro = buf_new(&dev_a, MEM_LEN, MEM_LEN, 0, UNTOUCHED);
	local = buf_new(&dev_a, MEM_LEN, MEM_LEN, IBV_ACCESS_LOCAL_WRITE, 0);
	if (!rw || !ro || !local || !targets_open())
		goto out;
	fuzz_run(dev_a.name, dev_b.name, want, &src);
	cli_status_answers("after the fuzz");
	after_checks();
out:
	close_all();
	bufs_free();
	forge_close(&from_b);
	dev_close(&dev_b);
	dev_close(&dev_a);
	return checks_finish();
}
