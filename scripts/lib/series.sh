# shellcheck shell=bash
# The series and the queues: patch lists as series files give them, the
# toolchain fixes under an old base, git am, the series' commits in a tree.

# The one identity of the committed patches (patches/<base>/, as
# gen-patches writes them whoever runs it): their author and sign-off.
# The sender's goes in where the mail is made, b4-prep's branch (sender).
# shellcheck disable=SC2034 # for gen-patches and check-series
SIGNOFF_PLACEHOLDER='Seed cbc5db85 maintainers <maintainers@users.noreply.a-seed-cbc5db85.example>'

# sender: who sends the series, "Name <addr>": SIGNOFF=, or else git's
# user.name and user.email; never the placeholder, which is no person
sender() {
	local s=${SIGNOFF:-} fix="give SIGNOFF=\"Your Name <you@example.org>\", as in 'make b4-prep SIGNOFF=...'"
	if [ -z "$s" ] && git -C "$TOP" config user.email >/dev/null; then
		s="$(git -C "$TOP" config user.name) <$(git -C "$TOP" config user.email)>"
	fi
	case $s in
	'') die "no sender: git has no user.email here; $fix" ;;
	"$SIGNOFF_PLACEHOLDER") die "the sender would be the placeholder, $s: $fix" ;;
	*' <'*@*'>') echo "$s" ;;
	*) die "SIGNOFF=$s is not \"Name <addr>\": $fix" ;;
	esac
}

# series_fresh: patches/<base>/ is what scripts/patches/gen-patches makes
# of the sources (the three components, msg/, and the two scripts that
# make it); or else it fails, printing what differs (status 1), or why
# gen-patches could not make it on this base (status 2).  A stamp per digest
# of those inputs keeps the answer, so that only the first run after an
# edit generates the series (about 5 s).
series_fresh() {
	local s key stamp gen out
	s=$(series_dir) || return 1
	# shellcheck disable=SC2046 # a path a word
	key=$( (cd "$TOP" && find fs-eventpoll include-uapi tools-testing-selftests-epoll \
		"${s#"$TOP"/}" scripts/patches/gen-patches scripts/steps/apply-edits \
		-type f -print0 | sort -z | xargs -0 sha1sum) | digest) || return 1
	stamp=$CACHE/fresh/$(basename "$s")-$key
	[ ! -f "$stamp" ] || return 0
	gen=$(mktemp -d) || return 1
	if ! out=$(SIGNOFF='' "$TOP/scripts/patches/gen-patches" "$gen/out" 2>&1); then
		rm -rf "$gen"
		printf '%s\n' "$out" | tail -n 1
		return 2
	fi
	if ! out=$(diff -rq -x msg "$s" "$gen/out"); then
		rm -rf "$gen"
		printf '%s\n' "$out" | sed -n 's|^Files \([^ ]*\) and .* differ$|\1|p; s|^Only in \(.*\): \(.*\)|\1/\2|p' |
			sed "s|^$TOP/||; s|^$gen/out|(made)|" | xargs
		return 1
	fi
	rm -rf "$gen"
	mkdir -p "${stamp%/*}"
	touch "$stamp"
}

# list_patches DIR: the patches DIR/series lists, in order
list_patches() {
	[ -f "$1/series" ] || die "no series file in $1"
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$1/series" |
		while read -r p; do echo "$1/$p"; done
}

# The series as listed in its series file, in order
series_patches() {
	local d
	d=$(series_dir) || return 1
	list_patches "$d"
}

# The compiler fixes an old base needs to build with today's toolchain
# (paths.sh: toolchain_dir), applied under the series (not part of it).
# TOOLCHAIN=1 always applies them, TOOLCHAIN=0 never; by default they go
# on when the base has no compiler-gccN.h for the gcc that builds it.
gcc_major() { gcc -dumpversion | cut -d. -f1; }
# old_compiler_headers DIR: DIR has compiler-gcc<N>.h headers, but none
# for this gcc (bases since 4.2 have only compiler-gcc.h)
old_compiler_headers() {
	[ -f "$1/include/linux/compiler-gcc4.h" ] &&
	[ ! -f "$1/include/linux/compiler-gcc$(gcc_major).h" ]
}
use_toolchain() {
	local t d
	t=$(toolchain_dir) || die "no base to read toolchain= from: run 'make source'"
	[ -f "$t/series" ] || return 1
	case ${TOOLCHAIN:-auto} in
	1) return 0 ;;
	0) return 1 ;;
	auto)
		d=$(base_dir) || die "no base: run 'make source'"
		old_compiler_headers "$d" ;;
	*) die "TOOLCHAIN=$TOOLCHAIN: use 1 (apply $t), 0 (do not) or leave it unset (when gcc needs it)" ;;
	esac
}
toolchain_patches() {
	local t
	if use_toolchain; then
		t=$(toolchain_dir) || return 1
		list_patches "$t"
	fi
}

# am_queue DIR QUEUE: git am in DIR the patches QUEUE/series lists, in
# order, as a committer of ours
am_queue() {
	local patches
	patches=$(list_patches "$2") || return 1
	# shellcheck disable=SC2086 # a patch a word
	git -C "$1" -c user.name=check -c user.email=check@localhost \
		am -q $patches
}

# series_commits TREE: the commits of the series in TREE, oldest first;
# fails if TREE does not end in as many commits as the series has patches
series_commits() {
	local n list
	list=$(series_patches) || return 1
	n=$(printf '%s\n' "$list" | wc -l)
	git -C "$1" rev-list --reverse "HEAD~$n..HEAD" | awk -v n="$n" '
		{ print } END { if (NR != n) exit 1 }'
}

# patch_summary FILE: what a patch mail says, apart from the headers of
# its sending: its Subject (unfolded, prefix and all), its message as git
# am takes it, and the patch-id of its diff (git patch-id --stable: blind
# to index lines' abbreviations and to the diffstat)
patch_summary() {
	local t ok=0
	t=$(mktemp -d) || return 1
	awk '/^$/ { exit } /^[ \t]/ && s { printf "%s", $0; next }
		s { print ""; s = 0 } /^Subject: / { printf "%s", $0; s = 1 }
		END { if (s) print "" }' "$1" &&
		git mailinfo "$t/msg" "$t/patch" <"$1" >/dev/null &&
		cat "$t/msg" &&
		git patch-id --stable <"$t/patch" | cut -d' ' -f1 || ok=1
	rm -rf "$t"
	return "$ok"
}
