/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#include "emulator/ctrl/emu_life.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emulator/cm/cm.h"
#include "emulator/core/sport.h"
#include "emulator/ctrl/client_life.h"
#include "emulator/ctrl/ibdev_sysfs.h"
#include "emulator/engine/mcast.h"
#include "emulator/eth/flow.h"
#include "emulator/eth/flow_steer.h"
#include "emulator/engine/rx.h"
#include "emulator/engine/transport.h"
#include "emulator/mem/dm.h"
#include "emulator/mem/mw.h"
#include "emulator/mem/pd_mr.h"
#include "emulator/mem/ufile.h"
#include "emulator/mlx4/format.h"
#include "emulator/mlx5/format.h"
#include "emulator/obj/async_event.h"
#include "emulator/obj/comp_channel.h"
#include "emulator/obj/cq.h"
#include "emulator/obj/qp.h"
#include "emulator/obj/reserved_qpn.h"
#include "emulator/wq/rwq_ind_table.h"
#include "emulator/obj/srq.h"
#include "emulator/wq/wq.h"
#include "emulator/obj/xrcd.h"
#include "emulator/observe/tap.h"
#include "emulator/sched/idle.h"
#include "emulator/vxlan/vxlan_wire.h"
#include "net/udp/udp_port.h"
#include "rocemu/log.h"

/* Every kind of object: the emulator holds a handle table for each. */
static const struct rocemu_obj_kind *const all_kinds[] = {
	&rocemu_pd_kind, &rocemu_mr_kind, &rocemu_mw_kind, &rocemu_channel_kind,
	&rocemu_cq_kind, &rocemu_qp_kind, &rocemu_srq_kind, &rocemu_xrcd_open_kind,
	&rocemu_dm_kind, &rocemu_cm_id_kind, &rocemu_reserved_qpn_kind, &rocemu_flow_kind,
	&rocemu_wq_kind, &rocemu_rwq_ind_table_kind,
};

static void device_rx(void *arg, int fd, const struct rocemu_dgram *d)
{
	struct rocemu_device *dev = arg;
	struct rocemu_dgram unsummed;

	if (fd != dev->udp_fd_unsummed) {
		rocemu_rx_datagram(dev, d);
		return;
	}
	unsummed = *d;
	unsummed.udp_check_zero = true;
	rocemu_rx_datagram(dev, &unsummed);
}

static int device_port_open(struct rocemu_emu *emu, struct rocemu_device *dev,
			    char *err, size_t errlen)
{
	char why[256] = "";
	int fds[2], ret;

	ret = rocemu_udp_port_open_rx(dev->ipv4, fds, why, sizeof(why));
	if (ret) {
		snprintf(err, errlen, "%s: %s", dev->name, why);
		return ret;
	}
	/* The first is the one in-loop delivery hands datagrams to: the daemon's have a checksum. */
	for (int i = 0; i < 2 && !ret; i++)
		ret = fds[i] < 0 ? 0 : rocemu_loop_add_udp(emu->loop, fds[i], device_rx, dev);
	if (ret) {
		snprintf(err, errlen, "%s: cannot receive on its UDP port: %s", dev->name,
			 strerror(-ret));
		rocemu_loop_remove_udp(emu->loop, fds[0]);
		for (int i = 0; i < 2; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		return ret;
	}
	dev->udp_fd = fds[0];
	dev->udp_fd_unsummed = fds[1];
	dev->wire_ttl = rocemu_udp_port_ttl(fds[0], false);
	dev->wire_mcast_ttl = rocemu_udp_port_ttl(fds[0], true);
	return 0;
}

static void device_port_close(struct rocemu_emu *emu, struct rocemu_device *dev)
{
	rocemu_vxlan_close(dev);
	rocemu_sport_close_all(dev);
	rocemu_mcast_close_all(dev);
	if (dev->udp_fd_unsummed >= 0) {
		rocemu_loop_remove_udp(emu->loop, dev->udp_fd_unsummed);
		close(dev->udp_fd_unsummed);
		dev->udp_fd_unsummed = -1;
	}
	if (dev->udp_fd < 0)
		return;
	rocemu_loop_remove_udp(emu->loop, dev->udp_fd);
	close(dev->udp_fd);
	dev->udp_fd = -1;
}

int rocemu_emu_setup(struct rocemu_emu *emu, struct rocemu_loop *loop,
		     const struct rocemu_device *devs, unsigned int num_devs)
{
	unsigned int i;

	memset(emu, 0, sizeof(*emu));
	emu->loop = loop;
	emu->listen_fd = -1;
	rocemu_list_init(&emu->clients);
	rocemu_list_init(&emu->accounts);
	rocemu_limits_default(&emu->limits);
	rocemu_limits_fds_setup(&emu->limits);
	rocemu_obj_tables_init(emu, all_kinds, sizeof(all_kinds) / sizeof(all_kinds[0]));
	rocemu_list_init(&emu->xrcds);
	rocemu_list_init(&emu->ufiles);
	rocemu_list_init(&emu->mms);
	rocemu_list_init(&emu->cm_ids_all);
	rocemu_list_init(&emu->tracers);
	cm_proto_start(emu);
	emu->transport_of_qp_type = rocemu_transport_of_qp_type;
	emu->roce_sniff = rocemu_flow_sniff_roce;
	emu->eth_wire_tx = rocemu_vxlan_wire_tx;
	emu->reply_buf = malloc(ROCEMU_CTRL_MSG_MAX);
	if (!emu->reply_buf)
		return -ENOMEM;
	for (i = 0; i < num_devs; i++) {
		emu->devices[i] = devs[i];
		emu->devices[i].emu = emu;
		emu->devices[i].format = devs[i].model == ROCEMU_MODEL_CX3 ? &rocemu_ring_mlx4 :
									      &rocemu_ring_mlx5;
		emu->devices[i].udp_fd = -1;
		rocemu_list_init(&emu->devices[i].flows);
	}
	emu->num_devices = num_devs;
	rocemu_idle_start(emu);
	return 0;
}

int rocemu_emu_init(struct rocemu_emu *emu, struct rocemu_loop *loop, const char *runtime_dir,
		    const struct rocemu_device *devs, unsigned int num_devs,
		    char *err, size_t errlen)
{
	char sysfs_root[sizeof(emu->sysfs_root)];
	unsigned int i;
	int ret;

	if (strlen(runtime_dir) >= sizeof(emu->runtime_dir) ||
	    /* HELLO carries the ibdev_path root in a fixed field. */
	    snprintf(sysfs_root, sizeof(sysfs_root), "%s/sys", runtime_dir) >=
		    (int)sizeof(((struct rocemu_hello_resp *)0)->ibdev_root)) {
		snprintf(err, errlen, "runtime directory name too long");
		return -ENAMETOOLONG;
	}
	ret = rocemu_emu_setup(emu, loop, devs, num_devs);
	if (ret) {
		snprintf(err, errlen, "out of memory");
		return ret;
	}
	strcpy(emu->runtime_dir, runtime_dir);
	strcpy(emu->sysfs_root, sysfs_root);
	for (i = 0; i < num_devs; i++) {
		struct rocemu_device *dev = &emu->devices[i];

		ret = device_port_open(emu, dev, err, errlen);
		if (!ret)
			ret = rocemu_vxlan_open(dev, err, errlen);
		if (ret)
			goto fail;
		ret = rocemu_ibdev_sysfs_create(emu->sysfs_root, dev);
		if (ret) {
			snprintf(err, errlen, "%s: cannot write %s/%s: %s", dev->name,
				 emu->sysfs_root, dev->name, strerror(-ret));
			goto fail;
		}
	}
	ret = rocemu_tap_start(emu, err, errlen);
	if (ret)
		goto fail;
	return 0;

fail:
	rocemu_emu_fini(emu);
	return ret;
}

void rocemu_emu_fini(struct rocemu_emu *emu)
{
	struct rocemu_client *c, *tmp;
	unsigned int i;

	rocemu_list_for_each_safe(c, tmp, &emu->clients, struct rocemu_client, node)
		rocemu_client_free(c);
	rocemu_ufile_free_all(emu);
	for (i = 0; i < emu->num_devices; i++) {
		rocemu_tap_stop(&emu->devices[i]);
		device_port_close(emu, &emu->devices[i]);
		if (emu->sysfs_root[0])
			rocemu_ibdev_sysfs_remove(emu->sysfs_root, &emu->devices[i]);
	}
	/* Hand the removals to the kernel now: a stopped loop would leave the ports bound. */
	rocemu_loop_flush(emu->loop);
	emu->num_devices = 0;
	rocemu_obj_tables_free(emu, all_kinds, sizeof(all_kinds) / sizeof(all_kinds[0]));
	free(emu->reply_buf);
	emu->reply_buf = NULL;
}

int rocemu_emu_set_port_state(struct rocemu_emu *emu, struct rocemu_device *dev,
			      enum ibv_port_state state)
{
	struct rocemu_client *c;
	enum ibv_event_type event;

	if (state != IBV_PORT_ACTIVE && state != IBV_PORT_DOWN)
		return -EINVAL;
	if (dev->port_state == state)
		return 0;
	dev->port_state = state;
	event = state == IBV_PORT_ACTIVE ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR;
	rocemu_log(ROCEMU_LOG_INFO, "%s port 1 %s", dev->name, rocemu_port_state_name(state));
	rocemu_list_for_each(c, &emu->clients, struct rocemu_client, node)
		if (c->dev == dev)
			rocemu_async_event(c, ROCEMU_PORT_NUM, event);
	return 0;
}
