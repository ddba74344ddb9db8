#!/usr/bin/env bats
# lib/followup.sh, the follow-up checks' opening, on a small upstream
# repository made here and a queue for it: the tokens filled in, the
# queue applied at the pinned commit, and each way the opening stops

load helpers

# commit_file REPO FILE TEXT: commit FILE with TEXT in REPO
commit_file() {
	printf '%s\n' "$3" >"$1/$2"
	git -C "$1" add "$2"
	git -C "$1" -c user.name=t -c user.email=t@t commit -q -m "$2: $3"
}

setup() {
	load_lib
	# shellcheck source=../lib/followup.sh
	. "$SCRIPTS/lib/followup.sh"
	set +u
	export EPOLL_DISABLE_CACHE=$BATS_TEST_TMPDIR/cache
	CACHE=$EPOLL_DISABLE_CACHE
	up=$BATS_TEST_TMPDIR/upstream
	git init -q "$up"
	commit_file "$up" a.h '#define A 1'
	pinned=$(git -C "$up" rev-parse HEAD)
	commit_file "$up" b.h '#define B 2'	# upstream moved on
	# The queue, made on the pinned commit, with the tokens in it
	TOP=$BATS_TEST_TMPDIR/top
	mkdir -p "$TOP/patches/fake"
	printf 'release=\ncommit=\n' >"$TOP/patches/linux-release"
	git -C "$up" checkout -q -b work "$pinned"
	commit_file "$up" a.h '#define A 1 /* Linux @LINUX_VERSION@ (@LINUX_MAJOR@, @LINUX_MINOR@) @LINUX_COMMIT@ */'
	git -C "$up" format-patch -q -o "$TOP/patches/fake" "$pinned"
	git -C "$up" checkout -q master 2>/dev/null || git -C "$up" checkout -q main
	{
		echo "# upstream: https://example.org/fake"
		echo "# commit: $pinned (the pinned one)"
		for p in "$TOP"/patches/fake/*.patch; do echo "${p##*/}"; done
	} >"$TOP/patches/fake/series"
	unset FAKE RESULTS
}

@test "followup: followup_queue fills in the release and the commit" {
	followup_queue "$TOP/patches/fake" "$BATS_TEST_TMPDIR/q" 7.9 "$(printf '%040d' 1)"
	run grep -h '^+#define A' "$BATS_TEST_TMPDIR"/q/*.patch
	[ "$output" = "+#define A 1 /* Linux 7.9 (7, 9) $(printf '%040d' 1) */" ]
	[ -f "$BATS_TEST_TMPDIR/q/series" ]
}

@test "followup: followup_queue refuses a release that is not MAJOR.MINOR" {
	run followup_queue "$TOP/patches/fake" "$BATS_TEST_TMPDIR/q" 7 "$(printf '%040d' 1)"
	[ "$status" -ne 0 ]
	[[ $output == *"is not MAJOR.MINOR"* ]]
}

@test "followup: with no tree it stops, naming the variable and the commit" {
	run followup_open fake FAKE
	printf '%s\n' "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"FAKE=/path/to/fake"* ]]
	[[ $output == *"${pinned:0:12}"* ]]
}

@test "followup: a tree without the pinned commit stops it" {
	other=$BATS_TEST_TMPDIR/other
	git init -q "$other"
	commit_file "$other" x 1
	FAKE=$other run followup_open fake FAKE
	printf '%s\n' "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"has no commit $pinned"* ]]
}

@test "followup: the queue goes on the pinned commit, not the tree's HEAD, with the stand-in release" {
	FAKE=$up run followup_open fake FAKE
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	grep -q "^ok 1 - fake: patches/fake/ applies to ${pinned:0:12} with git am$" <<<"$output"
	grep -q "stands in" <<<"$output"
	d=$(ls -d "$CACHE"/followups/fake-*/src)
	grep -q "Linux $FOLLOWUP_STANDIN" "$d/a.h"
	[ ! -e "$d/b.h" ]
	# once applied, a second run clones nothing
	FAKE=$up run followup_open fake FAKE
	not grep -q cloning <<<"$output"
}

@test "followup: patches/linux-release's release is what the queue gets" {
	printf 'release=8.1\ncommit=%s\n' "$(printf '%040d' 2)" >"$TOP/patches/linux-release"
	FAKE=$up run followup_open fake FAKE
	[ "$status" -eq 0 ]
	not grep -q "stands in" <<<"$output"
	grep -q "Linux 8.1 (8, 1)" "$(ls -d "$CACHE"/followups/fake-*/src)/a.h"
}

@test "followup: a queue that does not apply is recorded as failed and stops the check" {
	sed -i "s/^# commit: .*/# commit: $(git -C "$up" rev-parse HEAD)/" "$TOP/patches/fake/series"
	commit_file "$up" a.h '#define A 3'
	sed -i "s/^# commit: .*/# commit: $(git -C "$up" rev-parse HEAD)/" "$TOP/patches/fake/series"
	FAKE=$up run followup_open fake FAKE
	printf '%s\n' "$output"
	[ "$status" -eq 1 ]
	grep -q "^not ok 1 - fake: patches/fake/ applies to" <<<"$output"
}

@test "followup: followup_var and make test's SKIP line" {
	[ "$(followup_var man-pages)" = MANPAGES ]
	[ "$(followup_var glibc)" = GLIBC ]
	run followup_skip man-pages MANPAGES
	[ "$output" = "ok 1 - man-pages: the queue on upstream man-pages # SKIP no tree: give MANPAGES=/path/to/man-pages" ]
}

@test "followup: scripts/patches/followup-queue sends nothing while the release is unknown" {
	grep -qx 'release=' "$SCRIPTS/../patches/linux-release" || skip "patches/linux-release names a release"
	run "$SCRIPTS/patches/followup-queue" glibc "$BATS_TEST_TMPDIR/out"
	[ "$status" -eq 1 ]
	[[ $output == *"names no release and commit yet"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/out" ]
}
