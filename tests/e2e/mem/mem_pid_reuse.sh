#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# An MR's owner hands its context to another process (cmd_fd) and exits; a
# victim gets its pid, with a secret at the MR's address
# (tests/e2e/mem/mem_owner.c reuse): a peer's READ and WRITE through the
# owner's rkey fail with a remote access error, and the victim's memory is
# untouched. The pid is given by ns_last_pid, in a pid namespace of the
# test's own (daemon included, so that its pids are the namespace's).
if [ -z "${ROCEMU_IN_PID_NS:-}" ]; then
	if ! unshare --pid --fork --mount-proc true 2>/dev/null; then
		echo "SKIP: mem_pid_reuse: no pid namespace can be made here"
		exit 77
	fi
	ROCEMU_IN_PID_NS=1 exec unshare --pid --fork --mount-proc -- "$BASH" "$0" "$@"
fi
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
MEM_OWNER=$top_builddir/tests/e2e/mem/mem_owner
require_built "$MEM_OWNER"
use_test_net 265

mem_pid_reuse() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} capture 60 "$ROCEMU" run -- "$MEM_OWNER" reuse rocemu0 rocemu1
	case $? in
	0) ;;
	77) skip "$(grep '^skip: ' "$OUT")" ;;
	*) fail "mem_owner reuse failed" ;;
	esac
	expect "^victim has the owner's pid" "a victim got the gone owner's pid"
	expect "^0 failed$" "the victim's memory neither read nor written ($(grep -c '^ok: ' "$OUT") checks)"
}

mem_pid_reuse_both() {
	for_each_dma mem_pid_reuse
}

for_each_backend mem_pid_reuse_both
