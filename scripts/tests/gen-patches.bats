#!/usr/bin/env bats
# gen-patches on a tiny fake tree (data/gen-patches/): a copy of the
# scripts in a fake checkout (top/: two messages, their edits in three
# components), the base made from a three-file "kernel" by source as from
# any KSRC= tree.  No seam is needed: lib.sh finds TOP from where
# it lies, and the cache from EPOLL_DISABLE_CACHE.

load helpers

setup() {
	G=$DATA/gen-patches
	top=$BATS_TEST_TMPDIR/top
	cp -r "$G/top" "$top"
	mkdir -p "$top/scripts/steps" "$top/scripts/patches"
	cp -r "$SCRIPTS/lib.sh" "$SCRIPTS/lib" "$SCRIPTS/bases" "$top/scripts/"
	cp "$SCRIPTS/steps/source" "$SCRIPTS/steps/cache" \
		"$SCRIPTS/steps/apply-edits" "$top/scripts/steps/"
	cp "$SCRIPTS/patches/gen-patches" "$top/scripts/patches/"
	cp -r "$G/base" "$BATS_TEST_TMPDIR/linux"
	# git as on a machine with no configuration of its own
	export HOME=$BATS_TEST_TMPDIR GIT_CONFIG_NOSYSTEM=1
	export GIT_CONFIG_GLOBAL=/dev/null
	export EPOLL_DISABLE_CACHE=$BATS_TEST_TMPDIR/cache
	export KSRC=$BATS_TEST_TMPDIR/linux
	export SIGNOFF="A U Thor <author@example.org>"
	"$top/scripts/steps/source" 2>/dev/null
}

@test "gen-patches: the same sources give the same bytes, twice" {
	"$top/scripts/patches/gen-patches" "$BATS_TEST_TMPDIR/one"
	"$top/scripts/patches/gen-patches" "$BATS_TEST_TMPDIR/two"
	diff -r "$BATS_TEST_TMPDIR/one" "$BATS_TEST_TMPDIR/two"
	# and the bytes recorded here (data/gen-patches/expected/), but for
	# the series' date and revision, which gen-patches' DATE and PREFIX
	# set anew for each revision
	local f
	for f in "$BATS_TEST_TMPDIR"/one/*; do
		sed -E 's/^Date: .*/Date: (the series date)/
			s/^Subject: \[PATCH( RFC)?( v[0-9]+)? /Subject: [PATCH vN /' "$f" |
			diff -u "$G/expected/${f##*/}" -
	done
	[ "$(ls "$G/expected")" = "$(ls "$BATS_TEST_TMPDIR/one")" ]
}

@test "gen-patches: a series, its cover letter, the project's one identity whatever SIGNOFF says" {
	"$top/scripts/patches/gen-patches" "$BATS_TEST_TMPDIR/out"
	cd "$BATS_TEST_TMPDIR/out"
	[ "$(ls)" = "0000-cover-letter.patch
0001-epoll-add-EPOLL_CTL_DISABLE.patch
0002-selftests-epoll-test-EPOLL_CTL_DISABLE.patch
series" ]
	[ "$(grep -v '^#' series)" = "0001-epoll-add-EPOLL_CTL_DISABLE.patch
0002-selftests-epoll-test-EPOLL_CTL_DISABLE.patch" ]
	grep -qxE 'Subject: \[PATCH( RFC)?( v[0-9]+)? 0/2\] epoll: a tiny series for the tests of gen-patches' 0000-cover-letter.patch
	grep -qx 'To: linux-fsdevel@vger.kernel.org' 0001-*.patch
	grep -qx 'Cc: A Reviewer <reviewer@example.org>' 0002-*.patch
	grep -qx 'Signed-off-by: Seed cbc5db85 maintainers <maintainers@users.noreply.a-seed-cbc5db85.example>' 0001-*.patch
	grep -qx 'From: Seed cbc5db85 maintainers' 0002-*.patch
	not grep -q 'A U Thor' ./*.patch
	# patch 2 edits the file as patch 1 left it, and creates one
	grep -qx '+	case EPOLL_CTL_DISABLE:' 0002-*.patch
	grep -qx '+++ b/tools/testing/selftests/filesystems/epoll/epoll_disable_test.c' 0002-*.patch
}

@test "gen-patches: the patches apply to the base with git am" {
	"$top/scripts/patches/gen-patches" "$BATS_TEST_TMPDIR/out"
	git clone -q "$EPOLL_DISABLE_CACHE"/base/ksrc-*/ "$BATS_TEST_TMPDIR/am"
	git -C "$BATS_TEST_TMPDIR/am" -c user.name=t -c user.email=t@t am -q \
		"$BATS_TEST_TMPDIR"/out/000[12]-*.patch
	grep -q 'return ep_disable(ep, epi);' "$BATS_TEST_TMPDIR/am/fs/eventpoll.c"
}

@test "gen-patches: a message without the placeholder sign-off stops" {
	sed -i '/^Signed-off-by/d' "$top"/patches/v7.3/msg/0002-*
	run "$top/scripts/patches/gen-patches" "$BATS_TEST_TMPDIR/out"
	[ "$status" -eq 1 ]
	grep -q "0002-selftests-epoll-test-EPOLL_CTL_DISABLE has no 'Signed-off-by: Seed" <<<"$output"
}

@test "gen-patches: what follows a '---' line of a message goes below the patch's ---" {
	local msg
	msg=$(ls "$top"/patches/*/msg/0001-*)
	printf -- '---\nv2: a note for the reviewers of this posting\n' >>"$msg"
	"$top/scripts/patches/gen-patches" "$BATS_TEST_TMPDIR/out"
	cd "$BATS_TEST_TMPDIR/out"
	# the note follows the patch's own ---, before the diffstat ...
	sed -n '/^---$/,/^diff /p' 0001-*.patch | sed -n 2p |
		grep -qx 'v2: a note for the reviewers of this posting'
	# ... only once, and git am leaves it out of the log
	[ "$(grep -c '^---$' 0001-*.patch)" -eq 1 ]
	git init -q "$BATS_TEST_TMPDIR/am"
	git -C "$BATS_TEST_TMPDIR/am" mailinfo "$BATS_TEST_TMPDIR/msg" /dev/null \
		<0001-*.patch >/dev/null
	not grep -q 'a note for the reviewers' "$BATS_TEST_TMPDIR/msg"
	grep -qx 'Signed-off-by: Seed cbc5db85 maintainers <maintainers@users.noreply.a-seed-cbc5db85.example>' "$BATS_TEST_TMPDIR/msg"
}

@test "gen-patches: a fragment edited without make patches stops apply with one line" {
	cp "$SCRIPTS/steps/apply" "$top/scripts/steps/"
	"$top/scripts/patches/gen-patches"
	run "$top/scripts/steps/apply"
	echo "$output"
	[ "$status" -eq 0 ]
	echo '/* an edit */' >>"$top/fs-eventpoll/v7.3/ep_disable.c"
	run "$top/scripts/steps/apply"
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == "error: v7.3's patches are not what the sources make (patches/v7.3/0000-cover-letter.patch patches/v7.3/0001-"*"): run 'make patches', then commit the patches with the sources" ]]
	# make patches mends it
	"$top/scripts/patches/gen-patches"
	run "$top/scripts/steps/apply"
	[ "$status" -eq 0 ]
}

@test "gen-patches: a tree of one's own that carries the series is taken as it is" {
	cp "$SCRIPTS/steps/apply" "$top/scripts/steps/"
	"$top/scripts/patches/gen-patches"
	(cd "$KSRC" && patch -s -p1 <"$top"/patches/v7.3/0001-*.patch &&
		patch -s -p1 <"$top"/patches/v7.3/0002-*.patch)
	"$top/scripts/steps/source" 2>/dev/null
	run "$top/scripts/steps/apply"
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q 'already carries the series: using it as it is' <<<"$output"
}
