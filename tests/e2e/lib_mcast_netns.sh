# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash
# Sourced first by the tests that send multicast over loopback, which needs
# lo's MULTICAST flag and a route for 224.0.0.0/4: the test runs again in a
# network namespace of its own where they are set (a skip where it cannot).
if [ -z "${MCAST_TEST_NETNS:-}" ]; then
	if ! unshare -n true 2>/dev/null; then
		echo "SKIP: $(basename "$0" .sh): cannot create a network namespace here (unshare -n needs root)"
		exit 77
	fi
	MCAST_TEST_NETNS=1 exec unshare -n -- bash "$0" "$@"
fi
if ! { ip link set lo up && ip link set lo multicast on &&
	ip route add 224.0.0.0/4 dev lo; } 2>/dev/null; then
	echo "SKIP: $(basename "$0" .sh): cannot enable multicast on lo in the test's network namespace"
	exit 77
fi
