#!/usr/bin/env bats
# Every shell script of the project under shellcheck: clean, or each
# exception said in place with a disable directive and its reason.  Each
# file on its own (no -x: following lib.sh from each of 90 scripts took
# 87 s of 95): what lib.sh gives the steps is a function or a variable
# in capitals, which shellcheck takes as the environment's

load helpers

# The shell scripts: by their #! line or a shellcheck shell= directive,
# outside the recorded data
shell_scripts() {
	local top
	top=$(dirname "$SCRIPTS")
	find "$top/scripts" "$top/.ci" -type f -not -path '*/tests/data/*' |
		sort | xargs awk 'FNR <= 2 && /^#!(\/usr)?\/bin\/(env )?(ba|busybox )?sh|^#!\/usr\/bin\/env bats|^# shellcheck shell=/ {
			print FILENAME; nextfile
		}'
}

@test "shellcheck: the scripts are found (lib.sh, the guest's, .ci/run, these tests)" {
	run shell_scripts
	printf '%s\n' "$output"
	grep -q '/scripts/lib.sh$' <<<"$output"
	grep -q '/scripts/lib/paths.sh$' <<<"$output"
	grep -q '/scripts/guest/guest-init$' <<<"$output"
	grep -q '/scripts/guest/run-plan$' <<<"$output"
	grep -q '/.ci/run$' <<<"$output"
	grep -q '/scripts/tests/helpers.bash$' <<<"$output"
	grep -q '/scripts/tests/judge_plan.bats$' <<<"$output"
	not grep -q '/scripts/steps/apply-edits$' <<<"$output"	# perl
	[ "${#lines[@]}" -ge 30 ]
}

@test "shellcheck: every shell script is clean" {
	local -a files
	mapfile -t files < <(shell_scripts)
	run shellcheck -f gcc "${files[@]}"
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
}

@test "shellcheck: every disable directive gives its reason" {
	local -a files
	mapfile -t files < <(shell_scripts)
	run grep -nE '# shellcheck disable=[A-Z0-9,]+ *$' "${files[@]}"
	printf '%s\n' "$output"
	[ "$status" -eq 1 ]
}
