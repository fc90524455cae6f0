/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * librpma's public API over rocemu: a connection through the RDMA CM (the
 * server's memory region descriptor in its private data), then an
 * rpma_read of the server's bytes, an rpma_write of the client's, an
 * rpma_flush (visibility) and a read back, each checked; the server checks
 * after the client has gone that its memory holds what was written.
 *
 * usage: rpma server ADDR PORT | rpma client SERVER_ADDR PORT
 * Prints "ok: ..." per check ("ready" once the server listens) and
 * "N failed" last; exits 0 when none failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <librpma.h>

#include "check_line.h"

#define REGION 4096

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

int main(int argc, char **argv)
{
	static unsigned char buf[2 * REGION] __attribute__((aligned(4096)));

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 4 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: rpma server ADDR PORT | rpma client SERVER_ADDR PORT\n");
		return 2;
	}
	if (!strcmp(argv[1], "server"))
		server(argv[2], argv[3], buf);
	else
		client(argv[2], argv[3], buf);
	printf("%d failed\n", failed);
	return failed ? 1 : 0;
}
