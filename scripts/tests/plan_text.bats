#!/usr/bin/env bats
# plan_text: each plan as each base in scripts/bases/ runs it

load helpers

setup() {
	load_lib
}

# What each base has, as its file says: upstream= and features=.  A base
# file with no row here fails the first test: add one.
has() {
	case $1 in
	v7.3) echo "66|io_uring io_uring_disabled" ;;
	v6.12) echo "64|io_uring io_uring_disabled" ;;
	v6.1) echo "64|io_uring" ;;
	v3.6) echo "|" ;;
	*) return 1 ;;
	esac
}

@test "plan_text: every file in scripts/bases/ is covered here" {
	local f
	for f in "$SCRIPTS"/bases/v*; do
		has "${f##*/}" >/dev/null || { echo "no row for ${f##*/}"; return 1; }
		[ "$(has "${f##*/}")" = "$(base_conf_in upstream "$f")|$(base_conf_in features "$f")" ]
	done
}

# kept BASE: plan_text of the fixture plan for BASE, names only
kept() {
	on_base "${1#v}.0"
	TOP=$DATA/plan_text plan_text features | grep -v '^#' | cut -d'|' -f1 |
		sed 's/ *$//' | paste -sd, -
}

@test "plan_text: [FEATURE] and [!FEATURE] lines on each base" {
	run kept v7.3
	[ "$output" = "plain,needs io_uring,upstream: 66 of 66,padded,not [io_uring] at the start" ]
	run kept v6.12
	[ "$output" = "plain,needs io_uring,upstream: 64 of 64,padded,not [io_uring] at the start" ]
	run kept v6.1
	[ "$output" = "plain,needs io_uring,upstream: 64 of 64,not [io_uring] at the start" ]
	run kept v3.6
	[ "$output" = "plain,needs no io_uring,no upstream tests,not [io_uring] at the start" ]
}

@test "plan_text: @upstream@ in every field, the rest of the line as it was" {
	on_base 6.12.118
	TOP=$DATA/plan_text run plan_text features
	grep -qxF 'upstream: 64 of 64 | 0 | upstream: 64 of 64 passed | guest-upstream' <<<"$output"
	grep -qxF 'not [io_uring] at the start | 0 | - | echo [io_uring]' <<<"$output"
	grep -qxF '# name | exit | output must contain | command' <<<"$output"
}

# every plan on every base: no line keeps a [FEATURE], no @upstream@
# stays, and the lines of plans/test are the ones the base's features say
@test "plan_text: each plan in scripts/guest/plans/ on each base" {
	local f b p up feats
	for f in "$SCRIPTS"/bases/v*; do
		b=${f##*/}
		on_base "${b#v}.0"
		up=$(base_conf_in upstream "$f") feats=" $(base_conf_in features "$f") "
		for p in "$SCRIPTS"/guest/plans/*; do
			run plan_text "${p##*/}"
			[ "$status" -eq 0 ]
			not grep -q '^\[' <<<"$output"
			not grep -q '@upstream@' <<<"$output"
		done
		run plan_text test
		if [ -n "$up" ]; then
			grep -qxF "upstream epoll selftests: $up of $up pass | 0 | upstream: $up of $up passed | guest-upstream" <<<"$output"
		else
			not grep -q '^[^#].*guest-upstream' <<<"$output"
		fi
		case $feats in
		*" io_uring "*)
			grep -q '| skip:0 error:0 | epoll_disable_test$' <<<"$output"
			not grep -q '| # SKIP no io_uring in this kernel |' <<<"$output"
			grep -q '| without_io_uring epoll_disable_test' <<<"$output" ;;
		*)
			grep -q '| # SKIP no io_uring in this kernel | epoll_disable_test$' <<<"$output"
			not grep -q '| skip:0 error:0 | epoll_disable_test$' <<<"$output"
			not grep -q '^[^#].*without_io_uring' <<<"$output" ;;
		esac
		case $feats in
		*" io_uring_disabled "*) grep -q '| without_io_uring -e ' <<<"$output" ;;
		*) not grep -q '| without_io_uring -e ' <<<"$output" ;;
		esac
		echo "$b: ok"
	done
}

@test "plan_text: a plan that does not exist stops the run" {
	on_base 7.3.4
	run plan_text no-such-plan
	[ "$status" -eq 1 ]
	grep -q "no plan 'no-such-plan' in scripts/guest/plans/" <<<"$output"
}
