#!/usr/bin/env bash
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
	[[ "$prog" == */* ]] || path=$(command -v "$prog" 2>/dev/null) ||
		die "program '$prog' not found on PATH"
	[ -f "$path" ] && [ -x "$path" ] || die "program '$prog' is not an executable file"
	name=$(basename "$path")
	cp -L "$path" "$root/usr/local/bin/$name" || die "cannot copy $path"
	interp=$(LC_ALL=C readelf -l "$path" 2>/dev/null |
		sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p')
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
