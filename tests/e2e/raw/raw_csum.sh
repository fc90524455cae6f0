#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Checksum offload (tests/e2e/raw/raw_csum.c): IBV_SEND_IP_CSUM fills the
# zeroed IPv4, UDP and TCP checksums as the test's model computes them, and
# IBV_WC_IP_CSUM_OK marks good frames and not broken ones; rocemu0 to
# rocemu1, then back.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
RAW_CSUM=$top_builddir/tests/e2e/raw/raw_csum
require_built "$RAW_CSUM"
use_test_net 281

raw_csum() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	run_checks_between "$RAW_CSUM" rocemu0 rocemu1
	expect "^ok: TCP, 1400 payload bytes, zeroed checksums, IBV_SEND_IP_CSUM: the frame is the model's" \
		"a TCP frame's checksums filled in by the send"
	expect "^ok: UDP, 17 payload bytes, broken UDP checksum: IBV_WC_IP_CSUM_OK not set" \
		"a broken UDP checksum is not CSUM_OK"
	run_checks_between "$RAW_CSUM" rocemu1 rocemu0
}

for_each_backend raw_csum
