/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Address handles, queries and events on an emulated device
 * (lib/verbs/ah.c, query.c, events.c): the AV mlx5_create_ah writes for
 * a RoCE port and what it refuses, ibv_init_ah_from_wc as libibverbs
 * reads an IPv4 GRH; the daemon's device and port attributes as each
 * query form copies them (the extended and compat struct sizes), the GID
 * and P_Key tables; completion channels and async events read from
 * their pipes as libibverbs reads uverbs' records, the daemon's hang-up
 * reported once as IBV_EVENT_DEVICE_FATAL. The daemon is daemon_conn.h's
 * recording stand-in.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/ip.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/shim.h"
#include "rocemu/clock.h"
#include "tests/unit/verbs/daemon_conn.h"

#define OUR_IPV4 "10.0.0.2"
#define PEER_IPV4 "10.0.0.1"
#define CHANNEL_HANDLE 4

static struct rocemu_device device;
static struct ibv_device ibdev;
static struct rocemu_context rctx;
static struct ibv_context *const ctx = &rctx.vctx.context;
static struct rocemu_pd pd;
static int lost_calls;

struct rocemu_device *rocemu_device_of(struct ibv_device *dev)
{
	return dev == &ibdev ? &device : NULL;
}

/* Not reached: every object here is the emulated device's. */
void *rocemu_real(enum rocemu_real_fn fn)
{
	(void)fn;
	abort();
}

/* lib/conn.c's record that the daemon is gone: counted. */
void rocemu_conn_set_lost(struct rocemu_conn *conn)
{
	ck_assert_ptr_eq(conn, &rctx.conn);
	lost_calls++;
}

static void ctx_open(void)
{
	memset(&rctx, 0, sizeof(rctx));
	ctx->device = &ibdev;
	ctx->async_fd = -1;
	pthread_mutex_init(&ctx->mutex, NULL);
	ck_assert_int_eq(inet_pton(AF_INET, OUR_IPV4, &rctx.info.ipv4), 1);
	pd = (struct rocemu_pd){ .ibpd = { .context = ctx } };
	lost_calls = 0;
	conn_reset();
}

/* A RoCE v2 AH's attributes: global, through GID 0 of port 1, to an IPv4-mapped GID. */
static struct ibv_ah_attr roce_attr(void)
{
	struct ibv_ah_attr attr = {
		.is_global = 1, .port_num = 1, .sl = 3, .static_rate = IBV_RATE_40_GBPS,
		.grh = { .hop_limit = 64, .traffic_class = 0x28, .sgid_index = 0 },
	};

	attr.grh.dgid.raw[10] = attr.grh.dgid.raw[11] = 0xff;
	ck_assert_int_eq(inet_pton(AF_INET, PEER_IPV4, &attr.grh.dgid.raw[12]), 1);
	return attr;
}

/* mlx5_create_ah on RoCE: not global EINVAL; no port but 1, GID but 0, GID but IPv4's: EINVAL. */
START_TEST(test_ah_checks)
{
	struct ibv_ah_attr attr;

#define ASSERT_AH_REFUSED(change)                              \
	do {                                                   \
		attr = roce_attr();                            \
		change;                                        \
		errno = 0;                                     \
		ck_assert_ptr_null(ibv_create_ah(&pd.ibpd, &attr)); \
		ck_assert_int_eq(errno, EINVAL);               \
	} while (0)
	ASSERT_AH_REFUSED(attr.is_global = 0);
	ASSERT_AH_REFUSED(attr.port_num = 2);
	ASSERT_AH_REFUSED(attr.port_num = 0);
	ASSERT_AH_REFUSED(attr.grh.sgid_index = 1);
	ASSERT_AH_REFUSED(attr.grh.dgid.raw[10] = 0);
#undef ASSERT_AH_REFUSED
	ck_assert_int_eq(conn_calls_all(), 0);
}
END_TEST

/* The AV as mlx5_create_ah writes it for Ethernet: rate code, SL, no GRH bit, GID, sport. */
START_TEST(test_ah_av)
{
	struct ibv_ah_attr attr = roce_attr();
	struct ibv_ah *ah = ibv_create_ah(&pd.ibpd, &attr);
	struct mlx5_wqe_av *av;
	uint16_t sport;

	ck_assert_ptr_nonnull(ah);
	av = &to_rah(ah)->av;
	ck_assert_ptr_eq(ah->pd, &pd.ibpd);
	ck_assert_ptr_eq(ah->context, ctx);
	/* IBV_RATE_40_GBPS is mlx5's rate code 12. */
	ck_assert_uint_eq(av->stat_rate_sl, 12 << 4 | 3 << 1);
	ck_assert_uint_eq(av->tclass, 0x28);
	ck_assert_uint_eq(av->hop_limit, 64);
	ck_assert_uint_eq(be32toh(av->grh_gid_fl), 0);	/* GID 0, no flow label, no GRH bit */
	ck_assert_mem_eq(av->rgid, attr.grh.dgid.raw, 16);
	sport = be16toh(av->rlid);
	ck_assert_uint_ge(sport, 0xc000);
	ck_assert_int_eq(ibv_destroy_ah(ah), 0);
	/* A flow label gives the port (ibv_flow_label_to_udp_sport); its 20 bits only; SL 3 bits. */
	attr.grh.flow_label = 0x1abcde;
	attr.sl = 0xf;
	attr.static_rate = (enum ibv_rate)99;	/* past the table: unlimited */
	ah = ibv_create_ah(&pd.ibpd, &attr);
	ck_assert_ptr_nonnull(ah);
	av = &to_rah(ah)->av;
	ck_assert_uint_eq(be32toh(av->grh_gid_fl), 0xabcde);
	ck_assert_uint_eq(be16toh(av->rlid), ibv_flow_label_to_udp_sport(0xabcde));
	ck_assert_uint_eq(av->stat_rate_sl, 7 << 1);
	ck_assert_int_eq(ibv_destroy_ah(ah), 0);
}
END_TEST

/* A completion's GRH buffer: 20 bytes whose first word holds the flow label, then IPv4's header. */
static void grh_fill(struct ibv_grh *grh, const char *saddr, const char *daddr)
{
	struct iphdr ip = { .version = 4, .ihl = 5, .tos = 0x10, .ttl = 33,
			    .protocol = IPPROTO_UDP };

	memset(grh, 0, sizeof(*grh));
	ck_assert_int_eq(inet_pton(AF_INET, saddr, &ip.saddr), 1);
	ck_assert_int_eq(inet_pton(AF_INET, daddr, &ip.daddr), 1);
	memcpy((uint8_t *)grh + 20, &ip, sizeof(ip));
}

/* ibv_init_ah_from_wc as libibverbs for RoCE v2 over IPv4; ibv_create_ah_from_wc on top. */
START_TEST(test_ah_from_wc)
{
	struct ibv_wc wc = { .wc_flags = IBV_WC_GRH, .sl = 0xa, .slid = 0 };
	struct ibv_grh grh;
	struct ibv_ah_attr attr;
	struct ibv_ah *ah;
	uint8_t peer[16] = { [10] = 0xff, [11] = 0xff };

	ck_assert_int_eq(inet_pton(AF_INET, PEER_IPV4, &peer[12]), 1);
	grh_fill(&grh, PEER_IPV4, OUR_IPV4);
	ck_assert_int_eq(ibv_init_ah_from_wc(ctx, 1, &wc, &grh, &attr), 0);
	ck_assert_int_eq(attr.is_global, 1);
	ck_assert_uint_eq(attr.port_num, 1);
	ck_assert_uint_eq(attr.sl, 0xa);
	ck_assert_mem_eq(attr.grh.dgid.raw, peer, 16);
	ck_assert_uint_eq(attr.grh.sgid_index, 0);
	ck_assert_uint_eq(attr.grh.hop_limit, 33);	/* the packet's TTL */
	ck_assert_uint_eq(attr.grh.traffic_class, 0x10);
	ck_assert_uint_eq(attr.grh.flow_label, 0);
	ah = ibv_create_ah_from_wc(&pd.ibpd, &wc, &grh, 1);
	ck_assert_ptr_nonnull(ah);
	ck_assert_mem_eq(to_rah(ah)->av.rgid, peer, 16);
	ck_assert_int_eq(ibv_destroy_ah(ah), 0);
	/* Sent to an address that is none of our GIDs, or on port 2: ibv_find_gid_index's -1, EINVAL. */
	grh_fill(&grh, PEER_IPV4, "10.0.0.9");
	errno = 0;
	ck_assert_int_eq(ibv_init_ah_from_wc(ctx, 1, &wc, &grh, &attr), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_ptr_null(ibv_create_ah_from_wc(&pd.ibpd, &wc, &grh, 1));
	ck_assert_int_eq(errno, EINVAL);
	grh_fill(&grh, PEER_IPV4, OUR_IPV4);
	errno = 0;
	ck_assert_int_eq(ibv_init_ah_from_wc(ctx, 2, &wc, &grh, &attr), -1);
	ck_assert_int_eq(errno, EINVAL);
	/* No GRH: libibverbs gives attributes that are not global, which RoCE's create refuses. */
	wc.wc_flags = 0;
	ck_assert_int_eq(ibv_init_ah_from_wc(ctx, 1, &wc, NULL, &attr), 0);
	ck_assert_int_eq(attr.is_global, 0);
	ck_assert_uint_eq(attr.sl, 0xa);
	errno = 0;
	ck_assert_ptr_null(ibv_create_ah_from_wc(&pd.ibpd, &wc, NULL, 1));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

static struct rocemu_query_device_resp device_answer(void)
{
	return (struct rocemu_query_device_resp){
		.attr = { .max_qp = 1000, .device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN,
			  .phys_port_cnt = 1, .fw_ver = "1.2.3" },
	};
}

/* ibv_query_device: the daemon's attributes as they are; its refusal's errno. */
START_TEST(test_query_device)
{
	struct rocemu_query_device_resp resp = device_answer();
	struct ibv_device_attr attr;

	conn_answer(ROCEMU_OP_QUERY_DEVICE, 0, &resp, sizeof(resp), 0);
	ck_assert_int_eq(ibv_query_device(ctx, &attr), 0);
	ck_assert_int_eq(attr.max_qp, 1000);
	ck_assert_str_eq(attr.fw_ver, "1.2.3");
	conn_answer(ROCEMU_OP_QUERY_DEVICE, -EIO, NULL, 0, 0);
	ck_assert_int_eq(ibv_query_device(ctx, &attr), EIO);
}
END_TEST

/* query_device_ex: a ConnectX-5's extended fields; an older, shorter struct gets its part only. */
START_TEST(test_query_device_ex)
{
	struct rocemu_query_device_resp resp = device_answer();
	struct ibv_query_device_ex_input input = { .comp_mask = 1 };
	struct ibv_device_attr_ex attr;
	size_t short_size = offsetof(struct ibv_device_attr_ex, hca_core_clock);

	conn_answer(ROCEMU_OP_QUERY_DEVICE, 0, &resp, sizeof(resp), 0);
	ck_assert_int_eq(rocemu_query_device_ex_op(ctx, &input, &attr, sizeof(attr)), EINVAL);
	ck_assert_int_eq(rocemu_query_device_ex_op(ctx, NULL, &attr, sizeof(attr.orig_attr) - 1),
			 EINVAL);
	ck_assert_int_eq(conn_calls_all(), 0);
	ck_assert_int_eq(rocemu_query_device_ex_op(ctx, NULL, &attr, sizeof(attr)), 0);
	ck_assert_int_eq(attr.orig_attr.max_qp, 1000);
	ck_assert_uint_eq(attr.device_cap_flags_ex, IBV_DEVICE_RC_RNR_NAK_GEN |
			  IBV_DEVICE_RAW_SCATTER_FCS | IBV_DEVICE_PCI_WRITE_END_PADDING);
	ck_assert_uint_eq(attr.completion_timestamp_mask, ROCEMU_CLOCK_MASK);
	ck_assert_uint_eq(attr.hca_core_clock, ROCEMU_CLOCK_KHZ);
	ck_assert_uint_eq(attr.max_dm_size, ROCEMU_DM_MAX_SIZE);
	ck_assert_uint_eq(attr.phys_port_cnt_ex, 1);
	ck_assert_uint_ne(attr.odp_caps.general_caps, 0);
	/* A ConnectX-5 on Ethernet: TSO and RSS for RAW_PACKET QPs, its raw packet offloads */
	ck_assert_uint_eq(attr.tso_caps.max_tso, 262144);
	ck_assert_uint_eq(attr.tso_caps.supported_qpts, 1u << IBV_QPT_RAW_PACKET);
	ck_assert_uint_eq(attr.rss_caps.supported_qpts, 1u << IBV_QPT_RAW_PACKET);
	ck_assert_uint_eq(attr.rss_caps.max_rwq_indirection_tables, 65536);
	ck_assert_uint_eq(attr.rss_caps.max_rwq_indirection_table_size,
			  1u << ROCEMU_RWQ_IND_TABLE_MAX_LOG);
	ck_assert_uint_eq(attr.rss_caps.rx_hash_fields_mask, 0x800000ff);
	ck_assert_uint_eq(attr.rss_caps.rx_hash_function, IBV_RX_HASH_FUNC_TOEPLITZ);
	ck_assert_uint_eq(attr.max_wq_type_rq, 1u << 23);
	ck_assert_uint_eq(attr.raw_packet_caps, IBV_RAW_PACKET_CAP_CVLAN_STRIPPING |
			  IBV_RAW_PACKET_CAP_SCATTER_FCS | IBV_RAW_PACKET_CAP_IP_CSUM);
	memset(&attr, 0xee, sizeof(attr));
	ck_assert_int_eq(rocemu_query_device_ex_op(ctx, NULL, &attr, short_size), 0);
	ck_assert_uint_eq(attr.completion_timestamp_mask, ROCEMU_CLOCK_MASK);
	ck_assert_uint_eq(attr.hca_core_clock, 0xeeeeeeeeeeeeeeeeull);	/* past its size */
	conn_answer(ROCEMU_OP_QUERY_DEVICE, -EPIPE, NULL, 0, 0);
	ck_assert_int_eq(rocemu_query_device_ex_op(ctx, NULL, &attr, sizeof(attr)), EPIPE);
}
END_TEST

/* Port queries: the port asked; the exported compat struct ends before port_cap_flags2. */
START_TEST(test_query_port)
{
	struct rocemu_query_port_resp resp = {
		.attr = { .state = IBV_PORT_ACTIVE, .active_mtu = IBV_MTU_1024,
			  .link_layer = IBV_LINK_LAYER_ETHERNET, .port_cap_flags2 = 0x1234,
			  .phys_state = 5 },
	};
	struct ibv_port_attr attr;

	conn_answer(ROCEMU_OP_QUERY_PORT, 0, &resp, sizeof(resp), 0);
	memset(&attr, 0xee, sizeof(attr));
	ck_assert_int_eq(ibv_query_port(ctx, 1, (struct _compat_ibv_port_attr *)&attr), 0);
	ck_assert_uint_eq(((const struct rocemu_query_port_req *)conn_last(ROCEMU_OP_QUERY_PORT))
				  ->port_num, 1);
	ck_assert_int_eq(attr.state, IBV_PORT_ACTIVE);
	ck_assert_int_eq(attr.link_layer, IBV_LINK_LAYER_ETHERNET);
	ck_assert_uint_eq(attr.port_cap_flags2, 0xeeee);
	ck_assert_int_eq(rocemu_query_port_op(ctx, 1, &attr, sizeof(attr)), 0);
	ck_assert_uint_eq(attr.port_cap_flags2, 0x1234);
	ck_assert_uint_eq(attr.phys_state, 5);
	conn_answer(ROCEMU_OP_QUERY_PORT, -EINVAL, NULL, 0, 0);
	ck_assert_int_eq(rocemu_query_port_op(ctx, 2, &attr, sizeof(attr)), EINVAL);
	ck_assert_uint_eq(((const struct rocemu_query_port_req *)conn_last(ROCEMU_OP_QUERY_PORT))
				  ->port_num, 2);
}
END_TEST

/* The GID table: entry 0 is ::ffff:a.b.c.d, RoCE v2; the rest empty; past 256 or port 1, EINVAL. */
START_TEST(test_gid)
{
	uint8_t ours[16] = { [10] = 0xff, [11] = 0xff }, zero[16] = { 0 };
	struct ibv_gid_entry entry, table[2];
	union ibv_gid gid;
	int type = -1;

	ck_assert_int_eq(inet_pton(AF_INET, OUR_IPV4, &ours[12]), 1);
	ck_assert_int_eq(ibv_query_gid(ctx, 1, 0, &gid), 0);
	ck_assert_mem_eq(gid.raw, ours, 16);
	ck_assert_int_eq(ibv_query_gid(ctx, 1, 255, &gid), 0);	/* empty: the zero GID */
	ck_assert_mem_eq(gid.raw, zero, 16);
	errno = 0;
	ck_assert_int_eq(ibv_query_gid(ctx, 1, 256, &gid), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(ibv_query_gid(ctx, 2, 0, &gid), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(ibv_query_gid(ctx, 1, -1, &gid), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(ibv_query_gid_type(ctx, 1, 0, &type), 0);
	ck_assert_int_eq(type, ROCEMU_GID_TYPE_SYSFS_ROCE_V2);
	ck_assert_int_eq(ibv_query_gid_type(ctx, 1, 1, &type), 0);
	ck_assert_int_eq(type, ROCEMU_GID_TYPE_SYSFS_ROCE_V1);
	ck_assert_int_eq(ibv_query_gid_type(ctx, 1, 256, &type), -1);
	/* ibv_query_gid_ex: an empty entry ENODATA; flags or a short entry EINVAL. */
	ck_assert_int_eq(ibv_query_gid_ex(ctx, 1, 0, &entry, 0), 0);
	ck_assert_mem_eq(entry.gid.raw, ours, 16);
	ck_assert_uint_eq(entry.gid_index, 0);
	ck_assert_uint_eq(entry.port_num, 1);
	ck_assert_uint_eq(entry.gid_type, IBV_GID_TYPE_ROCE_V2);
	ck_assert_uint_eq(entry.ndev_ifindex, 0);
	ck_assert_int_eq(ibv_query_gid_ex(ctx, 1, 1, &entry, 0), ENODATA);
	ck_assert_int_eq(ibv_query_gid_ex(ctx, 1, 0, &entry, 1), EINVAL);
	ck_assert_int_eq(_ibv_query_gid_ex(ctx, 1, 0, &entry, 0, sizeof(entry) - 1), EINVAL);
	ck_assert_int_eq(ibv_query_gid_ex(ctx, 2, 0, &entry, 0), EINVAL);
	/* The table: one valid entry. */
	ck_assert_int_eq(ibv_query_gid_table(ctx, table, 2, 0), 1);
	ck_assert_mem_eq(table[0].gid.raw, ours, 16);
	ck_assert_int_eq(ibv_query_gid_table(ctx, table, 0, 0), -EINVAL);
	ck_assert_int_eq(ibv_query_gid_table(ctx, table, 2, 1), -EINVAL);
	ck_assert_int_eq(conn_calls_all(), 0);
}
END_TEST

/* The P_Key table: the default P_Key at index 0 of port 1, nothing else. */
START_TEST(test_pkey)
{
	__be16 pkey = 0;

	ck_assert_int_eq(ibv_query_pkey(ctx, 1, 0, &pkey), 0);
	ck_assert_uint_eq(ntohs(pkey), 0xffff);
	errno = 0;
	ck_assert_int_eq(ibv_query_pkey(ctx, 1, 1, &pkey), -1);
	ck_assert_int_eq(errno, EINVAL);
	errno = 0;
	ck_assert_int_eq(ibv_query_pkey(ctx, 2, 0, &pkey), -1);
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* A completion channel: the daemon's pipe; EBUSY while a CQ uses it; destroyed by handle. */
START_TEST(test_comp_channel)
{
	struct rocemu_create_comp_channel_resp resp = { .handle = CHANNEL_HANDLE };
	struct ibv_comp_channel *ch;

	conn_answer(ROCEMU_OP_CREATE_COMP_CHANNEL, 0, &resp, sizeof(resp), 0);
	ch = ibv_create_comp_channel(ctx);
	ck_assert_ptr_nonnull(ch);
	ck_assert_ptr_eq(ch->context, ctx);
	ck_assert_int_ge(ch->fd, 0);
	ck_assert_int_eq(ch->refcnt, 0);
	ch->refcnt = 1;		/* a CQ on it */
	ck_assert_int_eq(ibv_destroy_comp_channel(ch), EBUSY);
	ck_assert_int_eq(conn_calls(ROCEMU_OP_DESTROY_COMP_CHANNEL), 0);
	ch->refcnt = 0;
	conn_answer(ROCEMU_OP_DESTROY_COMP_CHANNEL, -EIO, NULL, 0, 0);
	ck_assert_int_eq(ibv_destroy_comp_channel(ch), EIO);
	conn_answer(ROCEMU_OP_DESTROY_COMP_CHANNEL, 0, NULL, 0, 0);
	ck_assert_int_eq(ibv_destroy_comp_channel(ch), 0);
	ck_assert_uint_eq(((const struct rocemu_handle_req *)
			   conn_last(ROCEMU_OP_DESTROY_COMP_CHANNEL))->handle, CHANNEL_HANDLE);
	conn_answer(ROCEMU_OP_CREATE_COMP_CHANNEL, -EMFILE, NULL, 0, 0);
	errno = 0;
	ck_assert_ptr_null(ibv_create_comp_channel(ctx));
	ck_assert_int_eq(errno, EMFILE);
}
END_TEST

/* ibv_get_cq_event: an 8-byte record naming the CQ; the next arm's sn moves on (mlx5 cq_event). */
START_TEST(test_get_cq_event)
{
	struct rocemu_cq cq;
	struct rocemu_channel ch = { .ibch = { .context = ctx } };
	struct ibv_cq *got = NULL;
	void *got_context = NULL;
	int fds[2];
	uint64_t rec;

	memset(&cq, 0, sizeof(cq));
	cq.ibcq.context = ctx;
	cq.ibcq.cq_context = &pd;
	cq.arm_sn = 1;
	ck_assert_int_eq(pipe2(fds, O_NONBLOCK), 0);
	ch.ibch.fd = fds[0];
	rec = (uintptr_t)ibv_cq_ex_to_cq(&cq.ibcq);
	ck_assert_int_eq(write(fds[1], &rec, sizeof(rec)), sizeof(rec));
	ck_assert_int_eq(ibv_get_cq_event(&ch.ibch, &got, &got_context), 0);
	ck_assert_ptr_eq(got, ibv_cq_ex_to_cq(&cq.ibcq));
	ck_assert_ptr_eq(got_context, &pd);
	ck_assert_uint_eq(cq.arm_sn, 2);
	/* None pending on a non-blocking channel: EAGAIN, as uverbs' file. */
	errno = 0;
	ck_assert_int_eq(ibv_get_cq_event(&ch.ibch, &got, &got_context), -1);
	ck_assert_int_eq(errno, EAGAIN);
	/* A torn record is EPROTO; the daemon's end closed is EIO. */
	ck_assert_int_eq(write(fds[1], &rec, 4), 4);
	errno = 0;
	ck_assert_int_eq(ibv_get_cq_event(&ch.ibch, &got, &got_context), -1);
	ck_assert_int_eq(errno, EPROTO);
	close(fds[1]);
	errno = 0;
	ck_assert_int_eq(ibv_get_cq_event(&ch.ibch, &got, &got_context), -1);
	ck_assert_int_eq(errno, EIO);
	ck_assert_uint_eq(cq.arm_sn, 2);
	close(fds[0]);
}
END_TEST

static void async_put(int fd, uint32_t type, uint64_t element)
{
	struct rocemu_async_record rec = { .element = element, .event_type = type };

	ck_assert_int_eq(write(fd, &rec, sizeof(rec)), sizeof(rec));
}

/* ibv_get_async_event: each type's element as libibverbs decodes it; a hang-up DEVICE_FATAL once. */
START_TEST(test_async_events)
{
	struct ibv_async_event ev;
	struct ibv_qp qp;
	struct ibv_cq cq;
	struct ibv_srq srq;
	int fds[2];

	ck_assert_int_eq(pipe2(fds, O_NONBLOCK), 0);
	ctx->async_fd = fds[0];
	async_put(fds[1], IBV_EVENT_QP_FATAL, (uintptr_t)&qp);
	async_put(fds[1], IBV_EVENT_CQ_ERR, (uintptr_t)&cq);
	async_put(fds[1], IBV_EVENT_SRQ_LIMIT_REACHED, (uintptr_t)&srq);
	async_put(fds[1], IBV_EVENT_PORT_ACTIVE, 1);
	async_put(fds[1], IBV_EVENT_COMM_EST, (uintptr_t)&qp);
	async_put(fds[1], 200, 0x1234);
	ck_assert_int_eq(ibv_get_async_event(ctx, &ev), 0);
	ck_assert_int_eq(ev.event_type, IBV_EVENT_QP_FATAL);
	ck_assert_ptr_eq(ev.element.qp, &qp);
	ck_assert_int_eq(ibv_get_async_event(ctx, &ev), 0);
	ck_assert_int_eq(ev.event_type, IBV_EVENT_CQ_ERR);
	ck_assert_ptr_eq(ev.element.cq, &cq);
	ck_assert_int_eq(ibv_get_async_event(ctx, &ev), 0);
	ck_assert_ptr_eq(ev.element.srq, &srq);
	ck_assert_int_eq(ibv_get_async_event(ctx, &ev), 0);
	ck_assert_int_eq(ev.event_type, IBV_EVENT_PORT_ACTIVE);
	ck_assert_int_eq(ev.element.port_num, 1);
	ck_assert_int_eq(ibv_get_async_event(ctx, &ev), 0);
	ck_assert_ptr_eq(ev.element.qp, &qp);
	/* A type libibverbs does not know: its number, no element. */
	ck_assert_int_eq(ibv_get_async_event(ctx, &ev), 0);
	ck_assert_int_eq(ev.event_type, 200);
	ck_assert_ptr_null(ev.element.qp);
	errno = 0;
	ck_assert_int_eq(ibv_get_async_event(ctx, &ev), -1);
	ck_assert_int_eq(errno, EAGAIN);
	ck_assert_int_eq(lost_calls, 0);
	/* The daemon's end closed: it is gone, as a dead HCA, said once. */
	close(fds[1]);
	ck_assert_int_eq(ibv_get_async_event(ctx, &ev), 0);
	ck_assert_int_eq(ev.event_type, IBV_EVENT_DEVICE_FATAL);
	ck_assert_ptr_null(ev.element.qp);
	ck_assert_int_eq(lost_calls, 1);
	errno = 0;
	ck_assert_int_eq(ibv_get_async_event(ctx, &ev), -1);
	ck_assert_int_eq(errno, EIO);
	close(fds[0]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ah_query_events");
	TCase *ah = tcase_create("ah"), *query = tcase_create("query"),
	      *events = tcase_create("events");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(ah, ctx_open, NULL);
	tcase_add_test(ah, test_ah_checks);
	tcase_add_test(ah, test_ah_av);
	tcase_add_test(ah, test_ah_from_wc);
	suite_add_tcase(s, ah);
	tcase_add_checked_fixture(query, ctx_open, NULL);
	tcase_add_test(query, test_query_device);
	tcase_add_test(query, test_query_device_ex);
	tcase_add_test(query, test_query_port);
	tcase_add_test(query, test_gid);
	tcase_add_test(query, test_pkey);
	suite_add_tcase(s, query);
	tcase_add_checked_fixture(events, ctx_open, NULL);
	tcase_add_test(events, test_comp_channel);
	tcase_add_test(events, test_get_cq_event);
	tcase_add_test(events, test_async_events);
	suite_add_tcase(s, events);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
