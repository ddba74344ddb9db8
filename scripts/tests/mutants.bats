#!/usr/bin/env bats
# check-mutants on recorded guest verdicts (data/mutants/): a mutant that
# makes the selftest fail and one that makes it skip, as on a kernel
# without the op, are both caught but named and counted apart; one that
# passes, or skips and then fails elsewhere, is not taken for a skip.
# The kernel, initramfs and boot steps are stubs; the tree is
# gen-patches' three-file 7.3, made the base by source.

load helpers

setup() {
	top=$BATS_TEST_TMPDIR/top
	mkdir -p "$top/scripts/steps" "$top/scripts/checks" \
		"$top/fs-eventpoll/v7.3/mutants"
	cp -r "$SCRIPTS/lib.sh" "$SCRIPTS/lib" "$SCRIPTS/bases" "$top/scripts/"
	cp "$SCRIPTS/checks/check-mutants" "$top/scripts/checks/"
	cp "$SCRIPTS/steps/source" "$SCRIPTS/steps/cache" "$top/scripts/steps/"
	printf '#!/bin/sh\nexit 0\n' >"$top/scripts/steps/kernel"
	cp "$top/scripts/steps/kernel" "$top/scripts/steps/initramfs"
	# boot: the verdict recorded for the mutant, failing as steps/boot
	# does when a check failed
	cat >"$top/scripts/steps/boot" <<-EOS
	#!/bin/sh
	cat "$DATA/mutants/\$MUTANT.tap"
	! grep -q '^not ok' "$DATA/mutants/\$MUTANT.tap"
	EOS
	chmod +x "$top"/scripts/steps/*
	local m
	for m in "$DATA"/mutants/*.tap; do
		m=${m##*/}
		echo "# ${m%.tap}, recorded" >"$top/fs-eventpoll/v7.3/mutants/${m%.tap}.edit"
	done
	cp -r "$DATA/gen-patches/base" "$BATS_TEST_TMPDIR/linux"
	export KSRC=$BATS_TEST_TMPDIR/linux SCRATCH_LOCKED=1
	export EPOLL_DISABLE_CACHE=$BATS_TEST_TMPDIR/cache
	export HOME=$BATS_TEST_TMPDIR GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
	"$top/scripts/steps/source" 2>/dev/null
}

@test "mutants: a failing selftest and a skipping one are caught, and said apart" {
	run "$top/scripts/checks/check-mutants" fails skips
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	grep -qx 'ok 1 - mutant fails is caught: the selftest fails (1 guest check(s))' <<<"$output"
	grep -qx 'ok 2 - mutant skips is caught: the selftest skips, as on a kernel without the op' <<<"$output"
	grep -qx '# mutants: 1 make the selftest fail, 1 make it skip as on a kernel without the op, 0 missed' <<<"$output"
}

@test "mutants: a skip beside another failure counts as a failure" {
	run "$top/scripts/checks/check-mutants" skips-then-fails
	printf '%s\n' "$output"
	grep -qx 'ok 1 - mutant skips-then-fails is caught: the selftest fails (2 guest check(s))' <<<"$output"
	grep -qx '# mutants: 1 make the selftest fail, 0 make it skip as on a kernel without the op, 0 missed' <<<"$output"
}

@test "mutants: one the selftest passes on is missed" {
	run "$top/scripts/checks/check-mutants" passes
	printf '%s\n' "$output"
	grep -qx 'not ok 1 - mutant passes is caught' <<<"$output"
	grep -qx '# mutants: 0 make the selftest fail, 0 make it skip as on a kernel without the op, 1 missed' <<<"$output"
}
