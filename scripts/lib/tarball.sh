# shellcheck shell=bash
# LINUX_TARBALL=FILE: a base given as a release tarball (kernel.org's
# v3.x/linux-3.6.tar.xz), for whoever has no tree of it.  It is unpacked
# once into $CACHE/tarballs/<its sha256>/ and that tree is then taken as
# KSRC= takes one (bases.sh: check_ksrc).  A file that is not a whole
# tarball of a supported Linux stops the run with one line, before
# anything is installed or built.  Which file the digest is: a stamp per
# path, size and mtime, so that each step does not hash it again.

# tarball_unpack FILE DIR: FILE's one top directory, a kernel tree of a
# supported version, moved to DIR; stops on anything else
tarball_unpack() {
	local f=$1 dir=$2 tmp=$2.tmp top v why
	rm -rf "$tmp" "$dir"
	mkdir -p "$tmp"
	need_disk $((2 << 30)) "unpacking LINUX_TARBALL=$LINUX_TARBALL"
	if ! tar -xf "$f" -C "$tmp" 2>"$tmp.log"; then
		why=$(grep -m1 . "$tmp.log" || true)
		rm -rf "$tmp" "$tmp.log"
		die "LINUX_TARBALL=$LINUX_TARBALL could not be unpacked, truncated or not a tar archive ($why): check it against kernel.org's sha256sums.asc"
	fi
	rm -f "$tmp.log"
	top=$(find "$tmp" -mindepth 1 -maxdepth 1)
	if [ "$(wc -l <<<"$top")" -ne 1 ] || ! v=$(kernel_version "$top") ||
		[ ! -f "$top/fs/eventpoll.c" ]; then
		rm -rf "$tmp"
		die "LINUX_TARBALL=$LINUX_TARBALL is not a Linux source tarball (no one top directory with a kernel Makefile and fs/eventpoll.c): give a release tarball such as kernel.org's linux-3.6.tar.xz"
	fi
	case " $SUPPORTED " in
	*" ${v%.*} "*) ;;
	*)
		rm -rf "$tmp"
		die "LINUX_TARBALL=$LINUX_TARBALL holds Linux $v, which is not a supported base (supported: $SUPPORTED)"
		;;
	esac
	mv "$top" "$dir"
	rm -rf "$tmp"
	say "unpacked Linux $v from $LINUX_TARBALL into $dir"
}

# tarball_tree: the tree LINUX_TARBALL unpacks to, unpacked if need be
tarball_tree() {
	local f stamp sum dir
	[ -f "$LINUX_TARBALL" ] ||
		die "LINUX_TARBALL=$LINUX_TARBALL is not a file: give a Linux release tarball, such as kernel.org's v3.x/linux-3.6.tar.xz"
	need tar tar
	need xz xz-utils
	f=$(realpath "$LINUX_TARBALL")
	stamp=$CACHE/tarballs/by-file/$(stat -c '%n %s %Y' "$f" | digest)
	if [ -s "$stamp" ]; then
		sum=$(cat "$stamp")
	else
		sum=$(sha256sum <"$f" | cut -c1-64)
		mkdir -p "${stamp%/*}"
		echo "$sum" >"$stamp"
	fi
	dir=$CACHE/tarballs/${sum:0:16}
	if [ ! -f "$dir.unpacked" ]; then
		mkdir -p "${dir%/*}"
		(
			flock 9
			[ -f "$dir.unpacked" ] || { tarball_unpack "$f" "$dir" && touch "$dir.unpacked"; }
		) 9>>"$dir.lock" || exit 1
	fi
	use_tree "$dir"
	echo "$dir"
}
