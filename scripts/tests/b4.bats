#!/usr/bin/env bats
# check-b4 and b4-prep on gen-patches' tiny fake tree (gen-patches.bats
# says how it is made), with b4 itself: the series goes through b4 as it
# is, and each check fails on a series that would not.

load helpers

setup() {
	G=$DATA/gen-patches
	top=$BATS_TEST_TMPDIR/top
	cp -r "$G/top" "$top"
	mkdir -p "$top/scripts/steps" "$top/scripts/patches" "$top/scripts/checks"
	cp -r "$SCRIPTS/lib.sh" "$SCRIPTS/lib" "$SCRIPTS/bases" "$top/scripts/"
	cp "$SCRIPTS/steps/source" "$SCRIPTS/steps/cache" \
		"$SCRIPTS/steps/apply-edits" "$top/scripts/steps/"
	cp "$SCRIPTS/patches/gen-patches" "$SCRIPTS/patches/b4-prep" \
		"$SCRIPTS/patches/b4-cover-template" "$top/scripts/patches/"
	cp "$SCRIPTS/checks/check-b4" "$top/scripts/checks/"
	cp -r "$G/base" "$BATS_TEST_TMPDIR/linux"
	# git as on a machine with only a name and an address (b4 sends as
	# the committer git names)
	export HOME=$BATS_TEST_TMPDIR GIT_CONFIG_NOSYSTEM=1
	export GIT_CONFIG_GLOBAL=$BATS_TEST_TMPDIR/gitconfig
	git config --global user.name "A U Thor"
	git config --global user.email author@example.org
	export EPOLL_DISABLE_CACHE=$BATS_TEST_TMPDIR/cache
	export KSRC=$BATS_TEST_TMPDIR/linux
	"$top/scripts/steps/source" 2>/dev/null
	echo 20261207-tiny-series-0123456789ab >"$top/patches/v7.3/msg/change-id"
}

# make_patches: the tiny series in top/patches/v7.3/, as make patches makes it
make_patches() {
	"$top/scripts/patches/gen-patches"
}

# fails_after FUNC CODE N WHY: check-b4 with CODE run where it defines
# FUNC (after the checks before it) fails its check N, saying WHY
fails_after() {
	local f=$top/scripts/checks/check-b4
	awk -v fn="$1() {" -v code="$2" '$0 == fn { print code } { print }' \
		"$f" >"$f.new"
	mv "$f.new" "$f"
	chmod +x "$f"
	grep -qF "$2" "$f"
	run "$f"
	echo "$output"
	grep -q "^not ok $3 " <<<"$output"
	grep -qF "$4" <<<"$output"
}

@test "b4: check-b4 passes the series as gen-patches makes it" {
	make_patches
	run "$top/scripts/checks/check-b4"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^ok ' <<<"$output")" -eq 6 ]
	not grep -q '^not ok' <<<"$output"
}

@test "b4: a subject prefix other than b4's fails the patches' check" {
	sed -i "s/^PREFIX=.*/PREFIX='RFC PATCH'/" "$top/scripts/patches/gen-patches"
	make_patches
	run "$top/scripts/checks/check-b4"
	echo "$output"
	grep -q "^not ok 2 .*b4 prep -p writes the patches" <<<"$output"
	grep -q "b4's patch 1 differs" <<<"$output"
}

@test "b4: b4's own cover template, which names the base, fails the cover's check" {
	make_patches
	# shellcheck disable=SC2016 # b4's template words, not the shell's
	printf '%s\n' '${cover}' '' '---' 'base-commit: ${base_commit}' \
		'change-id: ${change_id}' >"$top/scripts/patches/b4-cover-template"
	run "$top/scripts/checks/check-b4"
	echo "$output"
	grep -q "^not ok 3 " <<<"$output"
	grep -q "names a base-commit" <<<"$output"
}

@test "b4: a Cc b4 would not send fails the addresses' check" {
	make_patches
	# b4-prep puts the addresses on the branch; one added after it is
	# one b4 would not mail
	# shellcheck disable=SC2016 # words of check-b4, for it to expand
	fails_after cover 'sed -i "$ a Cc: late@example.org" "$s/msg/addresses"' \
		4 "other Cc: than msg/addresses"
}

@test "b4: a series with no change-id is not posted, and says so" {
	make_patches
	rm "$top/patches/v7.3/msg/change-id"
	run "$top/scripts/checks/check-b4"
	[ "$status" -eq 0 ]
	[ "$output" = "# v7.3: not posted (no msg/change-id): no b4 checks" ]
	run "$top/scripts/patches/b4-prep"
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	grep -q "is not posted: no .*change-id" <<<"$output"
}

@test "b4: b4-prep in a directory that is not a git tree says so" {
	make_patches
	run "$top/scripts/patches/b4-prep" "$BATS_TEST_TMPDIR"
	[ "$status" -ne 0 ]
	[ "$output" = "error: $BATS_TEST_TMPDIR is not a git tree: give the kernel tree to make the branch in" ]
}

@test "b4: a branch that moved after b4 send fails the reviewer's check" {
	make_patches
	# shellcheck disable=SC2016 # words of check-b4, for it to expand
	fails_after am 'git -C "$dir" checkout -q b4/epoll-ctl-disable &&
		echo "/* late */" >>"$dir/fs/eventpoll.c" &&
		git -C "$dir" commit -qam late' \
		5 "the reviewer's tree is not the branch's"
}

@test "b4: b4 before 0.13 reads a folded Subject: only unfolded" {
	[ "$(printf '%s\n' 0.13 "$(b4 --version)" | sort -V | head -n 1)" != 0.13 ] ||
		skip "b4 $(b4 --version) reads a folded Subject: itself"
	# a subject long enough that b4 send folds it
	sed -i '1s/$/ and a summary long enough to fold/' \
		"$top"/patches/v7.3/msg/0001-*
	make_patches
	run "$top/scripts/checks/check-b4"
	echo "$output"
	[ "$status" -eq 0 ]
	# the same, with the folds left in
	sed -i "s/^\t\tperl -0pe '1 while s\/^(Subject: .*/\t\tcat/" \
		"$top/scripts/checks/check-b4"
	not grep -q 'perl -0pe' "$top/scripts/checks/check-b4"
	run "$top/scripts/checks/check-b4"
	echo "$output"
	grep -q "^not ok 5 " <<<"$output"
	grep -q "b4 am failed on what b4 send would mail" <<<"$output"
}

@test "b4: b4-prep as the placeholder, with no SIGNOFF, stops with one line" {
	make_patches
	git config --global user.name "Seed cbc5db85 maintainers"
	git config --global user.email maintainers@users.noreply.a-seed-cbc5db85.example
	run "$top/scripts/patches/b4-prep"
	echo "$output"
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == "error: the sender would be the placeholder, Seed cbc5db85 maintainers <"*">: give SIGNOFF="* ]]
	SIGNOFF="A Sender <sender@example.org>" run "$top/scripts/patches/b4-prep"
	[ "$status" -eq 0 ]
	for d in "$EPOLL_DISABLE_CACHE"/work/*-b4; do :; done
	[ "$(git -C "$d" log --format='%an <%ae>' base..b4/epoll-ctl-disable | sort -u)" = "A Sender <sender@example.org>" ]
	[ "$(git -C "$d" log --format=%B base..b4/epoll-ctl-disable | grep -c '^Signed-off-by: A Sender <sender@example.org>$')" -eq 2 ]
	not grep -q 'Seed cbc5db85' <<<"$(git -C "$d" log --format='%an %ae %cn %ce %B' base..b4/epoll-ctl-disable)"
}

@test "b4: a patch left as the placeholder's fails the sender's check" {
	make_patches
	# shellcheck disable=SC2016 # words of check-b4, for it to expand
	fails_after senders 'git -C "$dir" checkout -q b4/epoll-ctl-disable && git -C "$dir" -c user.name=P -c user.email=p@p commit -q --amend --no-edit --author="$SIGNOFF_PLACEHOLDER"' \
		6 "from other than"
}
