/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The rdma_cm file (the kernel's drivers/infiniband/core/ucma.c): a table
 * from each ABI command to its handler, which drives the ids (cm_id.c),
 * their addresses (cm_addr.c) and the handshake (cm_proto.c). Ids of a
 * file die with its connection.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#include "emulator/cm/cm.h"
#include "emulator/core/client.h"
#include "emulator/core/emu.h"
#include "rocemu/log.h"

#define UCMA_MAX_IDS 65536

/* One command: the bytes librdmacm wrote, and what goes back. */
struct ucma_call {
	struct rocemu_cm_file *file;
	const void *cmd;
	const struct rocemu_ucma_write_req *req;
	struct rocemu_ucma_write_resp *resp;
};

/* Respond with n bytes of data to the command's response address. */
static void *respond(struct ucma_call *call, uint64_t response, size_t n)
{
	call->resp->response = response;
	call->resp->len = (uint32_t)n;
	memset(call->resp->data, 0, n);
	return call->resp->data;
}

/* The id handle names in call's file, or NULL. */
static struct rocemu_cm_id *id_get(struct ucma_call *call, uint32_t handle)
{
	return rocemu_obj_lookup(call->file->client->emu, &rocemu_cm_id_kind, call->file, handle);
}

/* An IPv4 address of the ABI's sockaddr_in6-sized slots, or -EAFNOSUPPORT. */
static int sockaddr_v4(const void *slot, struct sockaddr_in *out)
{
	memcpy(out, slot, sizeof(*out));
	return out->sin_family == AF_INET ? 0 : -EAFNOSUPPORT;
}

static int cmd_create_id(struct ucma_call *call)
{
	const struct ucma_abi_create_id *cmd = call->cmd;
	struct ucma_abi_create_id_resp *resp;
	struct rocemu_cm_id *id;
	uint8_t qp_type;

	/*
	 * The port space decides, but for IB's, where the command's own type
	 * counts, whatever it is (ucma_get_qp_type): RC, UC and XRC connect
	 * by REQ, UD resolves by SIDR, another type fails at rdma_connect.
	 */
	switch (cmd->ps) {
	case RDMA_PS_TCP:
		qp_type = IBV_QPT_RC;
		break;
	case RDMA_PS_IB:
		qp_type = cmd->qp_type;
		break;
	case RDMA_PS_UDP:
	case RDMA_PS_IPOIB:
		qp_type = IBV_QPT_UD;
		break;
	default:
		return -EINVAL;
	}
	id = cm_id_new(call->file, cmd->uid, cmd->ps, qp_type);
	if (!id)
		return -errno;
	resp = respond(call, cmd->response, sizeof(*resp));
	resp->id = id->handle;
	return 0;
}

static int cmd_destroy_id(struct ucma_call *call)
{
	const struct ucma_abi_destroy_id *cmd = call->cmd;
	struct ucma_abi_destroy_id_resp *resp;
	struct rocemu_cm_id *id = id_get(call, cmd->id);

	if (!id)
		return -ENOENT;
	resp = respond(call, cmd->response, sizeof(*resp));
	resp->events_reported = id->events_reported;
	cm_id_destroy(id);
	return 0;
}

static int cmd_bind_ip(struct ucma_call *call)
{
	const struct ucma_abi_bind_ip *cmd = call->cmd;
	struct rocemu_cm_id *id = id_get(call, cmd->id);
	struct sockaddr_in addr;
	int err;

	if (!id)
		return -ENOENT;
	err = sockaddr_v4(&cmd->addr, &addr);
	if (err)
		return err;
	if (id->state != CMA_IDLE)
		return -EINVAL;
	return cm_bind(id, &addr);
}

/* AF_IB addresses (UCMA_CMD_BIND): librdmacm then speaks the IP commands. */
static int cmd_bind(struct ucma_call *call)
{
	return -EAFNOSUPPORT;
}

static int cmd_resolve_ip(struct ucma_call *call)
{
	const struct ucma_abi_resolve_ip *cmd = call->cmd;
	struct rocemu_cm_id *id = id_get(call, cmd->id);
	struct sockaddr_in src, dst;
	int err;

	if (!id)
		return -ENOENT;
	err = sockaddr_v4(&cmd->dst_addr, &dst);
	if (err)
		return err;
	if (id->state == CMA_IDLE) {
		if (sockaddr_v4(&cmd->src_addr, &src)) {
			memset(&src, 0, sizeof(src));
			src.sin_family = AF_INET;
		}
		err = cm_bind(id, &src);
		if (err)
			return err;
	}
	if (id->state != CMA_ADDR_BOUND)
		return -EINVAL;
	err = cm_resolve_addr(id, &dst);
	if (err) {
		cm_event_queue(id, id, RDMA_CM_EVENT_ADDR_ERROR, err);
		return 0;
	}
	id->state = CMA_ADDR_RESOLVED;
	cm_event_queue(id, id, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	return 0;
}

static int cmd_resolve_route(struct ucma_call *call)
{
	const struct ucma_abi_resolve_route *cmd = call->cmd;
	struct rocemu_cm_id *id = id_get(call, cmd->id);

	if (!id)
		return -ENOENT;
	if (id->state != CMA_ADDR_RESOLVED)
		return -EINVAL;
	id->state = CMA_ROUTE_RESOLVED;
	cm_event_queue(id, id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	return 0;
}

static int cmd_query_route(struct ucma_call *call)
{
	const struct ucma_abi_query *cmd = call->cmd;
	struct rocemu_cm_id *id = id_get(call, cmd->id);

	if (!id)
		return -ENOENT;
	cm_query_route(id, respond(call, cmd->response, sizeof(struct ucma_abi_query_route_resp)));
	return 0;
}

static int cmd_connect(struct ucma_call *call)
{
	const struct ucma_abi_connect *cmd = call->cmd;
	struct rocemu_cm_id *id = id_get(call, cmd->id);

	if (!id)
		return -ENOENT;
	if (!cmd->conn_param.valid || id->state != CMA_ROUTE_RESOLVED)
		return -EINVAL;
	return cm_connect(id, &cmd->conn_param, &cmd->ece);
}

static int cmd_listen(struct ucma_call *call)
{
	const struct ucma_abi_listen *cmd = call->cmd;
	struct rocemu_cm_id *id = id_get(call, cmd->id);
	struct sockaddr_in any = { .sin_family = AF_INET };
	int err;

	if (!id)
		return -ENOENT;
	if (id->state == CMA_IDLE && (err = cm_bind(id, &any)))
		return err;
	if (id->state != CMA_ADDR_BOUND && id->state != CMA_LISTEN)
		return -EINVAL;
	/* The kernel's ucma caps the backlog at its max_backlog sysctl (1024). */
	id->backlog = cmd->backlog > 0 && cmd->backlog < 1024 ? cmd->backlog : 1024;
	id->state = CMA_LISTEN;
	return 0;
}

static int cmd_accept(struct ucma_call *call)
{
	const struct ucma_abi_accept *cmd = call->cmd;
	struct rocemu_cm_id *id = id_get(call, cmd->id);

	if (!id)
		return -ENOENT;
	if (!cmd->conn_param.valid)
		return cm_accept(id, NULL, NULL);
	id->uid = cmd->uid;
	return cm_accept(id, &cmd->conn_param, &cmd->ece);
}

static int cmd_reject(struct ucma_call *call)
{
	const struct ucma_abi_reject *cmd = call->cmd;
	struct rocemu_cm_id *id = id_get(call, cmd->id);
	uint8_t reason = cmd->reason ? cmd->reason : CM_REJ_CONSUMER_DEFINED;

	if (!id)
		return -ENOENT;
	if (reason != CM_REJ_CONSUMER_DEFINED || cmd->private_data_len > CM_REJ_PRIVATE_BYTES)
		return -EINVAL;
	return cm_reject(id, reason, cmd->private_data, cmd->private_data_len);
}

static int cmd_disconnect(struct ucma_call *call)
{
	const struct ucma_abi_disconnect *cmd = call->cmd;
	struct rocemu_cm_id *id = id_get(call, cmd->id);

	return id ? cm_disconnect(id) : -ENOENT;
}

static int cmd_init_qp_attr(struct ucma_call *call)
{
	const struct ucma_abi_init_qp_attr *cmd = call->cmd;
	struct rocemu_cm_id *id = id_get(call, cmd->id);
	struct ib_uverbs_qp_attr attr;
	int err;

	if (!id)
		return -ENOENT;
	memset(&attr, 0, sizeof(attr));
	err = cm_init_qp_attr(id, cmd->qp_state, &attr);
	if (!err)
		memcpy(respond(call, cmd->response, sizeof(attr)), &attr, sizeof(attr));
	return err;
}

static int cmd_get_event(struct ucma_call *call)
{
	const struct ucma_abi_get_event *cmd = call->cmd;
	struct rocemu_cm_file *file = call->file;
	struct rocemu_cm_event *ev;

	/* Its byte was taken but the event went with its id: the shim waits for the next. */
	if (rocemu_list_empty(&file->events))
		return -EAGAIN;
	ev = rocemu_container_of(file->events.next, struct rocemu_cm_event, node);
	rocemu_list_del(&ev->node);
	memcpy(respond(call, cmd->response, sizeof(ev->resp)), &ev->resp, sizeof(ev->resp));
	ev->owner->events_reported++;
	if (ev->mc)
		ev->mc->events_reported++;
	/* A request reported is the application's to accept or reject: it outlives the listener. */
	if (ev->resp.event == RDMA_CM_EVENT_CONNECT_REQUEST)
		ev->id->listener = NULL;
	free(ev);
	return 0;
}

static int cmd_set_option(struct ucma_call *call)
{
	const struct ucma_abi_set_option *cmd = call->cmd;
	struct rocemu_cm_id *id = id_get(call, cmd->id);
	const uint8_t *val = call->req->opt;
	int flag;

	if (!id)
		return -ENOENT;
	if (cmd->optlen != call->req->optlen)
		return -EINVAL;
	if (cmd->level != RDMA_OPTION_ID)
		return -ENOSYS;
	switch (cmd->optname) {
	case RDMA_OPTION_ID_TOS:
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (cmd->optlen != sizeof(uint8_t))
			return -EINVAL;
		if (cmd->optname == RDMA_OPTION_ID_TOS)
			id->tos = val[0];
		else
			id->ack_timeout = val[0];
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:
	case RDMA_OPTION_ID_AFONLY:
		if (cmd->optlen != sizeof(int))
			return -EINVAL;
		memcpy(&flag, val, sizeof(flag));
		if (cmd->optname == RDMA_OPTION_ID_REUSEADDR)
			id->reuseaddr = flag != 0;
		return 0;
	default:
		return -ENOSYS;
	}
}

static int cmd_notify(struct ucma_call *call)
{
	const struct ucma_abi_notify *cmd = call->cmd;
	struct rocemu_cm_id *id = id_get(call, cmd->id);

	if (!id)
		return -ENOENT;
	return cmd->event == IBV_EVENT_COMM_EST ? cm_establish(id) : 0;
}

/*
 * Join id to the IPv4 group in slot, as the kernel's cma_iboe_join_multicast
 * does on RoCE: no SA to ask, so MULTICAST_JOIN comes at once with the
 * group's MGID (::ffff:group), QPN 0xFFFFFF and the UDP Q_Key; librdmacm
 * attaches the id's QP itself when it reads the event.
 */
static int mcast_join(struct ucma_call *call, uint32_t handle, uint64_t uid, const void *slot,
		      uint16_t join_flags, uint64_t response)
{
	struct rocemu_cm_id *id = id_get(call, handle);
	struct ucma_abi_create_id_resp *resp;
	struct rocemu_cm_event *ev;
	struct rocemu_cm_mcast *mc;
	struct sockaddr_in group;
	int err;

	if (!id)
		return -ENOENT;
	err = sockaddr_v4(slot, &group);
	if (err)
		return err;
	if (!IN_MULTICAST(ntohl(group.sin_addr.s_addr)) || id->qp_type != IBV_QPT_UD ||
	    join_flags > RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER || !id->dev ||
	    (id->state != CMA_ADDR_BOUND && id->state != CMA_ADDR_RESOLVED))
		return -EINVAL;
	mc = calloc(1, sizeof(*mc));
	if (!mc)
		return -ENOMEM;
	mc->handle = ++call->file->last_mcast_handle;
	mc->uid = uid;
	mc->addr = group;
	rocemu_list_add_tail(&id->mcasts, &mc->node);
	resp = respond(call, response, sizeof(*resp));
	resp->id = mc->handle;
	ev = cm_event_add(id, id, RDMA_CM_EVENT_MULTICAST_JOIN, 0);
	if (!ev)
		return 0;
	ev->mc = mc;
	ev->resp.uid = mc->uid;
	ev->resp.id = mc->handle;
	ev->resp.param.ud.qp_num = 0xffffff;
	ev->resp.param.ud.qkey = RDMA_UDP_QKEY;
	cm_fill_ah(id, &ev->resp.param.ud.ah_attr);
	memcpy(&ev->resp.param.ud.ah_attr.grh.dgid[12], &group.sin_addr, sizeof(group.sin_addr));
	return 0;
}

static int cmd_join_ip_mcast(struct ucma_call *call)
{
	const struct ucma_abi_join_ip_mcast *cmd = call->cmd;

	return mcast_join(call, cmd->id, cmd->uid, &cmd->addr, RDMA_MC_JOIN_FLAG_FULLMEMBER,
			  cmd->response);
}

static int cmd_join_mcast(struct ucma_call *call)
{
	const struct ucma_abi_join_mcast *cmd = call->cmd;

	return mcast_join(call, cmd->id, cmd->uid, &cmd->addr, cmd->join_flags, cmd->response);
}

/* Leave a group: its unread events go (the kernel's ucma_cleanup_mc_events); the count stays. */
static int cmd_leave_mcast(struct ucma_call *call)
{
	const struct ucma_abi_destroy_id *cmd = call->cmd;
	struct ucma_abi_destroy_id_resp *resp;
	struct rocemu_list *n, *next;
	struct rocemu_cm_mcast *mc;
	struct rocemu_cm_id *id;

	rocemu_list_for_each(id, &call->file->ids, struct rocemu_cm_id, file_node)
		rocemu_list_for_each(mc, &id->mcasts, struct rocemu_cm_mcast, node)
			if (mc->handle == cmd->id)
				goto found;
	return -ENOENT;
found:
	for (n = call->file->events.next; n != &call->file->events; n = next) {
		struct rocemu_cm_event *ev = rocemu_container_of(n, struct rocemu_cm_event, node);

		next = n->next;
		if (ev->mc != mc)
			continue;
		rocemu_list_del(&ev->node);
		free(ev);
	}
	resp = respond(call, cmd->response, sizeof(*resp));
	resp->events_reported = mc->events_reported;
	rocemu_list_del(&mc->node);
	free(mc);
	return 0;
}

/* The file of the caller's process the shim names by id, or NULL. */
static struct rocemu_cm_file *file_named(struct ucma_call *call, uint32_t id)
{
	struct rocemu_client *c;

	rocemu_list_for_each(c, &call->file->client->emu->clients, struct rocemu_client, node)
		if (c->ucma && c->ucma->id == id && c->pid == call->file->client->pid)
			return c->ucma;
	return NULL;
}

/* Move id from the file fd names to the file written on, with its queued events. */
static int cmd_migrate_id(struct ucma_call *call)
{
	const struct ucma_abi_migrate_id *cmd = call->cmd;
	struct rocemu_cm_file *from = file_named(call, cmd->fd), *to = call->file;
	struct ucma_abi_migrate_resp *resp;
	struct rocemu_cm_id *id = from ? rocemu_obj_lookup(to->client->emu, &rocemu_cm_id_kind, from,
							   cmd->id) : NULL;
	struct rocemu_list *n, *next;
	const char byte = 1;

	if (!from)
		return -EBADF;
	if (!id)
		return -ENOENT;
	resp = respond(call, cmd->response, sizeof(*resp));
	resp->events_reported = id->events_reported;
	if (from == to)
		return 0;
	rocemu_obj_move(&rocemu_cm_id_kind, id, to);
	/* Their bytes stay in the old pipe: a reader there finds no event and waits on. */
	for (n = from->events.next; n != &from->events; n = next) {
		struct rocemu_cm_event *ev = rocemu_container_of(n, struct rocemu_cm_event, node);

		next = n->next;
		if (ev->owner != id)
			continue;
		rocemu_list_del(&ev->node);
		rocemu_list_add_tail(&to->events, &ev->node);
		if (write(to->event_fd, &byte, 1) != 1)
			rocemu_log(ROCEMU_LOG_WARN, "rdma_cm id %u: event pipe full", id->handle);
	}
	return 0;
}

static const struct {
	int (*run)(struct ucma_call *call);
	size_t size;			/* the command struct, header included */
} ucma_cmds[] = {
	[UCMA_CMD_CREATE_ID] = { cmd_create_id, sizeof(struct ucma_abi_create_id) },
	[UCMA_CMD_DESTROY_ID] = { cmd_destroy_id, sizeof(struct ucma_abi_destroy_id) },
	[UCMA_CMD_BIND_IP] = { cmd_bind_ip, sizeof(struct ucma_abi_bind_ip) },
	[UCMA_CMD_RESOLVE_IP] = { cmd_resolve_ip, sizeof(struct ucma_abi_resolve_ip) },
	[UCMA_CMD_RESOLVE_ROUTE] = { cmd_resolve_route, sizeof(struct ucma_abi_resolve_route) },
	[UCMA_CMD_QUERY_ROUTE] = { cmd_query_route, sizeof(struct ucma_abi_query) },
	[UCMA_CMD_CONNECT] = { cmd_connect, sizeof(struct ucma_abi_connect) },
	[UCMA_CMD_LISTEN] = { cmd_listen, sizeof(struct ucma_abi_listen) },
	[UCMA_CMD_ACCEPT] = { cmd_accept, sizeof(struct ucma_abi_accept) },
	[UCMA_CMD_REJECT] = { cmd_reject, sizeof(struct ucma_abi_reject) },
	[UCMA_CMD_DISCONNECT] = { cmd_disconnect, sizeof(struct ucma_abi_disconnect) },
	[UCMA_CMD_INIT_QP_ATTR] = { cmd_init_qp_attr, sizeof(struct ucma_abi_init_qp_attr) },
	[UCMA_CMD_GET_EVENT] = { cmd_get_event, sizeof(struct ucma_abi_get_event) },
	[UCMA_CMD_SET_OPTION] = { cmd_set_option, sizeof(struct ucma_abi_set_option) },
	[UCMA_CMD_NOTIFY] = { cmd_notify, sizeof(struct ucma_abi_notify) },
	[UCMA_CMD_MIGRATE_ID] = { cmd_migrate_id, sizeof(struct ucma_abi_migrate_id) },
	[UCMA_CMD_JOIN_IP_MCAST] = { cmd_join_ip_mcast, sizeof(struct ucma_abi_join_ip_mcast) },
	[UCMA_CMD_LEAVE_MCAST] = { cmd_leave_mcast, sizeof(struct ucma_abi_destroy_id) },
	[UCMA_CMD_BIND] = { cmd_bind, sizeof(struct ucma_abi_cmd_hdr) },
	[UCMA_CMD_JOIN_MCAST] = { cmd_join_mcast, sizeof(struct ucma_abi_join_mcast) },
};

int rocemu_ucma_write(struct rocemu_client *c, const struct rocemu_ucma_write_req *req,
		      struct rocemu_ucma_write_resp *resp)
{
	/* 8-byte aligned, as the ABI's structs need (the request's bytes are not). */
	uint64_t cmd[ROCEMU_UCMA_CMD_MAX / sizeof(uint64_t)];
	struct ucma_call call = { .file = c->ucma, .cmd = cmd, .req = req, .resp = resp };
	struct ucma_abi_cmd_hdr hdr;
	int err;

	if (!c->ucma)
		return -EINVAL;
	resp->response = 0;
	resp->len = 0;
	resp->reserved = 0;
	if (req->len < sizeof(hdr) || req->len > sizeof(cmd) || req->optlen > sizeof(req->opt))
		return -EINVAL;
	memset(cmd, 0, sizeof(cmd));
	memcpy(cmd, req->cmd, req->len);
	memcpy(&hdr, cmd, sizeof(hdr));
	if (hdr.cmd >= sizeof(ucma_cmds) / sizeof(ucma_cmds[0]) || !ucma_cmds[hdr.cmd].run)
		return -ENOSYS;
	if (req->len < ucma_cmds[hdr.cmd].size)
		return -EINVAL;
	err = ucma_cmds[hdr.cmd].run(&call);
	if (err && err != -EAGAIN)
		rocemu_log(ROCEMU_LOG_DEBUG, "rdma_cm command %u of pid %d: %s", hdr.cmd,
			   (int)c->pid, strerror(-err));
	return err;
}

int rocemu_ucma_open(struct rocemu_client *c, int *read_fd, uint32_t *file_id)
{
	static uint32_t last_file_id;
	struct rocemu_amount before = c->charge.amt, conn = before;
	struct rocemu_cm_file *file;
	int pipefd[2], err;

	if (c->dev || c->ucma)
		return -EBUSY;
	/* The connection holds the event pipe's write end. */
	conn.fds++;
	err = rocemu_charge_change(&c->charge, conn);
	if (err)
		return err;
	file = calloc(1, sizeof(*file));
	if (!file) {
		rocemu_charge_change(&c->charge, before);
		return -ENOMEM;
	}
	if (pipe2(pipefd, O_CLOEXEC)) {
		err = -errno;
		rocemu_charge_change(&c->charge, before);
		free(file);
		return err;
	}
	/* Only the daemon's end is non-blocking: a full pipe must not stall it. */
	fcntl(pipefd[1], F_SETFL, O_NONBLOCK);
	file->client = c;
	file->id = ++last_file_id;
	*file_id = file->id;
	file->event_fd = pipefd[1];
	rocemu_list_init(&file->ids);
	rocemu_list_init(&file->events);
	c->ucma = file;
	*read_fd = pipefd[0];
	rocemu_log(ROCEMU_LOG_DEBUG, "rdma_cm open by pid %d (%s)", (int)c->pid, c->comm);
	return 0;
}

void rocemu_ucma_close(struct rocemu_client *c)
{
	struct rocemu_cm_file *file = c->ucma;

	if (!file)
		return;
	/* Each id as DESTROY_ID takes it, its peer told; a listener takes its requests along. */
	while (!rocemu_list_empty(&file->ids))
		cm_id_destroy(rocemu_container_of(file->ids.next, struct rocemu_cm_id, file_node));
	close(file->event_fd);
	free(file);
	c->ucma = NULL;
}
