/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * RDMA CM paths besides a plain connection, on librdmacm's public API:
 * a reject with private data, a connect to a port nobody listens on, a
 * REQ to an address where no CM answers (UNREACHABLE after the retries,
 * within bounded time), a disconnect from either side (DISCONNECTED on
 * both, then TIMEWAIT_EXIT), binds to addresses of no device, ids of
 * RDMA_PS_IB with the QP type of their own (ucma_get_qp_type): a UC
 * connection that carries a SEND, and a type the CM cannot connect,
 * whose rdma_connect fails with EINVAL. With --daemon-dies: a connection, "ready",
 * then DEVICE_REMOVAL for each id once the script kills rocemud, and
 * rdma_destroy_id returning without a hang.
 *
 * usage: cm_errors SERVER_ADDR CLIENT_ADDR DEAD_ADDR PORT MIN_UNREACHABLE_MS [--daemon-dies]
 * Prints "ok: ..." per check and "N failed" last; exits 0 when none failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <rdma/rdma_cma.h>

#include "tests/e2e/harness/check_line.h"
#include "tests/e2e/harness/sockaddr_arg.h"

#define EVENT_WAIT_MS 10000
#define ACCEPTED_TEXT "hello rocemu"
#define REJECT_TEXT "not today"

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The next event of ch, waiting at most ms; NULL on timeout or error. */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch, int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, ms) != 1 || rdma_get_cm_event(ch, &ev))
		return NULL;
	return ev;
}

/* The next event of ch is type with status; kept in *out (to be acked) or acked. */
static int expect_event(struct rdma_event_channel *ch, enum rdma_cm_event_type type, int status,
			struct rdma_cm_event **out, const char *what)
{
	struct rdma_cm_event *ev = next_event(ch, EVENT_WAIT_MS);

	CHECK(ev && ev->event == type && ev->status == status, "%s: %s status %d (got %s status %d)",
	      what, rdma_event_str(type), status, ev ? rdma_event_str(ev->event) : "nothing",
	      ev ? ev->status : 0);
	if (!ev || ev->event != type) {
		if (ev)
			rdma_ack_cm_event(ev);
		return -1;
	}
	if (out)
		*out = ev;
	else
		rdma_ack_cm_event(ev);
	return 0;
}

/* An id of ch resolved from src to dst (address and route), or NULL. */
static struct rdma_cm_id *resolved(struct rdma_event_channel *ch, struct sockaddr_in src,
				   struct sockaddr_in dst, const char *what)
{
	struct rdma_cm_id *id;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		return NULL;
	if (rdma_resolve_addr(id, (struct sockaddr *)&src, (struct sockaddr *)&dst, 2000) ||
	    expect_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL, what) ||
	    rdma_resolve_route(id, 2000) ||
	    expect_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0, NULL, what)) {
		rdma_destroy_id(id);
		return NULL;
	}
	return id;
}

static int add_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr attr = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	return rdma_create_qp(id, NULL, &attr);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	return ibv_query_qp(qp, &attr, IBV_QP_STATE, &init) ? IBV_QPS_UNKNOWN : attr.qp_state;
}

static void reject_with_private_data(struct rdma_event_channel *sch, struct rdma_event_channel *cch,
				     struct sockaddr_in src, struct sockaddr_in dst)
{
	struct rdma_conn_param param = { .private_data = ACCEPTED_TEXT,
					 .private_data_len = sizeof(ACCEPTED_TEXT) };
	struct rdma_cm_id *c = resolved(cch, src, dst, "reject: client resolves");
	struct rdma_cm_event *ev;

	if (!c || rdma_connect(c, &param)) {
		CHECK(0, "reject: rdma_connect: %s", strerror(errno));
		return;
	}
	if (!expect_event(sch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev, "reject: server")) {
		CHECK(ev->param.conn.private_data_len == 56 &&
		      !memcmp(ev->param.conn.private_data, ACCEPTED_TEXT, sizeof(ACCEPTED_TEXT)),
		      "reject: the request carries the client's private data (%u bytes after the CMA header)",
		      ev->param.conn.private_data_len);
		CHECK(!rdma_reject(ev->id, REJECT_TEXT, sizeof(REJECT_TEXT)), "reject: rdma_reject");
		rdma_destroy_id(ev->id);
		rdma_ack_cm_event(ev);
	}
	if (!expect_event(cch, RDMA_CM_EVENT_REJECTED, 28, &ev, "reject: client (consumer defined)")) {
		CHECK(ev->param.conn.private_data_len == 148 &&
		      !memcmp(ev->param.conn.private_data, REJECT_TEXT, sizeof(REJECT_TEXT)),
		      "reject: the REJ carries the server's private data (%u bytes)",
		      ev->param.conn.private_data_len);
		rdma_ack_cm_event(ev);
	}
	rdma_destroy_id(c);
}

static void connect_nobody_listens(struct rdma_event_channel *cch, struct sockaddr_in src,
				   struct sockaddr_in dst)
{
	struct rdma_conn_param param = { 0 };
	struct rdma_cm_id *c = resolved(cch, src, dst, "no listener: client resolves");

	if (!c || rdma_connect(c, &param)) {
		CHECK(0, "no listener: rdma_connect: %s", strerror(errno));
		return;
	}
	expect_event(cch, RDMA_CM_EVENT_REJECTED, 8, NULL, "no listener: REJ, invalid service ID");
	rdma_destroy_id(c);
}

static void connect_dead_address(struct rdma_event_channel *cch, struct sockaddr_in src,
				 struct sockaddr_in dst, long min_ms)
{
	struct rdma_conn_param param = { 0 };
	struct rdma_cm_id *c = resolved(cch, src, dst, "no daemon: client resolves");
	long start = now_ms(), took;

	if (!c || rdma_connect(c, &param)) {
		CHECK(0, "no daemon: rdma_connect: %s", strerror(errno));
		return;
	}
	expect_event(cch, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, "no daemon");
	took = now_ms() - start;
	CHECK(took >= min_ms && took < EVENT_WAIT_MS,
	      "no daemon: UNREACHABLE after the REQ's retries (%ld ms, at least %ld)", took, min_ms);
	rdma_destroy_id(c);
}

/* The first IPv4 address of a non-loopback interface of this host (network order), or 0. */
static uint32_t host_address(void)
{
	struct ifaddrs *all, *ifa;
	uint32_t addr = 0;

	if (getifaddrs(&all))
		return 0;
	for (ifa = all; ifa && !addr; ifa = ifa->ifa_next)
		if (ifa->ifa_addr && ifa->ifa_addr->sa_family == AF_INET &&
		    !(ifa->ifa_flags & IFF_LOOPBACK))
			addr = ((struct sockaddr_in *)ifa->ifa_addr)->sin_addr.s_addr;
	freeifaddrs(all);
	return addr;
}

/* rdma_bind_addr of a new id of ch to addr: 0, or the errno of its failure. */
static int bind_errno(struct rdma_event_channel *ch, struct sockaddr_in addr)
{
	struct rdma_cm_id *id;
	int err;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		return errno;
	err = rdma_bind_addr(id, (struct sockaddr *)&addr) ? errno : 0;
	rdma_destroy_id(id);
	return err;
}

/*
 * Binds to addresses of no device, answered as the kernel's CM answers them
 * on a RoCE host: a loopback address is the wildcard (cma_any_addr: no
 * device, and its listen hears a request to any device), a host address
 * ENODEV (no GID has it), an address of no interface EADDRNOTAVAIL.
 */
static void bind_without_device(struct rdma_event_channel *sch, struct rdma_event_channel *cch,
				struct sockaddr_in cli, struct sockaddr_in srv)
{
	struct sockaddr_in lo = addr_of("127.0.0.1", ntohs(srv.sin_port) + 2), to = srv, host;
	struct rdma_conn_param param = { 0 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *l, *c;

	to.sin_port = lo.sin_port;
	if (rdma_create_id(sch, &l, NULL, RDMA_PS_TCP)) {
		CHECK(0, "loopback: rdma_create_id: %s", strerror(errno));
		return;
	}
	CHECK(!rdma_bind_addr(l, (struct sockaddr *)&lo) && !l->verbs && !rdma_listen(l, 1),
	      "loopback: a listener bound to 127.0.0.1 (no device's) has no device");
	c = resolved(cch, cli, to, "loopback: client resolves");
	if (!c || rdma_connect(c, &param)) {
		CHECK(0, "loopback: rdma_connect: %s", strerror(errno));
	} else if (!expect_event(sch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev,
				 "loopback: the listener on 127.0.0.1 hears a request to a device")) {
		CHECK(ev->listen_id == l && ev->id->verbs, "loopback: the request's id has its device (%s)",
		      ev->id->verbs ? ibv_get_device_name(ev->id->verbs->device) : "none");
		rdma_reject(ev->id, NULL, 0);
		rdma_destroy_id(ev->id);
		rdma_ack_cm_event(ev);
		expect_event(cch, RDMA_CM_EVENT_REJECTED, 28, NULL, "loopback: client rejected");
	}
	if (c)
		rdma_destroy_id(c);
	rdma_destroy_id(l);

	host = addr_of("0.0.0.0", 0);
	host.sin_addr.s_addr = host_address();
	if (host.sin_addr.s_addr)
		CHECK(bind_errno(sch, host) == ENODEV, "bind to %s, a host address of no device: ENODEV",
		      inet_ntoa(host.sin_addr));
	else
		printf("ok: bind to a host address of no device: not tried, no interface has one\n");
	CHECK(bind_errno(sch, addr_of("203.0.113.77", 0)) == EADDRNOTAVAIL,
	      "bind to 203.0.113.77, an address of no interface: EADDRNOTAVAIL");
}

enum ending { SERVER_DISCONNECTS, CLIENT_DISCONNECTS, DAEMON_DIES };

/* The daemon is killed (by the script, once "ready" shows): every id gets DEVICE_REMOVAL. */
static void device_removal(struct rdma_event_channel *sch, struct rdma_event_channel *cch)
{
	printf("ready: kill the daemon\n");
	expect_event(cch, RDMA_CM_EVENT_DEVICE_REMOVAL, 0, NULL, "daemon killed: the client's id");
	expect_event(sch, RDMA_CM_EVENT_DEVICE_REMOVAL, 0, NULL, "daemon killed: an id of the server");
	expect_event(sch, RDMA_CM_EVENT_DEVICE_REMOVAL, 0, NULL, "daemon killed: the other id of the server");
}

/* A connection with QPs, then a disconnect from the server's side or the client's, or no daemon. */
static void connect_then_end(struct rdma_event_channel *sch, struct rdma_event_channel *cch,
			     struct sockaddr_in src, struct sockaddr_in dst, enum ending ending)
{
	const char *who = ending == SERVER_DISCONNECTS ? "server disconnects" :
			  ending == CLIENT_DISCONNECTS ? "client disconnects" : "daemon killed";
	int server_first = ending == SERVER_DISCONNECTS;
	struct rdma_conn_param param = { .responder_resources = 1, .initiator_depth = 1,
					 .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_cm_id *c = resolved(cch, src, dst, who), *s = NULL;
	struct rdma_cm_event *ev;

	if (!c || add_qp(c) || rdma_connect(c, &param)) {
		CHECK(0, "%s: client QP and rdma_connect: %s", who, strerror(errno));
		goto out;
	}
	if (expect_event(sch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev, who))
		goto out;
	s = ev->id;
	rdma_ack_cm_event(ev);
	if (add_qp(s) || rdma_accept(s, &param)) {
		CHECK(0, "%s: server QP and rdma_accept: %s", who, strerror(errno));
		goto out;
	}
	if (expect_event(cch, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, who) ||
	    expect_event(sch, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, who))
		goto out;
	CHECK(qp_state(c->qp) == IBV_QPS_RTS && qp_state(s->qp) == IBV_QPS_RTS,
	      "%s: both QPs in RTS once established", who);
	if (ending == DAEMON_DIES) {
		device_removal(sch, cch);
		rdma_destroy_qp(s);
		rdma_destroy_qp(c);
		CHECK(!rdma_destroy_id(s) && !rdma_destroy_id(c),
		      "daemon killed: rdma_destroy_id of both ids returns 0, no wait");
		return;
	}
	CHECK(!rdma_disconnect(server_first ? s : c), "%s: rdma_disconnect", who);
	expect_event(server_first ? cch : sch, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, who);
	CHECK(!rdma_disconnect(server_first ? c : s), "%s: the other side's rdma_disconnect (DREP)", who);
	expect_event(server_first ? sch : cch, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, who);
	expect_event(sch, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, NULL, who);
	expect_event(cch, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, NULL, who);
out:
	if (s) {
		rdma_destroy_qp(s);
		rdma_destroy_id(s);
	}
	if (c) {
		rdma_destroy_qp(c);
		rdma_destroy_id(c);
	}
}

/*
 * An endpoint of RDMA_PS_IB and QP type type (rdma_create_ep: the public
 * way to give an id a type of its own): a listener on dst when src is
 * NULL, else an id resolved from *src to dst; then on ch, as async ids.
 */
static struct rdma_cm_id *ps_ib_ep(struct rdma_event_channel *ch, enum ibv_qp_type type,
				   struct sockaddr_in *src, struct sockaddr_in dst)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_NUMERICHOST, .ai_port_space = RDMA_PS_IB,
				       .ai_qp_type = type }, *res;
	char host[INET_ADDRSTRLEN], service[8];
	struct rdma_cm_id *id;
	int err;

	if (src) {
		hints.ai_src_addr = (struct sockaddr *)src;
		hints.ai_src_len = sizeof(*src);
	} else {
		hints.ai_flags |= RAI_PASSIVE;
	}
	inet_ntop(AF_INET, &dst.sin_addr, host, sizeof(host));
	snprintf(service, sizeof(service), "%u", ntohs(dst.sin_port));
	if (rdma_getaddrinfo(host, service, &hints, &res))
		return NULL;
	err = rdma_create_ep(&id, res, NULL, NULL);
	rdma_freeaddrinfo(res);
	if (err)
		return NULL;
	if (ch && rdma_migrate_id(id, ch)) {
		rdma_destroy_ep(id);
		return NULL;
	}
	return id;
}

/*
 * Ids of RDMA_PS_IB keep the QP type they are made with (the kernel's
 * ucma_get_qp_type): a UC listener and a UC client connect (a REQ of
 * transport UC), their UC QPs reach RTS through the CM's attributes and
 * carry a SEND; an id of a type no REQ is for (a raw packet QP's) is
 * made, but rdma_connect refuses it with EINVAL (cm_validate_req_param).
 */
static void ps_ib_types(struct rdma_event_channel *sch, struct rdma_event_channel *cch,
			struct sockaddr_in src, struct sockaddr_in dst)
{
	static const char msg[] = "over UC";
	/* One each: rdma_create_qp writes the CQs it made back into the attributes. */
	struct ibv_qp_init_attr cattr = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UC,
	}, sattr = cattr;
	struct rdma_conn_param param = { .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_cm_id *listener = NULL, *c = NULL, *s = NULL, *raw = NULL;
	struct ibv_mr *smr = NULL, *cmr = NULL;
	char sbuf[sizeof(msg)] = "", cbuf[sizeof(msg)];
	struct ibv_sge sge = { .length = sizeof(msg) };
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *bad_rwr;
	struct ibv_send_wr swr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *bad_swr;
	struct rdma_cm_event *ev;
	struct ibv_wc wc;
	long start;
	int n = 0;

	listener = ps_ib_ep(sch, IBV_QPT_UC, NULL, dst);
	if (!listener || rdma_listen(listener, 4)) {
		CHECK(0, "UC: a listener of RDMA_PS_IB: %s", strerror(errno));
		goto out;
	}
	c = ps_ib_ep(cch, IBV_QPT_UC, &src, dst);
	if (!c || rdma_create_qp(c, NULL, &cattr) || rdma_connect(c, &param)) {
		CHECK(0, "UC: client id, QP and rdma_connect: %s", strerror(errno));
		goto out;
	}
	if (expect_event(sch, RDMA_CM_EVENT_CONNECT_REQUEST, 0, &ev, "UC: server"))
		goto out;
	s = ev->id;
	CHECK(s->qp_type == IBV_QPT_UC && ev->param.conn.qp_num == c->qp->qp_num,
	      "UC: the request's id is UC, from the client's QP 0x%06x", ev->param.conn.qp_num);
	rdma_ack_cm_event(ev);
	if (rdma_create_qp(s, NULL, &sattr) ||
	    !(smr = ibv_reg_mr(s->pd, sbuf, sizeof(sbuf), IBV_ACCESS_LOCAL_WRITE)) ||
	    !(cmr = ibv_reg_mr(c->pd, cbuf, sizeof(cbuf), 0))) {
		CHECK(0, "UC: server QP and MRs: %s", strerror(errno));
		goto out;
	}
	sge.addr = (uintptr_t)sbuf;
	sge.lkey = smr->lkey;
	if (ibv_post_recv(s->qp, &rwr, &bad_rwr) || rdma_accept(s, &param)) {
		CHECK(0, "UC: receive and rdma_accept: %s", strerror(errno));
		goto out;
	}
	if (expect_event(cch, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, "UC: client") ||
	    expect_event(sch, RDMA_CM_EVENT_ESTABLISHED, 0, NULL, "UC: server"))
		goto out;
	CHECK(qp_state(c->qp) == IBV_QPS_RTS && qp_state(s->qp) == IBV_QPS_RTS,
	      "UC: both QPs in RTS once established");
	memcpy(cbuf, msg, sizeof(msg));
	sge.addr = (uintptr_t)cbuf;
	sge.lkey = cmr->lkey;
	CHECK(!ibv_post_send(c->qp, &swr, &bad_swr), "UC: the client posts a SEND");
	for (start = now_ms(); n == 0 && now_ms() - start < EVENT_WAIT_MS;)
		n = ibv_poll_cq(s->recv_cq, 1, &wc);
	CHECK(n == 1 && wc.status == IBV_WC_SUCCESS && wc.byte_len == sizeof(msg) &&
	      !memcmp(sbuf, msg, sizeof(msg)), "UC: the server receives \"%s\"", sbuf);
	CHECK(!rdma_disconnect(c), "UC: rdma_disconnect");
	expect_event(sch, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, "UC: server");
	CHECK(!rdma_disconnect(s), "UC: the server's rdma_disconnect (DREP)");
	expect_event(cch, RDMA_CM_EVENT_DISCONNECTED, 0, NULL, "UC: client");
	expect_event(sch, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, NULL, "UC: server");
	expect_event(cch, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, NULL, "UC: client");

	raw = ps_ib_ep(NULL, IBV_QPT_RAW_PACKET, &src, dst);
	CHECK(raw != NULL, "another type: a raw packet id of RDMA_PS_IB resolves: %s",
	      raw ? "yes" : strerror(errno));
	errno = 0;
	CHECK(raw && rdma_connect(raw, &param) && errno == EINVAL,
	      "another type: its rdma_connect fails with EINVAL (%s)", strerror(errno));
out:
	if (raw)
		rdma_destroy_ep(raw);
	if (smr)
		ibv_dereg_mr(smr);
	if (cmr)
		ibv_dereg_mr(cmr);
	if (s) {
		rdma_destroy_qp(s);
		rdma_destroy_id(s);
	}
	if (c) {
		rdma_destroy_qp(c);
		rdma_destroy_id(c);
	}
	if (listener)
		rdma_destroy_id(listener);
}

int main(int argc, char **argv)
{
	struct rdma_event_channel *sch, *cch;
	struct rdma_cm_id *listener;
	struct sockaddr_in srv, cli, dead, busy;
	int port, daemon_dies = argc == 7 && !strcmp(argv[6], "--daemon-dies");

	if (argc != 6 && !daemon_dies) {
		fprintf(stderr, "usage: %s SERVER_ADDR CLIENT_ADDR DEAD_ADDR PORT MIN_UNREACHABLE_MS"
			" [--daemon-dies]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	port = atoi(argv[4]);
	srv = addr_of(argv[1], port);
	cli = addr_of(argv[2], 0);
	dead = addr_of(argv[3], port);
	busy = addr_of(argv[1], port + 1);
	sch = rdma_create_event_channel();
	cch = rdma_create_event_channel();
	if (!sch || !cch || rdma_create_id(sch, &listener, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listener, (struct sockaddr *)&srv) || rdma_listen(listener, 4)) {
		printf("FAIL: set up a listener on %s:%d: %s\n1 failed\n", argv[1], port,
		       strerror(errno));
		return 1;
	}
	CHECK(listener->verbs && listener->port_num == 1,
	      "a listener bound to %s has its device (%s) and port 1", argv[1],
	      listener->verbs ? ibv_get_device_name(listener->verbs->device) : "none");
	if (daemon_dies) {
		connect_then_end(sch, cch, cli, srv, DAEMON_DIES);
		CHECK(!rdma_destroy_id(listener), "daemon killed: rdma_destroy_id of the listener");
		goto out;
	}
	reject_with_private_data(sch, cch, cli, srv);
	connect_nobody_listens(cch, cli, busy);
	connect_dead_address(cch, cli, dead, atol(argv[5]));
	connect_then_end(sch, cch, cli, srv, SERVER_DISCONNECTS);
	connect_then_end(sch, cch, cli, srv, CLIENT_DISCONNECTS);
	bind_without_device(sch, cch, cli, srv);
	ps_ib_types(sch, cch, cli, addr_of(argv[1], port + 2));
	rdma_destroy_id(listener);
out:
	rdma_destroy_event_channel(sch);
	rdma_destroy_event_channel(cch);
	printf("%d failed\n", failed);
	return failed ? 1 : 0;
}
