/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * librpma's public API over rocemu: a connection through the RDMA CM (the
 * server's memory region descriptor in its private data), then an
 * rpma_read of the server's bytes, an rpma_write of the client's, an
 * rpma_flush (visibility) and a read back, each checked; the server checks
 * after the client has gone that its memory holds what was written.
 *
 * "rcq-server"/"rcq-client" run what librpma's example
 * 12-receive-completion-queue does, in this program's words: a connection
 * whose receives complete to a CQ of their own (rpma_conn_cfg_set_rcq_size);
 * per round the client posts a receive, sends its counter, waits for the
 * SEND's completion on the CQ, then for the answer's on the receive CQ,
 * and takes the answer, the counter plus one, as its next counter; the
 * server waits on the receive CQ, posts its next receive, answers and waits
 * on the CQ. Each completion is taken by one rpma_cq_wait and one
 * rpma_cq_get_wc, which must find it there, as the example's
 * get_wc_and_validate does. The client ends with a message of its own,
 * completion only on error, and disconnects at once: the server must get it.
 *
 * usage: rpma server ADDR PORT | rpma client SERVER_ADDR PORT
 *        rpma rcq-server ADDR PORT | rpma rcq-client SERVER_ADDR PORT ROUNDS
 * Prints "ok: ..." per check ("ready" once the server listens) and
 * "N failed" last; exits 0 when none failed.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <librpma.h>

#include "tests/e2e/harness/check_line.h"

#define REGION 4096
#define RCQ_SIZE 10		/* the receive CQ's size, the example's */
#define FIRST_COUNTER 7		/* the client's counter in its first round */
#define LAST_MESSAGE UINT64_MAX	/* the client's last message: no answer */

/* Stop on a librpma error: nothing after it can be checked. */
#define MUST(call)							\
	do {								\
		int must_ret = (call);					\
		if (must_ret) {						\
			printf("FAIL: %s: %s\n", #call, rpma_err_2str(must_ret)); \
			printf("%d failed\n", failed + 1);		\
			exit(1);					\
		}							\
	} while (0)

/* The bytes each side fills its region with: 'seed' plus the offset. */
static void fill(unsigned char *buf, unsigned char seed)
{
	for (size_t i = 0; i < REGION; i++)
		buf[i] = (unsigned char)(seed + i * 7);
}

static int holds(const unsigned char *buf, unsigned char seed)
{
	unsigned char want[REGION];

	fill(want, seed);
	return !memcmp(buf, want, REGION);
}

static struct rpma_peer *peer_for(const char *addr, enum rpma_util_ibv_context_type type)
{
	struct ibv_context *dev;
	struct rpma_peer *peer;

	MUST(rpma_utils_get_ibv_context(addr, type, &dev));
	MUST(rpma_peer_new(dev, &peer));
	return peer;
}

/* Wait for one completion with wr_id ctx; its status. */
static enum ibv_wc_status complete(struct rpma_conn *conn, const void *ctx)
{
	struct rpma_cq *cq;
	struct ibv_wc wc;
	int got = 0, ret;

	MUST(rpma_conn_get_cq(conn, &cq));
	do {
		MUST(rpma_cq_wait(cq));
		ret = rpma_cq_get_wc(cq, 1, &wc, &got);
		if (ret && ret != RPMA_E_NO_COMPLETION)
			MUST(ret);
	} while (got == 0);
	if (wc.wr_id != (uint64_t)(uintptr_t)ctx)
		return IBV_WC_GENERAL_ERR;
	return wc.status;
}

static void server(const char *addr, const char *port, unsigned char *buf)
{
	struct rpma_peer *peer = peer_for(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	unsigned char desc[64];
	struct rpma_conn_private_data pdata = { desc, 0 };
	enum rpma_conn_event event;
	struct rpma_conn_req *req;
	struct rpma_mr_local *mr;
	struct rpma_conn *conn;
	struct rpma_ep *ep;
	size_t desc_size;

	fill(buf, 'S');
	MUST(rpma_mr_reg(peer, buf, REGION, RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST |
			 RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, &mr));
	MUST(rpma_mr_get_descriptor_size(mr, &desc_size));
	if (desc_size > sizeof(desc))
		MUST(RPMA_E_INVAL);
	MUST(rpma_mr_get_descriptor(mr, desc));
	pdata.len = (uint8_t)desc_size;
	MUST(rpma_ep_listen(peer, addr, port, &ep));
	printf("ready\n");
	fflush(stdout);
	MUST(rpma_ep_next_conn_req(ep, NULL, &req));
	MUST(rpma_conn_req_connect(&req, &pdata, &conn));
	MUST(rpma_conn_next_event(conn, &event));
	CHECK(event == RPMA_CONN_ESTABLISHED, "server: connection established");
	MUST(rpma_conn_next_event(conn, &event));
	CHECK(event == RPMA_CONN_CLOSED, "server: the client closed the connection");
	CHECK(holds(buf, 'C'), "server: its region holds the client's %d written bytes", REGION);
	MUST(rpma_conn_disconnect(conn));
	MUST(rpma_conn_delete(&conn));
	MUST(rpma_ep_shutdown(&ep));
	MUST(rpma_mr_dereg(&mr));
	MUST(rpma_peer_delete(&peer));
}

static void client(const char *addr, const char *port, unsigned char *buf)
{
	struct rpma_peer *peer = peer_for(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	unsigned char *in = buf, *out = buf + REGION;
	struct rpma_conn_private_data pdata;
	struct rpma_mr_remote *remote;
	enum rpma_conn_event event;
	struct rpma_conn_req *req;
	struct rpma_mr_local *mr;
	struct rpma_conn *conn;

	MUST(rpma_mr_reg(peer, buf, 2 * REGION, RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC,
			 &mr));
	MUST(rpma_conn_req_new(peer, addr, port, NULL, &req));
	MUST(rpma_conn_req_connect(&req, NULL, &conn));
	MUST(rpma_conn_next_event(conn, &event));
	CHECK(event == RPMA_CONN_ESTABLISHED, "client: connection established");
	MUST(rpma_conn_get_private_data(conn, &pdata));
	MUST(rpma_mr_remote_from_descriptor(pdata.ptr, pdata.len, &remote));

	memset(in, 0, REGION);
	MUST(rpma_read(conn, mr, 0, remote, 0, REGION, RPMA_F_COMPLETION_ALWAYS, in));
	CHECK(complete(conn, in) == IBV_WC_SUCCESS && holds(in, 'S'),
	      "client: rpma_read of %d bytes got the server's", REGION);

	fill(out, 'C');
	MUST(rpma_write(conn, remote, 0, mr, REGION, REGION, RPMA_F_COMPLETION_ALWAYS, out));
	CHECK(complete(conn, out) == IBV_WC_SUCCESS, "client: rpma_write of %d bytes", REGION);
	MUST(rpma_flush(conn, remote, 0, REGION, RPMA_FLUSH_TYPE_VISIBILITY,
			RPMA_F_COMPLETION_ALWAYS, remote));
	CHECK(complete(conn, remote) == IBV_WC_SUCCESS, "client: rpma_flush (visibility)");

	memset(in, 0, REGION);
	MUST(rpma_read(conn, mr, 0, remote, 0, REGION, RPMA_F_COMPLETION_ALWAYS, in));
	CHECK(complete(conn, in) == IBV_WC_SUCCESS && holds(in, 'C'),
	      "client: reading back gets the bytes written");

	MUST(rpma_conn_disconnect(conn));
	MUST(rpma_conn_next_event(conn, &event));
	CHECK(event == RPMA_CONN_CLOSED, "client: connection closed");
	MUST(rpma_conn_delete(&conn));
	MUST(rpma_mr_remote_delete(&remote));
	MUST(rpma_mr_dereg(&mr));
	MUST(rpma_peer_delete(&peer));
}

/* Stop at a failed round: the peer, left waiting, is stopped by the script. */
static void __attribute__((noreturn)) give_up(void)
{
	printf("%d failed\n", failed);
	exit(1);
}

/*
 * The next completion of cq, by one rpma_cq_wait and one rpma_cq_get_wc:
 * the event must not come before the completion is there. It must be a
 * successful one of opcode; a FAIL line says what came otherwise.
 */
static void one_completion(struct rpma_cq *cq, enum ibv_wc_opcode opcode, const char *who,
			   unsigned int round)
{
	struct ibv_wc wc;
	int ret = rpma_cq_wait(cq);

	if (!ret)
		ret = rpma_cq_get_wc(cq, 1, &wc, NULL);
	if (!ret && wc.status == IBV_WC_SUCCESS && wc.opcode == opcode)
		return;
	CHECK(false, "%s: round %u: %s completion: %s", who, round,
	      opcode == IBV_WC_SEND ? "SEND" : "receive",
	      ret ? rpma_err_2str(ret) : wc.status ? ibv_wc_status_str(wc.status) : "another opcode");
	give_up();
}

/* The connection configuration of both sides: a receive CQ of RCQ_SIZE of its own. */
static struct rpma_conn_cfg *rcq_cfg(void)
{
	struct rpma_conn_cfg *cfg;

	MUST(rpma_conn_cfg_new(&cfg));
	MUST(rpma_conn_cfg_set_rcq_size(cfg, RCQ_SIZE));
	return cfg;
}

/* Disconnect, wait for the connection to close, free it. */
static void rcq_close(struct rpma_conn **conn, const char *who)
{
	enum rpma_conn_event event;

	MUST(rpma_conn_disconnect(*conn));
	MUST(rpma_conn_next_event(*conn, &event));
	CHECK(event == RPMA_CONN_CLOSED, "%s: connection closed", who);
	MUST(rpma_conn_delete(conn));
}

static void rcq_server(const char *addr, const char *port, uint64_t *msg)
{
	struct rpma_peer *peer = peer_for(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL);
	struct rpma_conn_cfg *cfg = rcq_cfg();
	struct rpma_mr_local *recv_mr, *send_mr;
	uint64_t *recv = msg, *send = msg + 1, want = FIRST_COUNTER;
	enum rpma_conn_event event;
	struct rpma_conn_req *req;
	struct rpma_cq *cq, *rcq;
	struct rpma_conn *conn;
	struct rpma_ep *ep;
	unsigned int rounds = 0;

	MUST(rpma_mr_reg(peer, recv, sizeof(*recv), RPMA_MR_USAGE_RECV, &recv_mr));
	MUST(rpma_mr_reg(peer, send, sizeof(*send), RPMA_MR_USAGE_SEND, &send_mr));
	MUST(rpma_ep_listen(peer, addr, port, &ep));
	printf("ready\n");
	fflush(stdout);
	MUST(rpma_ep_next_conn_req(ep, cfg, &req));
	MUST(rpma_conn_req_recv(req, recv_mr, 0, sizeof(*recv), recv));
	MUST(rpma_conn_req_connect(&req, NULL, &conn));
	MUST(rpma_conn_next_event(conn, &event));
	CHECK(event == RPMA_CONN_ESTABLISHED, "rcq-server: connection established");
	MUST(rpma_conn_get_cq(conn, &cq));
	MUST(rpma_conn_get_rcq(conn, &rcq));
	CHECK(cq != rcq, "rcq-server: the connection has a receive CQ of its own");
	for (;;) {
		one_completion(rcq, IBV_WC_RECV, "rcq-server", rounds);
		if (*recv == LAST_MESSAGE)
			break;
		if (*recv != want) {
			CHECK(false, "rcq-server: round %u: got %" PRIu64 ", not %" PRIu64, rounds,
			      *recv, want);
			give_up();
		}
		/* The client's next counter is the answer. */
		*send = want = *recv + 1;
		MUST(rpma_recv(conn, recv_mr, 0, sizeof(*recv), recv));
		MUST(rpma_send(conn, send_mr, 0, sizeof(*send), RPMA_F_COMPLETION_ALWAYS, NULL));
		one_completion(cq, IBV_WC_SEND, "rcq-server", rounds);
		rounds++;
	}
	CHECK(true, "rcq-server: %u rounds, each counter the one expected, then the client's last "
	      "message", rounds);
	rcq_close(&conn, "rcq-server");
	MUST(rpma_ep_shutdown(&ep));
	MUST(rpma_conn_cfg_delete(&cfg));
	MUST(rpma_mr_dereg(&send_mr));
	MUST(rpma_mr_dereg(&recv_mr));
	MUST(rpma_peer_delete(&peer));
}

static void rcq_client(const char *addr, const char *port, unsigned int rounds, uint64_t *msg)
{
	struct rpma_peer *peer = peer_for(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE);
	struct rpma_conn_cfg *cfg = rcq_cfg();
	struct rpma_mr_local *recv_mr, *send_mr;
	uint64_t *recv = msg, *send = msg + 1, counter = FIRST_COUNTER;
	enum rpma_conn_event event;
	struct rpma_conn_req *req;
	struct rpma_cq *cq, *rcq;
	struct rpma_conn *conn;
	unsigned int round;

	MUST(rpma_mr_reg(peer, recv, sizeof(*recv), RPMA_MR_USAGE_RECV, &recv_mr));
	MUST(rpma_mr_reg(peer, send, sizeof(*send), RPMA_MR_USAGE_SEND, &send_mr));
	MUST(rpma_conn_req_new(peer, addr, port, cfg, &req));
	MUST(rpma_conn_req_connect(&req, NULL, &conn));
	MUST(rpma_conn_next_event(conn, &event));
	CHECK(event == RPMA_CONN_ESTABLISHED, "rcq-client: connection established");
	MUST(rpma_conn_get_cq(conn, &cq));
	MUST(rpma_conn_get_rcq(conn, &rcq));
	for (round = 0; round < rounds; round++) {
		MUST(rpma_recv(conn, recv_mr, 0, sizeof(*recv), recv));
		*send = counter;
		MUST(rpma_send(conn, send_mr, 0, sizeof(*send), RPMA_F_COMPLETION_ALWAYS, NULL));
		one_completion(cq, IBV_WC_SEND, "rcq-client", round);
		one_completion(rcq, IBV_WC_RECV, "rcq-client", round);
		if (*recv != counter + 1) {
			CHECK(false, "rcq-client: round %u: sent %" PRIu64 ", got %" PRIu64, round,
			      counter, *recv);
			give_up();
		}
		counter = *recv;
	}
	CHECK(round == rounds, "rcq-client: %u of %u rounds, each completion found by one "
	      "rpma_cq_wait, each answer its counter plus one", round, rounds);
	CHECK(counter == FIRST_COUNTER + rounds, "rcq-client: the counter went from %d to %" PRIu64,
	      FIRST_COUNTER, counter);
	/* The example's last message: completion only on error, the disconnect right behind it. */
	*send = LAST_MESSAGE;
	MUST(rpma_send(conn, send_mr, 0, sizeof(*send), RPMA_F_COMPLETION_ON_ERROR, NULL));
	rcq_close(&conn, "rcq-client");
	MUST(rpma_conn_cfg_delete(&cfg));
	MUST(rpma_mr_dereg(&send_mr));
	MUST(rpma_mr_dereg(&recv_mr));
	MUST(rpma_peer_delete(&peer));
}

static int usage(void)
{
	fprintf(stderr, "usage: rpma server ADDR PORT | rpma client SERVER_ADDR PORT\n"
		"       rpma rcq-server ADDR PORT | rpma rcq-client SERVER_ADDR PORT ROUNDS\n");
	return 2;
}

int main(int argc, char **argv)
{
	static unsigned char buf[2 * REGION] __attribute__((aligned(4096)));
	static uint64_t msg[2] __attribute__((aligned(64)));
	char *end;
	unsigned long rounds;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "server")) {
		server(argv[2], argv[3], buf);
	} else if (argc == 4 && !strcmp(argv[1], "client")) {
		client(argv[2], argv[3], buf);
	} else if (argc == 4 && !strcmp(argv[1], "rcq-server")) {
		rcq_server(argv[2], argv[3], msg);
	} else if (argc == 5 && !strcmp(argv[1], "rcq-client")) {
		rounds = strtoul(argv[4], &end, 10);
		if (*end || !rounds || rounds > 100000)
			return usage();
		rcq_client(argv[2], argv[3], (unsigned int)rounds, msg);
	} else {
		return usage();
	}
	printf("%d failed\n", failed);
	return failed ? 1 : 0;
}
