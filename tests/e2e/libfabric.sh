#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# libfabric's verbs provider (Debian's libfabric-bin, unmodified) over
# rocemu: fi_info -p verbs lists rocemu0 and rocemu1 as MSG endpoints over
# the RDMA CM, and their UD domains; fi_pingpong runs with its data checks
# (-c) in MSG mode (verbs) and in RDM mode (verbs;ofi_rxm, a connection per
# peer over the CM). libfabric ignores loopback interfaces, so the test gives
# the devices addresses on a veth pair in a network namespace of its own.
# fi_pingpong's server names no address: the provider binds "localhost",
# which the kernel's CM (and rocemu's) takes as the wildcard, and then
# listens on the addresses of the interfaces of its devices.
. "$(dirname "${BASH_SOURCE[0]}")/lib_netns.sh"
if ! { ip link set lo up && ip link add fab0 type veth peer name fab1 &&
	ip addr add 198.18.252.1/22 dev fab0 && ip addr add 198.18.252.2/22 dev fab1 &&
	ip addr add 198.18.253.1/22 dev fab0 && ip addr add 198.18.253.2/22 dev fab1 &&
	ip link set fab0 up && ip link set fab1 up; } 2>/dev/null; then
	echo "SKIP: libfabric: cannot make a veth pair in the test's network namespace"
	exit 77
fi
. "$(dirname "${BASH_SOURCE[0]}")/lib_pair.sh"
command -v fi_info >/dev/null || skip "fi_info not installed (Debian package libfabric-bin)"
command -v fi_pingpong >/dev/null || skip "fi_pingpong not installed (Debian package libfabric-bin)"
use_test_net 23
use_ports 34000
PAIR_LOSSY=

# fab_addr I: device I's address on the veth pair, one /24 per backend.
fab_addr() {
	echo "198.18.$((252 + BACKEND_INDEX)).$1"
}

# pingpong PROVIDER EP: fi_pingpong -c (each message checked) between two
# processes: on both sides, 10 round trips of each size, 64 bytes to 1 MiB.
pingpong() {
	local what="fi_pingpong -p '$1' -e $2 -I 10 -c" out rows

	next_port
	run_pair "$what" 30 fi_pingpong -p "$1" -e "$2" -I 10 -c -B "$PAIR_PORT" \
		--client fi_pingpong -p "$1" -e "$2" -I 10 -c -P "$PAIR_PORT" "$(fab_addr 1)"
	for out in "$SERVER_OUT" "$CLIENT_OUT"; do
		rows=$(grep -Ec '^(64|256|1k|4k|64k|1m) +10 +=10 ' "$out")
		[ "$rows" -eq 6 ] || fail "$what: $rows of 6 sizes show 10 messages sent and acknowledged in $out"
	done
	ok "$what: both sides sent and acknowledged 10 checked messages of each of 6 sizes"
}

libfabric() {
	local dev

	ROCEMU_DEVICES="rocemu0=$(fab_addr 1),rocemu1=$(fab_addr 2)"
	export ROCEMU_DEVICES
	start_daemon
	capture 30 "$ROCEMU" run -- fi_info -p verbs || fail "fi_info -p verbs failed"
	for dev in rocemu0 rocemu1; do
		grep -A3 "domain: $dev\$" "$OUT" | grep -q "protocol: FI_PROTO_RDMA_CM_IB_RC" ||
			fail "fi_info -p verbs does not list $dev as an RDMA CM MSG domain"
		ok "fi_info -p verbs lists $dev: FI_EP_MSG, FI_PROTO_RDMA_CM_IB_RC"
	done
	expect "domain: rocemu0-dgram$" "fi_info -p verbs lists rocemu0's UD (dgram) domain"

	pingpong verbs msg
	pingpong "verbs;ofi_rxm" rdm
}

for_each_backend libfabric
