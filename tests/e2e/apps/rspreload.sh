#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# librspreload (LD_PRELOAD) carries a plain TCP program (tests/e2e/harness/tcp_echo.c)
# over rsockets on rocemu: the server's listen is an RDMA CM listen (no TCP
# socket listens), 4 MiB go each way with every byte checked, and the
# devices' counters show the data crossed them.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
TCP_ECHO=$top_builddir/tests/e2e/harness/tcp_echo
require_built "$TCP_ECHO"
use_test_net 9
BYTES=$((4 * 1024 * 1024))

RSPRELOAD=$(ls /usr/lib/*/rsocket/librspreload.so /usr/lib*/rsocket/librspreload.so 2>/dev/null | head -n 1)
[ -n "$RSPRELOAD" ] || skip "librspreload.so (librdmacm1) is not installed"

PAIR_READY=wait_cm_listening
PAIR_LOSSY=

# rcv_words DEV: port_rcv_data of DEV (4-byte words) in `rocemu stats`.
rcv_words() {
	run_with_timeout 10 "$ROCEMU" stats | awk -v dev="$1" '$1 == dev && $2 == "port_rcv_data" { print $3 }'
}

rspreload() {
	local what="tcp_echo $BYTES bytes under librspreload" before after

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	before=$(rcv_words rocemu0)
	next_port
	# After what `rocemu run` preloads (the ASan runtime first, then the shim).
	run_pair "$what" 30 sh -c 'LD_PRELOAD=$LD_PRELOAD:$0 exec "$@"' "$RSPRELOAD" \
		"$TCP_ECHO" server "$(addr 1)" "$PAIR_PORT" "$BYTES" \
		--client sh -c 'LD_PRELOAD=$LD_PRELOAD:$0 exec "$@"' "$RSPRELOAD" \
		"$TCP_ECHO" client "$(addr 1)" "$PAIR_PORT" "$BYTES"
	OUT=$SERVER_OUT expect_fixed "ok: server received $BYTES bytes intact" "$what: the server's data"
	OUT=$CLIENT_OUT expect_fixed "ok: client got $BYTES bytes of echo intact" "$what: the client's echo"
	after=$(rcv_words rocemu0)
	echo "rocemu0 port_rcv_data: $before -> $after words"
	[ "$((after - before))" -ge "$((2 * BYTES / 4))" ] ||
		fail "$what: rocemu0 received $((after - before)) words, not the $((2 * BYTES / 4)) of the data"
	ok "$what: the data crossed rocemu0 ($((after - before)) words received)"
}

for_each_backend rspreload
