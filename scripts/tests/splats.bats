#!/usr/bin/env bats
# splats on recorded console logs (data/splats/): each kind of kernel
# report it claims to find, each cut to the lines that name it, with and
# without KCSAN=1; and a clean boot that must give nothing

load helpers

setup() {
	load_lib
}

# finds LOG LINE: splats finds LOG's report, and LINE is among what it
# prints, without the CR of the console
finds() {
	run splats "$DATA/splats/$1"
	[ "$status" -eq 0 ]
	printf '%s\n' "$output"
	grep -qxF -- "$2" <<<"$output"
	not grep -q $'\r' <<<"$output"
}

@test "splats: a WARN, from its cut here line and its WARNING" {
	finds warn.log '------------[ cut here ]------------'
	grep -qF 'WARNING: CPU: 1 PID: 93 at drivers/misc/lkdtm/bugs.c:134' <<<"$output"
}

@test "splats: a BUG" {
	finds bug.log 'BUG: kernel NULL pointer dereference, address: 0000000000000008'
}

@test "splats: an Oops, in 3.6's words and in today's" {
	finds oops-3.6.log 'Oops: 0002 [#1] SMP '
	finds oops-only.log 'Oops: 0002 [#1] PREEMPT SMP NOPTI'
}

@test "splats: a general protection fault" {
	finds gpf.log 'general protection fault, probably for non-canonical address 0xdead000000000122: 0000 [#1] SMP NOPTI'
}

@test "splats: a panic" {
	finds panic.log 'Kernel panic - not syncing: No working init found.  Try passing init= option to kernel.'
}

@test "splats: a KASAN report" {
	finds kasan.log 'BUG: KASAN: slab-use-after-free in ep_disable+0x1b4/0x2a0'
}

@test "splats: a UBSAN report" {
	finds ubsan.log 'UBSAN: shift-out-of-bounds in fs/eventpoll.c:1234:19'
}

@test "splats: lockdep in 3.6's words ([ INFO: ... ])" {
	finds lockdep-3.6.log '[ INFO: possible circular locking dependency detected ]'
}

@test "splats: lockdep in today's words (WARNING: possible ...)" {
	finds lockdep.log 'WARNING: possible circular locking dependency detected'
}

@test "splats: list corruption, list_del and list_add" {
	finds list-corruption.log 'list_del corruption. prev->next should be ffff888003b2d1c0, but was ffff888003b2d000. (prev=ffff888003b2d200)'
	finds list-add-corruption.log 'list_add corruption. next->prev should be prev (ffff888003b2d1c0), but was 0000000000000000. (next=ffff888003b2d200).'
}

@test "splats: a hung task, in 3.6's words and in today's" {
	finds hung-task.log 'INFO: task epoll_disable_t:101 blocked for more than 122 seconds.'
	finds hung-task-3.6.log 'INFO: task epoll_disable_t:101 blocked for more than 120 seconds.'
}

@test "splats: any report with a call trace (an RCU stall)" {
	finds stall-trace.log 'Call Trace:'
}

@test "splats: a KCSAN report is one, unless KCSAN=1 leaves it to check-kcsan" {
	finds kcsan.log 'BUG: KCSAN: data-race in ep_modify / ep_poll_callback'
	KCSAN=1 run splats "$DATA/splats/kcsan.log"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
}

@test "splats: KCSAN=1 still finds every other kind" {
	local f n=0
	export KCSAN=1
	for f in "$DATA"/splats/*.log; do
		case ${f##*/} in clean.log | kcsan.log) continue ;; esac
		run splats "$f"
		[ "$status" -eq 0 ] || { echo "KCSAN=1 hides ${f##*/}"; return 1; }
		[ -n "$output" ]
		n=$((n + 1))
	done
	[ "$n" -eq 16 ]
}

@test "splats: a clean boot gives nothing, with or without KCSAN=1" {
	# the boot's own words that come near the patterns are there
	grep -q 'panic=-1' "$DATA/splats/clean.log"
	run splats "$DATA/splats/clean.log"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	KCSAN=1 run splats "$DATA/splats/clean.log"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
}

@test "splats: the first five lines of many reports, no more" {
	run splats "$DATA/splats/many.log"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 5 ]
	[ "${lines[0]}" = '[   20.000000] ------------[ cut here ]------------' ]
}
