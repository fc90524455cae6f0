/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/ctrl/ctrl_ops.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "emulator/base/text_pages.h"
#include "emulator/cm/cm.h"
#include "emulator/ctrl/client_life.h"
#include "emulator/ctrl/emu_life.h"
#include "emulator/ctrl/status.h"
#include "emulator/dc/dc.h"
#include "emulator/engine/mcast.h"
#include "emulator/eth/flow.h"
#include "emulator/mem/dm.h"
#include "emulator/mem/mkey_indirect.h"
#include "emulator/mem/mw.h"
#include "emulator/mem/pd_mr.h"
#include "emulator/obj/comp_channel.h"
#include "emulator/obj/cq.h"
#include "emulator/obj/qp.h"
#include "emulator/obj/reserved_qpn.h"
#include "emulator/wq/rwq_ind_table.h"
#include "emulator/obj/srq.h"
#include "emulator/wq/wq.h"
#include "emulator/obj/xrcd.h"
#include "emulator/observe/capture.h"
#include "emulator/observe/fault_inject.h"
#include "emulator/observe/stats.h"
#include "emulator/observe/trace.h"
#include "emulator/sched/direct.h"
#include "emulator/xrc/xrc.h"
#include "rocemu/log.h"

typedef int (*ctrl_handler)(struct rocemu_client *c, const void *req,
			    struct rocemu_ctrl_reply *reply);

static int op_hello(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	struct rocemu_emu *emu = c->emu;
	struct rocemu_hello_resp *resp = reply->body;
	unsigned int i;

	memset(resp, 0, sizeof(*resp));
	resp->daemon_pid = (uint32_t)getpid();
	resp->num_devices = emu->num_devices;
	/* rocemu_emu_init made sure the root fits. */
	memcpy(resp->ibdev_root, emu->sysfs_root,
	       strnlen(emu->sysfs_root, sizeof(resp->ibdev_root) - 1));
	for (i = 0; i < emu->num_devices; i++)
		rocemu_device_info(&emu->devices[i], &resp->devices[i]);
	return 0;
}

static int op_open_device(struct rocemu_client *c, const void *req,
			  struct rocemu_ctrl_reply *reply)
{
	const struct rocemu_open_device_req *r = req;

	if (c->ucma)
		return -EBUSY;
	return rocemu_client_open_device(c, r->dev_index, r, sizeof(*r), &r->mem, reply->body,
					 reply->fds, &reply->nfds);
}

static int op_import_device(struct rocemu_client *c, const void *req,
			    struct rocemu_ctrl_reply *reply)
{
	const struct rocemu_import_device_req *r = req;

	return rocemu_client_import_device(c, r->token, r, sizeof(*r), &r->mem, reply->body,
					   reply->fds, &reply->nfds);
}

static int op_query_device(struct rocemu_client *c, const void *req,
			   struct rocemu_ctrl_reply *reply)
{
	struct rocemu_query_device_resp *resp = reply->body;

	rocemu_device_query(c->dev, &resp->attr);
	return 0;
}

static int op_query_port(struct rocemu_client *c, const void *req,
			 struct rocemu_ctrl_reply *reply)
{
	const struct rocemu_query_port_req *r = req;
	struct rocemu_query_port_resp *resp = reply->body;

	if (r->port_num != ROCEMU_PORT_NUM)
		return -EINVAL;
	rocemu_port_query(c->dev, &resp->attr);
	return 0;
}

static int op_alloc_pd(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	struct rocemu_alloc_pd_resp *resp = reply->body;

	memset(resp, 0, sizeof(*resp));
	return rocemu_pd_alloc(c, &resp->pdn);
}

static int op_dealloc_pd(struct rocemu_client *c, const void *req,
			 struct rocemu_ctrl_reply *reply)
{
	return rocemu_pd_dealloc(c, ((const struct rocemu_handle_req *)req)->handle);
}

static int op_reg_mr(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_mr_reg(c, req, reply->body);
}

static int op_rereg_mr(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_mr_rereg(c, req, reply->body);
}

static int op_dereg_mr(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_mr_dereg(c, ((const struct rocemu_handle_req *)req)->handle);
}

static int op_advise_mr(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_mr_advise(c, req, reply->body);
}

static int op_import_pd(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	struct rocemu_alloc_pd_resp *resp = reply->body;
	uint32_t pdn = ((const struct rocemu_handle_req *)req)->handle;

	memset(resp, 0, sizeof(*resp));
	resp->pdn = pdn;
	return rocemu_pd_import(c, pdn);
}

static int op_import_mr(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_mr_import(c, ((const struct rocemu_handle_req *)req)->handle, reply->body);
}

static int op_alloc_dm(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	int err = rocemu_dm_alloc(c, req, reply->body, &reply->fds[0]);

	if (!err)
		reply->nfds = 1;
	return err;
}

static int op_free_dm(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_dm_release(c, ((const struct rocemu_handle_req *)req)->handle);
}

static int op_import_dm(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	int err = rocemu_dm_import(c, ((const struct rocemu_handle_req *)req)->handle, reply->body,
				   &reply->fds[0]);

	if (!err)
		reply->nfds = 1;
	return err;
}

static int op_reg_dm_mr(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_dm_reg_mr(c, req, reply->body);
}

static int op_create_mkey(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_mkey_create(c, req, reply->body);
}

static int op_destroy_mkey(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_mkey_destroy(c, ((const struct rocemu_handle_req *)req)->handle);
}

static int op_alloc_mw(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	struct rocemu_alloc_mw_resp *resp = reply->body;

	memset(resp, 0, sizeof(*resp));
	return rocemu_mw_alloc(c, req, resp);
}

static int op_dealloc_mw(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_mw_dealloc(c, ((const struct rocemu_handle_req *)req)->handle);
}

static int op_create_comp_channel(struct rocemu_client *c, const void *req,
				  struct rocemu_ctrl_reply *reply)
{
	struct rocemu_create_comp_channel_resp *resp = reply->body;
	int err;

	memset(resp, 0, sizeof(*resp));
	err = rocemu_channel_create(c, &resp->handle, &reply->fds[0]);
	if (!err)
		reply->nfds = 1;
	return err;
}

static int op_destroy_comp_channel(struct rocemu_client *c, const void *req,
				   struct rocemu_ctrl_reply *reply)
{
	return rocemu_channel_destroy(c, ((const struct rocemu_handle_req *)req)->handle);
}

static int op_create_cq(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	struct rocemu_create_cq_resp *resp = reply->body;
	int err;

	err = rocemu_cq_create(c, req, &resp->layout, &reply->fds[0]);
	if (!err)
		reply->nfds = 1;
	return err;
}

static int op_resize_cq(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	struct rocemu_resize_cq_resp *resp = reply->body;
	int err;

	err = rocemu_cq_resize(c, req, &resp->layout, &reply->fds[0]);
	if (!err)
		reply->nfds = 1;
	return err;
}

static int op_destroy_cq(struct rocemu_client *c, const void *req,
			 struct rocemu_ctrl_reply *reply)
{
	return rocemu_cq_destroy(c, ((const struct rocemu_handle_req *)req)->handle);
}

static int op_create_qp(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	int err;

	err = rocemu_qp_create(c, req, reply->body, &reply->fds[0]);
	if (!err)
		reply->nfds = 1;
	return err;
}

static int op_modify_qp(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_qp_modify(c, req);
}

static int op_query_qp(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_qp_query(c, req, reply->body);
}

static int op_destroy_qp(struct rocemu_client *c, const void *req,
			 struct rocemu_ctrl_reply *reply)
{
	return rocemu_qp_destroy(c, ((const struct rocemu_handle_req *)req)->handle);
}

static int op_open_qp(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_xrc_open(c, req);
}

static int op_dci_stream_reset(struct rocemu_client *c, const void *req,
			      struct rocemu_ctrl_reply *reply)
{
	const struct rocemu_dci_stream_reset_req *r = req;
	struct rocemu_qp *qp = rocemu_qp_lookup(c, r->qpn);

	return qp ? rocemu_dci_stream_reset(qp, r->stream_id) : -EINVAL;
}

static int op_create_flow(struct rocemu_client *c, const void *req,
			  struct rocemu_ctrl_reply *reply)
{
	struct rocemu_create_flow_resp *resp = reply->body;

	memset(resp, 0, sizeof(*resp));
	return rocemu_flow_create(c, req, &resp->handle);
}

static int op_destroy_flow(struct rocemu_client *c, const void *req,
			   struct rocemu_ctrl_reply *reply)
{
	return rocemu_flow_destroy(c, ((const struct rocemu_handle_req *)req)->handle);
}

static int op_create_srq(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	int err;

	err = rocemu_srq_create(c, req, reply->body, &reply->fds[0]);
	if (!err)
		reply->nfds = 1;
	return err;
}

static int op_modify_srq(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_srq_modify(c, req);
}

static int op_query_srq(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_srq_query(c, ((const struct rocemu_handle_req *)req)->handle, reply->body);
}

static int op_destroy_srq(struct rocemu_client *c, const void *req,
			  struct rocemu_ctrl_reply *reply)
{
	return rocemu_srq_destroy(c, ((const struct rocemu_handle_req *)req)->handle);
}

static int op_create_wq(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	int err = rocemu_wq_create(c, req, reply->body, &reply->fds[0]);

	if (!err)
		reply->nfds = 1;
	return err;
}

static int op_modify_wq(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_wq_modify(c, req);
}

static int op_destroy_wq(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_wq_destroy(c, ((const struct rocemu_handle_req *)req)->handle);
}

static int op_create_rwq_ind_table(struct rocemu_client *c, const void *req,
				   struct rocemu_ctrl_reply *reply)
{
	return rocemu_rwq_ind_table_create(c, req, reply->body);
}

static int op_destroy_rwq_ind_table(struct rocemu_client *c, const void *req,
				    struct rocemu_ctrl_reply *reply)
{
	return rocemu_rwq_ind_table_destroy(c, ((const struct rocemu_handle_req *)req)->handle);
}

static int op_open_xrcd(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_xrcd_open(c, req, reply->body);
}

static int op_close_xrcd(struct rocemu_client *c, const void *req,
			 struct rocemu_ctrl_reply *reply)
{
	return rocemu_xrcd_close(c, ((const struct rocemu_handle_req *)req)->handle);
}

static int op_attach_mcast(struct rocemu_client *c, const void *req,
			   struct rocemu_ctrl_reply *reply)
{
	return rocemu_mcast_attach(c, req);
}

static int op_detach_mcast(struct rocemu_client *c, const void *req,
			   struct rocemu_ctrl_reply *reply)
{
	return rocemu_mcast_detach(c, req);
}

static int op_direct_doorbells(struct rocemu_client *c, const void *req,
			       struct rocemu_ctrl_reply *reply)
{
	return rocemu_direct_watch(c, req);
}

static int op_qp_udp_sport(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_qp_set_udp_sport(c, req);
}

static int op_reserved_qpn_alloc(struct rocemu_client *c, const void *req,
				 struct rocemu_ctrl_reply *reply)
{
	struct rocemu_reserved_qpn_resp *resp = reply->body;

	memset(resp, 0, sizeof(*resp));
	return rocemu_reserved_qpn_alloc(c, &resp->qpn);
}

static int op_reserved_qpn_dealloc(struct rocemu_client *c, const void *req,
				   struct rocemu_ctrl_reply *reply)
{
	return rocemu_reserved_qpn_dealloc(c, ((const struct rocemu_handle_req *)req)->handle);
}

static int op_status(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_text_pages_serve(&c->report, c->emu, ROCEMU_OP_STATUS, rocemu_status_text,
				       req, reply->body, &reply->len);
}

static int op_set_port_state(struct rocemu_client *c, const void *req,
			     struct rocemu_ctrl_reply *reply)
{
	const struct rocemu_set_port_state_req *r = req;
	char name[ROCEMU_DEV_NAME_MAX + 1];
	struct rocemu_device *dev;

	memcpy(name, r->dev_name, ROCEMU_DEV_NAME_MAX);
	name[ROCEMU_DEV_NAME_MAX] = '\0';
	dev = rocemu_emu_device_by_name(c->emu, name);
	if (!dev)
		return -ENODEV;
	return rocemu_emu_set_port_state(c->emu, dev, r->port_state);
}

static int op_set_faults(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	const struct rocemu_set_faults_req *r = req;
	char name[ROCEMU_DEV_NAME_MAX + 1], spec[sizeof(r->spec) + 1], why[256];
	struct rocemu_device *dev;
	int ret;

	memcpy(name, r->dev_name, ROCEMU_DEV_NAME_MAX);
	name[ROCEMU_DEV_NAME_MAX] = '\0';
	memcpy(spec, r->spec, sizeof(r->spec));
	spec[sizeof(r->spec)] = '\0';
	dev = rocemu_emu_device_by_name(c->emu, name);
	if (!dev)
		return -ENODEV;
	ret = rocemu_fault_inject_set(dev, spec, why, sizeof(why));
	if (ret)
		rocemu_log(ROCEMU_LOG_INFO, "%s faults refused: %s", dev->name, why);
	return ret;
}

static int op_set_capture(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	const struct rocemu_set_capture_req *r = req;
	char name[ROCEMU_DEV_NAME_MAX + 1], path[sizeof(r->path) + 1], why[PATH_MAX + 64];
	struct rocemu_device *dev;
	int ret;

	memcpy(name, r->dev_name, ROCEMU_DEV_NAME_MAX);
	name[ROCEMU_DEV_NAME_MAX] = '\0';
	memcpy(path, r->path, sizeof(r->path));
	path[sizeof(r->path)] = '\0';
	dev = rocemu_emu_device_by_name(c->emu, name);
	if (!dev)
		return -ENODEV;
	if (!path[0]) {
		if (!rocemu_capture_path(dev))
			return -ENODATA;
		rocemu_capture_stop(dev);
		return 0;
	}
	if (path[0] != '/')
		return -EINVAL;
	ret = rocemu_capture_start(dev, path, why, sizeof(why));
	if (ret)
		rocemu_log(ROCEMU_LOG_INFO, "%s capture refused: %s", dev->name, why);
	return ret;
}

static int op_trace(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	int ret = rocemu_trace_start(c, req, &reply->fds[0]);

	if (!ret)
		reply->nfds = 1;
	return ret;
}

static int op_stats(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_text_pages_serve(&c->report, c->emu, ROCEMU_OP_STATS, rocemu_stats_text,
				       req, reply->body, &reply->len);
}

static int op_shutdown(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	rocemu_log(ROCEMU_LOG_INFO, "shutdown asked by pid %d (%s)", (int)c->pid, c->comm);
	c->emu->stop_requested = true;
	return 0;
}

static int op_ucma_open(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	struct rocemu_ucma_open_resp *resp = reply->body;
	int err;

	memset(resp, 0, sizeof(*resp));
	err = rocemu_ucma_open(c, &reply->fds[0], &resp->file_id);

	if (!err)
		reply->nfds = 1;
	return err;
}

static int op_ucma_write(struct rocemu_client *c, const void *req, struct rocemu_ctrl_reply *reply)
{
	return rocemu_ucma_write(c, req, reply->body);
}

static const struct {
	ctrl_handler run;
	bool needs_context;	/* only after OPEN_DEVICE */
} ctrl_ops[ROCEMU_OP__COUNT] = {
	[ROCEMU_OP_HELLO] = { op_hello, false },
	[ROCEMU_OP_OPEN_DEVICE] = { op_open_device, false },
	[ROCEMU_OP_QUERY_DEVICE] = { op_query_device, true },
	[ROCEMU_OP_QUERY_PORT] = { op_query_port, true },
	[ROCEMU_OP_ALLOC_PD] = { op_alloc_pd, true },
	[ROCEMU_OP_DEALLOC_PD] = { op_dealloc_pd, true },
	[ROCEMU_OP_REG_MR] = { op_reg_mr, true },
	[ROCEMU_OP_REREG_MR] = { op_rereg_mr, true },
	[ROCEMU_OP_DEREG_MR] = { op_dereg_mr, true },
	[ROCEMU_OP_ALLOC_MW] = { op_alloc_mw, true },
	[ROCEMU_OP_DEALLOC_MW] = { op_dealloc_mw, true },
	[ROCEMU_OP_CREATE_COMP_CHANNEL] = { op_create_comp_channel, true },
	[ROCEMU_OP_DESTROY_COMP_CHANNEL] = { op_destroy_comp_channel, true },
	[ROCEMU_OP_CREATE_CQ] = { op_create_cq, true },
	[ROCEMU_OP_RESIZE_CQ] = { op_resize_cq, true },
	[ROCEMU_OP_DESTROY_CQ] = { op_destroy_cq, true },
	[ROCEMU_OP_CREATE_QP] = { op_create_qp, true },
	[ROCEMU_OP_MODIFY_QP] = { op_modify_qp, true },
	[ROCEMU_OP_QUERY_QP] = { op_query_qp, true },
	[ROCEMU_OP_DESTROY_QP] = { op_destroy_qp, true },
	[ROCEMU_OP_STATUS] = { op_status, false },
	[ROCEMU_OP_SET_PORT_STATE] = { op_set_port_state, false },
	[ROCEMU_OP_SHUTDOWN] = { op_shutdown, false },
	[ROCEMU_OP_SET_FAULTS] = { op_set_faults, false },
	[ROCEMU_OP_STATS] = { op_stats, false },
	[ROCEMU_OP_CREATE_SRQ] = { op_create_srq, true },
	[ROCEMU_OP_MODIFY_SRQ] = { op_modify_srq, true },
	[ROCEMU_OP_QUERY_SRQ] = { op_query_srq, true },
	[ROCEMU_OP_DESTROY_SRQ] = { op_destroy_srq, true },
	[ROCEMU_OP_OPEN_XRCD] = { op_open_xrcd, true },
	[ROCEMU_OP_CLOSE_XRCD] = { op_close_xrcd, true },
	[ROCEMU_OP_ATTACH_MCAST] = { op_attach_mcast, true },
	[ROCEMU_OP_DETACH_MCAST] = { op_detach_mcast, true },
	[ROCEMU_OP_ADVISE_MR] = { op_advise_mr, true },
	[ROCEMU_OP_ALLOC_DM] = { op_alloc_dm, true },
	[ROCEMU_OP_FREE_DM] = { op_free_dm, true },
	[ROCEMU_OP_REG_DM_MR] = { op_reg_dm_mr, true },
	[ROCEMU_OP_IMPORT_DEVICE] = { op_import_device, false },
	[ROCEMU_OP_IMPORT_PD] = { op_import_pd, true },
	[ROCEMU_OP_IMPORT_MR] = { op_import_mr, true },
	[ROCEMU_OP_IMPORT_DM] = { op_import_dm, true },
	[ROCEMU_OP_UCMA_OPEN] = { op_ucma_open, false },
	[ROCEMU_OP_UCMA_WRITE] = { op_ucma_write, false },
	[ROCEMU_OP_DIRECT_DOORBELLS] = { op_direct_doorbells, true },
	[ROCEMU_OP_OPEN_QP] = { op_open_qp, true },
	[ROCEMU_OP_SET_CAPTURE] = { op_set_capture, false },
	[ROCEMU_OP_TRACE] = { op_trace, false },
	[ROCEMU_OP_CREATE_MKEY] = { op_create_mkey, true },
	[ROCEMU_OP_DESTROY_MKEY] = { op_destroy_mkey, true },
	[ROCEMU_OP_QP_UDP_SPORT] = { op_qp_udp_sport, true },
	[ROCEMU_OP_RESERVED_QPN_ALLOC] = { op_reserved_qpn_alloc, true },
	[ROCEMU_OP_RESERVED_QPN_DEALLOC] = { op_reserved_qpn_dealloc, true },
	[ROCEMU_OP_DCI_STREAM_RESET] = { op_dci_stream_reset, true },
	[ROCEMU_OP_CREATE_FLOW] = { op_create_flow, true },
	[ROCEMU_OP_DESTROY_FLOW] = { op_destroy_flow, true },
	[ROCEMU_OP_CREATE_WQ] = { op_create_wq, true },
	[ROCEMU_OP_MODIFY_WQ] = { op_modify_wq, true },
	[ROCEMU_OP_DESTROY_WQ] = { op_destroy_wq, true },
	[ROCEMU_OP_CREATE_RWQ_IND_TABLE] = { op_create_rwq_ind_table, true },
	[ROCEMU_OP_DESTROY_RWQ_IND_TABLE] = { op_destroy_rwq_ind_table, true },
};

int rocemu_ctrl_dispatch(struct rocemu_client *c, const struct rocemu_msg_hdr *hdr,
			 const void *body, struct rocemu_ctrl_reply *reply)
{
	uint32_t want = rocemu_ctrl_body_size[hdr->op][1];
	int err;

	reply->len = want == ROCEMU_VARLEN ? 0 : want;
	reply->nfds = 0;
	if (!ctrl_ops[hdr->op].run)
		err = -EOPNOTSUPP;
	else if (ctrl_ops[hdr->op].needs_context && !c->dev)
		err = -EINVAL;
	else
		err = ctrl_ops[hdr->op].run(c, body, reply);
	if (err) {
		reply->len = 0;
		reply->nfds = 0;
	}
	return err;
}
