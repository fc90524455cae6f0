#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# tests/e2e/rc/rc_gather_fault.c: one post list of small WRITEs or SENDs whose
# k-th source was unmapped after registration; the requester reads several
# payloads at once, yet the data of the WRs before k arrive, WR k fails with
# LOC_PROT_ERR and nothing after it leaves. Two devices, then one.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
RC_GATHER_FAULT=$top_builddir/tests/e2e/rc/rc_gather_fault
require_built "$RC_GATHER_FAULT"
use_test_net 171

gather_fault() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	ROCEMU_LOG=info start_daemon
	run_checks_between "$RC_GATHER_FAULT" rocemu0 rocemu1
	run_checks_between "$RC_GATHER_FAULT" rocemu0 rocemu0
}

for_each_backend gather_fault
