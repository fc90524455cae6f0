/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The mlx5 direct verbs about QPNs and UDP ports: mlx5dv_modify_qp_udp_sport
 * on an RC QP in RTS between SENDs (tests/e2e/dv/mlx5dv_qpn.sh reads the
 * capture: QP a's first SENDs leave from its flow's port, the later ones
 * from SPORT), the errnos mlx5 gives for other QP types and states, and
 * mlx5dv_reserved_qpn_alloc/dealloc: numbers no QP has, each once.
 *
 *   mlx5dv_qpn DEVICE_A DEVICE_B SPORT
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/mlx5dv.h>

#include "tests/e2e/harness/verbs_pair.h"

#define SENDS 5		/* on each side of the port change */
#define MSG_LEN 32
#define RESERVED 8

static uint16_t new_sport;

/* n signaled SENDs from a to b, each received and completed. */
static bool sends(struct pair *p, struct buf *src, struct buf *dst, unsigned int n, const char *what)
{
	for (unsigned int i = 0; i < n; i++) {
		struct ibv_sge rs = sge_of(dst, 0, MSG_LEN), ss = sge_of(src, 0, MSG_LEN);
		struct ibv_recv_wr rwr = { .wr_id = 100 + i, .sg_list = &rs, .num_sge = 1 };
		struct ibv_send_wr swr = { .wr_id = i, .sg_list = &ss, .num_sge = 1,
					   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };

		if (!post_recv(p->b.qp, &rwr, what) || !post_send(p->a.qp, &swr, what) ||
		    !expect_wc(p->b.recv_cq, what, (struct want){ 100 + i, IBV_WC_SUCCESS, IBV_WC_RECV, MSG_LEN }, NULL) ||
		    !expect_wc(p->a.send_cq, what, (struct want){ i, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, NULL))
			return false;
	}
	return true;
}

static void udp_sport(void)
{
	struct pair p = { 0 };
	struct buf *src = buf_new(&dev_a, MSG_LEN, MSG_LEN, IBV_ACCESS_LOCAL_WRITE, 1);
	struct buf *dst = buf_new(&dev_b, MSG_LEN, MSG_LEN, IBV_ACCESS_LOCAL_WRITE, 0);
	int ret;

	if (src && dst && pair_open(&p, &side_default, &side_default)) {
		printf("qp a 0x%06x, qp b 0x%06x\n", p.a.qp->qp_num, p.b.qp->qp_num);
		check(sends(&p, src, dst, SENDS, "SEND from the flow's port"),
		      "%d SENDs from the flow's port", SENDS);
		ret = mlx5dv_modify_qp_udp_sport(p.a.qp, 0);
		check(ret == EINVAL, "mlx5dv_modify_qp_udp_sport: port 0: EINVAL (got %d)", ret);
		ret = mlx5dv_modify_qp_udp_sport(p.a.qp, new_sport);
		check(ret == 0, "mlx5dv_modify_qp_udp_sport: RC in RTS: port %u (got %d)", new_sport, ret);
		check(sends(&p, src, dst, SENDS, "SEND from the new port"), "%d SENDs from port %u",
		      SENDS, new_sport);
		expect_state(p.a.qp, IBV_QPS_RTS, "QP a after the port change");
	}
	pair_close(&p);
	bufs_free();
}

/* The errno of mlx5dv_modify_qp_udp_sport on a QP mlx5 offers it for not. */
static void udp_sport_refused(void)
{
	struct ibv_cq *cq = ibv_create_cq(dev_a.ctx, 8, NULL, NULL, 0);
	struct ibv_qp_cap cap = { .max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1,
				  .max_recv_sge = 1 };
	struct ibv_qp_init_attr ud_attr = { .qp_type = IBV_QPT_UD, .send_cq = cq, .recv_cq = cq,
					    .cap = cap };
	struct ibv_qp *rc = cq ? qp_create(&dev_a, cq, cq, false, &cap) : NULL;
	struct ibv_qp *ud = cq ? ibv_create_qp(dev_a.pd, &ud_attr) : NULL;
	int ret;

	check(rc && ud, "an RC and a UD QP");
	if (rc) {
		ret = mlx5dv_modify_qp_udp_sport(rc, new_sport);
		check(ret == EOPNOTSUPP, "mlx5dv_modify_qp_udp_sport: RC in RESET: EOPNOTSUPP (got %d)", ret);
		ibv_destroy_qp(rc);
	}
	if (ud) {
		if (ud_to_rts(ud, 0x11111111, 0) == 0) {
			ret = mlx5dv_modify_qp_udp_sport(ud, new_sport);
			check(ret == EOPNOTSUPP, "mlx5dv_modify_qp_udp_sport: UD in RTS: EOPNOTSUPP (got %d)", ret);
		} else {
			check(false, "UD QP to RTS");
		}
		ibv_destroy_qp(ud);
	}
	if (cq)
		ibv_destroy_cq(cq);
}

static void reserved_qpns(void)
{
	uint32_t qpn[RESERVED], extra;
	struct ibv_cq *cq = ibv_create_cq(dev_a.ctx, 8, NULL, NULL, 0);
	struct ibv_qp_cap cap = { .max_send_wr = 2, .max_recv_wr = 2, .max_send_sge = 1,
				  .max_recv_sge = 1 };
	struct ibv_qp *qp = cq ? qp_create(&dev_a, cq, cq, false, &cap) : NULL;
	unsigned int i, j, distinct = 0, got = 0;
	int ret;

	for (i = 0; i < RESERVED; i++)
		got += mlx5dv_reserved_qpn_alloc(dev_a.ctx, &qpn[i]) == 0;
	check(got == RESERVED, "mlx5dv_reserved_qpn_alloc: %u of %u", got, RESERVED);
	if (got != RESERVED)
		goto out;
	for (i = 0; i < RESERVED; i++) {
		bool unique = qpn[i] && !(qpn[i] & ~0xffffffu) && (!qp || qpn[i] != qp->qp_num);

		for (j = 0; j < i; j++)
			unique = unique && qpn[j] != qpn[i];
		distinct += unique;
	}
	check(distinct == RESERVED, "reserved QPNs 0x%06x..0x%06x: 24-bit, distinct, none a QP's (%u of %u)",
	      qpn[0], qpn[RESERVED - 1], distinct, RESERVED);
	/* Another context of the device holds none of them. */
	ret = mlx5dv_reserved_qpn_dealloc(dev_b.ctx, qpn[0]);
	check(ret == EINVAL, "mlx5dv_reserved_qpn_dealloc: another context's QPN: EINVAL (got %d)", ret);
	for (i = 0, got = 0; i < RESERVED; i++)
		got += mlx5dv_reserved_qpn_dealloc(dev_a.ctx, qpn[i]) == 0;
	check(got == RESERVED, "mlx5dv_reserved_qpn_dealloc: %u of %u", got, RESERVED);
	ret = mlx5dv_reserved_qpn_dealloc(dev_a.ctx, qpn[0]);
	check(ret == EINVAL, "mlx5dv_reserved_qpn_dealloc: twice: EINVAL (got %d)", ret);
	if (qp) {
		ret = mlx5dv_reserved_qpn_dealloc(dev_a.ctx, qp->qp_num);
		check(ret == EINVAL, "mlx5dv_reserved_qpn_dealloc: a QP's number: EINVAL (got %d)", ret);
	}
	/* One left reserved: it goes with the context. */
	ret = mlx5dv_reserved_qpn_alloc(dev_a.ctx, &extra);
	check(ret == 0 && extra != qpn[0], "mlx5dv_reserved_qpn_alloc: 0x%06x, not the number just freed",
	      ret ? 0 : extra);
out:
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
}

static const struct named_check checks[] = {
	{ "mlx5dv_modify_qp_udp_sport", udp_sport },
	{ "mlx5dv_modify_qp_udp_sport refused", udp_sport_refused },
	{ "mlx5dv_reserved_qpn_alloc", reserved_qpns },
};

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 4 || !(new_sport = (uint16_t)strtoul(argv[3], NULL, 0))) {
		fprintf(stderr, "usage: %s DEVICE_A DEVICE_B SPORT\n", argv[0]);
		return 1;
	}
	return run_checks(argv[1], argv[2], checks, sizeof(checks) / sizeof(checks[0]));
}
