# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Pinned kernel source and its git trees. Sourced after lib.sh.
#
# Layout under $ANTINOMIE_CACHE/pin/<key>/ (key: "debian" for the pinned
# Debian orig tarball, "custom-<hash>" for KERNEL_TARBALL / KERNEL_SRC):
#   src/linux-6.12.94/   pristine source, never modified
#   base.git/            bare repository: the pristine source as one commit,
#                        tagged antinomie-base (fixed identity and date)
#   build/               worktree: base + kernel-patch/ series; builds use it
#   edit/                worktree for development (scripts/kernel-tree.sh)

# fetch_debian_orig: download the orig tarball with apt-get source from the
# Debian security archive named by the machine's own apt configuration, into
# a private apt state dir. Prints the tarball path. The caller holds the
# lock kernel-source when the tarball is missing (resolve_source).
fetch_debian_orig() {
	local dl uri
	dl=$(dl_dir)
	mkdir -p "$dl"
	if [ ! -f "$dl/$KERNEL_ORIG_TARBALL" ]; then
		uri=$(debian_security_uri) || die "no Debian security archive in the apt configuration (/etc/apt); set KERNEL_TARBALL or KERNEL_SRC"
		stage "fetching $KERNEL_ORIG_TARBALL (linux=$KERNEL_DEB_VERSION, $KERNEL_DEB_SUITE)" >&2
		local tmp
		# What a fetch that was killed left behind (the caller holds the
		# source's lock: no other fetch is running).
		rm -rf "$dl"/.fetch.*
		tmp=$(mktemp -d "$dl/.fetch.XXXXXX")
		apt_source_download "$ANTINOMIE_CACHE/apt" "$tmp" /dev/stderr "linux=$KERNEL_DEB_VERSION" \
			<<<"deb-src $uri $KERNEL_DEB_SUITE main"
		[ -f "$tmp/$KERNEL_ORIG_TARBALL" ] ||
			{ rm -rf "$tmp"; die "apt-get source did not produce $KERNEL_ORIG_TARBALL"; }
		mv "$tmp/$KERNEL_ORIG_TARBALL" "$dl/"
		rm -rf "$tmp"
	fi
	echo "$dl/$KERNEL_ORIG_TARBALL"
}

# debian_security_uri: the URI of the first Debian security archive in the
# apt configuration (deb822 .sources or one-line .list), as configured here.
debian_security_uri() {
	local f uri
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i ~ /debian-security\/?$/) { print $i; exit } }' "$f")
		[ -n "$uri" ] && { echo "${uri%/}"; return 0; }
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		uri=$(awk '$1 ~ /^deb(-src)?$/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z+]+:\/\/.*debian-security\/?$/) { print $i; exit } }' "$f")
		[ -n "$uri" ] && { echo "${uri%/}"; return 0; }
	done
	return 1
}

# verify_sha256 FILE EXPECTED
verify_sha256() {
	local got
	got=$(sha256sum "$1" | cut -d' ' -f1)
	[ "$got" = "$2" ] ||
		die "checksum mismatch for $1: expected sha256 $2, got $got (remove the file to fetch it again)"
}

# check_kernel_version DIR: the tree must be the pinned release.
check_kernel_version() {
	local mk=$1/Makefile v p s
	[ -f "$mk" ] || die "$1 is not a kernel source tree (no Makefile)"
	v=$(sed -n 's/^VERSION = //p' "$mk")
	p=$(sed -n 's/^PATCHLEVEL = //p' "$mk")
	s=$(sed -n 's/^SUBLEVEL = //p' "$mk")
	[ "$v.$p.$s" = "$KERNEL_VERSION" ] ||
		die "$1 is Linux $v.$p.$s, not the pinned $KERNEL_VERSION"
}

# resolve_source: set SRC_KEY and SRC_DIR (pristine, unpacked, verified).
# The fetch and the unpack are under a lock, taken only when one of them
# is to do: two commands on an empty cache (the test command's cargo test
# and its debug kernel's build) would otherwise both fetch into one apt
# state directory and unpack over each other. Whoever holds the lock
# first does the work; the other finds it done.
resolve_source() {
	local tarball sha unpacked
	if [ -n "${KERNEL_SRC:-}" ]; then
		SRC_DIR=$(cd "$KERNEL_SRC" && pwd) || die "KERNEL_SRC=$KERNEL_SRC does not exist"
		check_kernel_version "$SRC_DIR"
		SRC_KEY=custom-$(printf '%s' "$SRC_DIR" | sha256sum | cut -c1-12)
		return
	fi
	if [ -n "${KERNEL_TARBALL:-}" ]; then
		tarball=$(cd "$(dirname "$KERNEL_TARBALL")" && pwd)/$(basename "$KERNEL_TARBALL")
		[ -f "$tarball" ] || die "KERNEL_TARBALL=$KERNEL_TARBALL does not exist"
		stage "verifying $(basename "$tarball")"
		if [ -n "${KERNEL_TARBALL_SHA256:-}" ]; then
			verify_sha256 "$tarball" "$KERNEL_TARBALL_SHA256"
		elif [ "$(basename "$tarball")" = "$KERNEL_ORIG_TARBALL" ]; then
			verify_sha256 "$tarball" "$KERNEL_ORIG_SHA256"
		else
			info "no KERNEL_TARBALL_SHA256 given; sha256 is $(sha256sum "$tarball" | cut -d' ' -f1)"
		fi
		sha=$(sha256sum "$tarball" | cut -c1-12)
		SRC_KEY=custom-$sha
	else
		SRC_KEY=debian
	fi
	SRC_DIR=$ANTINOMIE_CACHE/pin/$SRC_KEY/src/linux-$KERNEL_VERSION
	unpacked=$SRC_DIR/.antinomie-unpacked
	if [ -z "${KERNEL_TARBALL:-}" ]; then
		stage "pinned source: $KERNEL_ORIG_TARBALL"
		{ [ -f "$(dl_dir)/$KERNEL_ORIG_TARBALL" ] && [ -f "$unpacked" ]; } ||
			hold_lock kernel-source "the pinned source's fetch and unpack"
		tarball=$(fetch_debian_orig)
		verify_sha256 "$tarball" "$KERNEL_ORIG_SHA256"
	fi
	[ -f "$unpacked" ] || hold_lock kernel-source "the pinned source's fetch and unpack"
	if [ ! -f "$unpacked" ]; then
		stage "unpacking $(basename "$tarball")"
		local parent tmp top
		parent=$(dirname "$SRC_DIR")
		mkdir -p "$parent"
		# What an unpack that was killed left behind; no other command
		# unpacks while this one holds the lock.
		rm -rf "$SRC_DIR" "$parent"/.unpack.*
		tmp=$(mktemp -d "$parent/.unpack.XXXXXX")
		tar -xf "$tarball" -C "$tmp" || { rm -rf "$tmp"; die "cannot unpack $tarball"; }
		top=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d | head -n 1)
		[ -n "$top" ] || { rm -rf "$tmp"; die "$tarball holds no directory"; }
		mv "$top" "$SRC_DIR"
		rm -rf "$tmp"
		check_kernel_version "$SRC_DIR"
		touch "$unpacked"
	fi
	release_lock kernel-source
}

# ensure_base_git: import the pristine source into base.git once.
ensure_base_git() {
	BASE_GIT=$ANTINOMIE_CACHE/pin/$SRC_KEY/base.git
	if git --git-dir="$BASE_GIT" rev-parse -q --verify "$BASE_REF" >/dev/null 2>&1; then
		return
	fi
	# Two commands on a fresh cache would both import it.
	hold_lock "base-git-$SRC_KEY" "the import of the pinned source into git"
	if git --git-dir="$BASE_GIT" rev-parse -q --verify "$BASE_REF" >/dev/null 2>&1; then
		release_lock "base-git-$SRC_KEY"
		return
	fi
	stage "importing the pristine source into git (once)"
	rm -rf "$BASE_GIT"
	git init -q --bare "$BASE_GIT"
	(
		git_fixed_identity
		export GIT_DIR=$BASE_GIT
		# The pristine tree is the repository's main worktree: tools that
		# want a non-bare repository (checkpatch's spdxcheck.py, through
		# GitPython) then accept the other worktrees too.
		git config core.bare false
		git config core.worktree "$SRC_DIR"
		git config core.autocrlf false
		# Housekeeping in the foreground: a detached git gc or maintenance
		# would inherit, and hold on to, the caller's cache locks.
		git config gc.autoDetach false
		git config maintenance.autoDetach false
		# The marker file is ours, not the kernel's.
		printf '/.antinomie-unpacked\n' >"$BASE_GIT/info/exclude"
		# The import's 90 000 loose objects would make its commit run
		# git gc --auto, a repack of them all with a delta search (78 s
		# user and 12 s system time); one pack without deltas, at zlib
		# level 1, takes a fourth of that, and worktrees check out from
		# it. The tag, last, marks a whole import.
		git add -A &&
			git -c gc.auto=0 commit -q --no-verify -m "Linux $KERNEL_VERSION" &&
			git -c pack.compression=1 repack -a -d -q --window=0 &&
			git tag antinomie-base
	) || die "git import of $SRC_DIR failed"
	release_lock "base-git-$SRC_KEY"
	info "base commit $(git --git-dir="$BASE_GIT" rev-parse --short=12 "$BASE_REF")"
}

# ensure_worktree DIR BRANCH: a worktree of base.git at DIR.
ensure_worktree() {
	local dir=$1 branch=$2
	if [ -e "$dir/.git" ]; then
		return
	fi
	stage "checking out a worktree at $dir"
	rm -rf "$dir"
	git --git-dir="$BASE_GIT" worktree prune
	git --git-dir="$BASE_GIT" worktree add -q -f -B "$branch" "$dir" "$BASE_REF" ||
		die "cannot create worktree $dir"
}

# apply_series TREE [PATCHDIR]: reset TREE to the base and apply the series
# with git am. A patch that does not apply stops everything, with its name.
# What a patch holds below its "---" under "Notes:" (measurements, links:
# what a kernel tree reader does not need) becomes the commit's git note
# again, so that export_patches writes it back.
apply_series() {
	local tree=$1 pdir=${2:-$ANTINOMIE_ROOT/kernel-patch} p n=0
	git -C "$tree" am --abort >/dev/null 2>&1 || true
	git -C "$tree" reset -q --hard "$BASE_REF"
	git -C "$tree" clean -q -fdx
	for p in $(series_patches "$pdir"); do
		n=$((n + 1))
		am_patch "$tree" "$p"
	done
	info "applied $n patch(es) from $(basename "$pdir")/series"
}

# am_patch TREE PATCH: apply PATCH on TREE's HEAD with git am, its note
# restored; a patch that does not apply stops everything, with its name and
# the reason.
am_patch() {
	local tree=$1 p=$2 why
	if ! git -C "$tree" -c user.name=Antinomie -c user.email=build@antinomie.invalid \
		am -q --whitespace=nowarn "$p" >"$tree/.git-am.log" 2>&1; then
		why=$(grep -m1 -E 'error:|patch failed|does not apply' "$tree/.git-am.log" || head -n1 "$tree/.git-am.log")
		git -C "$tree" am --abort >/dev/null 2>&1 || true
		die "patch $(basename "$p") does not apply to Linux $KERNEL_VERSION: $why"
	fi
	rm -f "$tree/.git-am.log"
	restore_note "$tree" "$p"
}

# restore_note TREE PATCH: PATCH's "Notes:" block (format-patch --notes puts
# it after the "---", each line indented by four spaces) as the note of
# TREE's HEAD.
restore_note() {
	local note
	note=$(awk '/^---$/ { below = 1; next }
		below && /^Notes:$/ { inside = 1; next }
		inside && /^    / { print substr($0, 5); next }
		inside && /^$/ { print; next }
		inside { exit }
		/^diff --git / { exit }' "$2")
	[ -n "$note" ] || return 0
	# Every worktree of base.git writes the one refs/notes/commits: two
	# trees applying the series at once (the test command's background
	# build) would fail to lock it.
	hold_lock git-notes "the series' notes ref"
	git -C "$1" notes add -f -m "$note" HEAD
	release_lock git-notes
}

# load_series PATCHDIR: the series' patch files, in order, into the array
# patches; an empty series is an error.
load_series() {
	mapfile -t patches < <(series_patches "$1")
	[ ${#patches[@]} -gt 0 ] || die "$1/series is empty"
}

# scratch_worktree DIR: a detached worktree of the base at DIR; the caller
# removes DIR and prunes (git --git-dir="$BASE_GIT" worktree prune).
scratch_worktree() {
	git --git-dir="$BASE_GIT" worktree add -q --detach "$1" "$BASE_REF" ||
		die "cannot create a scratch worktree at $1"
}

# series_stamp [PATCHDIR]: identifies the series' content.
series_stamp() {
	local pdir=${1:-$ANTINOMIE_ROOT/kernel-patch}
	cat "$pdir/series" $(series_patches "$pdir") | sha256sum | cut -d' ' -f1
}

# sync_build_tree: the build worktree holds exactly base + series. Files the
# series does not touch keep their mtimes, so rebuilds stay incremental.
# The caller holds the kernel build lock from here on: another command
# would otherwise reset the tree under its build.
sync_build_tree() {
	hold_kernel_build_lock
	BUILD_TREE=$ANTINOMIE_CACHE/pin/$SRC_KEY/$ANTINOMIE_BUILD_TREE_NAME
	ensure_worktree "$BUILD_TREE" "antinomie-$ANTINOMIE_BUILD_TREE_NAME"
	local want have=
	want=$(series_stamp)
	[ -f "$BUILD_TREE/.git-series-stamp" ] && have=$(cat "$BUILD_TREE/.git-series-stamp")
	if [ "$want" = "$have" ] && [ -z "$(git -C "$BUILD_TREE" status --porcelain --untracked-files=no)" ]; then
		info "build tree already at the series ($BUILD_TREE)"
		return
	fi
	stage "applying kernel-patch/series to the build tree"
	rm -f "$BUILD_TREE/.git-series-stamp"
	apply_series "$BUILD_TREE"
	# Kept outside git's view: info/exclude of a worktree is the common one.
	echo "$want" >"$BUILD_TREE/.git-series-stamp"
}

# export_patches TREE OUTDIR: format-patch with options that make the output
# depend on nothing but the commits' content, author and message.
export_patches() {
	git -C "$1" -c core.abbrev=12 -c diff.noprefix=false -c format.signOff=false \
		format-patch -q --notes --zero-commit --no-signature --no-renames --no-binary \
		--no-base -o "$2" "$BASE_REF..HEAD" >/dev/null ||
		die "git format-patch in $1 failed"
}

# The cover letter lies beside the series, not in it (git am and quilt
# skip it): its subject and text are written by hand, its shortlog and
# diffstat are git format-patch --cover-letter's.
COVER_LETTER=0000-cover-letter.patch

# export_cover_letter TREE OUT [TEXT_FROM]: write the cover letter of the
# commits of TREE to OUT, with the subject and text of the cover letter
# TEXT_FROM (placeholders if there is none). Its From and Date are the last
# commit's author and date, so the output depends on the commits alone.
export_cover_letter() {
	local tree=$1 out=$2 from=${3:-} tmpd
	tmpd=$(mktemp -d)
	(
		IFS=$'\n' read -r -d '' GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL GIT_COMMITTER_DATE < <(
			git -C "$tree" log -1 --format='%an%n%ae%n%ad' --date=raw HEAD && printf '\0')
		export GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL GIT_COMMITTER_DATE
		git -C "$tree" -c core.abbrev=12 -c diff.noprefix=false -c format.signOff=false \
			format-patch -q --cover-letter --zero-commit --no-signature --no-renames \
			--no-binary --no-base -o "$tmpd" "$BASE_REF..HEAD" >/dev/null
	) || { rm -rf "$tmpd"; die "git format-patch --cover-letter in $tree failed"; }
	python3 "$ANTINOMIE_ROOT/scripts/cover-letter.py" "$tmpd/0000-cover-letter.patch" "$from" >"$out" ||
		{ rm -rf "$tmpd"; die "cannot write the cover letter"; }
	rm -rf "$tmpd"
}
