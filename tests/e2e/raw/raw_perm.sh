#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# CAP_NET_RAW (tests/e2e/raw/raw_perm.c): a client holding it creates a
# RAW_PACKET QP; the same client with the capability dropped from its
# inheritable and bounding sets (setpriv) gets EPERM, as from the kernel,
# and still creates a UD QP; a flow rule, also asked for it first, is
# refused with EPERM without it (EOPNOTSUPP on that UD QP with it, as mlx5).
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
RAW_PERM=$top_builddir/tests/e2e/raw/raw_perm
require_built "$RAW_PERM"
require_programs setpriv
use_test_net 285

# CAP_NET_RAW is bit 13 of a capability set.
[ $((0x$(awk '$1 == "CapEff:" { print $2 }' /proc/self/status) >> 13 & 1)) -eq 1 ] ||
	skip "this shell has no CAP_NET_RAW to give or take away"

raw_perm() {
	ROCEMU_DEVICES="rocemu0=$(addr 1)"
	export ROCEMU_DEVICES
	start_daemon
	capture 30 "$ROCEMU" run -- "$RAW_PERM" rocemu0 allowed || fail "raw_perm with CAP_NET_RAW failed"
	expect_checks_passed "with CAP_NET_RAW"
	capture 30 "$ROCEMU" run -- setpriv --inh-caps=-net_raw --bounding-set=-net_raw \
		"$RAW_PERM" rocemu0 EPERM || fail "raw_perm without CAP_NET_RAW failed"
	expect "^ok: RAW_PACKET QP without CAP_NET_RAW: refused with EPERM" "EPERM without CAP_NET_RAW"
	expect_checks_passed "without CAP_NET_RAW"
}

for_each_backend raw_perm
