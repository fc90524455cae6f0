#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# An MR's owner hands its context to another process (cmd_fd) and execs a
# program that keeps a secret at the MR's address (tests/e2e/mem/mem_owner.c
# exec): a peer's READ and WRITE through the owner's rkey fail with a
# remote access error, and the new program's memory is untouched.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
MEM_OWNER=$top_builddir/tests/e2e/mem/mem_owner
require_built "$MEM_OWNER"
use_test_net 266

mem_exec() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 60 "$ROCEMU" run -- "$MEM_OWNER" exec rocemu0 rocemu1 ||
		fail "mem_owner exec failed"
	expect "^0 failed$" "the exec'd owner's memory neither read nor written ($(grep -c '^ok: ' "$OUT") checks)"
}

mem_exec_both() {
	for_each_dma mem_exec
}

for_each_backend mem_exec_both
