# shellcheck shell=bash
# Debian: its mirror, a sources list of our own, a source package, and
# the linux-source package a Debian base comes from.  A package from the
# machine's own apt sources is installed (scripts/deps); one from another
# suite is fetched into the cache (scripts/fetch).

debian_debs() { echo "$CACHE/debian/$DEBIAN_SUITE"; }
# The Debian mirror that serves the machine's own release, from its apt
# sources; empty if they name none
debian_mirror() {
	local codename
	codename=$(release_codename)
	# shellcheck disable=SC2016 # apt's $(...) fields, not the shell's
	apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
		awk -v c="$codename" '$2 == c { print $1; exit }'
}
# private_apt DIR LINE: apt-get options for a sources list of our own in
# DIR holding LINE, with apt's lists and downloads kept there too: the
# machine's apt configuration is left alone.  Sets the array apt_opts.
private_apt() {
	rm -rf "$1"
	mkdir -p "$1/lists/partial" "$1/cache/archives/partial"
	echo "$2" >"$1/sources.list"
	# shellcheck disable=SC2034 # the caller's
	apt_opts=(-q -o "Dir::Etc::SourceList=$1/sources.list"
		-o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$1/lists"
		-o "Dir::Cache=$1/cache")
}
# release_codename: the machine's Debian release (bookworm)
release_codename() { (. /etc/os-release && echo "${VERSION_CODENAME:-}"); }

# debian_source PKG TOP: the source package PKG of the machine's Debian
# release, fetched through a sources list of our own (private_apt) and
# unpacked with Debian's patches into TOP/src, a git tree of one commit
# ("Debian's PKG VERSION"); TOP/version is the package's version.  TOP
# is made anew; the package and apt's lists are not kept.
debian_source() {
	local pkg=$1 top=$2 mirror codename
	mirror=$(debian_mirror)
	[ -n "$mirror" ] ||
		die "no Debian mirror for this release in the machine's apt sources: run 'apt-get update'"
	codename=$(release_codename)
	rm -rf "$top"
	mkdir -p "$top/pkg"
	private_apt "$top/apt" "deb-src $mirror $codename main"
	say "fetching Debian's $pkg source package from $codename on $mirror"
	apt-get "${apt_opts[@]}" update >"$top/update.log" 2>&1 ||
		die "apt-get update of $codename's sources failed: see $top/update.log"
	(cd "$top/pkg" && apt-get "${apt_opts[@]}" source --download-only "$pkg") \
		>"$top/fetch.log" 2>&1 ||
		die "no $pkg source in $codename on $mirror: see $top/fetch.log"
	nice -n 19 dpkg-source -x "$top/pkg/${pkg}_"*.dsc "$top/src" \
		>"$top/unpack.log" 2>&1 ||
		die "dpkg-source could not unpack $pkg: see $top/unpack.log"
	rm -rf "$top/apt" "$top/pkg" "$top/${pkg}_"*.orig.tar.*
	dpkg-parsechangelog -l "$top/src/debian/changelog" -S Version >"$top/version"
	git -C "$top/src" init -q
	git -C "$top/src" config gc.auto 0	# no gc behind a script's back
	nice -n 19 git -C "$top/src" add -A
	nice -n 19 git -C "$top/src" -c user.name=base -c user.email=base@localhost \
		commit -q -m "Debian's $pkg $(cat "$top/version")"
}

# debian_deb: the newest fetched package of the base; fails, saying what
# to run, if none is
debian_deb() {
	local deb
	# shellcheck disable=SC2012 # Debian's .deb names have no blanks
	deb=$(ls "$(debian_debs)/${DEBIAN_PKG}_"*.deb 2>/dev/null | sort -V | tail -n 1)
	[ -n "$deb" ] ||
		die "$DEBIAN_PKG is not fetched yet: run 'make source${BASE:+ BASE=$BASE}'"
	echo "$deb"
}
# debian_version: the version of the base's package, fetched or installed
debian_version() {
	local deb
	if [ -n "$DEBIAN_SUITE" ]; then
		deb=$(debian_deb) || return 1
		dpkg-deb -f "$deb" Version
	else
		dpkg-query -W -f='${Version}' "$DEBIAN_PKG" 2>/dev/null ||
			die "$DEBIAN_PKG is not installed: run 'make deps${BASE:+ BASE=$BASE}'"
	fi
}
