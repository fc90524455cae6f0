#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# ECE through the RDMA CM (tests/e2e/cm/cm_ece.c): rdma_set_local_ece on
# external-QP ids travels in the REQ and REP and rdma_get_remote_ece
# returns it on the other side, zeros when none was set; an id with a QP
# of an emulated device sends none (no ECE on the device), as the kernel's
# CM and librdmacm answer for a ConnectX without ECE.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
CM_ECE=$top_builddir/tests/e2e/cm/cm_ece
require_built "$CM_ECE"
use_test_net 7

cm_ece() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} capture 30 "$ROCEMU" run -- \
		"$CM_ECE" "$(addr 1)" "$(addr 2)" $((33700 + BACKEND_INDEX)) || fail "cm_ece failed"
	expect_checks_passed
}

for_each_backend cm_ece
