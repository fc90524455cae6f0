#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# QPs reused after RESET (tests/e2e/rc/rc_reset.c): no old WRITE runs again,
# no old completion comes back, receives work after several RESET cycles,
# a SEND posted right before its QP goes to ERR still arrives;
# between two devices, then on one.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
RC_RESET=$top_builddir/tests/e2e/rc/rc_reset
require_built "$RC_RESET"
use_test_net 50

rc_reset() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	run_checks_between "$RC_RESET" rocemu0 rocemu1
	run_checks_between "$RC_RESET" rocemu0 rocemu0
}

for_each_backend rc_reset
