/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The words logs, `rocemu trace` and `rocemu ladder` give packets
 * (net/roce/roce_text.c): an AETH syndrome of each type (IBTA 9.7.5.2:
 * ACK, RNR NAK with its timer of table 45, the NAK codes, reserved ones),
 * CM attribute names (IBTA table 103) and a MAD's attribute ID, a short
 * MAD giving 0.
 */
#include <check.h>
#include <stdlib.h>

#include "net/roce/roce_hdr.h"
#include "net/roce/roce_text.h"

static const char *aeth(uint8_t syndrome)
{
	static char buf[64];

	rocemu_aeth_text(syndrome, buf, sizeof(buf));
	return buf;
}

START_TEST(test_aeth)
{
	ck_assert_str_eq(aeth(rocemu_aeth_syndrome_make(ROCEMU_AETH_ACK, 0x1f)), "ACK");
	/* Timer code 1: 0.01 ms; code 0: 655.36 ms, the longest. */
	ck_assert_str_eq(aeth(rocemu_aeth_syndrome_make(ROCEMU_AETH_RNR_NAK, 1)), "RNR NAK 0.01 ms");
	ck_assert_str_eq(aeth(rocemu_aeth_syndrome_make(ROCEMU_AETH_RNR_NAK, 0)),
			 "RNR NAK 655.36 ms");
	ck_assert_str_eq(aeth(rocemu_aeth_syndrome_make(ROCEMU_AETH_NAK, ROCEMU_NAK_PSN_SEQ_ERROR)),
			 "NAK PSN sequence error");
	ck_assert_str_eq(aeth(rocemu_aeth_syndrome_make(ROCEMU_AETH_NAK,
							ROCEMU_NAK_REMOTE_ACCESS_ERROR)),
			 "NAK remote access error");
	ck_assert_str_eq(aeth(rocemu_aeth_syndrome_make(ROCEMU_AETH_NAK, 7)), "NAK reserved code");
	/* Type 2 is reserved. */
	ck_assert_str_eq(aeth(0x40), "reserved syndrome 0x40");
}
END_TEST

/* The text is cut at the caller's buffer, terminated. */
START_TEST(test_aeth_short_buffer)
{
	char buf[4] = "xxx";

	rocemu_aeth_text(rocemu_aeth_syndrome_make(ROCEMU_AETH_NAK, ROCEMU_NAK_INVALID_REQUEST),
			 buf, sizeof(buf));
	ck_assert_str_eq(buf, "NAK");
}
END_TEST

START_TEST(test_cm_attr)
{
	uint8_t mad[24] = { 0 };

	ck_assert_str_eq(rocemu_cm_attr_name(0x0010), "REQ");
	ck_assert_str_eq(rocemu_cm_attr_name(0x0013), "REP");
	ck_assert_str_eq(rocemu_cm_attr_name(0x0018), "SIDR_REP");
	ck_assert_str_eq(rocemu_cm_attr_name(0x000f), "?");
	ck_assert_str_eq(rocemu_cm_attr_name(0x0019), "?");
	/* The attribute ID: bytes 16 and 17 of the MAD header, big endian. */
	mad[16] = 0x00;
	mad[17] = 0x14;
	ck_assert_uint_eq(rocemu_mad_attr(mad, sizeof(mad)), 0x0014);
	ck_assert_uint_eq(rocemu_mad_attr(mad, 18), 0x0014);
	ck_assert_uint_eq(rocemu_mad_attr(mad, 17), 0);
}
END_TEST

static Suite *roce_text_suite(void)
{
	Suite *s = suite_create("roce_text");
	TCase *tc = tcase_create("roce_text");

	tcase_add_test(tc, test_aeth);
	tcase_add_test(tc, test_aeth_short_buffer);
	tcase_add_test(tc, test_cm_attr);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(roce_text_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
