#!/usr/bin/env bash
# rss.sh — warden's memory under load: peak RSS of `warden serve` while C connections
# load its AOS endpoint (issue 15's target: RSS at 1,024 connections <= 256 MB).
#
# Needs go, jq and curl. Builds cmd/warden and bench/loadgen, starts `warden serve --builtin=false --policy
# bench/policies` on a fresh data directory (the durable SQLite trace, as
# bench/compare.sh runs it), runs loadgen with C closed-loop connections for WARMUP + D,
# and meanwhile samples the server's /proc/PID/status (VmRSS, VmHWM) and its open file
# descriptors every INTERVAL. Prints the idle RSS, the peak sampled VmRSS, the kernel's
# VmHWM (the true peak, sampling or not), the peak open descriptors (so the connections
# really were open at once), the Go runtime's heap and stack figures from /metrics halfway
# through the measured window, and loadgen's decisions/s, p50, p99 and errors.
#
# Knobs (environment): C=1024 D=10s WARMUP=2s INTERVAL=0.5 BODY=bench/requests/tool_call.json
#   POLICY=bench/policies  LIMIT_MB=256 (the target)  OUT=<dir to keep the log, samples, JSON>
#   WARDEN=<path>  use this warden binary instead of building ./cmd/warden
#   WARDEN_ARGS="..."  extra flags for `warden serve`
#   STRICT=1    exit 1 when the peak is over LIMIT_MB or a request failed
#
# File descriptors: the server and loadgen each hold C sockets. When the soft open-file
# limit is under C + 256 (serve's reserve), the script raises it to that, up to the hard
# limit, and fails if the hard limit is lower. serve's own GC target (GOGC=400 unless
# GOGC is set) and soft memory limit (192 MiB unless GOMEMLIMIT is set) apply, as in
# production; a GOGC in the environment is printed.
set -euo pipefail

C=${C:-1024}
D=${D:-10s}
WARMUP=${WARMUP:-2s}
INTERVAL=${INTERVAL:-0.5}
LIMIT_MB=${LIMIT_MB:-256}
STRICT=${STRICT:-0}
[[ $C =~ ^[0-9]+$ ]] && ((C >= 1 && C <= 4096)) || {
	echo "C=$C: want 1..4096 (loadgen's bound)" >&2
	exit 2
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
BODY=${BODY:-bench/requests/tool_call.json}
POLICY=${POLICY:-bench/policies}

log() { printf '%s\n' "$*" >&2; }

need=$((C + 256))
soft=$(ulimit -Sn)
hard=$(ulimit -Hn)
if [[ $soft != unlimited ]] && ((soft < need)); then
	if [[ $hard != unlimited ]] && ((hard < need)); then
		log "open-file limit: need $need for C=$C, hard limit is $hard; raise it (or lower C)"
		exit 1
	fi
	ulimit -Sn "$need"
	log "open-file limit raised from $soft to $need for C=$C"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/warden-rss.XXXXXX")
OUT=${OUT:-$tmp/out}
mkdir -p "$OUT" "$tmp/bin"
server_pid=""
sampler_pid=""
metrics_pid=""

cleanup() {
	if [[ -n $sampler_pid ]]; then kill "$sampler_pid" 2>/dev/null || true; fi
	if [[ -n $metrics_pid ]]; then kill "$metrics_pid" 2>/dev/null || true; fi
	if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
		kill -KILL "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp" # binaries, trace data, and the results unless OUT is elsewhere
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "building into $tmp/bin ..."
if [[ -n ${WARDEN:-} ]]; then
	cp "$WARDEN" "$tmp/bin/warden"
else
	go build -o "$tmp/bin/warden" ./cmd/warden
fi
go build -o "$tmp/bin/loadgen" ./bench/loadgen

extra=()
if [[ -n ${WARDEN_ARGS:-} ]]; then read -r -a extra <<<"$WARDEN_ARGS"; fi
logf=$OUT/warden.log
: >"$logf"
"$tmp/bin/warden" serve --addr 127.0.0.1:0 --data "$tmp/data" --builtin=false --policy "$POLICY" "${extra[@]}" >"$logf" 2>&1 &
server_pid=$!
url=""
for ((i = 0; i < 300; i++)); do
	url=$(sed -n 's/.*listening on \(http:\/\/[^ ]*\).*/\1/p' "$logf" | head -n1) || true
	[[ -n $url ]] && break
	if ! kill -0 "$server_pid" 2>/dev/null; then
		log "warden exited before listening:"
		cat "$logf" >&2
		exit 1
	fi
	sleep 0.05
done
[[ -n $url ]] || {
	log "warden did not print its listening line within 15s:"
	cat "$logf" >&2
	exit 1
}

# status_kb FIELD — FIELD (VmRSS, VmHWM) of the server in kB.
status_kb() { awk -v f="$1:" '$1 == f {print $2}' "/proc/$server_pid/status"; }
mb() { awk -v k="$1" 'BEGIN {printf "%.1f", k/1024}'; }

idle_rss=$(status_kb VmRSS)
# The sampler: one line per INTERVAL, "seconds VmRSS_kB VmHWM_kB open_fds".
samples=$OUT/samples.tsv
(
	t0=$(date +%s.%N)
	while kill -0 "$server_pid" 2>/dev/null; do
		s=$(awk '$1 == "VmRSS:" {r=$2} $1 == "VmHWM:" {h=$2} END {print r, h}' "/proc/$server_pid/status" 2>/dev/null) || break
		fds=$(find "/proc/$server_pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
		printf '%s %s %s\n' "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b-a}')" "$s" "$fds"
		sleep "$INTERVAL"
	done
) >"$samples" &
sampler_pid=$!

# Halfway through the measured window, the Go runtime's own view from /metrics: what
# of the RSS is heap (live and garbage), stacks, and how many goroutines.
secs() { awk -v d="$1" 'BEGIN {sub(/s$/, "", d); print d+0}'; }
(
	sleep "$(awk -v w="$(secs "$WARMUP")" -v d="$(secs "$D")" 'BEGIN {print w + d/2}')"
	curl -sf "$url/metrics" >"$OUT/metrics.mid" || true
) &
metrics_pid=$!
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
log "load: C=$C D=$D WARMUP=$WARMUP against $url/aos, sampling every ${INTERVAL}s"
"$tmp/bin/loadgen" -url "$url/aos" -body "$BODY" -c "$C" -d "$D" -warmup "$WARMUP" -label "warden-c$C" -json >"$OUT/loadgen.json"
hwm=$(status_kb VmHWM)
wait "$metrics_pid" 2>/dev/null || true
metrics_pid=""
end_rss=$(status_kb VmRSS)
kill "$sampler_pid" 2>/dev/null || true
wait "$sampler_pid" 2>/dev/null || true
sampler_pid=""

kill -TERM "$server_pid"
rc=0
wait "$server_pid" || rc=$?
server_pid=""
if ((rc != 0)); then
	log "warden exited with status $rc after SIGTERM; log tail:"
	tail -n 20 "$logf" >&2
	exit 1
fi

peak_rss=$(awk '$2 > m {m = $2} END {print m+0}' "$samples")
peak_fds=$(awk '$4 > m {m = $4} END {print m+0}' "$samples")
nsamples=$(wc -l <"$samples")
field() { jq -r ".$1" "$OUT/loadgen.json"; }
errors=$(field errors)

echo
echo "C=$C connections, D=$D measured after WARMUP=$WARMUP, $(nproc) CPUs, $(go env GOVERSION), GOGC=${GOGC:-unset, serve sets 400}, GOMEMLIMIT=${GOMEMLIMIT:-unset, serve sets 192MiB}, body $BODY, policies $POLICY"
echo "load average before: $load_start, after: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews the figures)"
echo "RSS idle (listening, before load): $(mb "$idle_rss") MB"
echo "RSS peak sampled ($nsamples samples every ${INTERVAL}s): $(mb "$peak_rss") MB; at the end of the load: $(mb "$end_rss") MB"
echo "VmHWM (the kernel's peak RSS): $(mb "$hwm") MB  (target <= $LIMIT_MB MB)"
echo "open descriptors, peak sampled: $peak_fds"
if [[ -s $OUT/metrics.mid ]]; then
	gm() { awk -v n="$1" '$1 == n {printf "%.1f", $2/1048576}' "$OUT/metrics.mid"; }
	echo "halfway, Go runtime (MB): heap in use $(gm go_memstats_heap_inuse_bytes), heap live+garbage allocated $(gm go_memstats_heap_alloc_bytes), heap from the OS $(gm go_memstats_heap_sys_bytes), heap released $(gm go_memstats_heap_released_bytes), stacks $(gm go_memstats_stack_inuse_bytes); goroutines $(awk '$1 == "go_goroutines" {print $2}' "$OUT/metrics.mid")"
fi
printf 'decisions/s: %.0f  p50: %.2f ms  p99: %.2f ms  errors: %s\n' "$(field rps)" \
	"$(awk -v v="$(field p50_us)" 'BEGIN {print v/1000}')" "$(awk -v v="$(field p99_us)" 'BEGIN {print v/1000}')" "$errors"
ok=$(awk -v h="$hwm" -v l="$LIMIT_MB" 'BEGIN {print (h/1024 <= l) ? "PASS" : "FAIL"}')
echo "peak RSS <= $LIMIT_MB MB: $ok"
if [[ $errors != 0 ]]; then echo "first error: $(field first_error)"; fi
if [[ $OUT != "$tmp/out" ]]; then echo "log, samples and loadgen JSON in $OUT"; fi
if [[ $STRICT == 1 && ($ok == FAIL || $errors != 0) ]]; then exit 1; fi
