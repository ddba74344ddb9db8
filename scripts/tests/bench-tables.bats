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
	awk -f "$SCRIPTS/bench/bench-tables" -v out="$out" "$@"
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

# The burst (-M burst): data/bench/v7.3-burst.csv, the plan's burst line
# alone in one boot of 7.3 with the series.  burst_checks SCRIPT: the
# rows its table must have, read off the CSV by hand; the RSS and in-use
# columns differ in each row checked, and so do p50, p99 and max
burst_checks() {
	local row
	awk -f "$1" -v out="$out" "$DATA/bench/v7.3-burst.csv" || return 1
	for row in '| 4 readers | disable | global | deferred | genslot | uring |' \
		'| buffers at the peak | 1324 MiB (1324-1324) | 1324 MiB (1324-1324) | 1324 MiB (1324-1324) | 1324 MiB (1324-1324) | 1324 MiB (1324-1324) |' \
		'| RSS after | 1347 MiB (1347-1347) | 1347 MiB (1347-1347) | 1347 MiB (1347-1347) | 1345 MiB (1345-1345) | 1347 MiB (1347-1347) |' \
		'| in use after | 19 MiB (19-19) | 19 MiB (19-19) | 19 MiB (19-19) | 32 MiB (32-32) | 19 MiB (19-19) |' \
		'| held after | 1346 MiB (1346-1346) | 1346 MiB (1346-1346) | 1346 MiB (1346-1346) | 1344 MiB (1344-1344) | 1346 MiB (1346-1346) |' \
		'| to free(), p50 | 37 us (37-37) | 41 us (41-41) | 23.8 ms (23.8-23.8) | 42 us (42-42) | 15.21 s (15.21-15.21) |' \
		'| to free(), p99 | 4.2 ms (4.2-4.2) | 16.1 ms (16.1-16.1) | 104.9 ms (104.9-104.9) | 2.9 ms (2.9-2.9) | 19.46 s (19.46-19.46) |' \
		'| to free(), max | 3.60 s (3.60-3.60) | 131.9 ms (131.9-131.9) | 189.7 ms (189.7-189.7) | 381.7 ms (381.7-381.7) | 20.19 s (20.19-20.19) |' \
		'| to the last free() | 28.22 s (28.22-28.22) | 61.21 s (61.21-61.21) | 10.17 s (10.17-10.17) | 14.21 s (14.21-14.21) | 24.88 s (24.88-24.88) |' \
		'| readers | global/disable | deferred/disable | genslot/disable | uring/disable |' \
		'| 4 | 1.00 (1.00-1.00) / 3.82 (3.82-3.82) / 2.17 (2.17-2.17) | 1.00 (1.00-1.00) / 24.92 (24.92-24.92) / 0.36 (0.36-0.36) | 1.72 (1.72-1.72) / 0.68 (0.68-0.68) / 0.50 (0.50-0.50) | 1.00 (1.00-1.00) / 4624 (4624-4624) / 0.88 (0.88-0.88) |'; do
		grep -qxF "$row" "$out/RESULTS.md" || {
			echo "no row: $row"
			return 1
		}
	done
	grep -q '^## After a burst (-M burst, 1000 to 100000 items, buffers 512 B to 64 KiB, writes 2000/s)$' "$out/RESULTS.md" &&
		grep -q 'not freed by the end of a run: disable 0 in 1 run(s),' "$out/RESULTS.md" &&
		# a CSV from before the deleter's DELs were timed has no rows of them
		! grep -q 'EPOLL_CTL_DELs by the deleter' "$out/RESULTS.md" &&
		burst_span_checks "$1"
}

# Three runs of two protocols in one boot, made up, with the deleter's
# DELs: each cell's median and its min-max, which differ in every cell
# checked (the min, the median and the max in different runs), the DELs'
# time net of the clock reads, and their share of each run's time to the
# last free()
burst_span_checks() {
	local row
	printf '%s\n' '# smp 2' \
		burst,disable,4,10,100,90,10,100,1000,50,0,1000,2000,2000,2000,1024,2000,1000,90,6,1 \
		burst,slots,4,10,100,90,10,400,1000,100,0,1000,2000,2000,2000,4096,2000,1000,90,11,1 \
		burst,disable,4,10,100,90,10,300,1000,100,0,1000,2000,2000,2000,2048,2000,1000,80,21,1 \
		burst,slots,4,10,100,90,10,500,1000,200,0,1000,2000,2000,2000,1024,2000,1000,90,41,1 \
		burst,disable,4,10,100,90,10,200,1000,40,0,1000,2000,2000,2000,3072,2000,1000,70,13,1 \
		burst,slots,4,10,100,90,10,600,1000,50,0,1000,2000,2000,2000,2048,2000,1000,90,1,0.5 \
		>"$out/spans.csv"
	mkdir -p "$out/spans"
	awk -f "$1" -v out="$out/spans" "$out/spans.csv" || return 1
	for row in '| 4 readers | disable | slots |' \
		'| in use after | 2.0 MiB (1.0-3.0) | 2.0 MiB (1.0-4.0) |' \
		'| to free(), p99 | 200 us (100-300) | 500 us (400-600) |' \
		'| to the last free() | 50.0 ms (40.0-100.0) | 100.0 ms (50.0-200.0) |' \
		'| EPOLL_CTL_DELs by the deleter | 80 (70-90) | 90 (90-90) |' \
		'| their time | 12.0 ms (5.0-20.0) | 10.0 ms (0.5-40.0) |' \
		'| their share of the time to the last free() | 20.0% (10.0-30.0) | 10.0% (1.0-20.0) |' \
		'| 4 | 0.67 (0.50-4.00) / 3.00 (1.67-4.00) / 2.00 (1.25-2.00) |'; do
		grep -qxF "$row" "$out/spans/RESULTS.md" || {
			echo "no row: $row"
			return 1
		}
	done
}

@test "bench-tables: the burst's table, every protocol by name" {
	run burst_checks "$SCRIPTS/bench/bench-tables"
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
	run ragged "$out/RESULTS.md"
	[ -z "$output" ]
	# the other tables are not made up from burst rows
	not grep -q '^## Throughput' "$out/RESULTS.md"
	not grep -q '^## Reclaim' "$out/RESULTS.md"
}

# The negative control: bench-tables broken on purpose, one way at a time,
# must fail burst_checks
@test "bench-tables: a burst parser broken on purpose fails the checks" {
	local brk
	for brk in 's/add(bheapk, p SUBSEP x, f\[16\])/add(bheapk, p SUBSEP x, f[15])/' \
		's/add(b50, p SUBSEP x, f\[7\])/add(b50, p SUBSEP x, f[8])/' \
		's/bheap\[p, x, k\] = f\[16\]/bheap[p, x, k] = f[17]/' \
		's/pairs(bheap, bplist\[j\],/pairs(bheap, ref,/' \
		's|f " MiB (" f "-" f ")", v / 1024|f " MiB (" f "-" f ")", v / 1000|' \
		's/span(1000 \* v, 1000 \* lo, 1000 \* hi,/span(v, lo, hi,/' \
		's/f\[1\] == "burst" \&\& n >= 18/f[1] == "burst" \&\& n >= 19/' \
		's/bplist\[++nbp\] = p/bplist[++nbp] = x/' \
		's|v / 1024, l / 1024,|v / 1024, v / 1024,|' \
		's|l / d, h / d)|h / d, l / d)|' \
		's/add(bdelms, p SUBSEP x, f\[20\] - f\[21\])/add(bdelms, p SUBSEP x, f[20])/' \
		's|(f\[20\] - f\[21\]) / f\[10\])|(f[20] - f[21]) / f[9])|' \
		's/n >= 21 \&\& f\[19\] > 0/n >= 22 \&\& f[19] > 0/' \
		's/return sprintf("%d (%d-%d)", v, l, h)/return sprintf("%d (%d-%d)", v, h, l)/'; do
		sed "$brk" "$SCRIPTS/bench/bench-tables" >"$out/broken"
		# the break must have taken
		not cmp -s "$SCRIPTS/bench/bench-tables" "$out/broken"
		run burst_checks "$out/broken"
		echo "$brk: $status $output"
		[ "$status" -ne 0 ]
	done
}

# Two boots of one burst each, made up: medians over the boots, ratios
# within each (across them, genslot/disable's in use would be 1 and 4)
@test "bench-tables: burst medians over files, ratios within a file" {
	printf '%s\n' '# smp 2' \
		burst,disable,4,10,100,90,10,100,1000,50,0,1000,2000,2000,2000,1024,2000,1000 \
		burst,genslot,4,10,100,90,10,200,1000,50,0,1000,2000,2000,2000,2048,2000,1000 \
		>"$out/a.csv"
	printf '%s\n' '# smp 2' \
		burst,disable,4,10,100,90,10,300,1000,50,0,1000,2000,2000,2000,2048,2000,1000 \
		burst,genslot,4,10,100,90,10,300,1000,100,1,1000,2000,2000,2000,4096,2000,1000 \
		>"$out/b.csv"
	run tables "$out/a.csv" "$out/b.csv"
	[ "$status" -eq 0 ]
	grep -qxF '| in use after | 1.5 MiB (1.0-2.0) | 3.0 MiB (2.0-4.0) |' "$out/RESULTS.md"
	grep -qxF '| to free(), p99 | 200 us (100-300) | 250 us (200-300) |' "$out/RESULTS.md"
	grep -qxF '| 4 | 2.00 (2.00-2.00) / 1.50 (1.00-2.00) / 1.50 (1.00-2.00) |' "$out/RESULTS.md"
	grep -qF 'disable 0 in 2 run(s), genslot 1 in 2 run(s).' "$out/RESULTS.md"
}

@test "bench-tables: no out=DIR is an error" {
	run awk -f "$SCRIPTS/bench/bench-tables" "$csv"
	[ "$status" -eq 2 ]
	grep -q 'no out=DIR' <<<"$output"
}

# -M ops with del_disabled (the DEL after a DISABLE that returned 0): its
# column, and its share of DISABLE then DEL, run by run; a run without it
# (the recorded 7.3 CSV) has neither
@test "bench-tables: DEL after DISABLE, its column and its share" {
	printf '%s\n' '# smp 2' ops,1000,mod,100,500,1,1 \
		ops,1000,disable_armed,100,550,1,1 ops,1000,del,100,600,1,1 \
		ops,1000,disable_del,100,1000,1,1 \
		ops,1000,del_disabled,100,450,1,1 \
		ops,1000,del_enoent,100,400,1,1 >"$out/o.csv"
	run tables "$out/o.csv"
	[ "$status" -eq 0 ]
	grep -qxF '| 1000 | 500 | 550 | 600 | 1000 | 450 | 400 | 1.10 (1.10-1.10) | 1.67 (1.67-1.67) | 1.38 (1.38-1.38) | - | 0.45 (0.45-0.45) |' "$out/RESULTS.md"
	run tables "$csv"
	[ "$status" -eq 0 ]
	not grep -q 'del_disabled' "$out/RESULTS.md"
}
