#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Shared receive queues (tests/e2e/srq_xrc_dc/srq.c): limits and errnos, data from
# several QPs through one SRQ, the limit event fired once,
# QP_LAST_WQE_REACHED, destroy refused while in use; between two devices,
# then on one.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
SRQ=$top_builddir/tests/e2e/srq_xrc_dc/srq
require_built "$SRQ"
use_test_net 151

# srq_between DEV_A DEV_B
srq_between() {
	run_checks_between "$SRQ" "$1" "$2"
	expect "^ok: 4 left of limit 5: SRQ_LIMIT_REACHED" "$1 -> $2: limit event"
	expect "^ok: QP_LAST_WQE_REACHED" "$1 -> $2: last WQE reached"
}

srq() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	srq_between rocemu0 rocemu1
	srq_between rocemu1 rocemu1
}

for_each_backend srq
