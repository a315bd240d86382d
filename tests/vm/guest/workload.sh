# shellcheck shell=sh
# The workload whose state must survive a hibernate/resume cycle (sourced by
# the scenario scripts).  Its state lives only in memory:
#   - a background process counting seconds; it writes "PID COUNT" to
#     /run/counter (tmpfs) every second, PID read by the process itself;
#   - a random token in a shell variable of the scenario script;
#   - a ~200 MB tmpfs file of random data, its MD5 kept in a variable (a
#     check against accidents, not an adversary: busybox's md5sum takes 2/3
#     of sha256sum's time under TCG, 2.4 s against 3.8 s for 100 MB).
# workload_report prints them before hibernating; workload_after_resume
# prints them again (hash recomputed) in the resumed world.

WORKLOAD_FILE=/run/workload.bin
WORKLOAD_MB=${WORKLOAD_MB:-200}

# workload_hash: the hash of the workload file, as workload_start took it.
workload_hash() {
	md5sum "$WORKLOAD_FILE" | cut -d' ' -f1
}

workload_start() {
	(
		# `read` is a shell builtin: /proc/self is this process.
		read -r pid _ </proc/self/stat
		n=0
		while :; do
			echo "$pid $n" >/run/counter.new
			mv /run/counter.new /run/counter
			n=$((n + 1))
			sleep 1
		done
	) &
	token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
	dd if=/dev/urandom of="$WORKLOAD_FILE" bs=1M count="$WORKLOAD_MB" 2>/dev/null ||
		fatal "could not write $WORKLOAD_MB MB to $WORKLOAD_FILE"
	hash=$(workload_hash)
	# Wait for the counter's first write.
	while [ ! -f /run/counter ]; do usleep 20000; done
}

# workload_report [TICKS]: print the state; with TICKS, first show the
# counter ticking for that many seconds (the demo).
# shellcheck disable=SC2120 # the arguments are optional: called without them too
workload_report() {
	say token "$token"
	say hash "$hash"
	say workload_mb "$WORKLOAD_MB"
	i=0
	while [ $i -lt "${1:-0}" ]; do
		read -r _ n </run/counter
		say tick "$n"
		sleep 1
		i=$((i + 1))
	done
	read -r counter_pid counter </run/counter
	say counter "$counter"
	say counter_pid "$counter_pid"
}

# In the resumed world: the first line says so at once (the demo times it).
workload_after_resume() {
	say resumed 1
	workload_recheck
}

# The state again, without claiming a resume: after a step that must have
# left the system running (a refused or cancelled hibernate).
workload_recheck() {
	say token "$token"
	read -r pid n </run/counter
	recheck_t0=$(uptime_ms)
	say counter "$n"
	say counter_pid "$pid"
	now=$(workload_hash)
	say hash "$now"
	# The same process must still be ticking: it wrote later values (the
	# hash above takes seconds under TCG, then 2 s more).
	sleep 2
	read -r pid2 n2 </run/counter
	say counter_later_ms $(($(uptime_ms) - recheck_t0))
	say counter_later "$n2"
	say counter_later_pid "$pid2"
	if kill -0 "$pid" 2>/dev/null; then say counter_alive 1; else say counter_alive 0; fi
}
