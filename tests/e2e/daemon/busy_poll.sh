#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# ROCEMU_BUSY_POLL=1, the latency mode for machines with a core to spare:
# the daemon never sleeps while a client is connected (always runnable,
# state R) and sleeps again (state S) once none is, so an idle daemon still
# takes no CPU; a pingpong runs as usual. The default daemon sleeps while a
# connected client does nothing. A value that is neither 0 nor 1 stops the
# daemon with a one-line reason. ROCEMU_REALTIME=1 runs the daemon under
# SCHED_FIFO (a pingpong runs as usual), or stops it with the reason where
# the system refuses that, and is refused with ROCEMU_BUSY_POLL=1. The
# daemon runs at nice -10 where the system allows it, 0 elsewhere, at
# ROCEMU_NICE when set; a bad value stops it.
. "$(dirname "${BASH_SOURCE[0]}")/../harness/lib_pair.sh"
require_programs ibv_rc_pingpong
use_test_net 34

SAMPLES=10

# states PID: the scheduler states of PID, SAMPLES of them 0.1 s apart, as one word (e.g. RRRSR).
states() {
	local s=""

	for _ in $(seq "$SAMPLES"); do
		s+=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
		sleep 0.1
	done
	echo "$s"
}

# count CHAR WORD: how many times CHAR is in WORD.
count() { local only=${2//[^$1]/}; echo "${#only}"; }

# ready_then_sample PORT PID: the server listens (holding its context); sample the daemon now.
ready_then_sample() {
	wait_listening "$1" "$2" || return 1
	CONNECTED_STATES=$(states "$DAEMON")
}

# pingpong_sampled MODE: one pingpong; the daemon's states while the server waits for its client.
pingpong_sampled() {
	next_port
	PAIR_READY=ready_then_sample run_pair "ibv_rc_pingpong, poll $1" 60 \
		ibv_rc_pingpong -d rocemu0 -g 0 -p "$PAIR_PORT" -n 100 \
		--client ibv_rc_pingpong -d rocemu1 -g 0 -p "$PAIR_PORT" -n 100 "$(addr 1)"
}

# realtime: ROCEMU_REALTIME's values, and a daemon under SCHED_FIFO where the system allows it.
realtime() {
	local policy

	capture 10 env ROCEMU_REALTIME=yes "$ROCEMUD" && fail "rocemud started with ROCEMU_REALTIME=yes"
	expect_fixed 'ROCEMU_REALTIME="yes" is neither 0 nor 1' "a bad ROCEMU_REALTIME is refused"
	capture 10 env ROCEMU_REALTIME=1 ROCEMU_BUSY_POLL=1 "$ROCEMUD" &&
		fail "rocemud started with ROCEMU_REALTIME=1 and ROCEMU_BUSY_POLL=1"
	expect_fixed "ROCEMU_REALTIME=1 with ROCEMU_BUSY_POLL=1 would keep a core" \
		"real-time and busy polling together are refused"
	if ! chrt -f 1 true 2>/dev/null; then
		capture 10 env ROCEMU_REALTIME=1 "$ROCEMUD" && fail "rocemud started real-time where chrt may not"
		expect_fixed "ROCEMU_REALTIME=1: SCHED_FIFO:" "no real-time priority here: the daemon says why"
		return
	fi
	ROCEMU_REALTIME=1 start_daemon
	DAEMON=$(daemon_pid)
	[ -n "$DAEMON" ] || fail "no daemon pid"
	# /proc/PID/stat's 41st field, the policy (1: SCHED_FIFO), counted after the ")" of comm.
	policy=$(sed 's/.*) //' "/proc/$DAEMON/stat" | awk '{ print $39 }')
	[ "$policy" = 1 ] || fail "ROCEMU_REALTIME=1: the daemon's policy is $policy, not SCHED_FIFO (1)"
	ok "ROCEMU_REALTIME=1: the daemon runs under SCHED_FIFO"
	pingpong_sampled realtime
	stop_daemon "$ROCEMU_RUNTIME_DIR"
}

# nice_of PID: the nice value of PID (/proc/PID/stat's 19th field).
nice_of() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $17 }'; }

# niceness: ROCEMU_NICE's values, and the default of -10 where the system allows it.
niceness() {
	local want=-10

	capture 10 env ROCEMU_NICE=-21 "$ROCEMUD" && fail "rocemud started with ROCEMU_NICE=-21"
	expect_fixed 'ROCEMU_NICE="-21" is not a nice value from -20 to 19' "a bad ROCEMU_NICE is refused"
	nice -n -1 true 2>/dev/null || want=0
	start_daemon
	[ "$(nice_of "$(daemon_pid)")" = "$want" ] ||
		fail "the daemon runs at nice $(nice_of "$(daemon_pid)"), not $want"
	ok "the daemon runs at nice $want by default$([ "$want" = 0 ] && echo ": no lower nice allowed here")"
	stop_daemon "$ROCEMU_RUNTIME_DIR"
	ROCEMU_NICE=0 start_daemon
	[ "$(nice_of "$(daemon_pid)")" = 0 ] || fail "ROCEMU_NICE=0: the daemon runs at nice $(nice_of "$(daemon_pid)")"
	ok "ROCEMU_NICE=0: the daemon runs at nice 0"
	stop_daemon "$ROCEMU_RUNTIME_DIR"
}

busy_poll() {
	local idle

	ROCEMU_DEVICES="rocemu0=$(addr 1),rocemu1=$(addr 2)"
	export ROCEMU_DEVICES

	capture 10 env ROCEMU_BUSY_POLL=yes "$ROCEMUD" && fail "rocemud started with ROCEMU_BUSY_POLL=yes"
	expect_fixed 'ROCEMU_BUSY_POLL="yes" is neither 0 nor 1' "a bad ROCEMU_BUSY_POLL is refused"

	ROCEMU_BUSY_POLL=1 start_daemon
	DAEMON=$(daemon_pid)
	[ -n "$DAEMON" ] || fail "no daemon pid"
	capture 10 "$ROCEMU" status || fail "rocemu status: $(cat "$OUT")"
	expect "^rocemud pid [0-9]+ backend $ROCEMU_NET delivery local poll busy " "status says the daemon busy-polls"
	sleep 1	# status's own connection is gone
	idle=$(states "$DAEMON")
	[ "$(count S "$idle")" -ge $((SAMPLES - 2)) ] || fail "busy poll, no client: the daemon should sleep, states $idle"
	ok "busy poll, no client: the daemon sleeps ($idle)"
	pingpong_sampled busy
	[ "$(count R "$CONNECTED_STATES")" -eq "$SAMPLES" ] ||
		fail "busy poll, a client connected: the daemon should stay runnable, states $CONNECTED_STATES"
	ok "busy poll, a client connected: the daemon spins ($CONNECTED_STATES)"
	sleep 1
	idle=$(states "$DAEMON")
	[ "$(count S "$idle")" -ge $((SAMPLES - 2)) ] || fail "busy poll, clients gone: the daemon should sleep again, states $idle"
	ok "busy poll, clients gone: the daemon sleeps again ($idle)"
	stop_daemon "$ROCEMU_RUNTIME_DIR"

	realtime
	niceness

	start_daemon
	DAEMON=$(daemon_pid)
	pingpong_sampled sleep
	[ "$(count S "$CONNECTED_STATES")" -ge $((SAMPLES - 2)) ] ||
		fail "default, a client connected and idle: the daemon should sleep, states $CONNECTED_STATES"
	ok "default, a client connected and idle: the daemon sleeps ($CONNECTED_STATES)"
	stop_daemon "$ROCEMU_RUNTIME_DIR"
}

for_each_backend busy_poll
