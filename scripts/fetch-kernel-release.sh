#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Download another Debian kernel release's source (orig tarball, Debian
# tarball, .dsc) from the Debian archives named by this machine's apt
# configuration, through a private apt state (the system's apt config is
# neither read for sources nor edited), to compare perf_event_open's code
# of the pin with a later release and to find the changes that the
# regression cases under scripts/tests/regression/changes/ carry.
#
# usage: scripts/fetch-kernel-release.sh DEBIAN_VERSION   (e.g. 6.12.96-1)
# The versions on offer are those of `apt-cache showsrc linux` against the
# same sources; the archive may list a version whose files it no longer
# serves (then this exits non-zero, naming the apt log).
# Prints the directory that holds the downloaded files as its last line:
# $ANTINOMIE_CACHE/releases/DEBIAN_VERSION.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kernel-lib.sh"

[ $# -eq 1 ] || die "usage: $0 DEBIAN_VERSION"
need_cmd apt-get

# debian_archive_uri: the URI of the first main Debian archive (one ending
# in /debian) in the apt configuration, deb822 .sources or one-line .list.
debian_archive_uri() {
	local f uri
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { print $i; exit } }' "$f")
		[ -n "$uri" ] && { echo "${uri%/}"; return 0; }
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		uri=$(awk '$1 ~ /^deb(-src)?$/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z+]+:\/\/.*\/debian\/?$/) { print $i; exit } }' "$f")
		[ -n "$uri" ] && { echo "${uri%/}"; return 0; }
	done
	return 1
}

main_uri=$(debian_archive_uri) || die "no main Debian archive (a URI ending in /debian) in the apt configuration (/etc/apt)"
security_uri=$(debian_security_uri) || die "no Debian security archive in the apt configuration (/etc/apt)"
# Later stable updates of the pin's series come from the security archive,
# later releases from backports, unstable and experimental.
sources="deb-src $security_uri $KERNEL_DEB_SUITE main
deb-src $main_uri trixie-backports main
deb-src $main_uri sid main
deb-src $main_uri experimental main"
apt_dir=$ANTINOMIE_CACHE/apt-releases

version=$1
case "$version" in
[0-9]*.*-*) ;;
*) die "'$version' is not a Debian version of the linux source package (e.g. 6.12.96-1)" ;;
esac
dest=$ANTINOMIE_CACHE/releases/$version
if [ ! -f "$dest/.complete" ]; then
	stage "fetching linux=$version"
	rm -rf "$dest"
	# The archive may serve the orig tarball and lack the rest (a .dsc or
	# Debian tarball that is gone from the pool): the orig is what the
	# comparison needs, so a partial download that has it is enough.
	(apt_source_download "$apt_dir" "$dest" "$dest.log" "linux=$version" <<<"$sources") 2>/dev/null || true
	compgen -G "$dest/*.orig.tar.xz" >/dev/null || die "apt-get source linux=$version produced no orig tarball (see $dest.log)"
	grep -q '^E: ' "$dest.log" && info "not every file was served (see $dest.log); got: $(ls "$dest")"
	touch "$dest/.complete"
fi
stage "linux=$version source ready"
echo "$dest"
