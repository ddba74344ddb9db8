# shellcheck shell=bash
# What a person and summary read: TAP lines, one per check, the guest's
# plans as a base runs them and their verdicts, the kernel's reports on
# a console.

# plan_text NAME: scripts/guest/plans/NAME as this base runs it.  A line
# whose name starts with [FEATURE] is kept only where the base has
# FEATURE, one with [!FEATURE] only where it has not (the base file's
# features, and "upstream" where it has upstream epoll selftests);
# @upstream@ is their number.
plan_text() {
	local f=$TOP/scripts/guest/plans/$1 up feat
	[ -f "$f" ] || die "no plan '$1' in scripts/guest/plans/"
	up=$(base_conf upstream) || return 1
	feat=$(base_conf features) || return 1
	upstream=$up has=" $feat${up:+ upstream} " awk '
	match($0, /^\[!?[a-z_]+\] */) {
		g = substr($0, 2, index($0, "]") - 2)
		want = g !~ /^!/
		sub(/^!/, "", g)
		if ((index(ENVIRON["has"], " " g " ") > 0) != want)
			next
		$0 = substr($0, RLENGTH + 1)
	}
	{ gsub(/@upstream@/, ENVIRON["upstream"]); print }' "$f"
}

# record ok|fail NAME [WHY]: one TAP line for a check; with RESULTS=FILE set
# (make test) the numbering runs across steps and scripts/checks/summary counts them.
# BASE_LABEL=v6.1 (make test, one base of several) goes before the name,
# and into RESULTS for the count per base.
record() {
	local n=${_recorded:-0} name=$2
	# (unless the name starts with the base already, as in check-series)
	case $2 in "${BASE_LABEL:-}: "*) ;; *) name=${BASE_LABEL:+$BASE_LABEL: }$2 ;; esac
	if [ -n "${RESULTS:-}" ]; then
		n=$(wc -l <"$RESULTS")
		echo "$1${BASE_LABEL:+ $BASE_LABEL}" >>"$RESULTS"
	fi
	_recorded=$((n + 1))
	if [ "$1" = ok ]; then
		echo "ok $_recorded - $name"
	else
		echo "not ok $_recorded - $name"
		[ -z "${3:-}" ] || printf '%s\n' "$3" | sed 's/^/#   /'
	fi
}

# judge_plan PLAN LOG TAG PREFIX: for each entry of PLAN, find its output in
# LOG (framed by guest/run-plan), print it as TAP comments and record, as PREFIX
# and the entry's name, whether the command exited as expected and printed
# what it must.  Fails if any did not.
judge_plan() {
	local plan=$1 log=$2 tag=$3 prefix=$4 failed=0
	local name expect match cmd section got why
	while IFS='|' read -r name expect match cmd; do
		case $name in '' | '#'*) continue ;; esac
		# shellcheck disable=SC2086,SC2116 # echo trims and squeezes blanks
		name=$(echo $name) expect=$(echo $expect) match=$(echo $match)
		cmd=$(echo "$cmd" | sed 's/^ *//; s/ *$//')
		section=$(tr -d '\r' <"$log" | awk -v b="$tag begin $name" \
			-v e="$tag end $name " '
			$0 == b { on = 1; next }
			on && index($0, e) == 1 { print "@@rc " substr($0, length(e) + 1); exit }
			on { print }')
		got=$(printf '%s\n' "$section" | sed -n 's/^@@rc //p')
		printf '%s\n' "$section" | grep -v '^@@rc ' | sed 's/^/# /'
		why=
		if [ -z "$got" ]; then
			why="no result: '$cmd' did not finish"
		elif [ "$got" != "$expect" ]; then
			why="'$cmd' exited $got, expected $expect"
		elif [ "$match" != - ] &&
		     ! printf '%s\n' "$section" | grep -qF -- "$match"; then
			why="'$cmd' did not print '$match'"
		fi
		if [ -z "$why" ]; then
			record ok "$prefix$name"
		else
			record fail "$prefix$name" "$why"
			failed=$((failed + 1))
		fi
	done <"$plan"
	[ "$failed" -eq 0 ]
}

# splats LOG: the first lines of any kernel report in a console log: a
# WARN or BUG, an Oops, a panic, KASAN, UBSAN, lockdep (3.6 and 6.12
# words), list corruption, a hung task.  With KCSAN=1 (make test-kcsan)
# data-race reports are left out: scripts/checks/check-kcsan judges those.
splats() {
	local skip='^$'
	[ -z "${KCSAN:-}" ] || skip='BUG: KCSAN: '
	tr -d '\r' <"$1" | grep -v -e "$skip" | grep -E -m 5 -e '-+\[ cut here \]-+|WARNING: |BUG: |Oops|general protection fault|Kernel panic|KASAN: |UBSAN: |\[ INFO: |INFO: task .* blocked|list_(add|del) corruption|Call Trace:'
}

# check NAME CMD...: run a command quietly and record whether it succeeded;
# on failure its last lines go with the record.  Never fails itself.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		record ok "$name"
	else
		record fail "$name" "$(printf '%s\n' "$out" | tail -n 8)"
	fi
	return 0
}
