# EPOLL_CTL_DISABLE for Linux: a patch series, its selftest, and a QEMU
# guest that proves it.  See README.
#
#   make run     apply the series to Debian's linux-source-7.3, build it,
#                boot it in QEMU, run the selftest, print the verdict
#   make test    the whole suite, on 7.3, 6.12 and 6.1 in turn; ends with
#                "N passed, N failed"
#   make help    every target, one line each (the "## target:" lines)
#
# BASE=6.12 picks Debian's linux-source-6.12 instead (make test: that base
# only; BASES="6.1 7.3" picks several, in that order).
# KSRC=/path/to/linux uses your own tree (Linux 7.3, 6.12, 6.1 or 3.6).
# On 3.6, patches/v3.6-toolchain/ goes under the series when gcc needs it
# (TOOLCHAIN=1 always, TOOLCHAIN=0 never).
# SMP=, MEM=, TIMEOUT=, ACCEL=kvm tune the guest.  Builds are cached
# outside the repo, in $EPOLL_DISABLE_CACHE (default ~/.cache/epoll-disable).

SHELL := /bin/bash
comma := ,
S := scripts
export KSRC BASE SMP MEM TIMEOUT ACCEL TOOLCHAIN ARCHES EPOLL_CPU_LOCK
# Where a suite counts its checks (scripts/checks/summary reads it, then removes
# it): a file of this make's own, so that runs side by side do not mix
RESULTS_OF_THIS_RUN := $(or $(TMPDIR),/tmp)/epoll-disable-results.$(shell echo $$PPID)
# This run, to the scripts (scripts/lib/run.sh: RUN): the trees it uses are
# not pruned while it lives, and its guests' logs are its own
EPOLL_DISABLE_RUN ?= $(shell echo $$PPID)
export EPOLL_DISABLE_RUN
# The projects with a follow-up queue in patches/ and a check-<project>,
# each on the project's upstream tree given as <PROJECT>=DIR (GLIBC=,
# LIBURING=, ...: scripts/lib/followup.sh); make test runs, on its first
# base, those whose tree is given and says SKIP for the others
FOLLOWUPS := strace ltp musl glibc liburing syzkaller man-pages
export GLIBC LIBURING MUSL STRACE MANPAGES
# The programs that use the op, a queue each in patches/<program>/ with
# its check-<program> on the program's tree (GLUSTERFS=DIR, NTIRPC=DIR):
# real users, not follow-ups, and not part of make test
USERS := glusterfs ntirpc
export GLUSTERFS NTIRPC
# The suites: each prints the TAP header, runs its steps (the recipe of
# NAME-steps) and ends with scripts/checks/summary's count
SUITES := test test-debug test-kcsan soak scale bench server model \
	mutants check-series check-arches check-tools $(FOLLOWUPS:%=check-%) \
	$(USERS:%=check-%)
$(SUITES) test-base: export RESULTS ?= $(RESULTS_OF_THIS_RUN)
$(SUITES): %:
	@: >"$(RESULTS)"
	@echo "TAP version 13"
	@$(MAKE) --no-print-directory $*-steps
	@$(S)/checks/summary

## run: apply the series, build it, boot it in QEMU: PASS or FAIL
run: build
	@$(S)/steps/initramfs run
	@if $(S)/steps/boot run; then \
		echo "PASS: EPOLL_CTL_DISABLE works on the patched kernel in QEMU"; \
	else \
		echo "FAIL: the selftest did not pass in the guest (see above)"; \
		exit 1; \
	fi

# The bases make test covers, one after the other: the tree in KSRC, or
# Debian's linux-source-$(BASE), or those in BASES; by default
# DEFAULT_BASES (scripts/lib/bases.sh has them; scripts/bases/ has every
# base).  A make test that covered no base would pass on nothing: stop.
DEFAULT_BASES := $(shell sed -n 's/^DEFAULT_BASES="\(.*\)"$$/\1/p' $(S)/lib/bases.sh)
ifeq ($(DEFAULT_BASES),)
$(error scripts/lib/bases.sh names no DEFAULT_BASES: make test would cover no base)
endif
TEST_BASES := $(if $(KSRC),ksrc,$(or $(BASE),$(BASES),$(DEFAULT_BASES)))

## test: the whole suite on each base; ends with "N passed, N failed"
test: deps
test-steps:
	@$(S)/checks/check-tools
	@$(if $(KSRC),echo "# base: the tree in KSRC=$(KSRC)",echo "# bases: Debian's linux-source-$(subst $() $(),$(comma) ,$(TEST_BASES)); v3.6 is covered only with KSRC=/path/to/linux-3.6")
	@$(S)/checks/check-host
	@$(S)/checks/check-model || true
	@for b in $(TEST_BASES); do \
		env $$([ $$b = ksrc ] || echo BASE=$$b BASE_LABEL=v$$b) \
			$(MAKE) --no-print-directory test-base || exit 1; \
	done
	@b=$(firstword $(TEST_BASES)); \
		env $$([ $$b = ksrc ] || echo BASE=$$b) $(S)/checks/check-followups $(FOLLOWUPS)

# What make test checks on one base, its checks named after the base: the
# series, the kernel with it (and configure's negative control), the guest
# checks, the base without the series
test-base: deps source
	@$(S)/checks/check-series
	@if $(S)/steps/kernel; then \
		$(S)/checks/record ok "kernel and in-tree selftests build with the series"; \
	else \
		$(S)/checks/record fail "kernel and in-tree selftests build with the series"; \
	fi
	@$(S)/checks/check-configure
	@$(S)/checks/check-bisect
	@$(S)/checks/check-runner
	@$(S)/checks/check-guest test
	@if UNPATCHED=1 $(S)/steps/kernel; then \
		$(S)/checks/record ok "the base builds without the series"; \
	else \
		$(S)/checks/record fail "the base builds without the series"; \
	fi
	@$(S)/checks/check-warnings
	@UNPATCHED=1 $(S)/checks/check-guest unpatched

# The guest checks of make test on a kernel with KASAN, lockdep and the
# other debug checkers (kconfig/Kconfig.debug.fragment); any report on the console
# fails the run, and a guest that provokes a WARNING must be caught
## test-debug: make test's guest checks on a kernel with KASAN and lockdep
test-debug: export EXTRA_FRAGMENT := $(CURDIR)/kconfig/Kconfig.debug.fragment
test-debug: deps source
test-debug-steps:
	@if $(S)/steps/kernel; then \
		$(S)/checks/record ok "debug kernel builds with the series"; \
	else \
		$(S)/checks/record fail "debug kernel builds with the series"; \
	fi
	@TIMEOUT=$(or $(TIMEOUT),2700) $(S)/checks/check-guest test
	@EXPECT_SPLAT=1 $(S)/checks/check-guest warn

# The data-race checks (scripts/checks/check-kcsan): the guest's load on kernels
# with KCSAN (kconfig/Kconfig.kcsan.fragment), with the series, without it, and
# with a deliberately unlocked write in ep_disable(), which must be
# reported.  Not part of make test: three more builds and slow guests.
## test-kcsan: data races: three kernels with KCSAN under one load
test-kcsan: export EXTRA_FRAGMENT := $(CURDIR)/kconfig/Kconfig.kcsan.fragment
test-kcsan: deps source
test-kcsan-steps:
	@$(S)/checks/check-kcsan

# N rounds in one boot (the selftest, and the naive control), for each
# -smp count in SMP
## soak: N rounds of the selftest in one boot, at each -smp in SMP
soak: build
soak-steps:
	@for smp in $(or $(SMP),1 2 4); do \
		SMP=$$smp LABEL="-smp $$smp" GUEST_ENV="soak=$(or $(N),100)" \
		TIMEOUT=$(or $(TIMEOUT),$$(( $(or $(N),100) * 60 + 300 ))) \
			$(S)/checks/check-guest soak; \
	done

# The stress test once at scale: 10,000 items, 500 readers
# (scripts/guest/plans/scale); the bytes the writer leaves in 10,000
# socketpairs need more than 1G
## scale: the stress test once with 10,000 items and 500 readers
scale: build
scale-steps:
	@SMP=$(or $(SMP),2) MEM=$(or $(MEM),4G) TIMEOUT=$(or $(TIMEOUT),1800) \
		$(S)/checks/check-guest scale

# What the op costs, and the deletion protocols side by side, in the guest:
# CSV, plots and a table in bench/ (scripts/bench/bench).  The kernel gets
# madvise() from kconfig/Kconfig.bench.fragment, a build of its own
## bench: what the op costs, the deletion protocols: bench/<base>/
bench: export EXTRA_FRAGMENT := $(CURDIR)/kconfig/Kconfig.bench.fragment
bench: build
bench-steps:
	@$(S)/bench/bench

# A keep-alive HTTP server under wrk in the guest, its reaper closing
# connections from outside its workers with EPOLL_CTL_DISABLE, deferred
# reclamation and the naive delete: the checks, their negative controls,
# and the figures of disable and deferred side by side in bench/SERVER.md
# (scripts/bench/server).  The kernel gets TCP/IP from kconfig/Kconfig.inet.fragment, a
# build of its own
## server: an HTTP server under wrk in the guest: bench/SERVER.md
server: export EXTRA_FRAGMENT := $(CURDIR)/kconfig/Kconfig.inet.fragment
server: build
server-steps:
	@$(S)/bench/server || true

# The steps, each a script; every one finds its input where the one before
# left it (scripts/lib/paths.sh says where).
## deps: install from Debian what the steps need (apt-get)
deps:
	@$(S)/steps/deps
## source: the pristine base tree, in the cache
source: deps
	@$(S)/steps/source
## apply: the base with the series applied by git am
apply: source
	@$(S)/steps/apply
## configure: the test kernel's .config, each needed option checked
configure: apply
	@$(S)/steps/configure
## build: the kernel and the selftests for the guest
build: configure
	@$(S)/steps/build

# The series as a reviewer checks it: regenerated from the sources and
# compared, git am on the pristine base, checkpatch --strict, a build after
# every patch, sparse and W=1 against the base's own warnings (which need
# the kernel built with the series and without it)
## check-series: the series as a reviewer checks it
check-series: deps source
check-series-steps:
	@$(S)/checks/check-series
	@$(S)/steps/apply && $(S)/steps/configure
	@$(S)/checks/check-bisect
	@$(S)/steps/kernel --both || true
	@$(S)/checks/check-warnings

# The series on the arches the build robots build besides x86_64, as
# check-bisect builds it there: i386, arm with the OABI entry, arm64 and
# riscv64 (ARCHES= picks some; scripts/arches/ has a file each), a small
# kernel on the base and after every patch, with Debian's cross compilers;
# arm64 booted in QEMU with the selftest, passing with the series and
# skipping on the base.  Not part of make test (scripts/README: its time).
## check-arches: each patch built for i386, arm, arm64, riscv64; arm64 booted
check-arches: deps source
check-arches-steps:
	@$(S)/steps/apply && $(S)/checks/check-arches

# struct epitem as pahole shows it, x86_64 and i386, without the series
# and with it (scripts/bench/epitem-layout): bench/<base>/epitem-layout.txt
## epitem-layout: struct epitem (pahole), x86_64 and i386, base and series
epitem-layout: deps source
	@$(S)/steps/apply && $(S)/bench/epitem-layout

# Regenerate patches/<base>/ from the component sources and messages
## patches: regenerate patches/<base>/ from the sources and messages
patches: source
	@$(S)/patches/gen-patches

# Check the deletion protocol with spin, every interleaving (model/)
## model: check the deletion protocol with spin (model/)
model: deps
model-steps:
	@$(S)/checks/check-model || true

## check-%: % with patches/%/: its checks and their control
# The follow-ups for other projects, one queue each in patches/<project>/,
# each on the project's upstream tree: make check-<project> <PROJECT>=DIR
# (GLIBC=, MUSL=, LIBURING=, STRACE=, MANPAGES=, LTP=, SYZKALLER=) applies
# the queue with git am at the commit its series file pins and runs the
# project's own kind of test there, with a negative control: glibc's
# consts test against the series' header and the base's; musl's and
# liburing's programs in the guest, passing on the series' kernel and
# skipping on the base; strace's epoll_ctl test, failing under the
# machine's strace; the man page's lint and render; LTP's epoll_ctl08 and
# 09 in the guest, TCONF on the base; syzkaller's syz-sysgen and Go tests
# at its last vendored commit.  patches/README says more.
# Each says first whether its tree is given; the kernels it boots are
# built by scripts/steps/kernel, which fetches the base first.
$(FOLLOWUPS:%=check-%): deps
export LTP SYZKALLER
# glusterfs: a real user, GlusterFS's event pool with its queue, on a
# copy of the tree given as GLUSTERFS=: our scripts/followups/
# glusterfs_slot_race.c, the reproducer of its 0001, clean with the queue
# and failing without it; glusterfs_driver.c in the guest takes the
# DISABLE path on the patched kernel and the fallback on the base, no
# touch of freed state on either, and is caught with its release broken;
# not part of make test.
# ntirpc: NFS-Ganesha's RPC library with its queue, on a copy of the tree
# given as NTIRPC=: scripts/followups/ntirpc_driver.c on the host (ASan,
# no op) and in the guest takes the DISABLE path on the patched kernel
# and the fallback on the base, nothing held on either with the queue,
# and is caught dropping the event holder's reference too; the figures
# of every run close its output.
$(USERS:%=check-%): deps
$(FOLLOWUPS:%=check-%-steps) $(USERS:%=check-%-steps): check-%-steps:
	@$(S)/checks/check-$*

# Build the kernel with each deliberately wrong ep_disable() and show that
# the guest checks catch it (MUTANTS= picks some; default: all of them)
## mutants: the guest checks must fail on each wrong ep_disable()
mutants: deps source
mutants-steps:
	@$(S)/checks/check-mutants $(MUTANTS)

# The cache (scripts/steps/cache): what it holds against its cap, and emptying
# it; every step that makes a tree or a build prunes it to the cap first.
# make clean removes what the Makefile leaves in the repo and in $TMPDIR.
## cache-size: what the cache holds, against its cap
cache-size:
	@$(S)/steps/cache size
## cache-clean: empty the cache (refused while a run uses it)
cache-clean:
	@$(S)/steps/cache clean
## clean: what make leaves in this repo, and in $TMPDIR of runs that ended
clean:
	@$(MAKE) --no-print-directory -C tools-testing-selftests-epoll clean
	@$(MAKE) --no-print-directory -C checks clean
	@$(MAKE) --no-print-directory -C bench/src clean
	@for f in $(or $(TMPDIR),/tmp)/epoll-disable-results.*; do \
		[ -e "$$f" ] || continue; \
		kill -0 "$${f##*.}" 2>/dev/null || rm -f "$$f"; \
	done

# The harness's own tests, on recorded inputs (scripts/tests/): bats and
# shellcheck, no kernel, no QEMU, no network; make test runs them first
## check-tools: the harness's own tests: bats and shellcheck, no kernel
check-tools-steps:
	@$(S)/checks/check-tools

.PHONY: run test-base deps source apply configure build patches epitem-layout \
	cache-size cache-clean clean \
	$(SUITES) $(addsuffix -steps,$(SUITES))

# make help: every "## target: what it does" line above, in order; a
# "%" in one stands for each project in FOLLOWUPS and USERS
## help: this list
help:
	@awk -v followups='$(FOLLOWUPS) $(USERS)' 'sub(/^## /, "") { \
		t = $$0; sub(/: .*/, "", t); d = $$0; sub(/^[^:]*: /, "", d); \
		n = t ~ /%/ ? split(followups, p, " ") : 1; \
		for (i = 1; i <= n; i++) { \
			x = t; y = d; \
			if (t ~ /%/) { gsub(/%/, p[i], x); gsub(/%/, p[i], y) } \
			printf "%-16s %s\n", x, y \
		} }' $(firstword $(MAKEFILE_LIST))
.PHONY: help
