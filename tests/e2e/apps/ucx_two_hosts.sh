#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# UCX between two hosts with its own choice of transport (no UCX_TLS, no
# UCX_NET_DEVICES): two daemons, each in a network namespace of its own
# joined by a veth pair (198.18.92.1 and .2), and each side of ucx_perftest
# also in an IPC namespace of its own, since UCX takes two processes with
# the same boot id and IPC namespace for one host and would pick shared
# memory. UCX must carry the tag operations over one of the mlx5
# direct-verbs transports of rocemu0 (rc_mlx5 or dc_mlx5, as it says at
# info level in its ep_cfg line): tag_lat of 8 bytes and tag_bw of 64 KiB,
# all iterations, no UCX error. The same over UCX_TLS=tcp between the same
# hosts gives the figures to compare with.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_ucx.sh"
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_hosts.sh"
require_programs ip unshare
use_test_net 92
HOST_A=rocemu-ucx2-$$-a
HOST_B=rocemu-ucx2-$$-b
ADDR_A=198.18.92.1
ADDR_B=198.18.92.2

# ucx_between WHAT TEST SIZE ITERS [ENV...]: ucx_perftest TEST from host B
# to host A, UCX at info level on the client; all ITERS iterations, no error.
ucx_between() {
	local what=$1 test=$2 size=$3 iters=$4

	shift 4
	next_port
	PAIR_READY=listening_in_a run_pair "$what" 60 \
		env "$@" ucx_perftest -p "$PAIR_PORT" -t "$test" -s "$size" -n "$iters" -w 10 \
		--client env "$@" UCX_LOG_LEVEL=info \
		ucx_perftest "$ADDR_A" -p "$PAIR_PORT" -t "$test" -s "$size" -n "$iters" -w 10
	expect_client "^Final: +$iters " "$what: all $iters iterations"
	grep -E "^Final: " "$CLIENT_OUT" | sed "s|^|$what: |"
	expect_neither "UCX +ERROR" "$what: no UCX error"
}

ucx_two_hosts() {
	local dir_a=$ROCEMU_RUNTIME_DIR dir_b=$WORK_DIR/run-$BACKEND-b test size iters

	start_host "$HOST_A" "$ADDR_A" "$dir_a"
	start_host "$HOST_B" "$ADDR_B" "$dir_b"
	PAIR_SERVER_WRAP=(ip netns exec "$HOST_A" unshare --ipc env ROCEMU_RUNTIME_DIR="$dir_a")
	PAIR_CLIENT_WRAP=(ip netns exec "$HOST_B" unshare --ipc env ROCEMU_RUNTIME_DIR="$dir_b")
	for test in tag_lat tag_bw; do
		size=$([ "$test" = tag_lat ] && echo 8 || echo 65536)
		iters=$([ "$test" = tag_lat ] && echo 1000 || echo 100)
		ucx_between "ucx_perftest -t $test -s $size, UCX's own choice" "$test" "$size" "$iters"
		expect_client "ep_cfg\[[0-9]+\]: .*tag\((rc|dc)_mlx5/rocemu0:1" \
			"ucx_perftest -t $test, UCX's own choice: tag over rc_mlx5 or dc_mlx5 on rocemu0"
		grep -oE "ep_cfg\[[0-9]+\]: tag\([^)]*\)" "$CLIENT_OUT" | head -n 1
		ucx_between "ucx_perftest -t $test -s $size, UCX_TLS=tcp" "$test" "$size" "$iters" \
			UCX_TLS=tcp
	done
	PAIR_SERVER_WRAP=()
	PAIR_CLIENT_WRAP=()
	stop_daemon "$dir_a"
	stop_daemon "$dir_b"
}

add_hosts
trap 'del_hosts; cleanup' EXIT
for_each_backend ucx_two_hosts
