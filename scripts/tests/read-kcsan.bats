#!/usr/bin/env bats
# scripts/checks/read-kcsan on KCSAN reports (data/kcsan/races.log, in the
# kernel's format, with printk times and CRs as the serial console has
# them), against a vmlinux whose nm and addr2line answers are recorded
# (data/kcsan/nm, data/kcsan/lines): which two functions each report
# names, after the inline chain, and where

load helpers

setup() {
	K=$DATA/kcsan
	bin=$BATS_TEST_TMPDIR/bin
	mkdir -p "$bin"
	# nm -S VMLINUX: the recorded table
	printf '#!/bin/sh\ncat "%s"\n' "$K/nm" >"$bin/nm"
	# addr2line -e VMLINUX -i -f -a ADDR...: each address's recorded
	# block, in the order asked
	cat >"$bin/addr2line" <<-EOS
	#!/bin/sh
	for a; do
		case \$a in 0x*) awk -v a="\$a" '/^0x/ { on = \$1 == a } on' "$K/lines" ;; esac
	done
	EOS
	chmod +x "$bin/nm" "$bin/addr2line"
	: >"$BATS_TEST_TMPDIR/vmlinux"
}

reports() {
	PATH=$bin:$PATH run "$SCRIPTS/checks/read-kcsan" "$1" "$BATS_TEST_TMPDIR/vmlinux"
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	output=$(printf '%s\n' "$output" | sort)
}

@test "read-kcsan: each report is its two sides, by function and file, sorted" {
	reports "$K/races.log"
	[ "$(printf '%s\n' "$output" | grep -c ' / ')" -eq 2 ]
	grep -qxF "ep_disable (fs/eventpoll.c) / ep_poll_callback (fs/eventpoll.c)	fs/eventpoll.c:2215 fs/eventpoll.c:1301" <<<"$output"
}

@test "read-kcsan: a side inlined into another function is named by the innermost one" {
	reports "$K/races.log"
	# do_epoll_ctl_file+0x1f4 is ep_modify() inlined, in another tree's build
	grep -qxF "ep_modify (fs/eventpoll.c) / ep_poll_callback (fs/eventpoll.c)	fs/eventpoll.c:1820 fs/eventpoll.c:1301" <<<"$output"
}

@test "read-kcsan: a race of unknown origin has one side" {
	reports "$K/races.log"
	grep -qxF "ep_done_scan (fs/eventpoll.c)	fs/eventpoll.c:830" <<<"$output"
	[ "$(printf '%s\n' "$output" | wc -l)" -eq 3 ]
}

@test "read-kcsan: a console with no report gives no line" {
	printf 'Linux version 7.3.4\r\nok 1 - x\r\n' >"$BATS_TEST_TMPDIR/clean.log"
	reports "$BATS_TEST_TMPDIR/clean.log"
	[ -z "$output" ]
}

@test "read-kcsan: without vmlinux, one line says what to build" {
	run "$SCRIPTS/checks/read-kcsan" "$K/races.log" "$BATS_TEST_TMPDIR/none"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == "error: no vmlinux "*": build the KCSAN kernel first (make test-kcsan)" ]]
}
