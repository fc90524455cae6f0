#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Unmodified rdmacm-utils built on librdmacm's synchronous ids and
# endpoints (rdma_getaddrinfo, rdma_create_ep, rdma_get_request, the
# rdma_verbs.h calls): rdma_server with rdma_client, rdma_xserver with
# rdma_xclient over RC; each side checks its message and exits 0.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs rdma_server rdma_client rdma_xserver rdma_xclient
use_test_net 8

PAIR_READY=wait_cm_listening
PAIR_LOSSY=

# tool_pair SERVER CLIENT [OPTION...]: the server on every address, the client to rocemu0's.
tool_pair() {
	local server=$1 client=$2 what

	shift 2
	what="$server / $client $*"
	next_port
	run_pair "$what" 30 "$server" -p "$PAIR_PORT" "$@" \
		--client "$client" -s "$(addr 1)" -p "$PAIR_PORT" "$@"
	grep -q "^$server: end 0" "$SERVER_OUT" && grep -q "^$client: end 0" "$CLIENT_OUT" ||
		fail "$what: not both sides end with status 0"
	ok "$what: both sides end with status 0"
}

cm_sync_tools() {
	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	tool_pair rdma_server rdma_client
	tool_pair rdma_xserver rdma_xclient -c r
}

for_each_backend cm_sync_tools
