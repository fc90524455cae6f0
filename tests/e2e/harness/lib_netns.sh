# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash
# Sourced first by every end-to-end test (lib.sh sources it): the test runs
# again in a network namespace of its own, lo up, where one can be made, so
# its addresses and ports meet no other test's, not even another checkout's.
# Elsewhere (unshare -n needs root) it runs where it was started, on
# 127.0.N.x addresses and ports of its own; a test that cannot (it makes
# veth pairs or routes) sets NETNS_REQUIRED=1 first and is a skip there.
if [ -z "${ROCEMU_TEST_NETNS:-}" ]; then
	if unshare -n ip link set lo up 2>/dev/null; then
		# shellcheck disable=SC2016
		ROCEMU_TEST_NETNS=1 exec unshare -n -- bash -c 'ip link set lo up && exec bash "$0" "$@"' \
			"$0" "$@"
	fi
	if [ -n "${NETNS_REQUIRED:-}" ]; then
		echo "SKIP: $(basename "$0" .sh): cannot create a network namespace here (unshare -n needs root)"
		exit 77
	fi
	ROCEMU_TEST_NETNS=0
fi
