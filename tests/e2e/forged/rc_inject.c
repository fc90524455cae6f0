/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Another local user injecting into a connection between two devices of
 * one daemon: it binds the sender's address on a port of its own (any
 * user may, on loopback) and sends a SEND and a WRITE with the PSNs and
 * the rkey the receiver expects, the strongest such forger. Nothing lands:
 * no completion, no byte of the receive buffer or the MR, the forgeries
 * counted as rx_forged_source; then the real SEND and WRITE land whole.
 *
 *   rc_inject DEVICE_A DEVICE_B ROCEMU PEER_ADDR   (as root: the forger becomes nobody)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "tests/e2e/harness/forge.h"
#include "tests/e2e/harness/verbs_pair.h"

#define MSG_LEN 256
#define NOBODY 65534

static uint32_t peer_addr;	/* network order */
static uint8_t pkt[FORGE_MAX];

/* The forger's packets at B's QP, as user nobody from A's address; its exit status. */
static int forge_as_nobody(const struct pair *p, const struct buf *mr)
{
	uint32_t dqpn = p->b.qp->qp_num;
	struct forge f = { .fd = -1 };
	size_t len;

	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY)) {
		printf("FAIL: the forger cannot become user nobody: %s\n", strerror(errno));
		return 1;
	}
	if (!forge_open(&f, gid_ipv4(&dev_a.gid), 0))
		return 1;
	/* The next PSN B expects, and the one after, and a few either side. */
	for (int32_t off = -2; off < 4; off++) {
		uint32_t psn = rocemu_psn_add(PSN_A, (uint32_t)off);

		len = forge_build(pkt, ROCEMU_OP_RC_SEND_ONLY, dqpn, psn, true, MSG_LEN, 0xee);
		if (!forge_send(&f, gid_ipv4(&dev_b.gid), pkt, len))
			return 1;
		len = forge_reth_request(pkt, ROCEMU_OP_RC_RDMA_WRITE_ONLY, dqpn, psn,
					 raddr_of(mr, 0), mr->mr->rkey, MSG_LEN, MSG_LEN, 0xee);
		if (!forge_send(&f, gid_ipv4(&dev_b.gid), pkt, len))
			return 1;
	}
	forge_close(&f);
	return 0;
}

static void check_injection(void)
{
	int rights = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct buf *src, *recv_buf, *target;
	long long forged0;
	struct ibv_recv_wr rwr;
	struct ibv_send_wr wr;
	struct ibv_sge sge, rsge;
	struct ibv_wc wc;
	struct pair p;
	pid_t child;
	int status;

	if (!pair_open(&p, &side_default, &side_default))
		return;
	src = buf_new(&dev_a, MSG_LEN, MSG_LEN, IBV_ACCESS_LOCAL_WRITE, 0);
	recv_buf = buf_new(&dev_b, MSG_LEN, MSG_LEN, IBV_ACCESS_LOCAL_WRITE, UNTOUCHED);
	target = buf_new(&dev_b, MSG_LEN, MSG_LEN, rights, UNTOUCHED);
	if (!src || !recv_buf || !target)
		goto out;
	rsge = sge_of(recv_buf, 0, MSG_LEN);
	rwr = (struct ibv_recv_wr){ .wr_id = 7, .sg_list = &rsge, .num_sge = 1 };
	if (!post_recv(p.b.qp, &rwr, "a receive for the real SEND"))
		goto out;
	forged0 = cli_stat(dev_b.name, "rx_forged_source");

	fflush(stdout);
	child = fork();
	if (child == 0)
		_exit(forge_as_nobody(&p, target));
	check(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "user nobody sent 12 forged SENDs and WRITEs from %s",
	      inet_ntoa((struct in_addr){ gid_ipv4(&dev_a.gid) }));
	cli_stat_reaches(dev_b.name, "rx_forged_source", forged0 + 12,
			 "every forged packet dropped and counted as rx_forged_source");
	check(poll_wc(p.b.recv_cq, &wc, 200) == 0, "no forged SEND completed a receive");
	check_untouched(recv_buf->p, MSG_LEN, UNTOUCHED, "the receive buffer after the forgeries");
	check_untouched(target->p, MSG_LEN, UNTOUCHED, "the MR after the forged WRITEs");
	expect_state(p.b.qp, IBV_QPS_RTS, "B after the forgeries");

	/* The real SEND takes the PSN the forger tried first: it lands, no duplicate. */
	fill_pattern(src->p, MSG_LEN, 3, 0);
	sge = sge_of(src, 0, MSG_LEN);
	wr = (struct ibv_send_wr){ .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	if (!post_send(p.a.qp, &wr, "the real SEND"))
		goto out;
	expect_wc(p.a.send_cq, "the real SEND", (struct want){ 1, IBV_WC_SUCCESS, IBV_WC_SEND, -1 }, NULL);
	expect_wc(p.b.recv_cq, "its receive", (struct want){ 7, IBV_WC_SUCCESS, IBV_WC_RECV, MSG_LEN }, NULL);
	check_pattern(recv_buf->p, MSG_LEN, 3, 0, "the real SEND's bytes");
	wr = (struct ibv_send_wr){ .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
				   .wr.rdma = { .remote_addr = raddr_of(target, 0),
						.rkey = target->mr->rkey } };
	if (!post_send(p.a.qp, &wr, "the real WRITE"))
		goto out;
	expect_wc(p.a.send_cq, "the real WRITE", (struct want){ 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1 }, NULL);
	check_pattern(target->p, MSG_LEN, 3, 0, "the real WRITE's bytes");
out:
	pair_close(&p);
	bufs_free();
}

int main(int argc, char **argv)
{
	static const struct named_check checks[] = {
		{ "another user forging SENDs and WRITEs at a connected QP", check_injection },
	};

	return forge_checks_main(argc, argv, checks, sizeof(checks) / sizeof(checks[0]), &peer_addr);
}
