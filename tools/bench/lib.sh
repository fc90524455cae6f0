# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# The measurements of tools/bench/run, one function per job; sourced by run
# and, for what runs under the shim, by the shell `rocemu run` starts.
# Expects (exported by run): BENCH_LIB (this file), work (results directory),
# build, runs, DEVICES and the limits RAW_LIMIT, PERFTEST_LIMIT, LISTEN_WAIT,
# IDLE_SECONDS, QP_FILL_LIMIT, QP_COUNT.
#
# Results: $work/KEY.vals holds one figure a line, $work/KEY.err why it has none.
# shellcheck shell=bash disable=SC2154

progress() { echo "bench: $*" >&2; }

# WHY as the reason of every KEY
fails() { # WHY KEY...
	local key
	for key in "${@:2}"; do echo "$1" >"$work/$key.err"; done
}

# ---- figures ----

# KEY=VALUE field of a udp_bw/udp_lat line
field() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" <<<"$2"; }

# median min max count of KEY's figures, or nothing
stats() {
	[ -s "$work/$1.vals" ] || return 0
	sort -g "$work/$1.vals" | awk '{ v[NR] = $1 }
		END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		      print m, v[1], v[NR], NR }'
}
median() { stats "$1" | awk '{ print $1 }'; }

# A figure with about three significant digits: 12.3, 4.56, 0.123
fmt() { awk -v x="$1" 'BEGIN { a = x < 0 ? -x : x
	printf(a >= 100 ? "%.1f" : a >= 1 || a == 0 ? "%.2f" : "%.3f", x) }'; }

# ---- the machine's limits ----

raw_bw() { # KEY MODE
	local line
	line=$(timeout -k 2 "$RAW_LIMIT" "$build/tools/bench/udp_bw" --mode "$2" 2>"$work/$1.log")
	if [ -z "$(field gbps "$line")" ]; then
		echo "udp_bw --mode $2: $(tail -n 1 "$work/$1.log")" >"$work/$1.err"
		return
	fi
	field gbps "$line" >>"$work/$1.vals"
	field loss_pct "$line" >>"$work/$1_loss.vals"
	progress "$line"
}

raw_lat() {
	local line
	line=$(timeout -k 2 "$RAW_LIMIT" "$build/tools/bench/udp_lat" 2>"$work/udp_lat.log")
	if [ -z "$(field half_rtt_median_us "$line")" ]; then
		echo "udp_lat: $(tail -n 1 "$work/udp_lat.log")" >"$work/udp_half_rtt.err"
		return
	fi
	field half_rtt_median_us "$line" >>"$work/udp_half_rtt.vals"
	field rtt_p99_us "$line" >>"$work/udp_rtt_p99.vals"
	progress "$line"
}

raw_side() {
	local i
	for ((i = 1; i <= runs; i++)); do
		raw_bw udp_dgram dgram
		raw_bw udp_gso gso
		raw_lat
	done
}

# ---- report parsers: the client's log in, its figure out ----
# A parser prints the figure of KEY on its first line and may add lines
# "SUFFIX FIGURE", kept under KEY_SUFFIX.

# Column COLUMN (a regex on its header name) of the first result row after
# perftest's header line: the one that names #bytes.
perftest_column() { # COLUMN LOG
	awk -v want="$1" '/#bytes/ { line = $0; gsub(/BW /, "BW_", line); gsub(/ percentile/, "_percentile", line)
			n = split(line, h, " ")
			for (i = 1; i <= n; i++) if (h[i] ~ want) col = i
			next }
		col && $1 ~ /^[0-9]+$/ && NF >= col { print $col; exit }' "$2"
}

# Gb/s from ib_write_bw's "BW average" column, MB/sec (2^20 bytes) or Gb/sec
parse_write_bw() {
	local bw
	bw=$(perftest_column '^BW_average' "$1")
	[ -n "$bw" ] || return 0
	if grep -q 'BW average\[Gb' "$1"; then
		echo "$bw"
	else
		awk -v mb="$bw" 'BEGIN { printf "%.3f\n", mb * 1048576 * 8 / 1e9 }'
	fi
}

# Mpps from ib_write_bw's MsgRate column
parse_write_rate() { perftest_column '^MsgRate' "$1"; }

# usec from ib_*_lat's report: t_typical (the median), then "p99 USEC"
parse_lat() {
	local typical p99
	typical=$(perftest_column '^t_typical' "$1")
	[ -n "$typical" ] || return 0
	echo "$typical"
	p99=$(perftest_column '^99%_percentile' "$1")
	[ -z "$p99" ] || echo "p99 $p99"
}

# ucx_perftest's "Final:" line: iterations, latency 50th percentile, average,
# overall (usec, one way), bandwidth average, overall (MB/s of 2^20 bytes),
# message rate average, overall (msg/s).
parse_ucx_lat() { awk '$1 == "Final:" { print $3; exit }' "$1"; }
# The 50th percentile, then "mean USEC": the mean shows stalls the median hides.
parse_ucx_lat_mean() { awk '$1 == "Final:" { print $3; print "mean " $4; exit }' "$1"; }
parse_ucx_bw() { awk '$1 == "Final:" { printf "%.3f\n", $7 * 1048576 * 8 / 1e9; exit }' "$1"; }
parse_ucx_rate() { awk '$1 == "Final:" { printf "%.4f\n", $9 / 1e6; exit }' "$1"; }

# Why a process failed, in one line fit for a table cell: an error line of LOG, else its last.
failure() { # RC LOG
	local why
	why=$(grep -iE 'fail|error|unable|couldn|cannot|not found|invalid' "$2" | tail -n 1)
	[ -n "$why" ] || why=$(grep -v '^[[:space:]]*$' "$2" | tail -n 1)
	case $why in *'#bytes'*) why="no result after the header" ;; esac
	why=$(tr -s ' \t|' '   ' <<<"$why" | sed 's/^ //; s/ $//' | cut -c 1-80)
	if [ "$1" -eq 124 ] || [ "$1" -eq 137 ]; then
		echo "timed out${why:+: $why}"
	elif [ "$1" -gt 128 ]; then
		echo "killed by signal $(($1 - 128))${why:+: $why}"
	else
		echo "exit $1${why:+: $why}"
	fi
}

# ---- server/client pairs ----

# The server listens on TCP PORT, in network namespace LISTEN_NETNS if set.
wait_listen() { # PORT SERVER_PID
	local tries=$((LISTEN_WAIT * 10)) in_ns=()
	[ -z "${LISTEN_NETNS:-}" ] || in_ns=(ip netns exec "$LISTEN_NETNS")
	while ((tries-- > 0)); do
		"${in_ns[@]}" ss -Htln "sport = :$1" 2>/dev/null | grep -q . && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# ib_sides SIDE PORT PROGRAM ARGS...: CMD becomes perftest's PROGRAM as SIDE
# (server on rocemu0, client on rocemu1).
ib_sides() {
	local side=$1 port=$2 prog=$3
	shift 3
	CMD=("$prog" -d "$([ "$side" = server ] && echo rocemu0 || echo rocemu1)" -x 0 -F -p "$port" "$@")
	[ "$side" = server ] || CMD+=(127.0.0.1)
}

# ucx_sides SIDE PORT TLS ARGS...: CMD becomes ucx_perftest over UCX_TLS=TLS as
# SIDE (server on rocemu0:1, client on rocemu1:1; both on lo for tcp).
ucx_sides() {
	local side=$1 port=$2 tls=$3 dev
	shift 3
	case $tls in
	tcp) dev=lo ;;
	*) dev=$([ "$side" = server ] && echo rocemu0:1 || echo rocemu1:1) ;;
	esac
	CMD=(env UCX_TLS="$tls" UCX_NET_DEVICES="$dev" ucx_perftest)
	[ "$side" = server ] || CMD+=(127.0.0.1)
	CMD+=(-p "$port" "$@")
}

# Keeps what PARSER found in LOG: its first line under KEY, the others under KEY_SUFFIX.
keep_figures() { # KEY PARSER LOG
	local key=$1 suffix value first=1
	while read -r suffix value; do
		if ((first)); then
			echo "$suffix" >>"$work/$key.vals"
			first=0
		else
			echo "$value" >>"$work/${key}_$suffix.vals"
		fi
	done < <("$2" "$3")
	((!first))
}

# raw_sides SIDE PORT ARGS...: CMD becomes perftest's raw_ethernet_bw as SIDE
# (server on rocemu0, client on rocemu1), IPv4/UDP frames between the
# devices' addresses and default MACs (02:00 then the address), to UDP PORT.
raw_sides() {
	local side=$1 port=$2 addrs macs
	shift 2
	read -r -a addrs <<<"$(sed 's/rocemu[01]=//g; s/,/ /' <<<"$DEVICES")"
	read -r -a macs <<<"$(for a in "${addrs[@]}"; do
		IFS=. read -r -a b <<<"$a"
		printf '02:00:%02x:%02x:%02x:%02x ' "${b[@]}"
	done)"
	[ "$side" = server ] || macs=("${macs[1]}" "${macs[0]}")
	CMD=(raw_ethernet_bw -d "$([ "$side" = server ] && echo rocemu0 || echo rocemu1)" "--$side"
		-B "${macs[0]}" -E "${macs[1]}" -J "${addrs[0]}" -j "${addrs[1]}" -K "$port" -k $((port + 1)) "$@")
}

# raw_ready PORT PID: raw_ethernet_bw has no handshake; its server is ready
# once its RAW_PACKET QP is in RTR or RTS with RAW_RX receives posted.
raw_ready() {
	local tries=$((LISTEN_WAIT * 10))
	while ((tries-- > 0)); do
		timeout 5 "$build/tools/rocemu" status 2>/dev/null | awk -v rx="$RAW_RX" \
			'$3 == "RAW_PACKET" && $4 ~ /^RT[RS]$/ && $7 == "rq_posted" && $8 >= rx { ok = 1 } END { exit !ok }' &&
			return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# One server/client pair, their commands from SIDES (ib_sides, ucx_sides,
# raw_sides), the server ready when PAIR_READY says (default: listening on
# PORT); keeps the figures of PAIR_FIGURES's log (client by default) or
# writes KEY.err.
perftest_pair() { # KEY PARSER PORT SIDES ARGS...
	local key=$1 parser=$2 port=$3 sides=$4 server rc CMD
	local slog="$work/$key.$port.server" clog="$work/$key.$port.client"
	shift 4
	"$sides" server "$port" "$@"
	timeout -k 2 "$PERFTEST_LIMIT" "${CMD[@]}" >"$slog" 2>&1 &
	server=$!
	if ! "${PAIR_READY:-wait_listen}" "$port" "$server"; then
		if kill "$server" 2>/dev/null; then
			wait "$server"
			echo "server: not listening after $LISTEN_WAIT s" >"$work/$key.err"
		else
			wait "$server"
			echo "server: $(failure $? "$slog")" >"$work/$key.err"
		fi
		return 1
	fi
	"$sides" client "$port" "$@"
	timeout -k 2 "$PERFTEST_LIMIT" "${CMD[@]}" >"$clog" 2>&1
	rc=$?
	[ $rc -eq 0 ] || kill "$server" 2>/dev/null # a server without its client would wait out its limit
	wait "$server"
	[ "${PAIR_FIGURES:-client}" = client ] || clog=$slog
	if [ $rc -ne 0 ] || ! keep_figures "$key" "$parser" "$clog"; then
		echo "client: $(failure $rc "$clog")" >"$work/$key.err"
		return 1
	fi
	progress "$key port $port: $(tail -n 1 "$work/$key.vals")"
}

# A TCP port no pair of this run used yet (the counter is a file: pairs run
# in several shells, one after the other).
take_port() {
	local port
	[ -s "$work/port" ] || echo $((20000 + RANDOM % 20000)) >"$work/port"
	port=$(($(cat "$work/port") + 1))
	echo "$port" >"$work/port"
	echo "$port"
}

# Repeats a pair RUNS times; the first failure with no success yet ends it:
# the data path is not there.
perftest_runs() { # KEY PARSER SIDES ARGS...
	local key=$1 parser=$2 i
	shift 2
	for ((i = 0; i < runs; i++)); do
		perftest_pair "$key" "$parser" "$(take_port)" "$@" || [ -s "$work/$key.vals" ] || return
	done
	rm -f "$work/$key.err" # some runs failed, the median is over the others
}

# ---- the daemon ----

daemon_pid() {
	local pid
	pid=$(timeout 5 "$build/tools/rocemu" status 2>/dev/null | awk '$1 == "rocemud" && $2 == "pid" { print $3; exit }')
	[ -n "$pid" ] || pid=$(ss -Hxlp src "$ROCEMU_RUNTIME_DIR/ctrl.sock" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -n 1)
	echo "$pid"
}

# What the daemon runs with, from the first line of `rocemu status`: backend, delivery, poll.
daemon_mode() {
	timeout 5 "$build/tools/rocemu" status 2>/dev/null |
		sed -n '1s/^rocemud pid [0-9]* \(.*\) runtime .*/\1/p' >"$work/daemon_mode"
}

# utime + stime of PID in clock ticks (fields 14 and 15, counted after the ")" of comm)
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }'; }

# resident set of PID in MB (10^6 bytes; /proc counts kB of 1024 bytes)
rss_mb() { awk '$1 == "VmRSS:" { printf "%.1f\n", $2 * 1024 / 1e6 }' "/proc/$1/status" 2>/dev/null; }

idle_cpu() {
	local pid before after
	sleep 1 # let the last client's teardown finish
	pid=$(daemon_pid)
	[ -n "$pid" ] || { echo "daemon pid not found (rocemu status)" >"$work/idle_cpu.err"; return; }
	before=$(cpu_ticks "$pid")
	sleep "$IDLE_SECONDS"
	after=$(cpu_ticks "$pid")
	if [ -z "$before" ] || [ -z "$after" ]; then
		echo "daemon $pid exited during the idle window" >"$work/idle_cpu.err"
		return
	fi
	awk -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" -v s="$IDLE_SECONDS" \
		'BEGIN { printf "%.2f\n", 100 * t / hz / s }' >>"$work/idle_cpu.vals"
	progress "rocemud $pid idle: $((after - before)) ticks in $IDLE_SECONDS s"
}

# Waits until FILE has a line matching REGEX while PID lives; fails after LIMIT s.
wait_line() { # FILE REGEX PID LIMIT
	local tries=$(($4 * 10))
	while ((tries-- > 0)); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || { grep -qE "$2" "$1" 2>/dev/null; return; }
		sleep 0.1
	done
	return 1
}

# Waits up to LIMIT s for PID to exit; kills it (SIGTERM) if it does not.
end_within() { # PID LIMIT
	local tries=$(($2 * 10))
	while ((tries-- > 0)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill "$1" 2>/dev/null
	wait "$1"
}

# The daemon's RSS (rss_start) and its RSS while qp_fill holds QP_COUNT RC QPs
# in RTS (rss_qps). qp_fill prints "ready qps=N" once they are, and holds
# them until its stdin is closed.
qp_rss() {
	local qp_fill="$build/tools/bench/qp_fill" pid fill rc hold ready
	local in="$work/qp_fill.in" out="$work/qp_fill.out" log="$work/qp_fill.log"
	pid=$(daemon_pid)
	[ -n "$pid" ] || { echo "daemon pid not found (rocemu status)" >"$work/rss_qps.err"; return; }
	rss_mb "$pid" >>"$work/rss_start.vals"
	if [ ! -x "$qp_fill" ]; then
		echo "tools/bench/qp_fill is not built" >"$work/rss_qps.err"
		return
	fi
	rm -f "$in"
	mkfifo "$in" || return
	timeout -k 2 "$QP_FILL_LIMIT" "$qp_fill" -n "$QP_COUNT" -d rocemu0 <"$in" >"$out" 2>"$log" &
	fill=$!
	exec {hold}>"$in"
	if wait_line "$out" '^ready ' "$fill" "$QP_FILL_LIMIT"; then
		ready=$(grep -m 1 '^ready ' "$out")
		if [ "$ready" = "ready qps=$QP_COUNT" ]; then
			rss_mb "$pid" >>"$work/rss_qps.vals"
			progress "rocemud $pid with $QP_COUNT RC QPs in RTS: $(tail -n 1 "$work/rss_qps.vals") MB"
		else
			echo "qp_fill -n $QP_COUNT printed \"$ready\"" >"$work/rss_qps.err"
		fi
	fi
	exec {hold}>&-
	end_within "$fill" 10
	rc=$?
	[ -s "$work/rss_qps.vals" ] || [ -s "$work/rss_qps.err" ] ||
		echo "qp_fill -n $QP_COUNT: $(failure $rc "$log")" >"$work/rss_qps.err"
	rm -f "$in"
}

# ---- the sides of the comparison ----

# rocemu's bandwidth, with the daemon capturing and without
WRITE_BW_64K=(ib_write_bw -s 65536 -m 4096 -D 2)

# Whether ucx_perftest is there; if not, the reason of every KEY says so.
ucx_installed() { # KEY...
	command -v ucx_perftest >/dev/null && return
	fails "ucx_perftest not installed (Debian package ucx-utils)" "$@"
	return 1
}

# ucx_runs NAME TLS: ucx_perftest tag_lat and tag_bw over UCX_TLS=TLS,
# figures under ucx_NAME_lat and ucx_NAME_bw.
ucx_runs() {
	local name=$1 tls=$2
	ucx_installed "ucx_${name}_lat" "ucx_${name}_bw" || return
	perftest_runs "ucx_${name}_lat" parse_ucx_lat ucx_sides "$tls" -t tag_lat -s 64 -n 10000
	perftest_runs "ucx_${name}_bw" parse_ucx_bw ucx_sides "$tls" -t tag_bw -s 65536 -n 5000
}

# Runs under `rocemu run`: every program has the shim.
rocemu_side() {
	daemon_mode
	qp_rss
	perftest_runs write_bw parse_write_bw ib_sides "${WRITE_BW_64K[@]}"
	perftest_runs write_rate parse_write_rate ib_sides ib_write_bw -s 64 -D 2
	perftest_runs send_lat parse_lat ib_sides ib_send_lat -s 64 -n 10000
	# libmlx5's 128-byte CQEs: a SEND of up to 64 bytes comes in the CQE (scatter to CQE).
	MLX5_CQE_SIZE=128 perftest_runs send_lat_cqe128 parse_lat ib_sides ib_send_lat -s 64 -n 10000
	perftest_runs write_lat parse_lat ib_sides ib_write_lat -s 64 -n 10000
	perftest_runs read_lat parse_lat ib_sides ib_read_lat -s 64 -n 10000
	# RC needs UD to wire its connections up, as UCX always does.
	ucx_runs rc rc_verbs,ud_verbs:aux
	ucx_runs ud ud_verbs
	# Frames of 64 B a RAW_PACKET QP received per second (the server's report).
	RAW_RX=512 PAIR_READY=raw_ready PAIR_FIGURES=server \
		perftest_runs raw_rate parse_write_rate raw_sides -s 64 -D 2 -r 512
	idle_cpu
}

# UCX over its mlx5 direct-verbs transports, UCX's own choice on an mlx5
# device, against rc_verbs: tag_lat of 8 bytes (ucx_TL_lat8SUFFIX) and
# tag_bw of 64 KiB (ucx_TL_bwSUFFIX), TL rc_mlx5, dc_mlx5 and ud_mlx5 (the
# first two wired up over ud_mlx5, as UCX does); rc_verbs' tag_lat is
# ucx_rc_lat8SUFFIX, its tag_bw ucx_rc_bw (ucx_rc_bw_rt measured here).
ucx_dv_runs() { # SUFFIX
	local sfx=$1 tl tls
	ucx_installed "ucx_rc_lat8$sfx" "ucx_rc_mlx5_lat8$sfx" "ucx_dc_mlx5_lat8$sfx" \
		"ucx_ud_mlx5_lat8$sfx" "ucx_rc_mlx5_bw$sfx" "ucx_dc_mlx5_bw$sfx" "ucx_ud_mlx5_bw$sfx" || return
	perftest_runs "ucx_rc_lat8$sfx" parse_ucx_lat ucx_sides rc_verbs,ud_verbs:aux -t tag_lat -s 8 -n 10000
	[ -z "$sfx" ] || perftest_runs "ucx_rc_bw$sfx" parse_ucx_bw ucx_sides rc_verbs,ud_verbs:aux \
		-t tag_bw -s 65536 -n 5000
	for tl in rc_mlx5 dc_mlx5 ud_mlx5; do
		tls=$tl
		[ "$tl" = ud_mlx5 ] || tls+=,ud_mlx5:aux
		perftest_runs "ucx_${tl}_lat8$sfx" parse_ucx_lat ucx_sides "$tls" -t tag_lat -s 8 -n 10000
		perftest_runs "ucx_${tl}_bw$sfx" parse_ucx_bw ucx_sides "$tls" -t tag_bw -s 65536 -n 5000
	done
}
ucx_dv_side() { ucx_dv_runs ""; }
ucx_dv_rt_side() { ucx_dv_runs _rt; }

# The daemon's wake-ups in a second of nothing, with direct-verbs QPs and
# CQs open (tests/e2e/dv/mlx5dv_rc, which measures it, built by `make
# check`): 0 once their doorbell pages are write-protected.
dv_idle_side() {
	local prog=$build/tests/e2e/dv/mlx5dv_rc log=$work/dv_idle.log pid i n
	[ -x "$prog" ] || { fails "$prog is not built (make tests/e2e/dv/mlx5dv_rc)" dv_idle_wakeups; return; }
	for ((i = 0; i < runs; i++)); do
		pid=$(daemon_pid)
		timeout -k 5 60 "$prog" rocemu0 rocemu1 "$pid" >"$log" 2>&1
		n=$(sed -n 's/.*daemon idle with QPs handed out, not polling: woke \([0-9]*\) times.*/\1/p' "$log")
		if [ -n "$n" ]; then
			echo "$n" >>"$work/dv_idle_wakeups.vals"
		else
			echo "$(failure 1 "$log") (polled: no userfaultfd here?)" >"$work/dv_idle_wakeups.err"
		fi
	done
}

# ib_send_lat again, under a daemon in the latency mode (ROCEMU_BUSY_POLL=1).
busy_poll_side() {
	perftest_runs send_lat_busy parse_lat ib_sides ib_send_lat -s 64 -n 10000
	MLX5_CQE_SIZE=128 perftest_runs send_lat_busy_cqe128 parse_lat ib_sides ib_send_lat -s 64 -n 10000
}

# What a user without RDMA runs instead: UCX over TCP on loopback, no shim.
ucx_tcp_side() {
	ucx_runs tcp tcp
	ucx_installed ucx_tcp_rate || return
	perftest_runs ucx_tcp_rate parse_ucx_rate ucx_sides tcp -t tag_bw -s 64 -n 500000
}

# Runs FUNCTION of this file under `rocemu run` with a daemon of its own
# (ENV, e.g. ROCEMU_PCAP=DIR, set for the daemon and FUNCTION); each of KEYS with neither a
# figure nor a reason afterwards gets the run's failure as its reason.
in_rocemu() { # LIMIT "KEYS" FUNCTION [ENV...]
	local limit=$1 keys=$2 fn=$3 runtime rc key
	shift 3
	runtime=$(mktemp -d "$work/runtime.XXXXXX") || return
	# shellcheck disable=SC2016 # the inner shell expands it
	env "$@" ROCEMU_DEVICES="$DEVICES" ROCEMU_RUNTIME_DIR="$runtime" \
		timeout -k 5 "$limit" "$build/tools/rocemu" run -- \
		bash -c 'source "$BENCH_LIB" && "$0"' "$fn" 2>&1 | tee "$runtime.log" >&2
	rc=${PIPESTATUS[0]}
	for key in $keys; do
		[ -s "$work/$key.vals" ] || [ -s "$work/$key.err" ] ||
			echo "rocemu run: $(failure "$rc" "$runtime.log")" >"$work/$key.err"
	done
}

# Snap length of a pcap file: the 32-bit field at byte 16 of its header (host order).
pcap_snaplen() { od -A n -t u4 -j 16 -N 4 "$1" 2>/dev/null | tr -d ' '; }

# One ib_write_bw 64 KiB pair, as write_bw's, under CAPTURE_KEY.
capture_pair() {
	perftest_pair "$CAPTURE_KEY" parse_write_bw "$(take_port)" ib_sides "${WRITE_BW_64K[@]}"
}

# ib_write_bw 64 KiB RUNS times, each under a new daemon started with
# ROCEMU_PCAP (so each run's files can go); SNAPLEN "default" leaves
# ROCEMU_PCAP_SNAPLEN unset. The snap length in the files' header goes to
# KEY.snaplen.
capture_runs() { # KEY SNAPLEN
	local key=$1 snaplen=$2 i dir env
	for ((i = 0; i < runs; i++)); do
		dir=$(mktemp -d "$work/pcap.XXXXXX") || return
		env=(-u ROCEMU_PCAP_SNAPLEN)
		[ "$snaplen" = default ] || env=(ROCEMU_PCAP_SNAPLEN="$snaplen")
		in_rocemu $((PERFTEST_LIMIT + LISTEN_WAIT + 30)) "$key" capture_pair \
			"${env[@]}" ROCEMU_PCAP="$dir" CAPTURE_KEY="$key"
		pcap_snaplen "$dir/rocemu0.pcap" >"$work/$key.snaplen"
		rm -rf "$dir"
		[ -s "$work/$key.vals" ] || return
	done
	rm -f "$work/$key.err"
}
