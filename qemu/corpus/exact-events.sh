# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
# What perf-stat-verdicts.sh and perf-record-report.sh share: their
# leading `--exact EVENT` options and the rule they judge a count by, its
# number kept for an --exact event and reduced to a word for any other.
# Sourced from the directory of the script that sources it (the guest's
# /usr/local/bin, where qemu/build-initramfs.sh installs this directory's
# scripts); it runs nothing itself.

# read_exact_events ARGS...: the leading `--exact EVENT` options of ARGS
# into $exact_events (" EVENT EVENT "), and how many words they take into
# $exact_words, for the caller to shift off. A --exact without its event
# exits 2, naming the calling script.
read_exact_events() {
	exact_events=" "
	exact_words=0
	while [ "${1-}" = --exact ]; do
		[ $# -ge 2 ] || {
			prog=${0##*/}
			echo "${prog%.sh}: --exact needs an event" >&2
			exit 2
		}
		exact_events="$exact_events$2 "
		exact_words=$((exact_words + 2))
		shift 2
	done
}

# is_exact EVENT: true when EVENT was given with --exact.
is_exact() {
	case "$exact_events" in
	*" $1 "*) return 0 ;;
	*) return 1 ;;
	esac
}
