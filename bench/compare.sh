#!/usr/bin/env bash
# compare.sh — load-test warden's AOS (or ACS) endpoint against the floor server.
#
# Builds cmd/warden, bench/floor and bench/loadgen, then RUNS times runs the same
# closed-loop load (C connections, D measured after WARMUP) against the floor and
# against `warden serve --builtin=false --policy bench/policies` (order alternates between runs), and
# prints each run, the medians and the two acceptance ratios:
#   warden_rps / floor_rps  >= 0.8     warden_p99 / floor_p99  <= 1.25
#
# Knobs (environment): C=32 D=10s WARMUP=2s RUNS=1 BODY=bench/requests/tool_call.json
#   POLICY=bench/policies  OUT=<dir to keep logs, JSON results and profiles>
#   WARDEN=<path>  use this warden binary instead of building ./cmd/warden
#   PROFILE=1   run warden's first run with --pprof and fetch a CPU profile of it
#               ($OUT/warden.cpu.pprof; with PG also $OUT/warden-pg.cpu.pprof)
#   WARDEN_ARGS="..."  extra flags for `warden serve`
#   AUTH=1      serve with auth.tokens configured and send the bearer token with every
#               request (to the floor too, so the client does the same work)
#   ACS=1       load warden's ACS endpoint (POST /acs) instead of AOS: warden runs with
#               acs.keys {k1: "hex:<32 random bytes>"} (so signatures are required),
#               BODY defaults to bench/requests/acs_tool_call.json, and loadgen runs in
#               ACS mode (-acs-key-id k1 -acs-key-file): one session per connection, a
#               handshake first (not measured), every request with a fresh request_id
#               and timestamp, signed (HMAC-SHA256 over JCS); an ACS error answer is an
#               error. The floor gets the same requests at /aos, so the client does the
#               same work for both.
#   ACS=unsigned  the same without keys: unsigned requests, signatures not required
#   PG=URL      also run warden with `--store URL` (PostgreSQL, issue 14) in each run and
#               print its figures beside the SQLite ones, with the ratio
#               warden-pg_rps / warden_rps (target >= 0.7). Each run appends to that
#               database: give a fresh one (createdb) for figures that do not depend on
#               the table's size.
#   OPA=1       also run OPA's server (`opa run --server`, v1.22.3) with bench/opa/policy.rego,
#               the pack in Rego, in each run, loaded with the same request wrapped as
#               {"input": ...} (bench/requests/tool_call_opa.json) at
#               /v1/data/warden/bench/decision, and print the ratio warden_rps / opa_rps
#               (target >= 2.5). OPA is built once from the Go module proxy into
#               ${XDG_CACHE_HOME:-$HOME/.cache}/warden-bench/opa-v1.22.3/opa;
#               OPA_BIN=<path> uses that binary instead. AOS only (not with ACS).
#   STRICT=1    exit 1 when a target is missed
#   Each server's CPU per decision (loadgen -server-pid), its loadgen's and the machine's idle
#   share are printed too, with the CPU a warden decision may take for 0.8x the floor.
set -euo pipefail

C=${C:-32}
D=${D:-10s}
WARMUP=${WARMUP:-2s}
RUNS=${RUNS:-1}
PROFILE=${PROFILE:-0}
STRICT=${STRICT:-0}
PG=${PG:-}
ACS=${ACS:-0}
OPA=${OPA:-0}
OPA_VERSION=v1.22.3
case $OPA in
0 | 1) ;;
*)
	echo "OPA=$OPA: want 0 or 1" >&2
	exit 2
	;;
esac
if [[ $OPA == 1 && $ACS != 0 ]]; then
	echo "OPA=1 compares the AOS request only; it does not go with ACS=$ACS" >&2
	exit 2
fi
case $ACS in
0 | 1 | unsigned) ;;
*)
	echo "ACS=$ACS: want 0, 1 or unsigned" >&2
	exit 2
	;;
esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
if [[ $ACS == 0 ]]; then
	BODY=${BODY:-bench/requests/tool_call.json}
	wire=aos
else
	BODY=${BODY:-bench/requests/acs_tool_call.json}
	wire=acs
fi
POLICY=${POLICY:-bench/policies}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/warden-bench.XXXXXX")
OUT=${OUT:-$tmp/out}
mkdir -p "$OUT"
server_pid=""

cleanup() {
	if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
		kill -KILL "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	server_pid=""
	rm -rf "$tmp" # binaries, trace data, and the results unless OUT is elsewhere
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { printf '%s\n' "$*" >&2; }

log "building into $tmp/bin ..."
if [[ -n ${WARDEN:-} ]]; then
	cp "$WARDEN" "$tmp/bin/warden" 2>/dev/null || { mkdir -p "$tmp/bin" && cp "$WARDEN" "$tmp/bin/warden"; }
else
	go build -o "$tmp/bin/warden" ./cmd/warden
fi
go build -o "$tmp/bin/floor" ./bench/floor
go build -o "$tmp/bin/loadgen" ./bench/loadgen
opa_build=""
if [[ $OPA == 1 ]]; then
	if [[ -n ${OPA_BIN:-} ]]; then
		opa_bin=$OPA_BIN
	else
		opa_dir=${XDG_CACHE_HOME:-$HOME/.cache}/warden-bench/opa-$OPA_VERSION
		opa_bin=$opa_dir/opa
		if [[ ! -x $opa_bin ]]; then
			log "building OPA $OPA_VERSION into $opa_dir (once; later runs reuse it) ..."
			opa_t0=$(date +%s)
			mkdir -p "$opa_dir"
			(cd "$tmp" && GOBIN=$opa_dir GOFLAGS= go install "github.com/open-policy-agent/opa@$OPA_VERSION")
			opa_build="built in $(($(date +%s) - opa_t0))s"
		fi
	fi
	"$opa_bin" version | head -n 1 | grep -q "${OPA_VERSION#v}" || log "warning: $opa_bin is not OPA $OPA_VERSION: $("$opa_bin" version | head -n 1)"
fi

# start_server NAME CMD... — starts CMD in the background, waits for its
# "listening on http://H:P" line and sets server_pid and server_url.
start_server() {
	local name=$1
	shift
	local logf="$OUT/$name.log"
	: >"$logf"
	"$@" >"$logf" 2>&1 &
	server_pid=$!
	server_url=""
	local i
	for ((i = 0; i < 300; i++)); do
		server_url=$(sed -n 's/.*listening on \(http:\/\/[^ ]*\).*/\1/p' "$logf" | head -n1) || true
		[[ -n $server_url ]] && return 0
		if ! kill -0 "$server_pid" 2>/dev/null; then
			log "$name exited before listening:"
			cat "$logf" >&2
			server_pid=""
			return 1
		fi
		sleep 0.05
	done
	log "$name did not print its listening line within 15s:"
	cat "$logf" >&2
	return 1
}

# stop_server NAME — SIGTERM, wait up to 15s, then SIGKILL; fails on a non-zero exit.
stop_server() {
	local name=$1 pid=$server_pid rc=0 i
	kill -TERM "$pid" 2>/dev/null || true
	for ((i = 0; i < 150; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		log "$name did not exit 15s after SIGTERM; killing it"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" || rc=$?
	server_pid=""
	if ((rc != 0)); then
		log "$name exited with status $rc after SIGTERM; log tail:"
		tail -n 20 "$OUT/$name.log" >&2
		return 1
	fi
}

# load NAME URL [BODY [LOADGEN FLAGS...]] — runs loadgen, keeps its JSON result in $OUT/NAME.json.
load() {
	local name=$1 url=$2 body=${3:-$BODY}
	shift 2
	if (($# > 0)); then shift; fi
	local extra=("$@")
	if [[ ${AUTH:-0} == 1 ]]; then extra+=(-token-file "$tmp/token"); fi
	case $ACS in
	1) extra+=(-acs-key-id k1 -acs-key-file "$tmp/acs.key") ;;
	unsigned) extra+=(-acs) ;;
	esac
	"$tmp/bin/loadgen" -url "$url" -body "$body" -c "$C" -d "$D" -warmup "$WARMUP" \
		-label "$name" -json -server-pid "$server_pid" "${extra[@]}" >"$OUT/$name.json"
}

# warden's --config, when AUTH or ACS need one.
config=""
# With AUTH=1: a fresh token, and a config that accepts only it (scope decide).
if [[ ${AUTH:-0} == 1 ]]; then
	"$tmp/bin/warden" token new --name bench --scopes decide >"$tmp/token.out"
	head -n 1 "$tmp/token.out" >"$tmp/token"
	{ echo "auth:"; echo "  tokens:"; tail -n 1 "$tmp/token.out" | sed 's/^/    /'; } >>"$tmp/warden.yaml"
	config=$tmp/warden.yaml
fi
# With ACS=1: a fresh random 32-byte key k1; configuring a key makes warden require
# signatures (acs.require_signatures defaults to true when keys are set).
if [[ $ACS == 1 ]]; then
	od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$tmp/acs.key"
	{ echo "acs:"; echo "  keys:"; echo "    k1: \"hex:$(cat "$tmp/acs.key")\""; } >>"$tmp/warden.yaml"
	config=$tmp/warden.yaml
fi

run_floor() {
	local tag="floor-$1"
	start_server "$tag" "$tmp/bin/floor" -addr 127.0.0.1:0
	load "$tag" "$server_url/aos" # the floor answers any path; ACS bodies too
	stop_server "$tag"
}

# run_warden RUN [pg] — warden with its SQLite trace, or with PG's store.
run_warden() {
	local tag="warden-$1" prof_pid=""
	local extra=()
	if [[ -n ${WARDEN_ARGS:-} ]]; then read -r -a extra <<<"$WARDEN_ARGS"; fi
	local prof="$OUT/warden.cpu.pprof"
	if [[ ${2:-} == pg ]]; then
		tag="warden-pg-$1"
		prof="$OUT/warden-pg.cpu.pprof"
		extra+=(--store "$PG")
	fi
	if [[ $PROFILE == 1 && $1 == 1 ]]; then extra+=(--pprof); fi
	if [[ -n $config ]]; then extra+=(--config "$config"); fi
	start_server "$tag" "$tmp/bin/warden" serve --addr 127.0.0.1:0 --data "$tmp/data-$1" --builtin=false --policy "$POLICY" "${extra[@]}"
	if [[ $PROFILE == 1 && $1 == 1 ]]; then
		local secs=${D%s}
		[[ $secs =~ ^[0-9]+$ ]] || secs=10
		(sleep "${WARMUP%s}" 2>/dev/null || true
			curl -sf -o "$prof" "$server_url/debug/pprof/profile?seconds=$secs" ||
				log "no CPU profile: $server_url/debug/pprof/profile not available") &
		prof_pid=$!
	fi
	load "$tag" "$server_url/$wire"
	if [[ -n $prof_pid ]]; then wait "$prof_pid" || true; fi
	# Keep the server's own view (trace batch sizes and commit times) for reading later.
	curl -sf -o "$OUT/$tag.metrics" "$server_url/metrics" 2>/dev/null || true
	stop_server "$tag"
}

# start_opa NAME — `opa run --server` with the Rego pack on a free loopback port; waits
# for /health and sets server_pid and server_url (OPA prints no address of its own).
start_opa() {
	local name=$1 logf="$OUT/$1.log" try i port
	for ((try = 0; try < 5; try++)); do
		port=$((20000 + RANDOM % 40000))
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then continue; fi # taken
		: >"$logf"
		"$opa_bin" run --server --addr "127.0.0.1:$port" --log-level error --skip-version-check \
			bench/opa/policy.rego >"$logf" 2>&1 &
		server_pid=$!
		server_url="http://127.0.0.1:$port"
		for ((i = 0; i < 300; i++)); do
			if curl -sf -o /dev/null "$server_url/health"; then return 0; fi
			kill -0 "$server_pid" 2>/dev/null || break
			sleep 0.05
		done
		if kill -0 "$server_pid" 2>/dev/null; then
			log "$name did not answer /health within 15s:"
			cat "$logf" >&2
			return 1
		fi
		wait "$server_pid" 2>/dev/null || true
		server_pid=""
		log "$name exited before serving (port $port); retrying:"
		cat "$logf" >&2
	done
	return 1
}

run_opa() {
	local tag="opa-$1"
	start_opa "$tag"
	load "$tag" "$server_url/v1/data/warden/bench/decision" bench/requests/tool_call_opa.json -id-in input
	stop_server "$tag"
}

field() { jq -r ".$2" "$OUT/$1.json"; }

# median of the numbers on stdin
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
log "load: C=$C D=$D WARMUP=$WARMUP RUNS=$RUNS body=$BODY ($(jq -cj . "$BODY" | wc -c) bytes) policies=$POLICY ($(cat "$POLICY"/*.yaml | grep -c '^id:') policies) auth=${AUTH:-0} acs=$ACS (warden at /$wire)"
for ((r = 1; r <= RUNS; r++)); do
	if ((r % 2)); then
		log "run $r/$RUNS: floor, then warden"
		run_floor "$r"
		run_warden "$r"
		if [[ -n $PG ]]; then run_warden "$r" pg; fi
		if [[ $OPA == 1 ]]; then run_opa "$r"; fi
	else
		log "run $r/$RUNS: warden, then floor"
		if [[ $OPA == 1 ]]; then run_opa "$r"; fi
		if [[ -n $PG ]]; then run_warden "$r" pg; fi
		run_warden "$r"
		run_floor "$r"
	fi
done
servers=(floor warden)
if [[ -n $PG ]]; then servers+=(warden-pg); fi
if [[ $OPA == 1 ]]; then servers+=(opa); fi

ms() { awk -v v="$1" 'BEGIN {printf "%.2f ms", v/1000}'; }

echo
echo "C=$C connections, D=$D measured after WARMUP=$WARMUP, RUNS=$RUNS, $(nproc) CPUs, $(go env GOVERSION), warden at /$wire (ACS=$ACS), body $BODY"
echo "load average before: $load_start, after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?") (other work on the machine skews both servers)"
echo
echo "| run | server | decisions/s | p50 | p99 | p99.9 | errors |"
echo "|---|---|---:|---:|---:|---:|---:|"
for ((r = 1; r <= RUNS; r++)); do
	for s in "${servers[@]}"; do
		t="$s-$r"
		printf '| %s | %s | %.0f | %s | %s | %s | %s |\n' "$r" "$s" "$(field "$t" rps)" \
			"$(ms "$(field "$t" p50_us)")" "$(ms "$(field "$t" p99_us)")" \
			"$(ms "$(field "$t" p999_us)")" "$(field "$t" errors)"
	done
done
declare -A med
for s in "${servers[@]}"; do
	for k in rps p50_us p99_us p999_us errors; do
		med[$s.$k]=$(for ((r = 1; r <= RUNS; r++)); do field "$s-$r" "$k"; done | median)
	done
	printf '| median | %s | %.0f | %s | %s | %s | %s |\n' "$s" "${med[$s.rps]}" \
		"$(ms "${med[$s.p50_us]}")" "$(ms "${med[$s.p99_us]}")" "$(ms "${med[$s.p999_us]}")" "${med[$s.errors]}"
done

# CPU per decision over the measured window (loadgen -server-pid): what each server
# spends, what loadgen spends driving it, and how idle the machine was. On a machine
# the client shares, warden reaches 0.8x the floor only if its CPU and its client's
# per decision fit in the floor's pair's divided by 0.8 (the same busy CPU, 0.8x the
# decisions): that bound is printed as warden's budget.
echo
echo "| CPU per decision (median) | server | loadgen | machine idle |"
echo "|---|---:|---:|---:|"
for s in "${servers[@]}"; do
	for k in server_cpu_us client_cpu_us idle_pct; do
		med[$s.$k]=$(for ((r = 1; r <= RUNS; r++)); do jq -r ".$k // 0" "$OUT/$s-$r.json"; done | median)
	done
	printf '| %s | %.0f µs | %.0f µs | %.1f %% |\n' "$s" "${med[$s.server_cpu_us]}" "${med[$s.client_cpu_us]}" "${med[$s.idle_pct]}"
done
awk -v f="${med[floor.server_cpu_us]}" -v fl="${med[floor.client_cpu_us]}" -v w="${med[warden.server_cpu_us]}" \
	-v wl="${med[warden.client_cpu_us]}" 'BEGIN {if (f > 0 && w > 0) printf "warden CPU budget for 0.8x the floor at this machine load: <= %.0f µs a decision (it used %.0f)\n", (f + fl) / 0.8 - wl, w}'

if [[ $ACS != 0 ]]; then
	echo
	echo "loadgen's own time to build$([[ $ACS == 1 ]] && echo " and sign") one ACS request (mean per run, floor and warden): $(for ((r = 1; r <= RUNS; r++)); do
		printf '%.1f/%.1f µs ' "$(field "floor-$r" client_prep_us)" "$(field "warden-$r" client_prep_us)"
	done)"
fi

rps_ratio=$(awk -v w="${med[warden.rps]}" -v f="${med[floor.rps]}" 'BEGIN {printf "%.3f", w/f}')
p99_ratio=$(awk -v w="${med[warden.p99_us]}" -v f="${med[floor.p99_us]}" 'BEGIN {printf "%.3f", w/f}')
rps_ok=$(awk -v x="$rps_ratio" 'BEGIN {print (x >= 0.8) ? "PASS" : "FAIL"}')
p99_ok=$(awk -v x="$p99_ratio" 'BEGIN {print (x <= 1.25) ? "PASS" : "FAIL"}')
echo
echo "per run: $(for ((r = 1; r <= RUNS; r++)); do
	awk -v r="$r" -v w="$(field "warden-$r" rps)" -v f="$(field "floor-$r" rps)" \
		-v wp="$(field "warden-$r" p99_us)" -v fp="$(field "floor-$r" p99_us)" \
		'BEGIN {printf "[run %d: rps %.3f, p99 %.3f] ", r, w/f, wp/fp}'
done)"
echo "warden_rps / floor_rps = $rps_ratio (target >= 0.8)  $rps_ok"
echo "warden_p99 / floor_p99 = $p99_ratio (target <= 1.25) $p99_ok"
pg_ok=PASS
if [[ -n $PG ]]; then
	pg_ratio=$(awk -v p="${med[warden-pg.rps]}" -v w="${med[warden.rps]}" 'BEGIN {printf "%.3f", p/w}')
	pg_ok=$(awk -v x="$pg_ratio" 'BEGIN {print (x >= 0.7) ? "PASS" : "FAIL"}')
	echo "warden-pg_rps / warden_rps = $pg_ratio (PostgreSQL vs SQLite store, target >= 0.7)  $pg_ok"
	pg_p99=$(awk -v p="${med[warden-pg.p99_us]}" -v w="${med[warden.p99_us]}" 'BEGIN {printf "%.3f", p/w}')
	echo "warden-pg_p99 / warden_p99 = $pg_p99"
fi
opa_ok=PASS
if [[ $OPA == 1 ]]; then
	opa_ratio=$(awk -v w="${med[warden.rps]}" -v o="${med[opa.rps]}" 'BEGIN {printf "%.3f", w/o}')
	opa_ok=$(awk -v x="$opa_ratio" 'BEGIN {print (x >= 2.5) ? "PASS" : "FAIL"}')
	echo "per run, warden vs OPA: $(for ((r = 1; r <= RUNS; r++)); do
		awk -v r="$r" -v w="$(field "warden-$r" rps)" -v o="$(field "opa-$r" rps)" \
			-v wp="$(field "warden-$r" p99_us)" -v op="$(field "opa-$r" p99_us)" \
			'BEGIN {printf "[run %d: rps %.3f, p99 %.3f] ", r, w/o, wp/op}'
	done)"
	echo "warden_rps / opa_rps = $opa_ratio (OPA $("$opa_bin" version | sed -n 's/^Version: //p'), bench/opa/policy.rego, target >= 2.5)  $opa_ok"
	echo "warden_p99 / opa_p99 = $(awk -v w="${med[warden.p99_us]}" -v o="${med[opa.p99_us]}" 'BEGIN {printf "%.3f", w/o}')"
	if [[ -n $opa_build ]]; then echo "OPA $OPA_VERSION $opa_build into $opa_dir"; fi
fi
errs=$(awk -v a="${med[floor.errors]}" -v b="${med[warden.errors]}" -v c="${med[warden-pg.errors]:-0}" -v d="${med[opa.errors]:-0}" 'BEGIN {print a+b+c+d}')
if [[ $errs != 0 ]]; then
	echo "errors seen; first ones:"
	for ((r = 1; r <= RUNS; r++)); do jq -r 'select(.first_error) | "\(.label): \(.first_error)"' "$OUT"/*-"$r".json; done
fi
if [[ $OUT != "$tmp/out" ]]; then echo "logs and JSON results in $OUT"; fi
if [[ $STRICT == 1 && ($rps_ok == FAIL || $p99_ok == FAIL || $pg_ok == FAIL || $opa_ok == FAIL) ]]; then exit 1; fi
