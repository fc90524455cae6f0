/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What a RAW_PACKET QP adds to a create: TSO header room, the Ethernet
 * create flags, and the RSS QP (an indirection table and a Toeplitz hash,
 * no queue of its own), checked as libmlx5 and the kernel's mlx5_ib
 * check them; then, at the modify that sets its port, the checksum and
 * TSO offloads mlx5 caches for posting and polling; and the device
 * caps they answer to. The daemon checks CAP_NET_RAW (EPERM) and the table.
 */
#include "lib/shim.h"

#include <string.h>

/* Create flags only a RAW_PACKET QP takes (mlx5_ib: EOPNOTSUPP for another type). */
#define RAW_CREATE_FLAGS ((uint32_t)(IBV_QP_CREATE_SCATTER_FCS | IBV_QP_CREATE_CVLAN_STRIPPING | \
				     IBV_QP_CREATE_PCI_WRITE_END_PADDING))
/* The hash fields a ConnectX-5 offers (mlx5_ib's rss_caps, no IPsec). */
#define RSS_HASH_FIELDS ((uint64_t)(IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 |        \
				    IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6 |        \
				    IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP | \
				    IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP | \
				    IBV_RX_HASH_INNER))
/* A ConnectX-5's table and WQ limits, as mlx5_ib reports them (1 << log_max_rqt, log_max_rq). */
#define RSS_MAX_IND_TABLES (1u << 16)
#define MAX_WQ_TYPE_RQ (1u << 23)
#define RSS_IPV4 ((uint64_t)(IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4))
#define RSS_IPV6 ((uint64_t)(IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6))
#define RSS_TCP ((uint64_t)(IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP))
#define RSS_UDP ((uint64_t)(IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP))

bool rocemu_qp_is_rss(const struct ibv_qp_init_attr_ex *attr)
{
	return attr->comp_mask & (IBV_QP_INIT_ATTR_RX_HASH | IBV_QP_INIT_ATTR_IND_TABLE);
}

/* mlx5_ib's create_rss_raw_qp_tir: Toeplitz with a 40-byte key over one L3 and one L4. */
static int rss_check(struct ibv_context *context, const struct ibv_qp_init_attr_ex *attr)
{
	const struct ibv_rx_hash_conf *hash = &attr->rx_hash_conf;

	if (attr->qp_type != IBV_QPT_RAW_PACKET || !(attr->comp_mask & IBV_QP_INIT_ATTR_RX_HASH) ||
	    !(attr->comp_mask & IBV_QP_INIT_ATTR_IND_TABLE) || !attr->rwq_ind_tbl ||
	    attr->rwq_ind_tbl->context != context)
		return EINVAL;
	/* libmlx5 and ibv_cmd_create_qp_ex2: an RSS QP sends nothing */
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		return EINVAL;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags)
		return EINVAL;
	if (hash->rx_hash_key_len > ROCEMU_RSS_KEY_MAX)
		return EINVAL;	/* libmlx5, before the kernel hears of it */
	if (hash->rx_hash_function != IBV_RX_HASH_FUNC_TOEPLITZ)
		return EOPNOTSUPP;
	if (hash->rx_hash_key_len != ROCEMU_RSS_KEY_MAX || !hash->rx_hash_key)
		return EINVAL;
	if (hash->rx_hash_fields_mask & ~RSS_HASH_FIELDS)
		return EOPNOTSUPP;
	if (((hash->rx_hash_fields_mask & RSS_IPV4) && (hash->rx_hash_fields_mask & RSS_IPV6)) ||
	    ((hash->rx_hash_fields_mask & RSS_TCP) && (hash->rx_hash_fields_mask & RSS_UDP)))
		return EINVAL;
	return 0;
}

int rocemu_qp_raw_check(struct ibv_context *context, const struct ibv_qp_init_attr_ex *attr)
{
	if (rocemu_qp_is_rss(attr))
		return rss_check(context, attr);
	/* libmlx5's create_qp: TSO headers only on a RAW_PACKET QP */
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_MAX_TSO_HEADER) && attr->qp_type != IBV_QPT_RAW_PACKET)
		return EINVAL;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    (attr->create_flags & RAW_CREATE_FLAGS) && attr->qp_type != IBV_QPT_RAW_PACKET)
		return EOPNOTSUPP;
	return 0;
}

void rocemu_qp_raw_req(struct rocemu_create_qp_req *req, const struct ibv_qp_init_attr_ex *attr)
{
	const struct ibv_rx_hash_conf *hash = &attr->rx_hash_conf;

	req->max_tso_header = attr->comp_mask & IBV_QP_INIT_ATTR_MAX_TSO_HEADER ?
			      attr->max_tso_header : 0;
	req->rwq_ind_tbl = ROCEMU_NO_HANDLE;
	if (!rocemu_qp_is_rss(attr))
		return;
	req->rwq_ind_tbl = (uint32_t)attr->rwq_ind_tbl->ind_tbl_handle;
	req->rx_hash_fields_mask = hash->rx_hash_fields_mask;
	req->rx_hash_function = hash->rx_hash_function;
	req->rx_hash_key_len = hash->rx_hash_key_len;
	memcpy(req->rx_hash_key, hash->rx_hash_key, hash->rx_hash_key_len);
}

/*
 * mlx5_modify_qp with IBV_QP_PORT on a RAW_PACKET QP of an Ethernet port:
 * checksums as the device reports IBV_DEVICE_RAW_IP_CSUM, TSO up to its
 * tso_caps.max_tso; before it, IBV_SEND_IP_CSUM and TSO data are EINVAL.
 */
void rocemu_qp_raw_port_set(struct rocemu_qp *qp)
{
	if (qp->type != IBV_QPT_RAW_PACKET)
		return;
	qp->raw_csum = true;
	qp->max_tso = ROCEMU_TSO_MAX;
}

void rocemu_raw_caps(struct ibv_device_attr_ex *attr)
{
	attr->tso_caps.max_tso = ROCEMU_TSO_MAX;
	attr->tso_caps.supported_qpts = 1u << IBV_QPT_RAW_PACKET;
	attr->rss_caps.supported_qpts = 1u << IBV_QPT_RAW_PACKET;
	attr->rss_caps.max_rwq_indirection_tables = RSS_MAX_IND_TABLES;
	attr->rss_caps.max_rwq_indirection_table_size = 1u << ROCEMU_RWQ_IND_TABLE_MAX_LOG;
	attr->rss_caps.rx_hash_fields_mask = RSS_HASH_FIELDS;
	attr->rss_caps.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	attr->max_wq_type_rq = MAX_WQ_TYPE_RQ;
	attr->raw_packet_caps = IBV_RAW_PACKET_CAP_CVLAN_STRIPPING |
				IBV_RAW_PACKET_CAP_SCATTER_FCS | IBV_RAW_PACKET_CAP_IP_CSUM;
}
