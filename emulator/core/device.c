/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Identity, attributes and port of an emulated ConnectX-5 or ConnectX-3 Pro (RoCE, one port). */
#include "emulator/core/device.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define ROCEMU_VENDOR_ID 0x02c9		/* Mellanox */
#define ROCEMU_GID_TBL_LEN 256
#define ROCEMU_PHYS_LINK_UP 5
#define ROCEMU_PHYS_DISABLED 3
#define ROCEMU_WIDTH_4X 2
#define ROCEMU_SPEED_25G 32
/* Ethernet + IPv4 + UDP + BTH + ICRC overhead a RoCEv2 payload leaves room for. */
#define ROCEMU_ROCE_OVERHEAD 64

static const unsigned int mtu_bytes[] = {
	[IBV_MTU_256] = 256, [IBV_MTU_512] = 512, [IBV_MTU_1024] = 1024,
	[IBV_MTU_2048] = 2048, [IBV_MTU_4096] = 4096,
};

unsigned int rocemu_mtu_bytes(enum ibv_mtu mtu)
{
	return (unsigned)mtu < sizeof(mtu_bytes) / sizeof(mtu_bytes[0]) ? mtu_bytes[mtu] : 0;
}

/* Largest IB MTU a netdev MTU carries (IB MTU <= netdev - overhead). */
static enum ibv_mtu active_mtu_of(uint32_t netdev_mtu)
{
	enum ibv_mtu mtu;

	for (mtu = IBV_MTU_4096; mtu > IBV_MTU_256; mtu--)
		if (mtu_bytes[mtu] + ROCEMU_ROCE_OVERHEAD <= netdev_mtu)
			break;
	return mtu;
}

const char *rocemu_port_state_name(enum ibv_port_state state)
{
	static const char *const names[] = {
		[IBV_PORT_NOP] = "NOP", [IBV_PORT_DOWN] = "DOWN", [IBV_PORT_INIT] = "INIT",
		[IBV_PORT_ARMED] = "ARMED", [IBV_PORT_ACTIVE] = "ACTIVE",
		[IBV_PORT_ACTIVE_DEFER] = "ACTIVE_DEFER",
	};

	return (unsigned)state < sizeof(names) / sizeof(names[0]) ? names[state] : "?";
}

const char *rocemu_device_mac_text(const struct rocemu_device *dev, char *buf)
{
	const uint8_t *m = dev->mac;

	snprintf(buf, ROCEMU_MAC_TEXT_LEN, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
		 m[3], m[4], m[5]);
	return buf;
}

const char *rocemu_device_ipv4_text(const struct rocemu_device *dev, char *buf)
{
	struct in_addr a = { .s_addr = dev->ipv4 };

	return inet_ntop(AF_INET, &a, buf, INET_ADDRSTRLEN);
}

void rocemu_device_init(struct rocemu_device *dev, uint32_t index, const char *name,
			uint32_t ipv4_be, uint32_t netdev_mtu)
{
	const uint8_t *ip = (const uint8_t *)&ipv4_be;
	uint8_t default_mac[6];

	memset(dev, 0, sizeof(*dev));
	snprintf(dev->name, sizeof(dev->name), "%s", name);
	dev->index = index;
	dev->ipv4 = ipv4_be;
	dev->netdev_mtu = netdev_mtu;
	dev->active_mtu = active_mtu_of(netdev_mtu);
	dev->port_state = IBV_PORT_ACTIVE;
	dev->udp_fd = -1;
	dev->udp_fd_unsummed = -1;
	dev->wire_ttl = ROCEMU_IPV4_TTL_DEFAULT;
	dev->wire_mcast_ttl = ROCEMU_IPV4_MCAST_TTL_DEFAULT;
	rocemu_vxlan_port_init(&dev->vxlan);
	/* A locally administered MAC from the address: 02:00:a:b:c:d. */
	default_mac[0] = 0x02;
	default_mac[1] = 0x00;
	memcpy(&default_mac[2], ip, 4);
	rocemu_device_set_mac(dev, default_mac);
}

void rocemu_device_set_mac(struct rocemu_device *dev, const uint8_t mac[6])
{
	uint8_t guid[8];

	memcpy(dev->mac, mac, sizeof(dev->mac));
	/* Modified EUI-64 of the MAC, as bytes in wire order. */
	guid[0] = mac[0];
	guid[1] = mac[1];
	guid[2] = mac[2];
	guid[3] = 0xff;
	guid[4] = 0xfe;
	guid[5] = mac[3];
	guid[6] = mac[4];
	guid[7] = mac[5];
	memcpy(&dev->node_guid, guid, sizeof(guid));
}

static const struct rocemu_model_ids model_ids[] = {
	[ROCEMU_MODEL_CX5] = { "ConnectX-5", 0x1017, 0x0007, "16.35.2000", "MT_0000000008",
			       "mlx5_core" },
	[ROCEMU_MODEL_CX3] = { "ConnectX-3 Pro", 0x1007, 0x0006, "2.42.5000", "MT_1090111023",
			       "mlx4_core" },
};

const struct rocemu_model_ids *rocemu_device_ids(const struct rocemu_device *dev)
{
	return &model_ids[dev->model == ROCEMU_MODEL_CX3 ? ROCEMU_MODEL_CX3 : ROCEMU_MODEL_CX5];
}

/*
 * A ConnectX-3 Pro's limits where they are below the emulator's (mlx4_ib's
 * query_device on one), and its flags: no raw packet offloads here, no
 * memory windows of type 2A beyond what mlx4 states.
 */
static void cx3_query(struct ibv_device_attr *attr)
{
	attr->page_size_cap = 0xfffffe00;
	attr->max_qp_wr = 16351;
	attr->max_srq_wr = 16383;
	attr->max_pd = 32764;
	attr->local_ca_ack_delay = 15;
	attr->device_cap_flags &= ~(unsigned int)IBV_DEVICE_RAW_IP_CSUM;
	attr->device_cap_flags |= IBV_DEVICE_UD_AV_PORT_ENFORCE;
}

void rocemu_device_query(const struct rocemu_device *dev, struct ibv_device_attr *attr)
{
	const struct rocemu_model_ids *ids = rocemu_device_ids(dev);

	memset(attr, 0, sizeof(*attr));
	snprintf(attr->fw_ver, sizeof(attr->fw_ver), "%s", ids->fw_ver);
	attr->node_guid = dev->node_guid;
	attr->sys_image_guid = dev->node_guid;
	attr->max_mr_size = ~0ULL;
	attr->page_size_cap = 0xfffffffffffff000ULL;
	attr->vendor_id = ROCEMU_VENDOR_ID;
	attr->vendor_part_id = ids->part_id;
	attr->hw_ver = 0;
	attr->max_qp = ROCEMU_MAX_QP;
	attr->max_qp_wr = ROCEMU_MAX_QP_WR;
	attr->device_cap_flags = IBV_DEVICE_BAD_PKEY_CNTR | IBV_DEVICE_BAD_QKEY_CNTR |
				 IBV_DEVICE_CHANGE_PHY_PORT | IBV_DEVICE_PORT_ACTIVE_EVENT |
				 IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_RC_RNR_NAK_GEN |
				 IBV_DEVICE_SHUTDOWN_PORT | IBV_DEVICE_RESIZE_MAX_WR |
				 IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B |
				 IBV_DEVICE_MEM_MGT_EXTENSIONS |
				 IBV_DEVICE_UD_IP_CSUM | IBV_DEVICE_RC_IP_CSUM | IBV_DEVICE_XRC |
				 IBV_DEVICE_RAW_IP_CSUM;
	attr->max_sge = ROCEMU_MAX_SGE;
	attr->max_sge_rd = ROCEMU_MAX_SGE;
	attr->max_srq = ROCEMU_MAX_SRQ;
	attr->max_srq_wr = ROCEMU_MAX_SRQ_WR;
	attr->max_srq_sge = ROCEMU_MAX_SRQ_SGE;
	attr->max_cq = ROCEMU_MAX_CQ;
	attr->max_cqe = ROCEMU_MAX_CQE;
	attr->max_mr = ROCEMU_MAX_MR;
	attr->max_mw = ROCEMU_MAX_MW;
	attr->max_pd = ROCEMU_MAX_PD;
	attr->max_qp_rd_atom = ROCEMU_MAX_RD_ATOM;
	attr->max_qp_init_rd_atom = ROCEMU_MAX_RD_ATOM;
	attr->max_res_rd_atom = ROCEMU_MAX_RD_ATOM * ROCEMU_MAX_QP;
	attr->atomic_cap = IBV_ATOMIC_HCA;
	attr->max_mcast_grp = ROCEMU_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = ROCEMU_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = ROCEMU_MAX_MCAST_GRP * ROCEMU_MAX_MCAST_QP_ATTACH;
	attr->max_ah = INT32_MAX;	/* userspace objects, as on mlx5: no device limit */
	attr->max_pkeys = 128;
	attr->local_ca_ack_delay = 16;
	attr->phys_port_cnt = 1;
	if (dev->model == ROCEMU_MODEL_CX3)
		cx3_query(attr);
}

void rocemu_port_query(const struct rocemu_device *dev, struct ibv_port_attr *attr)
{
	bool up = dev->port_state == IBV_PORT_ACTIVE;

	memset(attr, 0, sizeof(*attr));
	attr->state = dev->port_state;
	attr->max_mtu = IBV_MTU_4096;
	attr->active_mtu = dev->active_mtu;
	attr->gid_tbl_len = ROCEMU_GID_TBL_LEN;
	attr->port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	attr->max_msg_sz = ROCEMU_MAX_MSG_SZ;
	attr->pkey_tbl_len = 1;
	attr->max_vl_num = 4;
	attr->active_width = ROCEMU_WIDTH_4X;
	attr->active_speed = ROCEMU_SPEED_25G;
	attr->phys_state = up ? ROCEMU_PHYS_LINK_UP : ROCEMU_PHYS_DISABLED;
	attr->link_layer = IBV_LINK_LAYER_ETHERNET;
}

void rocemu_device_info(const struct rocemu_device *dev, struct rocemu_dev_info *info)
{
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "%s", dev->name);
	info->index = dev->index;
	info->ipv4 = dev->ipv4;
	info->netdev_mtu = dev->netdev_mtu;
	info->active_mtu = dev->active_mtu;
	info->port_state = dev->port_state;
	info->model = dev->model;
	info->node_guid = dev->node_guid;
	memcpy(info->mac, dev->mac, sizeof(info->mac));
}

struct rocemu_mcast_group *rocemu_device_mcast_group(struct rocemu_device *dev, uint32_t addr)
{
	for (unsigned int i = 0; i < ROCEMU_MAX_MCAST_GRP; i++)
		if (dev->mcast[i].addr == addr)
			return &dev->mcast[i];
	return NULL;
}
