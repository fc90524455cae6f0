/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Creating a RAW_PACKET QP needs CAP_NET_RAW, as the kernel's uverbs
 * requires it: `raw_perm DEVICE allowed` expects the create to succeed,
 * `raw_perm DEVICE EPERM` expects it refused with EPERM, and a UD QP
 * created either way (the capability is asked of raw QPs alone). A flow
 * rule needs it too, asked before anything else: on that UD QP it is
 * refused with EPERM without it, with EOPNOTSUPP (mlx5's) with it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "tests/e2e/harness/verbs_pair.h"
#include "tests/e2e/raw/raw_port.h"

int main(int argc, char **argv)
{
	struct ibv_cq *cq = NULL;
	struct ibv_qp *qp, *ud = NULL;
	bool allowed;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3 || (strcmp(argv[2], "allowed") && strcmp(argv[2], "EPERM"))) {
		fprintf(stderr, "usage: %s DEVICE allowed|EPERM\n", argv[0]);
		return 1;
	}
	allowed = !strcmp(argv[2], "allowed");
	if (dev_open(&dev_a, argv[1])) {
		cq = ibv_create_cq(dev_a.ctx, 4, NULL, NULL, 0);
		errno = 0;
		qp = cq ? raw_qp_create(&dev_a, cq, cq, 0) : NULL;
		if (allowed)
			check(qp != NULL, "RAW_PACKET QP with CAP_NET_RAW: created (%s)", qp ? "" : strerror(errno));
		else
			check(!qp && errno == EPERM, "RAW_PACKET QP without CAP_NET_RAW: refused with EPERM (got %s)",
			      qp ? "a QP" : strerror(errno));
		if (qp)
			ibv_destroy_qp(qp);
		ud = cq ? ibv_create_qp(dev_a.pd, &(struct ibv_qp_init_attr){
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
			.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 } }) : NULL;
		check(ud != NULL, "a UD QP %s CAP_NET_RAW: created", allowed ? "with" : "without");
		if (ud) {
			static const uint8_t mac[6] = { 0x02, 0, 1, 2, 3, 4 };
			struct ibv_flow *flow;
			int want = allowed ? EOPNOTSUPP : EPERM;

			errno = 0;
			flow = raw_flow_to_mac(ud, mac);
			check(!flow && errno == want, "a flow on a UD QP %s CAP_NET_RAW: %s (got %s)",
			      allowed ? "with" : "without", strerror(want),
			      flow ? "a flow" : strerror(errno));
			if (flow)
				ibv_destroy_flow(flow);
			ibv_destroy_qp(ud);
		}
		if (cq)
			ibv_destroy_cq(cq);
	}
	dev_close(&dev_a);
	return checks_finish();
}
