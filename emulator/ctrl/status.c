/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/ctrl/status.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "emulator/cm/cm.h"
#include "emulator/core/client.h"
#include "emulator/mem/dm.h"
#include "emulator/mem/pd_mr.h"
#include "emulator/obj/comp_channel.h"
#include "emulator/obj/cq.h"
#include "emulator/obj/qp.h"
#include "emulator/obj/qp_state.h"
#include "emulator/obj/srq.h"
#include "emulator/obj/xrcd.h"
#include "emulator/observe/capture.h"
#include "emulator/raw/raw.h"
#include "emulator/ring/format.h"
#include "emulator/vxlan/vxlan_fdb.h"
#include "net/eth/eth_frame.h"
#include "net/udp/udp_netns.h"

struct text {
	char *buf;
	size_t len, used;
	bool overflow;
};

__attribute__((format(printf, 2, 3)))
static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->overflow)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->used, t->len - t->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= t->len - t->used)
		t->overflow = true;
	else
		t->used += n;
}

static void client_status(struct text *t, struct rocemu_client *c)
{
	struct rocemu_pd *pd;
	struct rocemu_mr *mr;
	struct rocemu_dm *dm;
	struct rocemu_channel *ch;
	struct rocemu_cq *cq;
	struct rocemu_qp *qp;
	struct rocemu_srq *srq;

	text_add(t, "client pid %d comm %s device %s\n", (int)c->pid, c->comm, c->dev->name);
	/* The ufile's objects, under each context that shares them. */
	rocemu_list_for_each(pd, &c->ufile->pds, struct rocemu_pd, node)
		text_add(t, "  pd %u\n", pd->pdn);
	rocemu_list_for_each(dm, &c->ufile->dms, struct rocemu_dm, node)
		text_add(t, "  dm %u len %llu mrs %u\n", dm->handle, (unsigned long long)dm->length,
			 dm->users);
	rocemu_list_for_each(mr, &c->ufile->mrs, struct rocemu_mr, node)
		text_add(t, "  mr %u pd %u lkey 0x%08x len %llu\n", mr->handle, mr->pd->pdn,
			 mr->lkey, (unsigned long long)mr->length);
	rocemu_list_for_each(ch, &c->channels, struct rocemu_channel, node)
		text_add(t, "  channel %u\n", ch->handle);
	rocemu_list_for_each(cq, &c->cqs, struct rocemu_cq, node)
		text_add(t, "  cq 0x%06x cqe %u\n", cq->cqn, cq->layout.ncqe - 1);
	rocemu_list_for_each(srq, &c->srqs, struct rocemu_srq, node)
		text_add(t, "  srq 0x%06x pd %u wr %u sge %u limit %u qps %u\n", srq->srqn,
			 srq->pd->pdn, srq->max_wr, srq->max_sge, srq->limit, srq->users);
	rocemu_list_for_each(qp, &c->qps, struct rocemu_qp, node)
		if (qp->type == IBV_QPT_RAW_PACKET && qp->layout.rq_wqe_cnt && !qp->srq)
			/* Raw tools have no handshake: a peer may send once receives are posted. */
			text_add(t, "  qp 0x%06x %s %s pd %u rq_posted %d\n", qp->qpn,
				 rocemu_qp_type_name(qp->type), rocemu_qp_state_name(qp->attr.qp_state),
				 qp->pd->pdn, rocemu_qp_rq_posted(qp, qp->raw->rq_ci));
		else if (qp->pd)
			text_add(t, "  qp 0x%06x %s %s pd %u\n", qp->qpn, rocemu_qp_type_name(qp->type),
				 rocemu_qp_state_name(qp->attr.qp_state), qp->pd->pdn);
		else	/* an XRC target is its domain's */
			text_add(t, "  qp 0x%06x %s %s xrcd %u\n", qp->qpn,
				 rocemu_qp_type_name(qp->type), rocemu_qp_state_name(qp->attr.qp_state),
				 qp->xrcd_open->xrcd->xrcdn);
}

static void ucma_status(struct text *t, struct rocemu_client *c)
{
	struct rocemu_cm_id *id;
	char line[160];

	text_add(t, "client pid %d comm %s rdma_cm\n", (int)c->pid, c->comm);
	rocemu_list_for_each(id, &c->ucma->ids, struct rocemu_cm_id, file_node) {
		cm_id_describe(id, line, sizeof(line));
		text_add(t, "  %s\n", line);
	}
}

/* The VXLAN wire: VNI, remotes flooded to, MACs learned, counters. */
static void vxlan_status(struct text *t, const struct rocemu_vxlan_port *v)
{
	const struct rocemu_vxlan_counters *c = &v->counters;
	char ip[INET_ADDRSTRLEN];
	unsigned int i;

	text_add(t, "  vxlan vni %u port %u remotes", v->vni, ROCEMU_VXLAN_PORT);
	for (i = 0; i < v->num_remotes; i++)
		text_add(t, "%s%s", i ? "," : " ",
			 inet_ntop(AF_INET, &v->remotes[i], ip, sizeof(ip)));
	text_add(t, "%s learned %u tx %" PRIu64 " tx_dropped %" PRIu64 " rx %" PRIu64
		 " rx_malformed %" PRIu64 " rx_other_vni %" PRIu64 " rx_looped %" PRIu64 "\n",
		 v->num_remotes ? "" : " none", rocemu_vxlan_fdb_live(v, rocemu_now_ns()), c->tx_frames, c->tx_dropped, c->rx_frames,
		 c->rx_malformed, c->rx_other_vni, c->rx_looped);
}

int rocemu_status_text(struct rocemu_emu *emu, char *buf, size_t len)
{
	struct text t = { .buf = buf, .len = len };
	struct rocemu_account *a;
	struct rocemu_client *c;
	char ip[INET_ADDRSTRLEN], mac[ROCEMU_MAC_TEXT_LEN], line[320];
	unsigned int i;

	text_add(&t, "rocemud pid %d backend %s delivery %s poll %s wire %s runtime %s\n",
		 (int)getpid(), rocemu_loop_backend_name(emu->loop),
		 rocemu_loop_local_delivery(emu->loop) ? "local" : "udp",
		 emu->busy_poll ? "busy" : "sleep", rocemu_udp_netns_active() ? "private" : "host",
		 emu->runtime_dir);
	for (i = 0; i < emu->num_devices; i++) {
		const struct rocemu_device *dev = &emu->devices[i];

		/* the default adapter goes unnamed, as ROCEMU_DEVICES leaves it unnamed */
		text_add(&t, "device %s %s mac %s port %s mtu %u%s%s%s\n", dev->name,
			 rocemu_device_ipv4_text(dev, ip), rocemu_device_mac_text(dev, mac),
			 rocemu_port_state_name(dev->port_state),
			 rocemu_mtu_bytes(dev->active_mtu),
			 dev->model == ROCEMU_MODEL_CX3 ? " model cx3" : "",
			 rocemu_capture_path(dev) ? " capture " : "",
			 rocemu_capture_path(dev) ? rocemu_capture_path(dev) : "");
		if (dev->vxlan.on)
			vxlan_status(&t, &dev->vxlan);
	}
	rocemu_list_for_each(c, &emu->clients, struct rocemu_client, node) {
		if (c->dev)
			client_status(&t, c);
		if (c->ucma)
			ucma_status(&t, c);
	}
	rocemu_list_for_each(a, &emu->accounts, struct rocemu_account, node) {
		rocemu_account_describe(a, line, sizeof(line));
		text_add(&t, "process pid %d comm %s %s\n", (int)a->pid, a->comm, line);
	}
	if (t.overflow)
		return -ENOSPC;
	return (int)t.used + 1;
}
