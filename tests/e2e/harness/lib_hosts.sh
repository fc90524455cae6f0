# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash
# Sourced by the tests of two hosts: two network namespaces, HOST_A and
# HOST_B, joined by a veth pair (veth0 at ADDR_A and ADDR_B, /24), with a
# daemon in each. The test sets the four names before it calls add_hosts.

# add_hosts: the two namespaces and their veth pair (a skip where they cannot be created).
add_hosts() {
	if ! ip netns add "$HOST_A" 2>/dev/null; then
		echo "SKIP: $TEST_NAME: cannot create a network namespace here (needs root)"
		exit 77
	fi
	ip netns add "$HOST_B" &&
		ip link add veth0 netns "$HOST_A" type veth peer name veth0 netns "$HOST_B" &&
		ip -n "$HOST_A" addr add "$ADDR_A/24" dev veth0 &&
		ip -n "$HOST_B" addr add "$ADDR_B/24" dev veth0 &&
		ip -n "$HOST_A" link set veth0 up && ip -n "$HOST_B" link set veth0 up &&
		ip -n "$HOST_A" link set lo up && ip -n "$HOST_B" link set lo up ||
		fail "cannot set up the veth pair between $HOST_A and $HOST_B"
}

# listening_in_a PORT PID: the server in HOST_A listens on TCP PORT (at most 20 s).
listening_in_a() {
	for _ in $(seq 200); do
		ip netns exec "$HOST_A" ss -Hltn "sport = :$1" | grep -q . && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

del_hosts() {
	ip netns del "$HOST_A" 2>/dev/null
	ip netns del "$HOST_B" 2>/dev/null
}

# start_host NS ADDR DIR: a daemon in namespace NS, device rocemu0 on ADDR,
# runtime dir DIR, captures in DIR/pcap (ROCEMU_* set by the caller pass on).
start_host() {
	mkdir -p -m 0700 "$3"
	RUNTIME_DIRS+=("$3")
	DAEMON_WRAP=(ip netns exec "$1")
	# perftest's client connects a second time as soon as the server says it will listen:
	# a REQ before the listen is dropped and resent (every second, 15 times), not refused.
	ROCEMU_CM_UNLISTENED=drop ROCEMU_CM_TIMEOUT_MS=1000 \
		ROCEMU_DEVICES="rocemu0=$2" ROCEMU_RUNTIME_DIR=$3 ROCEMU_PCAP=$3/pcap start_daemon
	DAEMON_WRAP=()
}
