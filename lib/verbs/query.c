/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Device, port, GID and P_Key queries. Device and port attributes come
 * from the daemon; the GID table (GID 0 = ::ffff:a.b.c.d, RoCE v2) and
 * the P_Key table (0xffff) follow from the device's identity.
 */
#include "lib/shim.h"

#include <string.h>
#include <arpa/inet.h>

#include "rocemu/clock.h"
#include "rocemu/log.h"

#define ROCEMU_PORT_NUM 1
#define ROCEMU_GID_TBL_LEN 256
#define ROCEMU_DEFAULT_PKEY 0xffff

/* The compat struct of the exported ibv_query_port ends before port_cap_flags2. */
#define COMPAT_PORT_ATTR_LEN offsetof(struct ibv_port_attr, port_cap_flags2)

/* Copy len bytes of a full struct to an app struct of another size, zero the rest. */
static void copy_sized(void *dst, size_t dst_len, const void *src, size_t src_len)
{
	memcpy(dst, src, dst_len < src_len ? dst_len : src_len);
	if (dst_len > src_len)
		memset((char *)dst + src_len, 0, dst_len - src_len);
}

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *device_attr)
{
	struct rocemu_query_device_resp resp;
	int err;

	if (!rocemu_ctx_is_ours(context))
		return REAL(ibv_query_device)(context, device_attr);
	err = rocemu_conn_call(&to_rctx(context)->conn, ROCEMU_OP_QUERY_DEVICE, NULL,
			       &resp, NULL, 0);
	if (err)
		return rocemu_errno_value(err);
	*device_attr = resp.attr;
	return 0;
}

int rocemu_query_device_ex_op(struct ibv_context *context,
			      const struct ibv_query_device_ex_input *input,
			      struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex full;
	int err;

	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	memset(&full, 0, sizeof(full));
	err = ibv_query_device(context, &full.orig_attr);
	if (err)
		return err;
	full.device_cap_flags_ex = full.orig_attr.device_cap_flags;
	full.phys_port_cnt_ex = full.orig_attr.phys_port_cnt;
	/* A ConnectX-3 here offers the verbs of its transports alone: no raw offloads, ODP or DM. */
	if (to_rctx(context)->info.model == ROCEMU_MODEL_CX3) {
		copy_sized(attr, attr_size, &full, sizeof(full));
		return 0;
	}
	/* A ConnectX-5 on Ethernet; CQE timestamps in its core clock. */
	full.device_cap_flags_ex |= IBV_DEVICE_RAW_SCATTER_FCS | IBV_DEVICE_PCI_WRITE_END_PADDING;
	rocemu_raw_caps(&full);
	full.completion_timestamp_mask = ROCEMU_CLOCK_MASK;
	full.hca_core_clock = ROCEMU_CLOCK_KHZ;
	full.max_dm_size = ROCEMU_DM_MAX_SIZE;
	rocemu_odp_caps(&full);
	copy_sized(attr, attr_size, &full, sizeof(full));
	return 0;
}

static int port_query(struct ibv_context *context, uint8_t port_num,
		      struct ibv_port_attr *out)
{
	struct rocemu_query_port_req req = { .port_num = port_num };
	struct rocemu_query_port_resp resp;
	int err;

	err = rocemu_conn_call(&to_rctx(context)->conn, ROCEMU_OP_QUERY_PORT, &req, &resp,
			       NULL, 0);
	if (err)
		return rocemu_errno_value(err);
	*out = resp.attr;
	return 0;
}

int rocemu_query_port_op(struct ibv_context *context, uint8_t port_num,
			 struct ibv_port_attr *port_attr, size_t port_attr_len)
{
	struct ibv_port_attr full;
	int err;

	err = port_query(context, port_num, &full);
	if (err)
		return err;
	copy_sized(port_attr, port_attr_len, &full, sizeof(full));
	return 0;
}

int ibv_query_port(struct ibv_context *context, uint8_t port_num,
		   struct _compat_ibv_port_attr *port_attr)
{
	if (!rocemu_ctx_is_ours(context))
		return REAL(ibv_query_port)(context, port_num, port_attr);
	return rocemu_query_port_op(context, port_num, (struct ibv_port_attr *)port_attr,
				    COMPAT_PORT_ATTR_LEN);
}

/* The GID table entry; returns 0, ENODATA for an empty entry, EINVAL out of range. */
static int gid_entry(struct ibv_context *context, uint32_t port_num, uint32_t index,
		     struct ibv_gid_entry *entry)
{
	uint32_t ipv4 = to_rctx(context)->info.ipv4;

	if (port_num != ROCEMU_PORT_NUM || index >= ROCEMU_GID_TBL_LEN)
		return EINVAL;
	memset(entry, 0, sizeof(*entry));
	entry->gid_index = index;
	entry->port_num = port_num;
	if (index != 0)
		return ENODATA;
	/* IPv4-mapped IPv6 address (RFC 4291 2.5.5.2), as RoCE v2 GIDs are. */
	entry->gid.raw[10] = 0xff;
	entry->gid.raw[11] = 0xff;
	memcpy(&entry->gid.raw[12], &ipv4, sizeof(ipv4));
	entry->gid_type = IBV_GID_TYPE_ROCE_V2;
	entry->ndev_ifindex = 0;
	return 0;
}

int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
		  union ibv_gid *gid)
{
	struct ibv_gid_entry entry;
	int err;

	if (!rocemu_ctx_is_ours(context))
		return REAL(ibv_query_gid)(context, port_num, index, gid);
	err = index < 0 ? EINVAL : gid_entry(context, port_num, (uint32_t)index, &entry);
	if (err == EINVAL) {
		errno = EINVAL;
		return -1;
	}
	*gid = entry.gid;	/* an empty entry reads as the zero GID, as in sysfs */
	return 0;
}

int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, int *type)
{
	struct ibv_gid_entry entry;
	int err;

	if (!rocemu_ctx_is_ours(context))
		return REAL(ibv_query_gid_type)(context, port_num, index, type);
	err = gid_entry(context, port_num, index, &entry);
	if (err == EINVAL) {
		errno = EINVAL;
		return -1;
	}
	/* libibverbs reports an entry without a type as IB/RoCE v1. */
	*type = err ? ROCEMU_GID_TYPE_SYSFS_ROCE_V1 : ROCEMU_GID_TYPE_SYSFS_ROCE_V2;
	return 0;
}

int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
		      uint32_t gid_index, struct ibv_gid_entry *entry,
		      uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry full;
	int err;

	if (!rocemu_ctx_is_ours(context))
		return REAL(_ibv_query_gid_ex)(context, port_num, gid_index, entry, flags,
					       entry_size);
	if (flags || entry_size < sizeof(full))
		return EINVAL;
	err = gid_entry(context, port_num, gid_index, &full);
	if (err)
		return err;
	copy_sized(entry, entry_size, &full, sizeof(full));
	return 0;
}

ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries,
			     size_t max_entries, uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry full;

	if (!rocemu_ctx_is_ours(context))
		return REAL(_ibv_query_gid_table)(context, entries, max_entries, flags,
						  entry_size);
	if (flags || entry_size < sizeof(full))
		return -EINVAL;
	/* Only GID 0 of port 1 is valid. */
	if (max_entries < 1)
		return -EINVAL;
	gid_entry(context, ROCEMU_PORT_NUM, 0, &full);
	copy_sized(entries, entry_size, &full, sizeof(full));
	return 1;
}

int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index,
		   __be16 *pkey)
{
	if (!rocemu_ctx_is_ours(context))
		return REAL(ibv_query_pkey)(context, port_num, index, pkey);
	if (port_num != ROCEMU_PORT_NUM || index != 0) {
		errno = EINVAL;
		return -1;
	}
	*pkey = htons(ROCEMU_DEFAULT_PKEY);
	return 0;
}
