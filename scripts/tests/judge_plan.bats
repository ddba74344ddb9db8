#!/usr/bin/env bats
# judge_plan on recorded console logs (data/judge/): the plan's three
# entries, each with its exit status and the line it must print

load helpers

setup() {
	load_lib
	plan=$DATA/judge/plan
}

judge() { run judge_plan "$plan" "$DATA/judge/$1" "${2:-$TAG}" "guest: "; }

@test "judge_plan: a guest that did what the plan says passes every entry" {
	judge pass.log
	[ "$status" -eq 0 ]
	[ "$(grep -c '^ok ' <<<"$output")" -eq 3 ]
	[ "$(grep -c '^not ok ' <<<"$output")" -eq 0 ]
	grep -qx 'ok 1 - guest: selftest' <<<"$output"
	grep -qx 'ok 2 - guest: naive control' <<<"$output"
	grep -qx 'ok 3 - guest: no match needed' <<<"$output"
	# the command's output goes along, as TAP comments
	grep -qx '# # Totals: pass:42 fail:0 xfail:0 xpass:0 skip:0 error:0' <<<"$output"
}

@test "judge_plan: a wrong exit status fails that entry alone" {
	judge wrong-status.log
	[ "$status" -eq 1 ]
	grep -qx 'not ok 1 - guest: selftest' <<<"$output"
	grep -qx "#   'epoll_disable_test' exited 1, expected 0" <<<"$output"
	grep -qx 'ok 2 - guest: naive control' <<<"$output"
	grep -qx 'ok 3 - guest: no match needed' <<<"$output"
}

@test "judge_plan: the right exit status without the required line fails" {
	judge missing-line.log
	[ "$status" -eq 1 ]
	grep -qx 'not ok 1 - guest: selftest' <<<"$output"
	grep -qx "#   'epoll_disable_test' did not print 'skip:0 error:0'" <<<"$output"
	[ "$(grep -c '^ok ' <<<"$output")" -eq 2 ]
}

@test "judge_plan: a section with no end (the guest died) fails, and the rest" {
	judge died.log
	[ "$status" -eq 1 ]
	grep -qx 'ok 1 - guest: selftest' <<<"$output"
	grep -qx 'not ok 2 - guest: naive control' <<<"$output"
	grep -qx "#   no result: 'EPOLL_DISABLE_CONTROL=naive epoll_disable_controls -f server' did not finish" <<<"$output"
	grep -qx 'not ok 3 - guest: no match needed' <<<"$output"
	# what the guest printed before it died is shown
	grep -q '^# .*Kernel panic - not syncing: Fatal exception$' <<<"$output"
}

@test "judge_plan: a log cut off mid-line gives no result for that entry" {
	judge truncated.log
	[ "$status" -eq 1 ]
	grep -qx 'ok 1 - guest: selftest' <<<"$output"
	grep -qx 'ok 2 - guest: naive control' <<<"$output"
	grep -qx 'not ok 3 - guest: no match needed' <<<"$output"
	grep -qx "#   no result: 'true' did not finish" <<<"$output"
}

@test "judge_plan: CRs of the serial console (\\r\\r\\n) do not get in the way" {
	grep -q $'\r\r$' "$DATA/judge/cr.log"
	judge cr.log
	[ "$status" -eq 0 ]
	[ "$(grep -c '^ok ' <<<"$output")" -eq 3 ]
	# and no CR reaches the TAP output
	not grep -q $'\r' <<<"$output"
}

@test "judge_plan: SeaBIOS's escape codes on the console do not get in the way" {
	grep -q $'\x1b\\[2J' "$DATA/judge/escapes.log"
	judge escapes.log
	[ "$status" -eq 0 ]
	[ "$(grep -c '^ok ' <<<"$output")" -eq 3 ]
}

@test "judge_plan: another boot's marker is not this boot's result" {
	judge other-nonce.log
	[ "$status" -eq 1 ]
	[ "$(grep -c '^not ok .* - guest: ' <<<"$output")" -eq 3 ]
	[ "$(grep -c '^#   no result: ' <<<"$output")" -eq 3 ]
	# the same log, judged with that boot's own tag, passes
	judge other-nonce.log "$OTHER_TAG"
	[ "$status" -eq 0 ]
}

@test "judge_plan: a tag that is a prefix of this boot's is not it" {
	judge pass.log "${TAG%????}"
	[ "$status" -eq 1 ]
	[ "$(grep -c '^not ok ' <<<"$output")" -eq 3 ]
}

@test "judge_plan: a plan line for another base's feature is not judged" {
	# v3.6 has no io_uring and no upstream selftests: of the features
	# plan (data/plan_text/) plan_text keeps the lines for such a base,
	# and its log has only their sections
	on_base 3.6.0
	TOP=$DATA/plan_text plan_text features >"$BATS_TEST_TMPDIR/plan"
	plan=$BATS_TEST_TMPDIR/plan
	judge v3.6-features.log
	[ "$status" -eq 0 ]
	[ "$output" = "ok 1 - guest: plain
# 1..0 # SKIP no io_uring in this kernel
ok 2 - guest: needs no io_uring
ok 3 - guest: no upstream tests
# [io_uring]
ok 4 - guest: not [io_uring] at the start" ]
	# judged with the plan as written, the lines of other bases have no
	# result in this log
	plan=$DATA/plan_text/scripts/guest/plans/features
	judge v3.6-features.log
	[ "$status" -eq 1 ]
	grep -qx "not ok 2 - guest: \[io_uring\] needs io_uring" <<<"$output"
	grep -qx "#   no result: 'true' did not finish" <<<"$output"
}

@test "judge_plan: a marker quoted inside a line does not end a section" {
	judge marker-in-output.log
	[ "$status" -eq 1 ]
	grep -qx 'not ok 1 - guest: selftest' <<<"$output"
	grep -qx "#   'epoll_disable_test' exited 1, expected 0" <<<"$output"
}
