#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# A process of user nobody with RLIMIT_MEMLOCK 8 MiB (and so without
# CAP_IPC_LOCK) pins no more than 8 MiB, as ib_umem_get allows it: its
# 1 MiB MRs stop at the eighth with ENOMEM, an ODP MR of 256 MiB (never
# pinned) still registers, and a CQ of 4M entries (a 256 MiB ring, which
# a ConnectX's driver pins as it pins the CQ buffer) is ENOMEM. Its
# daemon runs as nobody too, as a daemon serves only its own user or root.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib.sh"
LIMITS=$top_builddir/tests/e2e/daemon/limits
require_built "$LIMITS"
require_programs setpriv prlimit
[ "$(id -u)" -eq 0 ] || skip "becoming nobody needs root"
id -u nobody >/dev/null 2>&1 && getent group nogroup >/dev/null || skip "no user nobody or group nogroup"
use_test_net 271

MEMLOCK=$((8 << 20))
AS_NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)

# lib.sh's own calls of the CLI (start_daemon, daemon_pid, stop_daemon) as
# nobody: the CLI talks only to a daemon of its own user or root.
chmod 0711 "$WORK_DIR"
printf '#!/bin/sh\nexec %s "%s" "$@"\n' "${AS_NOBODY[*]}" "$ROCEMU" >"$WORK_DIR/rocemu-as-nobody"
chmod 0755 "$WORK_DIR/rocemu-as-nobody"
ROCEMU=$WORK_DIR/rocemu-as-nobody

# as_nobody OUT CMD...: CMD under `rocemu run` as nobody with RLIMIT_MEMLOCK
# MEMLOCK and stdin closed (what it makes goes at once), output in $OUT.
as_nobody() {
	capture 60 prlimit --memlock=$MEMLOCK:$MEMLOCK "$ROCEMU" run -- "$@" </dev/null
}

limits_memlock() {
	chown nobody:nogroup "$ROCEMU_RUNTIME_DIR"
	export ROCEMU_DEVICES="rocemu0=$(addr 1)"
	DAEMON_WRAP=("${AS_NOBODY[@]}")
	start_daemon
	DAEMON_WRAP=()

	as_nobody "$LIMITS" rocemu0 pin 1 || fail "limits pin failed"
	expect "^pin made 8 bytes $MEMLOCK errno ENOMEM$" "1 MiB MRs: 8 registered, the ninth ENOMEM"
	expect "^odp errno none$" "an ODP MR of 256 MiB registers past the limit"
	as_nobody "$LIMITS" rocemu0 bigcq 1 || fail "limits bigcq failed"
	expect "^bigcq made 0 errno ENOMEM$" "a CQ of 4M entries (256 MiB) is ENOMEM"
	as_nobody "$LIMITS" rocemu0 pingpong 1 || fail "limits pingpong failed"
	expect "^pingpong rounds [1-9][0-9]* " "small rings and MRs fit: data moves"
	! grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error' "$ROCEMU_RUNTIME_DIR/rocemud.log" ||
		fail "the daemon reports a sanitizer error"
	ok "no sanitizer report from the daemon"
}

for_each_backend limits_memlock
