#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# RDMA CM error paths and endings (tests/e2e/cm_errors.c, librdmacm's API):
# a reject with private data, a connect to a port nobody listens on
# (REJECTED, invalid service ID), a REQ to an address where no daemon
# answers (UNREACHABLE after the CM's retries, within bounded time), a
# disconnect from either side (DISCONNECTED on both, then TIMEWAIT_EXIT).
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
CM_ERRORS=$top_builddir/tests/e2e/cm_errors
require_built "$CM_ERRORS"
use_test_net 241

cm_errors() {
	local port=$((29600 + BACKEND_INDEX * 100))

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	# Short CM timeouts, so that 1 + 3 tries of 100 ms end the REQ to nowhere in 0.4 s.
	ROCEMU_CM_TIMEOUT_MS=100 ROCEMU_CM_RETRIES=3 start_daemon
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} capture 60 "$ROCEMU" run -- \
		"$CM_ERRORS" "$(addr 1)" "$(addr 2)" "$(addr 9)" "$port" 400 || fail "cm_errors failed"
	expect "^0 failed$" "every check passed ($(grep -c '^ok: ' "$OUT") checks)"
}

for_each_backend cm_errors
