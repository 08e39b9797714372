#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Lay host programs into a directory shaped like the guest image's root, so
# that `qemu/build-initramfs.sh DIR` puts them in the guest: each PROGRAM at
# DIR/usr/local/bin/NAME (on the guest's PATH), and for a dynamically linked
# one every shared library `ldd` names and the program loader, at the paths
# the loader looks for them (as initramfs-tools' copy_exec does). Libraries
# a program dlopen()s at run time are not found this way: add them with
# `--add DIR`.
#
# usage: qemu/add-program.sh DIR PROGRAM...
#   PROGRAM: a path, or a command name looked up on PATH
. "$(dirname "$0")/../scripts/lib.sh"

[ $# -ge 2 ] || die "usage: $0 DIR PROGRAM..."
root=$1
shift
need_cmd ldd readelf
mkdir -p "$root/usr/local/bin"

# copy_file SRC: copy SRC to the same absolute path under $root, resolving
# symlinks (the guest needs the bytes, not the host's link farm).
copy_file() {
	local dest=$root$1
	[ -e "$dest" ] && return 0
	mkdir -p "$(dirname "$dest")"
	cp -L "$1" "$dest" || die "cannot copy $1"
}

for prog in "$@"; do
	path=$prog
	# type -P: a file on PATH, never a shell builtin of the same name (false).
	[[ "$prog" == */* ]] || path=$(type -P "$prog") ||
		die "program '$prog' not found on PATH"
	if [ ! -f "$path" ] || [ ! -x "$path" ]; then
		die "program '$prog' is not an executable file"
	fi
	name=$(basename "$path")
	cp -L "$path" "$root/usr/local/bin/$name" || die "cannot copy $path"
	if [ "$(head -c 2 "$path")" = '#!' ]; then
		shebang=$(head -n1 "$path" | cut -c3- | awk '{print $1}')
		case "$shebang" in
		/bin/sh | /bin/ash | /usr/bin/env) info "$name: script for $shebang (the image's busybox)" ;;
		*) info "$name: script for $shebang, which must be in the image (--add a directory with it)" ;;
		esac
		continue
	fi
	interp=$(LC_ALL=C readelf -l "$path" 2>/dev/null |
		sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p') ||
		die "$name is neither a script nor an ELF executable"
	if [ -z "$interp" ]; then
		info "$name: static"
		continue
	fi
	copy_file "$interp"
	libs=$(LC_ALL=C ldd "$path") || die "ldd $path failed"
	n=0
	while read -r lib; do
		copy_file "$lib"
		n=$((n + 1))
	done < <(sed -n 's/^[[:space:]]*[^ ]* => \(\/[^ ]*\) (0x[0-9a-f]*)$/\1/p' <<<"$libs")
	if grep -q 'not found' <<<"$libs"; then
		die "$name: ldd cannot find $(grep 'not found' <<<"$libs" | awk '{print $1}' | tr '\n' ' ')"
	fi
	info "$name: dynamic, $n shared librar$([ $n -eq 1 ] && echo y || echo ies) + $interp"
done
