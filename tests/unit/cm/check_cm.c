/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The REQ and REP codec (emulator/cm/cm_msg.c): every field where IBTA
 * tables 106 and 110 put it, the transport service types, XRC as the
 * kernel's cm_format_req and cm_format_rep write it (what an initiator
 * leaves out of its REQ, a target's QPN in Local EECN and its SRQ bit),
 * the ECE vendor bytes between the REP's 24-bit fields, and the ACK
 * timeout and time arithmetic of the kernel's cm.c.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/cm/cm_mad.h"
#include "emulator/cm/cm_msg.h"
#include "net/roce/roce_hdr.h"

/* A REQ with every field set, none to a value another field has. */
static struct cm_req full_req(enum cm_transport transport)
{
	struct cm_req req;

	/* Field by field on zeros: the padding compares equal with what cm_req_get makes. */
	memset(&req, 0, sizeof(req));
	req.local_comm_id = 0x11223344;
	req.ece_vendor_id = 0x02c9aa;
	req.ece_options = 0x55667788;
	req.service_id = 0x0000000001060000ull | 4791;
	memcpy(req.local_ca_guid, (uint8_t[]){ 1, 2, 3, 4, 5, 6, 7, 8 }, sizeof(req.local_ca_guid));
	req.local_qpn = 0xabcdef;
	req.responder_resources = 5;
	req.initiator_depth = 6;
	req.remote_cm_response_timeout = 20;
	req.local_cm_response_timeout = 19;
	req.transport = transport;
	req.flow_control = true;
	req.starting_psn = 0x123456;
	req.retry_count = 6;
	req.rnr_retry_count = 5;
	req.pkey = 0xffff;
	req.mtu = 3;
	req.max_cm_retries = 15;
	req.srq = true;
	req.local_lid = 0xffff;
	req.remote_lid = 0xfffe;
	req.traffic_class = 0x20;
	req.hop_limit = 64;
	req.local_ack_timeout = 18;

	memset(req.local_gid, 0xa1, sizeof(req.local_gid));
	memset(req.remote_gid, 0xb2, sizeof(req.remote_gid));
	return req;
}

START_TEST(test_req_round_trip)
{
	static const enum cm_transport transports[] = { CM_TRANSPORT_RC, CM_TRANSPORT_UC };
	struct cm_req want = full_req(transports[_i]), got;
	uint8_t mad[CM_MAD_BYTES];

	cm_mad_init(mad, CM_ATTR_REQ, 1);
	cm_req_put(mad, &want);
	cm_req_get(mad, &got);
	ck_assert_mem_eq(&got, &want, sizeof(want));
	ck_assert_uint_eq(cm_mad_attr(mad), CM_ATTR_REQ);
}
END_TEST

/* The bytes of IBTA table 106, counted from the MAD's start (header 24 bytes). */
START_TEST(test_req_layout)
{
	struct cm_req req = full_req(CM_TRANSPORT_RC);
	uint8_t mad[CM_MAD_BYTES];

	cm_mad_init(mad, CM_ATTR_REQ, 1);
	cm_req_put(mad, &req);
	ck_assert_uint_eq(rocemu_get_be32(&mad[20]), 0x55667788);	/* attribute modifier */
	ck_assert_uint_eq(rocemu_get_be32(&mad[24]), 0x11223344);
	ck_assert_uint_eq(rocemu_get_be24(&mad[29]), 0x02c9aa);
	ck_assert_uint_eq(rocemu_get_be64(&mad[32]), req.service_id);
	ck_assert_uint_eq(mad[40], 1);
	ck_assert_uint_eq(mad[47], 8);
	ck_assert_uint_eq(rocemu_get_be32(&mad[56]), 0xabcdef05);	/* QPN:24, responder resources */
	ck_assert_uint_eq(mad[63], 6);					/* initiator depth */
	ck_assert_uint_eq(mad[67], 20 << 3 | 0 << 1 | 1);		/* timeout, RC, flow control */
	ck_assert_uint_eq(rocemu_get_be32(&mad[68]), 0x12345600 | 19 << 3 | 6);
	ck_assert_uint_eq(rocemu_get_be16(&mad[72]), 0xffff);
	ck_assert_uint_eq(mad[74], 3 << 4 | 5);				/* MTU, RNR retry */
	ck_assert_uint_eq(mad[75], 15 << 4 | 1 << 3 | 0);		/* CM retries, SRQ, ext. type */
	ck_assert_uint_eq(rocemu_get_be16(&mad[76]), 0xffff);
	ck_assert_uint_eq(rocemu_get_be16(&mad[78]), 0xfffe);
	ck_assert_uint_eq(mad[80], 0xa1);
	ck_assert_uint_eq(mad[96], 0xb2);
	ck_assert_uint_eq(mad[116], 0x20);
	ck_assert_uint_eq(mad[117], 64);
	ck_assert_uint_eq(mad[119], 18 << 3);
}
END_TEST

/* cm_format_req for an XRC initiator: transport 3, extended type 1, no responder resources, retries or SRQ. */
START_TEST(test_req_xrc)
{
	struct cm_req req = full_req(CM_TRANSPORT_XRC), got;
	uint8_t mad[CM_MAD_BYTES];

	cm_mad_init(mad, CM_ATTR_REQ, 1);
	cm_req_put(mad, &req);
	ck_assert_uint_eq(mad[CM_REQ_TIMEOUT_TYPE_FC] >> 1 & 3, 3);
	ck_assert_uint_eq(mad[CM_REQ_RETRIES_SRQ], 15 << 4 | 1);
	ck_assert_uint_eq(mad[CM_REQ_RESPONDER_RESOURCES], 0);
	ck_assert_uint_eq(mad[CM_REQ_TIMEOUT_RETRY] & 7, 0);
	ck_assert_uint_eq(mad[CM_REQ_MTU_RNR] & 7, 0);
	ck_assert_uint_eq(rocemu_get_be24(&mad[CM_REQ_LOCAL_QPN]), 0xabcdef);
	ck_assert_uint_eq(mad[CM_REQ_INITIATOR_DEPTH], 6);
	cm_req_get(mad, &got);
	ck_assert_int_eq(got.transport, CM_TRANSPORT_XRC);
	ck_assert_uint_eq(got.starting_psn, 0x123456);
	ck_assert(!got.srq);
}
END_TEST

/* Transport service type and extended type as cm_req_get_qp_type reads them. */
START_TEST(test_req_transport_codes)
{
	static const struct { uint8_t tst, ett; enum cm_transport want; } codes[] = {
		{ 0, 0, CM_TRANSPORT_RC }, { 1, 0, CM_TRANSPORT_UC }, { 2, 0, CM_TRANSPORT_OTHER },
		{ 3, 1, CM_TRANSPORT_XRC }, { 3, 0, CM_TRANSPORT_OTHER }, { 3, 2, CM_TRANSPORT_OTHER },
		{ 3, 7, CM_TRANSPORT_OTHER },
	};
	uint8_t mad[CM_MAD_BYTES];
	struct cm_req got;

	cm_mad_init(mad, CM_ATTR_REQ, 1);
	mad[CM_REQ_TIMEOUT_TYPE_FC] = (uint8_t)(20 << 3 | codes[_i].tst << 1);
	mad[CM_REQ_RETRIES_SRQ] = (uint8_t)(15 << 4 | codes[_i].ett);
	cm_req_get(mad, &got);
	ck_assert_int_eq(got.transport, codes[_i].want);
}
END_TEST

static struct cm_rep full_rep(void)
{
	struct cm_rep rep;

	memset(&rep, 0, sizeof(rep));
	rep.local_comm_id = 0x01020304;
	rep.remote_comm_id = 0x05060708;
	rep.ece_vendor_id = 0x02c9aa;
	rep.ece_options = 0x11;
	rep.qpn = 0xfedcba;
	rep.starting_psn = 0xffffff;
	rep.responder_resources = 4;
	rep.initiator_depth = 3;
	rep.target_ack_delay = 16;
	rep.failover = 0;
	rep.flow_control = true;
	rep.rnr_retry_count = 7;
	rep.srq = false;
	memcpy(rep.local_ca_guid, (uint8_t[]){ 8, 7, 6, 5, 4, 3, 2, 1 }, sizeof(rep.local_ca_guid));

	return rep;
}

START_TEST(test_rep_round_trip)
{
	struct cm_rep want = full_rep(), got;
	uint8_t mad[CM_MAD_BYTES];

	cm_mad_init(mad, CM_ATTR_REP, 1);
	cm_rep_put(mad, &want, false);
	cm_rep_get(mad, &got, false);
	ck_assert_mem_eq(&got, &want, sizeof(want));
}
END_TEST

/* IBTA table 110: the ECE vendor's bytes sit after the 24-bit QPN, EECN and PSN, untouched by them. */
START_TEST(test_rep_layout)
{
	struct cm_rep rep = full_rep();
	uint8_t mad[CM_MAD_BYTES];

	cm_mad_init(mad, CM_ATTR_REP, 1);
	rep.qpn = 0xffffff;
	cm_rep_put(mad, &rep, false);
	ck_assert_uint_eq(rocemu_get_be32(&mad[20]), 0x11);
	ck_assert_uint_eq(rocemu_get_be32(&mad[24]), 0x01020304);
	ck_assert_uint_eq(rocemu_get_be32(&mad[28]), 0x05060708);
	ck_assert_uint_eq(rocemu_get_be32(&mad[36]), 0xffffff02);	/* QPN, vendor high */
	ck_assert_uint_eq(rocemu_get_be32(&mad[40]), 0x000000c9);	/* EECN, vendor middle */
	ck_assert_uint_eq(rocemu_get_be32(&mad[44]), 0xffffffaa);	/* PSN, vendor low */
	ck_assert_uint_eq(mad[48], 4);
	ck_assert_uint_eq(mad[49], 3);
	ck_assert_uint_eq(mad[50], 16 << 3 | 1);
	ck_assert_uint_eq(mad[51], 7 << 5);
	ck_assert_uint_eq(mad[52], 8);
}
END_TEST

/* cm_format_rep for an XRC target: its QPN in Local EECN, Local QPN 0, SRQ set, no initiator depth or flow control. */
START_TEST(test_rep_xrc)
{
	struct cm_rep rep = full_rep(), got;
	uint8_t mad[CM_MAD_BYTES];

	cm_mad_init(mad, CM_ATTR_REP, 1);
	cm_rep_put(mad, &rep, true);
	ck_assert_uint_eq(rocemu_get_be24(&mad[CM_REP_LOCAL_QPN]), 0);
	ck_assert_uint_eq(rocemu_get_be24(&mad[CM_REP_LOCAL_EECN]), 0xfedcba);
	ck_assert_uint_eq(mad[CM_REP_RNR_SRQ], 7 << 5 | 1 << 4);
	ck_assert_uint_eq(mad[CM_REP_INITIATOR_DEPTH], 0);
	ck_assert_uint_eq(mad[CM_REP_ACK_DELAY_FO_FC] & 1, 0);
	ck_assert_uint_eq(mad[CM_REP_RESPONDER_RESOURCES], 4);
	cm_rep_get(mad, &got, true);	/* an initiator reads the target's QPN from the EECN */
	ck_assert_uint_eq(got.qpn, 0xfedcba);
	ck_assert(got.srq);
	cm_rep_get(mad, &got, false);
	ck_assert_uint_eq(got.qpn, 0);
}
END_TEST

/* The kernel's cm_ack_timeout(ca_ack_delay, packet_life_time). */
START_TEST(test_ack_timeout)
{
	static const struct { uint8_t delay, life, want; } cases[] = {
		{ 16, 16, 18 }, { 15, 16, 17 }, { 16, 18, 19 }, { 20, 16, 20 }, { 18, 16, 19 },
		{ 0, 0, 2 }, { 31, 31, 31 }, { 30, 0, 30 }, { 17, 16, 18 }, { 16, 15, 17 },
	};

	ck_assert_uint_eq(cm_ack_timeout(cases[_i].delay, cases[_i].life), cases[_i].want);
}
END_TEST

/* cm_convert_to_ms: 4.096 us * 2^t, as a power of two of milliseconds, at least 1. */
START_TEST(test_time_to_ms)
{
	ck_assert_uint_eq(cm_time_to_ms(20), 4096);
	ck_assert_uint_eq(cm_time_to_ms(18), 1024);
	ck_assert_uint_eq(cm_time_to_ms(16), 256);
	ck_assert_uint_eq(cm_time_to_ms(8), 1);
	ck_assert_uint_eq(cm_time_to_ms(0), 1);
}
END_TEST

static Suite *cm_suite(void)
{
	Suite *s = suite_create("cm");
	TCase *req = tcase_create("REQ");
	TCase *rep = tcase_create("REP");
	TCase *times = tcase_create("times");

	tcase_add_loop_test(req, test_req_round_trip, 0, 2);
	tcase_add_test(req, test_req_layout);
	tcase_add_test(req, test_req_xrc);
	tcase_add_loop_test(req, test_req_transport_codes, 0, 7);
	suite_add_tcase(s, req);
	tcase_add_test(rep, test_rep_round_trip);
	tcase_add_test(rep, test_rep_layout);
	tcase_add_test(rep, test_rep_xrc);
	suite_add_tcase(s, rep);
	tcase_add_loop_test(times, test_ack_timeout, 0, 10);
	tcase_add_test(times, test_time_to_ms);
	suite_add_tcase(s, times);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cm_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
