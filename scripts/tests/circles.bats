#!/usr/bin/env bats
# scripts/checks/check-circles: the tree as it is has no circle among its
# C files; copies with one planted (a call back up, in the bench and in
# the fuzzer; an include back up; a header's inline function calling up)
# fail, naming the circle and the edge that closes it.  Host compiles
# only, of a copy of the C sources.

load helpers

setup() {
	TOP=$(dirname "$SCRIPTS")
	CHECK=$SCRIPTS/checks/check-circles
	T=$BATS_TEST_TMPDIR/tree
	mkdir -p "$T/bench" "$T/scripts" "$T/tools-testing-selftests-epoll"
	cp -r "$TOP/common" "$TOP/checks" "$T/"
	cp -r "$TOP/bench/src" "$T/bench/"
	cp -r "$TOP/scripts/followups" "$T/scripts/"
	cp "$TOP/tools-testing-selftests-epoll/epoll_disable.h" \
		"$T/tools-testing-selftests-epoll/"
}

# circle_named WORDS...: the check failed, and one line of its output
# holds every word (a circle, or the edge that makes one)
circle_named() {
	printf '%s\n' "$output"
	[ "$status" -ne 0 ]
	grep -q '^circle: ' <<<"$output"
	local w line=$output
	for w in "$@"; do
		line=$(grep -F -- "$w" <<<"$line") || return 1
	done
}

@test "circles: the repo's C files have none, in one line" {
	run nice -n 10 "$CHECK"
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == "no circle among the C files of "* ]]
}

@test "circles: the bench's driver calling a mode back is named" {
	cat >>"$T/bench/src/bench_driver.c" <<-'C'

	void run_bursts(void);
	void planted(void)
	{
		run_bursts();
	}
	C
	run nice -n 10 "$CHECK" "$T"
	circle_named "bench/src/bench_driver -> bench/src/bench_burst:" \
		"uses run_bursts"
}

@test "circles: a fuzzer file calling main's back is named" {
	cat >>"$T/checks/epoll_ctl_fuzz_seq.c" <<-'C'

	int main(int argc, char **argv);
	int planted(void)
	{
		return main(0, 0);
	}
	C
	run nice -n 10 "$CHECK" "$T"
	circle_named "checks/epoll_ctl_fuzz_seq -> checks/epoll_ctl_fuzz:" \
		"uses main"
}

@test "circles: the server's shared header including a file above it is named" {
	sed -i 's|^#endif /\* EPOLL_DISABLE_SERVER_H \*/|#include "server_conn.h"\n&|' \
		"$T/bench/src/server.h"
	grep -q 'include "server_conn.h"' "$T/bench/src/server.h"
	run nice -n 10 "$CHECK" "$T"
	circle_named "bench/src/server -> bench/src/server_conn:" \
		"includes server_conn.h"
}

@test "circles: a header's inline function calling up is the header's" {
	sed -i 's|^#endif /\* EPOLL_DISABLE_BENCH_DRIVER_H \*/|void run_protos(void);\nstatic inline void planted(void)\n{\n\trun_protos();\n}\n&|' \
		"$T/bench/src/bench_driver.h"
	grep -q 'static inline void planted' "$T/bench/src/bench_driver.h"
	run nice -n 10 "$CHECK" "$T"
	circle_named "bench/src/bench_driver -> bench/src/bench_proto:" \
		"uses run_protos"
}
