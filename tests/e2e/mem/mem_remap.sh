#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# A plain MR's buffer unmapped and a file mapped MAP_SHARED at its address
# (tests/e2e/mem/mem_owner.c remap): a peer's WRITE through the rkey fails with
# a remote access error and leaves the file as it was, its READ gets no
# byte of the file; an ODP MR over the same steps follows the mapping.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
MEM_OWNER=$top_builddir/tests/e2e/mem/mem_owner
require_built "$MEM_OWNER"
use_test_net 267

mem_remap() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 60 "$ROCEMU" run -- "$MEM_OWNER" remap rocemu0 rocemu1 \
		"$WORK_DIR/mapped-$BACKEND" || fail "mem_owner remap failed"
	expect "^0 failed$" "plain MR: no byte of the file reached; ODP MR: the file reached ($(grep -c '^ok: ' "$OUT") checks)"
}

for_each_backend mem_remap
