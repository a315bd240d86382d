# shellcheck shell=bash
# Host-side checks shared by the hook scenarios (hooks-order, hooks-unwind,
# hooks-compat, scriptlets); sourced by their .host files.  Not a scenario:
# tests/vm/run lists only *.host.  The guest side is guest/hooks.sh.

# hook_calls N [ROUND]: the "hook=" lines boot N printed (the calls made in
# that boot's world), those of ROUND only (without the "ROUND:" prefix), or
# those without a round.
hook_calls() {
	local v
	hib_get_all "$(boot_log "$1")" hook | while IFS= read -r v; do
		if [[ -n ${2:-} ]]; then
			[[ $v == "$2:"* ]] && printf '%s\n' "${v#"$2:"}"
		else
			[[ $v != *:* ]] && printf '%s\n' "$v"
		fi
	done
	return 0
}

# hook_log N: the hook log boot N dumped (dump_hooklog), one line per call.
hook_log() {
	hib_get_all "$(boot_log "$1")" hooklog
}

# expect_seq WHAT ACTUAL EXPECTED [LOG]: FAIL unless the two line lists are
# equal; the message shows both, lines joined with " | ".
expect_seq() {
	local what=$1 actual=$2 expected=$3 log=${4:-}
	[[ $actual == "$expected" ]] && return 0
	fail "$what: got [$(paste -sd'|' <<<"$actual" | sed 's/|/ | /g')], expected [$(paste -sd'|' <<<"$expected" | sed 's/|/ | /g')]${log:+ (log: $log)}"
}

# output_between N FROM [TO]: what boot N printed (not HIBTEST lines) after
# the line "HIBTEST FROM" (KEY=VALUE) and before the next "HIBTEST TO=..."
# line (TO: a key; default: the end of the log), joined with " | ".
output_between() {
	awk -v from="$2" -v to="${3:-}" '{ sub(/\r+$/, ""); n = split($0, part, "\r"); line = part[n]
		gsub(/\033(\[[0-9;?]*[A-Za-z]|c)/, "", line); sub(/[ \t]+$/, "", line) }
		!on { if (index(line, "HIBTEST " from) > 0) on = 1; next }
		to != "" && index(line, "HIBTEST " to "=") > 0 { exit }
		index(line, "HIBTEST ") > 0 { next }
		line ~ /[^ \t]/ { print line }' "$(boot_log "$1")" | paste -sd'|' | sed 's/|/ | /g'
}

# expect_output N FROM TO TEXT WHAT: boot N printed TEXT between FROM and TO
# (see output_between).
expect_output() {
	local out
	out=$(output_between "$1" "$2" "$3")
	[[ $out == *"$4"* ]] ||
		fail "boot $1: $5: no '$4' in what it printed: ${out:-(nothing)} (log: $(boot_log "$1"))"
}

# expect_no_output N FROM TO TEXT WHAT: ... did not print TEXT there.
expect_no_output() {
	local out
	out=$(output_between "$1" "$2" "$3")
	[[ $out != *"$4"* ]] ||
		fail "boot $1: $5: '$4' in what it printed: $out (log: $(boot_log "$1"))"
}
