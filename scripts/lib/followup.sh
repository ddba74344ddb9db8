# shellcheck shell=bash
# The follow-up checks' common opening (scripts/checks/check-<project>): the
# project's upstream tree at the commit its queue pins, the queue applied
# with git am, in a cache directory of its own, under a lock.  Sourced
# after lib.sh.
#
# A queue's series file names the tree and the commit, in two comments:
#   # upstream: URL (what it is)
#   # commit: <40 hex> (subject, date)
# The patches say the Linux release of the op as @LINUX_VERSION@,
# @LINUX_MAJOR@ and @LINUX_MINOR@, and its mainline commit as
# @LINUX_COMMIT@; followup_queue fills them in from patches/linux-release,
# or, while that is empty, with FOLLOWUP_STANDIN, a release later than
# any, and a commit of zeros, which scripts/patches/followup-queue will not send.
FOLLOWUP_STANDIN=99.0
FOLLOWUP_STANDIN_COMMIT=0000000000000000000000000000000000000000

# followup_field QUEUE KEY: the rest of the series file's '# KEY: ' line
followup_field() {
	sed -n "s/^# $2: //p" "$1/series" | head -n 1
}

# followup_linux KEY: what patches/linux-release says of KEY (release,
# commit), or nothing
followup_linux() {
	sed -n "s/^$1=//p" "$TOP/patches/linux-release"
}

# followup_queue QUEUE DIR RELEASE COMMIT: QUEUE's series file and
# patches in DIR, the tokens filled in with RELEASE (MAJOR.MINOR) and
# COMMIT (40 hex)
followup_queue() {
	local p major=${3%%.*} minor=${3#*.}
	[[ $3 =~ ^[0-9]+\.[0-9]+$ ]] ||
		{ echo "release '$3' is not MAJOR.MINOR" >&2; return 1; }
	[[ $4 =~ ^[0-9a-f]{40}$ ]] ||
		{ echo "commit '$4' is not 40 hex" >&2; return 1; }
	rm -rf "$2"
	mkdir -p "$2"
	cp "$1/series" "$2/"
	for p in $(list_patches "$1"); do
		sed -e "s/@LINUX_VERSION@/$3/g" -e "s/@LINUX_MAJOR@/$major/g" \
			-e "s/@LINUX_MINOR@/$minor/g" -e "s/@LINUX_COMMIT@/$4/g" \
			"$p" >"$2/${p##*/}" || return 1
	done
}

# followup_open PROJECT VAR: the tree named by $VAR (a git checkout or a
# git directory, only read) at the commit patches/PROJECT/series pins,
# cloned into $CACHE/followups/PROJECT-<digest of that commit and the
# queue as applied>, and the queue applied there with git am, once.
# Holds that directory's lock until the script exits.  Sets FU_TOP (the
# directory: logs and stamps), FU_SRC (the tree with the queue),
# FU_COMMIT (the pinned commit) and FU_RELEASE (the release the tokens
# became).  Records whether the queue applies; stops the script if not.
# Files the snapshot lacks (a mirror may leave out its largest blobs)
# are left out of the checkout, and said so.
followup_open() {
	local project=$1 var=$2 queue=$TOP/patches/$1 tree q key missing linux_commit
	tree=${!var:-}
	FU_COMMIT=$(followup_field "$queue" commit | cut -c1-40)
	[[ $FU_COMMIT =~ ^[0-9a-f]{40}$ ]] ||
		die "patches/$project/series pins no commit ('# commit: <40 hex>')"
	check_queue_tree "$project" "$var" needed
	FU_RELEASE=$(followup_linux release)
	FU_RELEASE=${FU_RELEASE:-$FOLLOWUP_STANDIN}
	linux_commit=$(followup_linux commit)
	q=$CACHE/followups/$project-queue.$RUN
	followup_queue "$queue" "$q" "$FU_RELEASE" \
		"${linux_commit:-$FOLLOWUP_STANDIN_COMMIT}" ||
		die "could not fill in patches/$project/ for Linux $FU_RELEASE"
	# shellcheck disable=SC2046 # a patch a word
	key=$( { echo "$FU_COMMIT"; cat "$q/series" $(list_patches "$q"); } | digest)
	FU_TOP=$CACHE/followups/$project-$key
	FU_SRC=$FU_TOP/src
	use_tree "$FU_TOP"
	lock "$FU_TOP.lock" "$project's tree in $FU_TOP"
	if [ ! -f "$FU_TOP/.applied" ]; then
		rm -rf "$FU_TOP"
		mkdir -p "$FU_TOP"
		say "cloning $project ${FU_COMMIT:0:12} from $tree into $FU_SRC"
		git clone -q --no-checkout "$tree" "$FU_SRC" ||
			die "could not clone $var=$tree into $FU_SRC"
		git -C "$FU_SRC" config gc.auto 0
		# the commit's tree in the index, less the files whose blobs
		# the snapshot lacks (git would refuse every commit with them)
		{ git -C "$FU_SRC" update-ref --no-deref HEAD "$FU_COMMIT" &&
			git -C "$FU_SRC" read-tree "$FU_COMMIT"; } ||
			die "could not read $FU_COMMIT in $FU_SRC"
		missing=$(git -C "$FU_SRC" ls-tree -r "$FU_COMMIT" | awk '{ print $3 }' |
			git -C "$FU_SRC" cat-file --batch-check='%(objectname)' |
			awk '/ missing$/ { print $1 }')
		if [ -n "$missing" ]; then
			git -C "$FU_SRC" ls-tree -r "$FU_COMMIT" |
				awk -F '\t' 'NR == FNR { gone[$1] = 1; next }
					{ split($1, f, " ") } f[3] in gone { print $2 }' \
				<(printf '%s\n' "$missing") - >"$FU_TOP/missing"
			say "$project's snapshot lacks $(wc -l <"$FU_TOP/missing") files (listed in $FU_TOP/missing): the queue goes on a commit without them"
			{ git -C "$FU_SRC" update-index --force-remove --stdin <"$FU_TOP/missing" &&
				git -C "$FU_SRC" -c user.name=check -c user.email=check@localhost \
					commit -q -m "${FU_COMMIT:0:12} less the files the snapshot lacks"; } ||
				die "could not leave the absent files out in $FU_SRC"
		fi
		git -C "$FU_SRC" checkout-index -a -f ||
			die "could not check out $FU_COMMIT in $FU_SRC"
		git -C "$FU_SRC" rev-parse HEAD >"$FU_TOP/base"
		if ! am_queue "$FU_SRC" "$q" >"$FU_TOP/am.log" 2>&1; then
			record fail "$project: patches/$project/ applies to ${FU_COMMIT:0:12} with git am" \
				"$(head -n 5 "$FU_TOP/am.log")"
			rm -rf "$q"
			exit 1
		fi
		git -C "$FU_SRC" log --reverse --format='%h %s' "$(cat "$FU_TOP/base").." >"$FU_TOP/applied"
		touch "$FU_TOP/.applied"
	fi
	rm -rf "$q"
	record ok "$project: patches/$project/ applies to ${FU_COMMIT:0:12} with git am"
	sed 's/^/# applied: /' "$FU_TOP/applied"
	[ "$FU_RELEASE" != "$FOLLOWUP_STANDIN" ] ||
		echo "# Linux $FU_RELEASE stands in for the release of the op (patches/linux-release)"
}

# followup_once NAME CMD...: CMD once for this tree and queue; its stamp,
# FU_TOP/.NAME, is left only when it succeeds
followup_once() {
	local stamp=$FU_TOP/.$1
	shift
	[ ! -f "$stamp" ] || return 0
	"$@" || return 1
	touch "$stamp"
}

# followup_skip PROJECT VAR: make test's line for a check it cannot run
# without the tree VAR names
followup_skip() {
	record ok "$1: the queue on upstream $1 # SKIP no tree: give $2=/path/to/$1"
}

# followup_var PROJECT: the variable that names PROJECT's tree (GLIBC,
# LIBURING, MANPAGES, ...)
followup_var() {
	local v=${1//-/}
	echo "${v^^}"
}
