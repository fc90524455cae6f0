#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The RC data path checks of tests/e2e/rc/rc_errors.c (error completions,
# flushes, refused posts, SGE lists over several MRs, ibv_qp_ex): requester
# and responder on two devices, then both on one device.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
RC_ERRORS=$top_builddir/tests/e2e/rc/rc_errors
require_built "$RC_ERRORS"
use_test_net 22

rc_errors() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	run_checks_between "$RC_ERRORS" rocemu0 rocemu1
	run_checks_between "$RC_ERRORS" rocemu0 rocemu0
}

for_each_backend rc_errors
