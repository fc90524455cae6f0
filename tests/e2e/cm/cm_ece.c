/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Enhanced Connection Establishment through the RDMA CM, on librdmacm's
 * API, answered as the kernel's CM answers: the vendor and options an
 * external-QP id sets with rdma_set_local_ece travel in the REQ and the
 * REP, and rdma_get_remote_ece on the other side returns them; an id that
 * sets none sends zeros; an id with a QP of an emulated device sends what
 * the device reports, which is nothing, as a ConnectX without ECE
 * (ibv_query_ece fails with EOPNOTSUPP).
 *
 * usage: cm_ece SERVER_ADDR CLIENT_ADDR PORT
 * Prints "ok: ..." per check and "N failed" last; exits 0 when none failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>

#include "tests/e2e/harness/check_line.h"
#include "tests/e2e/harness/sockaddr_arg.h"

#define EVENT_WAIT_MS 10000
#define MELLANOX_VENDOR 0x15b3	/* mlx5's ECE vendor: the PCI vendor ID */
#define CLIENT_OPTIONS 0x5
#define SERVER_OPTIONS 0x1

static struct rdma_event_channel *ch;
static struct sockaddr_in server, client;

/* The next event, of type; NULL (with a FAIL line) otherwise. */
static struct rdma_cm_event *next_event(enum rdma_cm_event_type type, const char *what)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev = NULL;

	if (poll(&pfd, 1, EVENT_WAIT_MS) != 1 || rdma_get_cm_event(ch, &ev))
		ev = NULL;
	if (ev && ev->event == type)
		return ev;
	CHECK(0, "%s: %s (got %s)", what, rdma_event_str(type),
	      ev ? rdma_event_str(ev->event) : "nothing");
	if (ev)
		rdma_ack_cm_event(ev);
	return NULL;
}

static void ack_next(enum rdma_cm_event_type type, const char *what)
{
	struct rdma_cm_event *ev = next_event(type, what);

	if (ev)
		rdma_ack_cm_event(ev);
}

static void expect_remote_ece(struct rdma_cm_id *id, uint32_t vendor, uint32_t options,
			      const char *what)
{
	struct ibv_ece ece = { .vendor_id = ~0u, .options = ~0u, .comp_mask = ~0u };
	int ret = rdma_get_remote_ece(id, &ece);

	CHECK(!ret && ece.vendor_id == vendor && ece.options == options && !ece.comp_mask,
	      "%s: rdma_get_remote_ece %d: vendor 0x%x options 0x%x (want 0x%x 0x%x)", what, ret,
	      ece.vendor_id, ece.options, vendor, options);
}

/* A client id resolved to the server, with a QP of its device when with_qp. */
static struct rdma_cm_id *client_id(bool with_qp)
{
	struct ibv_qp_init_attr qp_attr = { .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						     .max_send_sge = 1, .max_recv_sge = 1 },
					    .qp_type = IBV_QPT_RC };
	struct rdma_cm_id *id;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, (struct sockaddr *)&client, (struct sockaddr *)&server,
			      EVENT_WAIT_MS)) {
		perror("client id");
		exit(1);
	}
	ack_next(RDMA_CM_EVENT_ADDR_RESOLVED, "client");
	if (rdma_resolve_route(id, EVENT_WAIT_MS)) {
		perror("rdma_resolve_route");
		exit(1);
	}
	ack_next(RDMA_CM_EVENT_ROUTE_RESOLVED, "client");
	if (with_qp && rdma_create_qp(id, NULL, &qp_attr)) {
		perror("rdma_create_qp");
		exit(1);
	}
	return id;
}

/*
 * One connection: the client sets client_ece (unless NULL), the server
 * sets server_ece (unless NULL); each side must see what the other sent.
 */
static void connection(bool client_qp, const struct ibv_ece *client_ece,
		       const struct ibv_ece *server_ece, const char *what)
{
	struct rdma_conn_param param = { .qp_num = 0x000111, .responder_resources = 1,
					 .initiator_depth = 1, .retry_count = 7 };
	struct rdma_cm_id *cid = client_id(client_qp), *sid;
	struct rdma_cm_event *ev;
	struct ibv_ece ece;
	char text[128];

	if (client_ece)
		CHECK(rdma_set_local_ece(cid, (struct ibv_ece *)client_ece) == 0,
		      "%s: the client's rdma_set_local_ece", what);
	CHECK(rdma_connect(cid, &param) == 0, "%s: rdma_connect", what);
	ev = next_event(RDMA_CM_EVENT_CONNECT_REQUEST, what);
	if (!ev)
		return;
	sid = ev->id;
	rdma_ack_cm_event(ev);
	snprintf(text, sizeof(text), "%s, server", what);
	expect_remote_ece(sid, client_ece ? client_ece->vendor_id : 0,
			  client_ece ? client_ece->options : 0, text);
	if (server_ece)
		CHECK(rdma_set_local_ece(sid, (struct ibv_ece *)server_ece) == 0,
		      "%s: the server's rdma_set_local_ece", what);
	param.qp_num = 0x000222;
	CHECK(rdma_accept(sid, &param) == 0, "%s: rdma_accept", what);
	if (client_qp) {
		/* librdmacm moves the QP and sends the RTU itself; the id answers EINVAL, as librdmacm does. */
		ack_next(RDMA_CM_EVENT_ESTABLISHED, what);
		ack_next(RDMA_CM_EVENT_ESTABLISHED, what);
		errno = 0;
		CHECK(rdma_get_remote_ece(cid, &ece) == -1 && errno == EINVAL,
		      "%s: rdma_get_remote_ece of an id with a QP: EINVAL (%s)", what,
		      strerror(errno));
		CHECK(ibv_query_ece(cid->qp, &ece) == EOPNOTSUPP,
		      "%s: ibv_query_ece of the device's QP: EOPNOTSUPP, a ConnectX without ECE",
		      what);
	} else {
		ack_next(RDMA_CM_EVENT_CONNECT_RESPONSE, what);
		snprintf(text, sizeof(text), "%s, client", what);
		expect_remote_ece(cid, server_ece ? server_ece->vendor_id : 0,
				  server_ece ? server_ece->options : 0, text);
		CHECK(rdma_establish(cid) == 0, "%s: rdma_establish", what);
		ack_next(RDMA_CM_EVENT_ESTABLISHED, what);
	}
	/* The client's DREQ, then the server's DREP once it disconnects too. */
	rdma_disconnect(cid);
	ack_next(RDMA_CM_EVENT_DISCONNECTED, what);
	rdma_disconnect(sid);
	ack_next(RDMA_CM_EVENT_DISCONNECTED, what);
	if (cid->qp)
		rdma_destroy_qp(cid);
	rdma_destroy_id(cid);
	rdma_destroy_id(sid);
}

int main(int argc, char **argv)
{
	const struct ibv_ece client_ece = { .vendor_id = MELLANOX_VENDOR, .options = CLIENT_OPTIONS };
	const struct ibv_ece server_ece = { .vendor_id = MELLANOX_VENDOR, .options = SERVER_OPTIONS };
	struct ibv_ece no_vendor = { .options = 1 };
	struct rdma_cm_id *listener, *id;

	if (argc != 4) {
		fprintf(stderr, "usage: %s SERVER_ADDR CLIENT_ADDR PORT\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	server = addr_of(argv[1], atoi(argv[3]));
	client = addr_of(argv[2], 0);
	ch = rdma_create_event_channel();
	if (!ch || rdma_create_id(ch, &listener, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listener, (struct sockaddr *)&server) || rdma_listen(listener, 4)) {
		perror("listener");
		return 1;
	}
	id = client_id(false);
	errno = 0;
	CHECK(rdma_set_local_ece(id, &no_vendor) == -1 && errno == EINVAL,
	      "rdma_set_local_ece without a vendor: EINVAL (%s)", strerror(errno));
	rdma_destroy_id(id);
	connection(false, &client_ece, &server_ece, "ECE set on both sides");
	connection(false, NULL, NULL, "no ECE set");
	connection(true, NULL, &server_ece, "a client QP of the emulated device");
	rdma_destroy_id(listener);
	rdma_destroy_event_channel(ch);
	printf("%d failed\n", failed);
	return failed ? 1 : 0;
}
