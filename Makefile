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
# KSRC=/path/to/linux uses your own tree (Linux 7.3, 6.12, 6.1 or 3.6),
# LINUX_TARBALL=/path/to/linux-3.6.tar.xz a release tarball's.
# On 3.6, patches/v3.6-toolchain/ goes under the series when gcc needs it
# (TOOLCHAIN=1 always, TOOLCHAIN=0 never).
# SMP=, MEM=, TIMEOUT=, ACCEL=kvm tune the guest.  Builds are cached
# outside the repo, in $EPOLL_DISABLE_CACHE (default ~/.cache/epoll-disable).

SHELL := /bin/bash
# What a person may set on make's command line (scripts/README says what
# each does, <PROJECT>= a follow-up's tree); any other word=value stops
# make with one line before it runs anything.  BASE_LABEL is make test's
# own, for its steps on each base.
VARIABLES := BASE BASES KSRC LINUX_TARBALL TOOLCHAIN SMP MEM TIMEOUT ACCEL \
	N MUTANTS ARCHES EXTRA_FRAGMENT SIGNOFF DATE PREFIX B4_TREE B4_BASE \
	KCSAN_SKIP_WATCH RACE_MUTANT SLOT_RACE_SECONDS NTIRPC_RUNS NTIRPC_SECS \
	EPOLL_DISABLE_CACHE EPOLL_DISABLE_CACHE_MAX EPOLL_DISABLE_RUN \
	EPOLL_CPU_LOCK RESULTS TMPDIR BASE_LABEL SECOND_KERNEL
comma := ,
S := scripts
export KSRC LINUX_TARBALL BASE SMP MEM TIMEOUT ACCEL TOOLCHAIN ARCHES N \
	EPOLL_CPU_LOCK
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
UNKNOWN := $(filter-out $(VARIABLES) \
	$(shell echo $(FOLLOWUPS) $(USERS) | tr -d - | tr a-z A-Z), \
	$(foreach v,$(.VARIABLES),$(if $(filter command line,$(origin $v)),$v)))
ifneq ($(UNKNOWN),)
$(error error: $(firstword $(UNKNOWN))= is not a variable of this Makefile: 'make help' and scripts/README list what it takes)
endif
# The suites: each prints the TAP header, runs its steps (the recipe of
# NAME-steps) and ends with scripts/checks/summary's count
SUITES := test check test-debug test-kcsan soak flake scale bench server \
	model mutants check-series check-arches check-tools $(FOLLOWUPS:%=check-%) \
	$(USERS:%=check-%)
$(SUITES) test-base test-base-unpatched: export RESULTS ?= $(RESULTS_OF_THIS_RUN)
# Its TAP goes to the run's logs too (scripts/lib/run.sh: run_logs), with
# each boot's console log and each build's log; the last lines say where
$(SUITES): %:
	@: >"$(RESULTS)"
	@logs=$$($(S)/steps/cache logs) || exit 1; set -o pipefail; \
	{ echo "TAP version 13" && $(MAKE) --no-print-directory $*-steps && \
		echo "# logs: $$logs/ ($*.tap, each boot's console, each build's log)" && \
		$(S)/checks/summary; } | tee "$$logs/$*.tap" || \
		{ echo "==> logs: $$logs/" >&2; exit 1; }

## run: [kernel, guest: 6 min cold, 2 warm] apply the series, build it, boot it in QEMU: PASS or FAIL
run: build
	@$(S)/steps/initramfs run
	@logs=$$($(S)/steps/cache logs) || exit 1; set -o pipefail; \
	if $(S)/steps/boot run | tee "$$logs/run.tap"; then \
		echo "logs: $$logs/ (run.tap, the console: guest-run.log)"; \
		echo "PASS: EPOLL_CTL_DISABLE works on the patched kernel in QEMU"; \
	else \
		echo "logs: $$logs/ (run.tap, the console: guest-run.log)"; \
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
# LINUX_TARBALL=FILE covers the tree a release tarball holds, alone or
# after the Debian bases BASES names ("default": DEFAULT_BASES); .ci/run
# gives it 3.6's from ../shared/
TEST_BASES := $(if $(KSRC),ksrc,$(strip \
	$(patsubst default,$(DEFAULT_BASES),$(or $(BASE),$(BASES))) \
	$(if $(LINUX_TARBALL),tarball)))
TEST_BASES := $(or $(TEST_BASES),$(DEFAULT_BASES))
# base_vars B: what make test's steps on base B of TEST_BASES are given
# (on a make's command line, which outweighs the one that ran this make)
base_vars = $(if $(filter ksrc,$1),,$(if $(filter tarball,$1),BASE= \
	BASE_LABEL=$(notdir $(LINUX_TARBALL)),LINUX_TARBALL= BASE=$1 BASE_LABEL=v$1))

## test: [kernels, guests: 60 min cold, 27 warm] the whole suite on each base; ends with "N passed, N failed"
test: deps
test-steps: check-steps
	@echo "# bases:$(foreach b,$(TEST_BASES), $(if $(filter ksrc,$b),the tree in KSRC=$(KSRC),$(if $(filter tarball,$b),the tree in LINUX_TARBALL=$(LINUX_TARBALL),Debian's linux-source-$b));)"
	@$(foreach b,$(TEST_BASES),$(MAKE) --no-print-directory test-base \
		$(call base_vars,$b) && ) true
	@env $(call base_vars,$(firstword $(TEST_BASES))) \
		$(S)/checks/check-followups $(FOLLOWUPS)

## check: [3 min] what needs no kernel: check-tools, the selftest on the host, the model
check: deps
check-steps:
	@$(S)/checks/check-tools
	@$(S)/checks/check-host
	@$(S)/checks/check-model || true

# make test's steps on one base; BASE_LABEL puts the base in their names
# SECOND_KERNEL says which bases get the checks that need a second
# kernel: the builds after every patch, the base without the series and
# its guest, sparse and W=1 against it (all, the default; lead, the first
# of DEFAULT_BASES only; none, .ci/run's).  Each is a near-full build
# with the base's uapi header; on 2 cores they put a cold CI run over its
# time (bench/TIMES.md).  Every base still gets the series' checks, its
# kernel, the runner and the guest's checks.
SECOND_KERNEL ?= all
ifneq ($(filter-out all lead none,$(SECOND_KERNEL)),)
$(error error: SECOND_KERNEL=$(SECOND_KERNEL) is not all, lead or none)
endif
no_second = $(or $(filter none,$(SECOND_KERNEL)),$(and $(filter \
	lead,$(SECOND_KERNEL)),$(filter-out v$(firstword $(DEFAULT_BASES)),$(or \
	$(BASE_LABEL),ksrc))))
test-base: deps source
	@$(S)/checks/check-series
	@$(S)/checks/check-b4
	@if $(S)/steps/kernel; then \
		$(S)/checks/record ok "kernel and in-tree selftests build with the series"; \
	else \
		$(S)/checks/record fail "kernel and in-tree selftests build with the series"; \
	fi
	@$(S)/checks/check-configure
	@$(if $(no_second),:,$(S)/checks/check-bisect)
	@$(S)/checks/check-runner
	@$(S)/checks/check-guest test
	@$(if $(no_second),echo "# $(or $(BASE_LABEL),ksrc): SECOND_KERNEL=$(SECOND_KERNEL): the builds after every patch$(comma) the base without the series and its guest$(comma) sparse and W=1 are left to make test",$(MAKE) --no-print-directory test-base-unpatched)

# make test's steps on the base without the series, after test-base's
test-base-unpatched:
	@if UNPATCHED=1 $(S)/steps/kernel; then \
		$(S)/checks/record ok "the base builds without the series"; \
	else \
		$(S)/checks/record fail "the base builds without the series"; \
	fi
	@$(S)/checks/check-warnings
	@UNPATCHED=1 $(S)/checks/check-guest unpatched

## test-debug: [kernel, guest] guest checks on KASAN and lockdep: see plans/test, plans/warn
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

# Not part of make test: three more kernels, and slow guests
## test-kcsan: [3 kernels, guests: 22 min] data races, three kernels with KCSAN: see check-kcsan
test-kcsan: export EXTRA_FRAGMENT := $(CURDIR)/kconfig/Kconfig.kcsan.fragment
test-kcsan: deps source
test-kcsan-steps:
	@$(S)/checks/check-kcsan

## soak: [kernel, 3 guests] N rounds in one boot, at each -smp in SMP: see plans/soak
soak: build
soak-steps:
	@for smp in $(or $(SMP),1 2 4); do \
		SMP=$$smp LABEL="-smp $$smp" GUEST_ENV="soak=$(or $(N),100)" \
		TIMEOUT=$(or $(TIMEOUT),$$(( $(or $(N),100) * 60 + 300 ))) \
			$(S)/checks/check-guest soak; \
	done

## flake: [kernel, guest: 2 min for N=50, built] N runs of the selftest under CPU load in one boot: see plans/flake
flake: build
flake-steps:
	@GUEST_ENV="flake=$(or $(N),20)" \
		TIMEOUT=$(or $(TIMEOUT),$$(( $(or $(N),20) * 60 + 300 ))) \
		$(S)/checks/check-guest flake

# MEM: the bytes the writer leaves in 10,000 socketpairs need more than 1G
## scale: [kernel, guest] the stress test at 10,000 items, 500 readers: see plans/scale
scale: build
scale-steps:
	@SMP=$(or $(SMP),2) MEM=$(or $(MEM),4G) TIMEOUT=$(or $(TIMEOUT),1800) \
		$(S)/checks/check-guest scale

# The kernel gets madvise() from kconfig/Kconfig.bench.fragment: a build of its own
## bench: [kernel, guest: 12 min + 15] what the op costs, the protocols side by side: see bench/README
bench: export EXTRA_FRAGMENT := $(CURDIR)/kconfig/Kconfig.bench.fragment
bench: build
bench-steps:
	@$(S)/bench/bench

# The kernel gets TCP/IP from kconfig/Kconfig.inet.fragment: a build of its own
## server: [kernel, guest: 6 min first, 1.5 after] an HTTP server under wrk in the guest: see bench/README
server: export EXTRA_FRAGMENT := $(CURDIR)/kconfig/Kconfig.inet.fragment
server: build
server-steps:
	@$(S)/bench/server || true

# The steps, each a script whose header describes it; every one finds its
# input where the one before left it (scripts/lib/paths.sh says where).
## deps: install from Debian what the steps need (apt-get)
deps:
	@$(S)/steps/deps
## source: [1.5 min first] the pristine base tree, in the cache
source: deps
	@$(S)/steps/source
## apply: the base with the series applied by git am
apply: source
	@$(S)/steps/apply
## configure: the test kernel's .config, each needed option checked
configure: apply
	@$(S)/steps/configure
## build: [kernel: 5 to 8 min cold] the kernel and the selftests for the guest
build: configure
	@$(S)/steps/build

# check-warnings compares with the base's warnings: kernel --both builds
# the kernel with the series and without it first
## check-series: [kernels: 4 min a base, cold] reviewer's checks: check-series, check-b4, check-bisect, check-warnings
check-series: deps source
check-series-steps:
	@$(S)/checks/check-series
	@$(S)/checks/check-b4
	@$(S)/steps/apply && $(S)/steps/configure
	@$(S)/checks/check-bisect
	@$(S)/steps/kernel --both || true
	@$(S)/checks/check-warnings

# Not part of make test: its time is in bench/TIMES.md
## check-arches: [kernels, guests: 50 to 70 min] each patch on i386, arm, arm64, riscv64: see check-arches
check-arches: deps source
check-arches-steps:
	@$(S)/steps/apply && $(S)/checks/check-arches

## epitem-layout: [kernel prepare: 4 min] struct epitem (pahole), base and series: see epitem-layout
epitem-layout: deps source
	@$(S)/steps/apply && $(S)/bench/epitem-layout

## patches: regenerate patches/<base>/ from the sources: see patches/README
patches: source
	@$(S)/patches/gen-patches

## b4-prep: the series as a b4 branch, to send with b4 send: see b4-prep
b4-prep: export NEED_SENDER := 1
b4-prep: deps source
	@$(S)/patches/b4-prep $(B4_TREE)

## model: [20 to 45 s] the deletion protocol in spin: see check-model
model: deps
model-steps:
	@$(S)/checks/check-model || true

## check-%: [kernels, guests: bench/TIMES.md] patches/%/ on the project's tree: see check-%
# Each says first whether its tree is given (<PROJECT>=DIR); the kernels
# it boots are built by scripts/steps/kernel, which fetches the base first, so
# deps is all it needs beforehand
$(FOLLOWUPS:%=check-%): deps
# each needs its project's tree, which lib/inputs.sh checks before deps
$(foreach p,$(FOLLOWUPS) $(USERS),$(eval check-$p: export QUEUE_TREE := $p))
export LTP SYZKALLER
$(USERS:%=check-%): deps
$(FOLLOWUPS:%=check-%-steps) $(USERS:%=check-%-steps): check-%-steps:
	@$(S)/checks/check-$*

## mutants: [kernels, guests: 6 to 10 min] each wrong ep_disable() must fail: see check-mutants
mutants: deps source
mutants-steps:
	@$(S)/checks/check-mutants $(MUTANTS)

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

## check-tools: [2 to 3 min] the harness's own tests (bats, shellcheck): see check-tools
check-tools-steps:
	@$(S)/checks/check-tools

# A target this Makefile does not have: one line, not make's own
.DEFAULT:
	@echo "error: no target '$@' here: 'make help' lists them" >&2; exit 2

.PHONY: run test-base test-base-unpatched deps source apply configure build patches b4-prep epitem-layout \
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
		} } END { print "\n[kernel]: builds a kernel (once: the cache keeps it); [guest]: boots QEMU;\ntimes on 2 cores without KVM, from bench/TIMES.md" }' $(firstword $(MAKEFILE_LIST))
.PHONY: help
