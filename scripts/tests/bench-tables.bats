#!/usr/bin/env bats
# bench-tables on recorded bench output (data/bench/): the 7.3 run's CSV
# as make bench committed it, and the RESULTS.md that bench-plot's awk
# wrote from it before it was a program of its own.  Its ratios, medians
# and counts must come out the same, for protocols the program finds in
# the results, whatever their names.
#
# Each of these breaks of bench-tables fails at least one test here (made
# by hand, one at a time, when the tests were written): the median of an
# even count taken as its upper middle; every ratio inverted, or 1% off;
# CRs left in; runs paired across files; p50 and p99 swapped; late
# touches not summed; a protocol left out of the ratios or of the tables
# by name; 100k events/s printed as 0.10M.

load helpers

setup() {
	out=$(mktemp -d)
	csv=$DATA/bench/v7.3.csv
}

teardown() {
	rm -rf "$out"
}

tables() {
	awk -f "$SCRIPTS/bench-tables" -v out="$out" "$@"
}

# cells FILE: each ratio cell of FILE's tables as "CONTEXT|ROW|COLUMN|
# VALUE": CONTEXT the first three words of the paragraph before the
# table, ROW its first cell (and the timeout), a column "X, p50" as the
# p50 table's X
cells() {
	awk -F' *[|] *' '
	!/^[|]/ { if (NF && $0 != "") { split($0, w, " "); ctx = w[1] " " w[2] " " w[3] }
		  hdr = 0; next }
	/^[|]---/ { next }
	!hdr { hdr = 1; for (i = 2; i < NF; i++) col[i] = $i; next }
	{
		row = $2 (col[3] == "timeout" ? " " $3 : "")
		for (i = 2; i < NF; i++) {
			if (col[i] !~ /\//)
				continue
			c = col[i]; x = ctx
			if (sub(/, p50$/, "", c))
				x = "Ratios of p50"
			print x "|" row "|" c "|" $i
		}
	}' "$1" | sort
}

# ragged FILE: the table rows of FILE with more or fewer cells than their
# header
ragged() {
	awk -F'[|]' '!/^[|]/ { hdr = 0; next }
		     !hdr { hdr = NF; next }
		     NF != hdr' "$1"
}

@test "bench-tables: the protocols are the results', in their order" {
	run tables "$csv"
	[ "$status" -eq 0 ]
	grep -qx '| readers | disable | global | deferred | genslot | uring | naive |' "$out/RESULTS.md"
	grep -qx '| readers | disable/global | disable/deferred | disable/genslot | disable/uring | disable/naive |' "$out/RESULTS.md"
	grep -qx '| readers | timeout | deferred/disable | genslot/disable | global/disable | uring/disable |' "$out/RESULTS.md"
	[ "$(cat "$out/t-list")" = "$(printf '%s\n' '1 disable' '2 global' \
		'3 deferred' '4 genslot' '5 uring' '6 naive')" ]
	run ragged "$out/RESULTS.md"
	printf '%s\n' "$output"
	[ -z "$output" ]
}

@test "bench-tables: every ratio the old tables had is the same" {
	run tables "$csv"
	[ "$status" -eq 0 ]
	cells "$DATA/bench/v7.3-RESULTS.md" >"$out/old"
	cells "$out/RESULTS.md" >"$out/new"
	# the old columns the new tables still have: all but deferred/global
	# and naive/disable (disable/naive now), 105 cells
	cut -d'|' -f1,3 "$out/new" | sort -u >"$out/cols"
	awk -F'|' 'NR == FNR { keep[$1 "|" $2]; next }
		   ($1 "|" $3) in keep' "$out/cols" "$out/old" >"$out/want"
	[ "$(wc -l <"$out/want")" -ge 100 ]
	grep -v -e 'deferred/global' -e 'naive/disable' "$out/old" >"$out/kept"
	run grep -vxFf "$out/want" "$out/kept"
	[ "$status" -eq 1 ]
	run grep -vxFf "$out/new" "$out/want"
	printf '%s\n' "$output"
	[ "$status" -eq 1 ]
}

@test "bench-tables: the medians and counts are the old tables' too" {
	run tables "$csv"
	[ "$status" -eq 0 ]
	# throughput, the cost per op, the reclaim latencies, the late touches
	for row in '| 4 | 41k (2002) | 30k (2004) | 38k (2000) | 31k (2000) | 48k (2000) | 40k (1999) |' \
		'| 4 | 0.92 / 0.53 | 0.83 / 0.78 | 0.90 / 0.55 | 0.94 / 0.52 | 1.05 / 0.61 | 0.91 / 0.55 |' \
		'| 4 | 2.146 (2.000) | 2.134 (2.000) | 2.106 (2.001) | 2.130 (2.001) | 0.529 (0.489) | 2.100 (2.001) |' \
		'| 1000 | 1130 | 1149 | 1590 | 3408 | 4343 | 4526 | 1027 | 0.71 (0.70-0.76) | 1.32 (1.32-1.33) | 1.09 (1.08-1.12) | 1.10 (1.10-1.14) |' \
		'| 16 | 100 ms | 39 us / 131 us / 1.3 ms | 97.5 ms / 107.9 ms / 111.4 ms | 39 us / 121 us / 2.6 ms | 34 us / 16.1 ms / 26.6 ms | 276 us / 2.2 ms / 4.9 ms | 1.0 / 1 | 179.2 / 231 | 1.0 / 1 | 1.0 / 1 | 3.3 / 16 |' \
		'| naive | 1 | 32 |'; do
		grep -qxF "$row" "$DATA/bench/v7.3-RESULTS.md"
		grep -qxF "$row" "$out/RESULTS.md"
	done
	grep -qxF '| naive | 27 | 26 | 56.0 |' "$out/RESULTS.md"
}

@test "bench-tables: a protocol of another name is tabled by that name" {
	sed 's/^\(proto\|reclaim\),genslot,/\1,slab,/' "$csv" >"$out/renamed.csv"
	run tables "$csv"
	cells "$out/RESULTS.md" | sed 's|/genslot|/slab|; s|genslot/|slab/|' |
		sort >"$out/want"
	run tables "$out/renamed.csv"
	[ "$status" -eq 0 ]
	not grep -q genslot "$out/RESULTS.md"
	grep -qx '| readers | disable | global | deferred | slab | uring | naive |' "$out/RESULTS.md"
	cells "$out/RESULTS.md" >"$out/got"
	diff "$out/want" "$out/got"
}

@test "bench-tables: without the reference protocol, no ratios of it" {
	grep -v '^\(proto\|reclaim\),disable,' "$csv" >"$out/nodisable.csv"
	run tables "$out/nodisable.csv"
	[ "$status" -eq 0 ]
	grep -qx '| readers | global | deferred | genslot | uring | naive |' "$out/RESULTS.md"
	not grep -q 'Ratios of events' "$out/RESULTS.md"
	not grep -q 'Ratios of p99' "$out/RESULTS.md"
	# another reference, named
	run tables -v ref=global "$out/nodisable.csv"
	grep -qx '| readers | global/deferred | global/genslot | global/uring | global/naive |' "$out/RESULTS.md"
}

@test "bench-tables: a console log's prefix and CRs, several files" {
	sed 's/^/csv,/; s/$/\r/' "$csv" >"$out/console.log"
	run tables "$out/console.log"
	[ "$status" -eq 0 ]
	cp "$out/RESULTS.md" "$out/one.md"
	grep -q '^1 result file(s)' "$out/one.md"
	run tables "$csv"
	diff "$out/RESULTS.md" "$out/one.md"
	run tables "$csv" "$out/console.log"
	[ "$status" -eq 0 ]
	grep -q '^2 result file(s)' "$out/RESULTS.md"
	grep -q '^# epoll_disable_bench results (-smp 2, QEMU TCG)' "$out/RESULTS.md"
}

# Two boots of one run each, made up: the medians of two runs, and each
# ratio taken within its boot
@test "bench-tables: a median of two runs is their mean; runs pair within a file" {
	printf '%s\n' '# smp 2' '# 2 s per run, 1 runs, delay 0 us, churn 2000/s' \
		proto,disable,1,1000,2,0,100000,0,2000,0,64.0,2.0,2.0,0.5,0.5,0.1,2 \
		proto,deferred,1,1000,2,0,200000,0,2000,1,32.0,2.0,2.0,0.5,0.5,0.1,2 \
		>"$out/a.csv"
	printf '%s\n' '# smp 2' '# 2 s per run, 1 runs, delay 0 us, churn 2000/s' \
		proto,disable,1,1000,2,0,300000,0,2000,0,64.0,2.0,2.0,0.5,0.5,0.1,2 \
		proto,deferred,1,1000,2,0,100000,0,2000,2,32.0,2.0,2.0,0.5,0.5,0.1,2 \
		>"$out/b.csv"
	run tables "$out/a.csv" "$out/b.csv"
	[ "$status" -eq 0 ]
	grep -qxF '| 1 | 200k (2000) | 150k (2000) |' "$out/RESULTS.md"
	grep -qxF '| 1 | 1.75 (0.50-3.00) |' "$out/RESULTS.md"
	grep -qxF '| deferred | 2 | 3 | 32.0 |' "$out/RESULTS.md"
}

@test "bench-tables: no out=DIR is an error" {
	run awk -f "$SCRIPTS/bench-tables" "$csv"
	[ "$status" -eq 2 ]
	grep -q 'no out=DIR' <<<"$output"
}
