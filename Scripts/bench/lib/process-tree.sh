# Sourced by the benchmarks: CPU time and memory of a server and every process under it (hearth's
# workers, gunicorn's master and workers), read from /proc; and wrk's latencies in milliseconds.

# The process and all its descendants, one pid per line.
process_tree() { local pid; echo "$1"; for pid in $(pgrep -P "$1" || true); do process_tree "$pid"; done; }

# utime and stime of the tree, in clock ticks: "USER SYSTEM".
tree_cpu_split() {
    local user=0 system=0 pid u s
    for pid in $(process_tree "$1"); do
        [[ -r "/proc/$pid/stat" ]] || continue
        # Fields after the command's closing parenthesis, which may itself hold spaces.
        read -r u s < <(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | awk '{print $12, $13}') || continue
        user=$((user + ${u:-0})); system=$((system + ${s:-0}))
    done
    echo "$user $system"
}

# utime + stime of the tree, in clock ticks (getconf CLK_TCK per second).
tree_cpu_ticks() { local user system; read -r user system < <(tree_cpu_split "$1"); echo $((user + system)); }

# utime + stime, in clock ticks, of this shell's children that have ended and been waited for (a
# load generator it ran, such as wrk): the difference around one command is that command's CPU.
children_cpu_ticks() { sed 's/.*) //' "/proc/$$/stat" | awk '{print $14 + $15}'; }

# The whole machine's CPU time since boot, in clock ticks: "BUSY IDLE" (idle counts iowait too: a
# core waiting on the disk has nothing to run). The idle share around a load run tells whether the
# server used the cores it had, or left them waiting on hand-offs and I/O.
machine_cpu_ticks() {
    awk '$1 == "cpu" {idle = $5 + $6; busy = $2 + $3 + $4 + $7 + $8 + $9; print busy, idle; exit}' /proc/stat
}

# The idle share, in percent, between two readings of machine_cpu_ticks: idle_percent "B I" "B I".
idle_percent() {
    awk -v b="$1" -v a="$2" 'BEGIN {split(b, x, " "); split(a, y, " "); busy = y[1] - x[1]; idle = y[2] - x[2]
        if (busy + idle > 0) printf "%.0f", 100 * idle / (busy + idle); else print "-"}'
}

# VmRSS of the tree, in KiB.
tree_rss_kib() {
    local total=0 pid
    for pid in $(process_tree "$1"); do
        total=$((total + $(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)))
    done
    echo "$total"
}

# CPU µs per request: cpu_per_request BEFORE_TICKS AFTER_TICKS REQUESTS
cpu_per_request() {
    awk -v b="$1" -v a="$2" -v t="$(getconf CLK_TCK)" -v n="$3" 'BEGIN {if (n > 0) printf "%.0f", (a - b) / t * 1e6 / n; else print "-"}'
}

# Context switches (voluntary + involuntary) of every thread of the tree so far: each is a thread
# that blocked or was preempted, and most of a server's are hand-offs between its threads.
tree_context_switches() {
    local pid
    for pid in $(process_tree "$1"); do
        cat /proc/"$pid"/task/*/status 2>/dev/null || true
    done | awk '/^(voluntary|nonvoluntary)_ctxt_switches:/ {s += $2} END {print s + 0}'
}

# A latency as wrk prints it (850.00us, 1.32ms, 2.01s) in milliseconds, so that figures in
# different units compare and take medians as numbers.
to_ms() { awk '{v = $1 + 0; if ($1 ~ /us$/) v /= 1000; else if ($1 ~ /ms$/) v += 0; else if ($1 ~ /s$/) v *= 1000; printf "%.2f\n", v}'; }

# Deliveries of a hearth server on 127.0.0.1:PORT pending or running, from its /metrics: those of
# FUNCTION, or of every function without one (0 once the triggers have caught up).
deliveries_waiting() {
    local filter='\{'
    [[ -n "${2:-}" ]] && filter="\\{function=\"$2\"\\}"
    curl -s "http://127.0.0.1:$1/metrics" | awk "/^hearth_deliveries_(pending|in_flight)$filter/ {s += \$2} END {print s + 0}"
}
