#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Does a kernel change alter perf_event_open's behaviour for anyone? One
# command: builds the baseline kernel (the pin + the series, the normal
# variant) and the changed one (the same + the --patch files in order, +
# the --config fragment merged into its configuration), runs the corpus on
# both (every entry under each of its privilege contexts, captured
# losslessly, one boot per kernel, the two at once: the guest scenario
# qemu/scenarios/corpus)
# with the same seeds, and compares every workload x context: its capture
# call by call (reader diff) and its own verdicts (exit status and its
# stdout lines that start with "verdict: "). Every difference is confirmed
# by running that workload x context again on both kernels; one the rerun
# does not show is dropped as not reproducible (and counted). The rerun
# also says where each differing result came from: kprobes on the
# functions that decide perf_event_open's result name the one that
# returned it, on each kernel (the verdict itself comes from the first,
# unprobed run). The test kernels carry gcov on those functions' objects:
# the report says which of their decisions the corpus reached, and which
# of the change's lines. No --patch, no --tree, no --config and no
# --changed-gcov-objects compares the baseline with itself.
#
# usage: scripts/regress.sh [--patch FILE... | --tree DIR] [--config FRAGMENT]
#            [--changed-gcov-objects LIST] [--corpus LIST]... [--contexts LIST]
#            [--seed S] [--out DIR] [--timeout S]
#   --patch FILE       a kernel change (git diff or git format-patch form),
#                      applied on top of the series; repeat for several,
#                      applied in the order given
#   --tree DIR         the changed kernel is the kernel tree DIR as it is
#                      (the pinned release with the series and the changes,
#                      e.g. a branch of scripts/kernel-tree.sh's tree: what
#                      `git bisect run` checks out), built in a directory
#                      of its own
#   --config FRAGMENT  kconfig lines merged last into the changed kernel's
#                      configuration (every option must stick)
#   --changed-gcov-objects LIST  the objects gcov instruments in the changed
#                      kernel, one a line (default: kconfig/coverage.objects,
#                      as in the baseline); a LIST with none, e.g.
#                      scripts/tests/regression/no-counters.objects, makes
#                      the changed kernel the baseline without gcov's
#                      counters: the comparison then shows whether they
#                      change a result
#   --corpus LIST      a corpus list (default: every qemu/corpus/*.list);
#                      repeat for several; format in qemu/corpus/default.list
#   --contexts LIST    run only these contexts (comma-separated; default:
#                      all of root,perfmon,user-p4,user-p3,user-p2,user-p1,user-p0,user-m1,userns)
#   --seed S           replaces ${SEED} in the corpus's command lines
#                      (default: 20261130), the same on both kernels
#   --out DIR          where the results go (default: ./antinomie-regress)
#   --timeout S        one run's longest time in the guest, in seconds
#                      (default 600); a run stopped by it could not test
#
# On a real test machine (docs/real-machine.md), which this command cannot
# boot, the corpus runs from a bundle and the report is made from its
# results:
#   scripts/regress.sh --bundle DIR [--corpus LIST]... [--contexts LIST]
#            [--seed S] [--timeout S]
#                      write the guest image's root with the corpus in it
#                      to DIR and stop (no kernel built, nothing booted);
#                      on the machine, `sudo DIR/run-corpus RESULTS` runs
#                      it on the running kernel (qemu/guest/run-corpus)
#   scripts/regress.sh --compare A B [--rerun A2 B2] [--out DIR]
#                      the report of two run-corpus results, A on the
#                      baseline kernel and B on the changed one; every
#                      difference must be confirmed by a second pair of
#                      runs (--rerun), or it could not test
#
# Writes to DIR: summary.txt (read it first: per workload x context, the
# calls, the differing calls by kind and the first few decoded; the
# change's lines in the gcov-instrumented sources and whether the corpus
# reached them; what it reached of perf_event_open's decisions, per
# function), coverage.json (that coverage in full),
# report.json, junit.xml (one testcase per workload x context: a
# difference or a splat is a failure, could-not-test an error),
# report.ktap (KTAP, as kselftest and KUnit report: one test per
# workload x context, a difference or a splat "not ok", could-not-test a
# SKIP), kcidb.json (KCIDB data: both kernels as checkouts and builds, a
# test per workload x context of the changed build: FAIL, ERROR where it
# could not test), runs/ (each kernel's
# results per workload/context: trace, stdout, stderr, status, capture
# summary), diffs/ (reader diff's text and JSON per workload/context) and
# the kernel build logs. Format: docs/design.md, "Regression testing".
# Exit status: 0 no behaviour change, 1 changed (a confirmed difference,
# or a changed kernel that reported a failure of its own, a panic, an
# Oops, a stall, a WARNING, in a run the baseline ran to the end, and
# the same failure when that run was booted alone), 2 not reached (no
# behaviour change, but the change's lines are all in gcov-instrumented
# sources and the corpus executed none of them: the comparison says
# nothing of it), 125 could not test (a build, a boot or a capture
# failed, a capture lost records, a context could not be set up, the
# baseline kernel reported a failure), so
# that `git bisect run` can drive it (a --tree's changed files are not
# known, so it never gets 2):
#   cd TREE && git bisect start BAD GOOD &&
#   git bisect run ANTINOMIE/scripts/regress.sh --tree . --corpus LIST ...
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/guest-lib.sh"
failures_cannot_test

patches=() tree="" config="" gcov_objects="" corpora=() contexts=all seed=20261130 out=./antinomie-regress entry_timeout=600
bundle="" compare=() rerun_results=()
while [ $# -gt 0 ]; do
	case "$1" in
	--compare | --rerun)
		[ $# -ge 3 ] || die "$1 needs two result directories (see the header of $0)"
		if [ "$1" = --compare ]; then compare=("$2" "$3"); else rerun_results=("$2" "$3"); fi
		shift 3
		continue
		;;
	esac
	[ $# -ge 2 ] || die "$1 needs a value (see the header of $0)"
	case "$1" in
	--bundle) bundle=$2 ;;
	--patch) patches+=("$2") ;;
	--tree) tree=$2 ;;
	--config) config=$2 ;;
	--changed-gcov-objects) gcov_objects=$2 ;;
	--corpus) corpora+=("$2") ;;
	--contexts) contexts=$2 ;;
	--seed) seed=$2 ;;
	--out) out=$2 ;;
	--timeout) entry_timeout=$2 ;;
	*) die "unknown option $1 (see the header of $0)" ;;
	esac
	shift 2
done
need_cmd python3 jq
if [ -n "$bundle" ]; then
	{ [ ${#compare[@]} -eq 0 ] && [ ${#patches[@]} -eq 0 ] && [ -z "$tree$config$gcov_objects" ]; } ||
		die "--bundle builds no kernel: it takes no --patch, --tree, --config, --changed-gcov-objects or --compare"
fi
if [ ${#compare[@]} -gt 0 ]; then
	{ [ ${#patches[@]} -eq 0 ] && [ -z "$tree$config$gcov_objects" ] && [ ${#corpora[@]} -eq 0 ]; } ||
		die "--compare reads two results: --patch, --tree, --config, --changed-gcov-objects and --corpus do not apply"
	for d in "${compare[@]}" "${rerun_results[@]}"; do
		{ [ -f "$d/entries" ] && [ -f "$d/kernel" ] && [ -f "$d/corpus.json" ]; } ||
			die "$d is not the results of run-corpus (no entries, kernel or corpus.json)"
	done
	for d in "${compare[1]}" "${rerun_results[@]}"; do
		cmp -s "${compare[0]}/entries" "$d/entries" ||
			die "${compare[0]} and $d ran different corpora (their entries differ)"
	done
	# A rerun is of the same kernels: its kernel's name, first word of
	# `uname -rv`, and build (the rest) match.
	for i in 0 1; do
		[ ${#rerun_results[@]} -eq 0 ] || cmp -s "${compare[i]}/kernel" "${rerun_results[i]}/kernel" ||
			die "${rerun_results[i]} ran on another kernel than ${compare[i]} ($(cat "${rerun_results[i]}/kernel") vs $(cat "${compare[i]}/kernel"))"
	done
elif [ ${#rerun_results[@]} -gt 0 ]; then
	die "--rerun goes with --compare"
fi
for p in "${patches[@]}"; do
	[ -f "$p" ] || die "--patch $p: no such file"
done
if [ -n "$tree" ]; then
	[ ${#patches[@]} -eq 0 ] || die "--tree is the changed kernel as it is: commit the --patch files to it instead"
	{ [ -f "$tree/Makefile" ] && [ -d "$tree/kernel/events" ]; } || die "--tree $tree: not a kernel source tree"
	tree=$(cd "$tree" && pwd)
fi
[ -z "$config" ] || [ -f "$config" ] || die "--config $config: no such file"
[ -z "$gcov_objects" ] || [ -f "$gcov_objects" ] || die "--changed-gcov-objects $gcov_objects: no such file"
[[ "$seed" =~ ^[0-9]+$ ]] || die "--seed $seed: not a number"
[[ "$entry_timeout" =~ ^[1-9][0-9]*$ ]] || die "--timeout $entry_timeout: not a number of seconds"
if [ ${#corpora[@]} -eq 0 ]; then
	corpora=("$ANTINOMIE_ROOT"/qemu/corpus/*.list)
fi
for c in "${corpora[@]}"; do
	[ -f "$c" ] || die "--corpus $c: no such file"
done
[ "$contexts" != all ] || contexts=$(IFS=, && echo "${ALL_CONTEXTS[*]}")
IFS=, read -r -a wanted_contexts <<<"$contexts"
for c in "${wanted_contexts[@]}"; do
	is_context "$c" || die "--contexts: unknown context '$c' (known: ${ALL_CONTEXTS[*]})"
done
bins=${CARGO_TARGET_DIR:-$ANTINOMIE_ROOT/target}/x86_64-unknown-linux-gnu/release
reader=$bins/reader
[ -x "$reader" ] || die "$reader is missing (run qemu/build-initramfs.sh)"

mkdir -p "$out"
out=$(cd "$out" && pwd)
# Nothing of an earlier run may pass for this one's; a bundle writes no
# report, and leaves an earlier one alone.
[ -n "$bundle" ] ||
	rm -rf "$out"/{runs,diffs,diffs-rerun,summary.txt,report.json,junit.xml,report.ktap,kcidb.json,coverage.json,coverage.log,attribution.json,attribution.log,build-*.log,image-*.log,meta.json}
work=$(mktemp -d "${TMPDIR:-/tmp}/antinomie-regress.XXXXXX")
trap 'rm -rf "$work"' EXIT

# compare_report RUNS_A RUNS_B RERUN_A RERUN_B DESC_A KERNEL_A DESC_B
# KERNEL_B: reader diff and the verdicts of every run in $work/runs, the
# differing ones confirmed by the rerun results (RERUN_A and RERUN_B, or
# the function rerun_differing, which makes them, when they are "-"),
# then the report; exits with the report's status.
compare_report() {
	local runs_a=$1 runs_b=$2 rerun_a=$3 rerun_b=$4 desc_a=$5 kernel_a=$6 desc_b=$7 kernel_b=$8
	local rerun=()
	stage "comparing $(wc -l <"$work/runs") runs: reader diff and the programs' verdicts"
	python3 "$ANTINOMIE_ROOT/scripts/regress-report.py" compare --reader "$reader" \
		--a "$runs_a" --b "$runs_b" --runs "$work/runs" --out "$out/diffs" ||
		die "comparing the runs failed"
	jq -r '.[] | select(.outcome == "differ") | "\(.workload) \(.context)"' "$out/diffs/compare.json" >"$work/differing"
	if [ -s "$work/differing" ] && [ "$rerun_a" = - ]; then
		info "$(wc -l <"$work/differing") runs differ; running them again on both kernels to confirm"
		rerun_differing
		rerun_a=$out/runs/baseline-rerun rerun_b=$out/runs/changed-rerun
	fi
	if [ -s "$work/differing" ] && [ -n "$rerun_a" ]; then
		stage "comparing the reruns"
		python3 "$ANTINOMIE_ROOT/scripts/regress-report.py" compare --reader "$reader" \
			--a "$rerun_a" --b "$rerun_b" --runs "$work/differing" \
			--out "$out/diffs-rerun" || die "comparing the reruns failed"
		rerun=(--rerun "$out/diffs-rerun/compare.json")
		stage "where the differing results came from: the reruns' kprobe traces"
		if python3 "$ANTINOMIE_ROOT/scripts/regress-report.py" attribute --reader "$reader" \
			--a "$rerun_a" --b "$rerun_b" --diffs "$out/diffs-rerun" --runs "$work/differing" \
			--out "$out/attribution.json" 2>"$out/attribution.log"; then
			rerun+=(--attribution "$out/attribution.json")
		else
			warn "attributing the differing results failed: the report has no attribution ($(tail -n 1 "$out/attribution.log"))"
		fi
	elif [ -s "$work/differing" ]; then
		info "$(wc -l <"$work/differing") runs differ, and no rerun confirms them (--rerun A2 B2): they could not test"
	fi
	# What the runs reached of perf_event_open's decisions, from the
	# kernels' gcov counters (kconfig/coverage.config): each kernel's
	# notes and sources as built, kept by build() ("-": none, e.g. results
	# made elsewhere).
	stage "coverage: the runs' gcov counters on each kernel"
	local notes_a=- notes_b=- changed_files=()
	[ ! -d "$work/coverage-baseline" ] || notes_a=$work/coverage-baseline
	[ ! -d "$work/coverage-changed" ] || notes_b=$work/coverage-changed
	[ ! -f "$work/changed-files" ] || changed_files=(--changed-files "$work/changed-files")
	# Coverage and attribution describe the result; neither decides it,
	# so a failure of either leaves the report without it, said, instead
	# of turning a result into could-not-test.
	local coverage=(--coverage "$out/coverage.json")
	if ! python3 "$ANTINOMIE_ROOT/scripts/regress-report.py" coverage --notes-a "$notes_a" --notes-b "$notes_b" \
		--a "$runs_a" --b "$runs_b" --runs "$work/runs" "${changed_files[@]}" --out "$out/coverage.json" \
		2>"$out/coverage.log"; then
		warn "reading the runs' coverage failed: the report has none ($(tail -n 1 "$out/coverage.log"))"
		coverage=()
	fi
	write_report "$desc_a" "$kernel_a" "$desc_b" "$kernel_b" "${rerun[@]}" "${coverage[@]}"
}

# write_report DESC_A KERNEL_A DESC_B KERNEL_B [REPORT_ARGS...]: the
# report of $out/diffs/compare.json (regress-report.py report, with
# REPORT_ARGS), shown; exits with its status.
write_report() {
	local desc_a=$1 kernel_a=$2 desc_b=$3 kernel_b=$4 rc=0
	shift 4
	jq -n --arg ka "$kernel_a" --arg kb "$kernel_b" --arg da "$desc_a" --arg db "$desc_b" \
		--arg seed "$seed" --arg contexts "$contexts" --args \
		'{baseline: {kernel: $da, bzImage: $ka}, changed: {kernel: $db, bzImage: $kb},
		  seed: ($seed | tonumber), contexts: ($contexts | split(",")), corpus: $ARGS.positional}' \
		"${corpora[@]}" >"$out/meta.json"
	python3 "$ANTINOMIE_ROOT/scripts/regress-report.py" report --first "$out/diffs/compare.json" \
		"$@" --meta "$out/meta.json" --out "$out" || rc=$?
	case $rc in 0 | 1 | 2 | 125) ;; *) die "writing the report failed (exit $rc)" ;; esac
	stage "report: $out/summary.txt, report.json, junit.xml, report.ktap, kcidb.json"
	sed 's/^/    /' "$out/summary.txt"
	exit $rc
}

if [ ${#compare[@]} -gt 0 ]; then
	# What the bundle ran, as it recorded it (--bundle's corpus.json).
	a=$(cd "${compare[0]}" && pwd) b=$(cd "${compare[1]}" && pwd)
	seed=$(jq -r .seed "$a/corpus.json") contexts=$(jq -r '.contexts | join(",")' "$a/corpus.json")
	mapfile -t corpora < <(jq -r '.corpus[]' "$a/corpus.json")
	cut -d' ' -f1,2 "$a/entries" >"$work/runs"
	# Without --rerun nothing here can make one: the differences stay
	# unconfirmed.
	reruns=("" "")
	[ ${#rerun_results[@]} -eq 0 ] || reruns=("$(cd "${rerun_results[0]}" && pwd)" "$(cd "${rerun_results[1]}" && pwd)")
	compare_report "$a" "$b" "${reruns[@]}" "$(cat "$a/kernel") (results $a)" "" \
		"$(cat "$b/kernel") (results $b)" ""
fi

stage "corpus: ${corpora[*]}; contexts $contexts; seed $seed"
# Every list line becomes one run per context: "NAME CONTEXT COMMAND" in
# $work/entries, "NAME CONTEXT" in $work/runs.
: >"$work/entries"
declare -A seen_names=() image_scripts=()
for list in "${corpora[@]}"; do
	n=0
	while read -r name ctxs command; do
		n=$((n + 1))
		case "$name" in "" | "#"*) continue ;; esac
		if [ "$name" = @image ]; then
			if [ -z "$ctxs" ] || [ -n "$command" ]; then
				die "$list:$n: @image takes one script (@image SCRIPT)"
			fi
			[ -x "$ANTINOMIE_ROOT/$ctxs" ] || die "$list:$n: @image $ctxs: no such executable in the repository"
			image_scripts[$ctxs]=$list:$n
			continue
		fi
		[ -n "$command" ] || die "$list:$n: no command (NAME CONTEXTS COMMAND...)"
		[[ "$name" =~ ^[A-Za-z0-9._-]+$ ]] || die "$list:$n: name '$name' must be letters, digits, . _ -"
		[ -z "${seen_names[$name]:-}" ] || die "$list:$n: name '$name' is already used (${seen_names[$name]})"
		seen_names[$name]=$list:$n
		[ "$ctxs" != all ] || ctxs=$(IFS=, && echo "${ALL_CONTEXTS[*]}")
		IFS=, read -r -a entry_contexts <<<"$ctxs"
		for c in "${entry_contexts[@]}"; do
			is_context "$c" || die "$list:$n: unknown context '$c' (known: ${ALL_CONTEXTS[*]})"
			[[ ",$contexts," == *",$c,"* ]] || continue
			printf '%s %s %s\n' "$name" "$c" "${command//\$\{SEED\}/$seed}" >>"$work/entries"
		done
	done <"$list"
done
cut -d' ' -f1,2 "$work/entries" >"$work/runs"
[ -s "$work/runs" ] || die "the corpus has no run in the contexts $contexts"
info "$(wc -l <"$work/runs") runs (workload x context): $(cut -d' ' -f1 "$work/runs" | uniq -c | awk '{printf "%s%s x %s", sep, $2, $1; sep=", "}')"

# The selftests and both kernels are built in the cache's one build tree;
# another command building there (the demo, a second regression run) waits
# until both kernels are built, or this run waits for it, saying so.
hold_kernel_build_lock
stage "the kernel's perf_events selftests (static, for the image)"
"$ANTINOMIE_ROOT/scripts/build-selftests.sh" >"$out/build-selftests.log" 2>&1 </dev/null ||
	die "building the selftests failed (see $out/build-selftests.log)"
selftests=$(tail -n 1 "$out/build-selftests.log")
[ -d "$selftests" ] || die "the selftests build gave no directory (see $out/build-selftests.log)"
# A copy, taken under the lock: another checkout's series rebuilds the
# cache's once this run has let go of it.
cp -a "$selftests" "$work/selftests" || die "cannot copy the selftests from $selftests"
selftests=$work/selftests

# What the lists' programs need in the image beyond the guest binaries
# and the selftests, laid out once by their @image scripts.
image_dirs=()
for script in "${!image_scripts[@]}"; do
	dir=$work/image-$(basename "$script")
	stage "laying what the corpus needs into the image: $script (${image_scripts[$script]})"
	"$ANTINOMIE_ROOT/$script" "$dir" >"$out/image-$(basename "$script").log" 2>&1 </dev/null ||
		die "$script failed (see $out/image-$(basename "$script").log)"
	image_dirs+=("$dir")
done

# The corpus's files in the image: its entries, their time limit, and
# what it is (corpus.json: the lists, contexts and seed, for a report made
# from a bundle's results).
corpus_files() {
	mkdir -p "$1/etc/antinomie/corpus"
	cp "$2" "$1/etc/antinomie/corpus/entries"
	echo "$entry_timeout" >"$1/etc/antinomie/corpus/entry-timeout"
	jq -n --arg seed "$seed" --arg contexts "$contexts" --args \
		'{seed: ($seed | tonumber), contexts: ($contexts | split(",")), corpus: $ARGS.positional}' \
		"${corpora[@]}" >"$1/etc/antinomie/corpus/corpus.json"
}

if [ -n "$bundle" ]; then
	[ ! -e "$bundle" ] || die "--bundle $bundle exists; give a new directory"
	corpus_files "$work/extra-bundle" "$work/entries"
	install -m 0755 "$ANTINOMIE_ROOT/qemu/guest/run-corpus" "$work/extra-bundle/run-corpus"
	stage "the bundle: the guest image's root with the corpus ($(wc -l <"$work/entries") runs)"
	"$ANTINOMIE_ROOT/qemu/build-initramfs.sh" --out "$work/bundle.cpio" "$work/extra-bundle" "$selftests" \
		"${image_dirs[@]}" >"$work/initramfs-bundle.log" 2>&1 ||
		{ tail -n 5 "$work/initramfs-bundle.log" >&2; die "building the bundle failed"; }
	mkdir -p "$(dirname "$bundle")"
	cp -a "$work/bundle.cpio.root" "$bundle" || die "cannot write the bundle to $bundle"
	stage "bundle in $bundle ($(du -sh "$bundle" | cut -f1)); on the test machine, booted into each kernel:"
	info "sudo $bundle/run-corpus RESULTS     (one directory per kernel, or per boot)"
	info "then: scripts/regress.sh --compare BASELINE CHANGED --rerun BASELINE2 CHANGED2"
	exit 0
fi

# build LABEL [ENV...]: scripts/build-kernel.sh normal with ENV, its output
# in $out/build-LABEL.log; the bzImage's path in $built, and a copy of it
# in $work/bzImage-LABEL, which the boots use: the next build in the same
# directory (another run's --config) cannot change it. So is the build's
# coverage/ (gcov's notes and the sources as built), in
# $work/coverage-LABEL.
build() {
	local label=$1 log=$out/build-$1.log rc=0
	shift
	env "$@" "$ANTINOMIE_ROOT/scripts/build-kernel.sh" normal >"$log" 2>&1 </dev/null || rc=$?
	if [ $rc -ne 0 ]; then
		grep '^error:' "$log" | tail -n 3 >&2 || true
		die "building the $label kernel failed (see $log)"
	fi
	built=$(tail -n 1 "$log")
	[ -f "$built" ] || die "building the $label kernel gave no bzImage (see $log)"
	cp "$built" "$work/bzImage-$label" || die "cannot copy $built"
	local notes=${built%/arch/x86/boot/bzImage}/coverage
	[ ! -d "$notes" ] || cp -a "$notes" "$work/coverage-$label" || die "cannot copy $notes"
}
stage "building the baseline kernel (pin + series, normal variant)"
build baseline
kernel_a=$built baseline_desc="pin $KERNEL_VERSION + kernel-patch/series (normal)"
changed_env=() changed_desc=$baseline_desc
if [ ${#patches[@]} -gt 0 ]; then
	abs=()
	for p in "${patches[@]}"; do abs+=("$(cd "$(dirname "$p")" && pwd)/$(basename "$p")"); done
	changed_env+=("KERNEL_TEST_PATCH=$(IFS=: && echo "${abs[*]}")")
	changed_desc+=" + ${patches[*]}"
	# The files the change touches, for the coverage report (a change
	# outside the instrumented sources is not measured), as git apply
	# reads the patches, whatever their path prefixes; none known, none
	# listed (the report then never says "not reached").
	for p in "${abs[@]}"; do
		git apply --numstat "$p" | cut -f3 || true
	done | sort -u >"$work/changed-files"
	[ -s "$work/changed-files" ] || rm -f "$work/changed-files"
fi
if [ -n "$tree" ]; then
	changed_env+=("ANTINOMIE_TREE=$tree")
	changed_desc="tree $tree at $(git -C "$tree" log -1 --format='%h (%s)' 2>/dev/null || echo '(not a git tree)')"
	[ -z "$(git -C "$tree" status --porcelain --untracked-files=no 2>/dev/null)" ] || changed_desc+=" with uncommitted changes"
fi
if [ -n "$config" ]; then
	changed_env+=("KCONFIG_EXTRA=$(cd "$(dirname "$config")" && pwd)/$(basename "$config")")
	changed_desc+=" + config $config"
fi
if [ -n "$gcov_objects" ]; then
	changed_env+=("KERNEL_GCOV_OBJECTS=$(cd "$(dirname "$gcov_objects")" && pwd)/$(basename "$gcov_objects")")
	changed_desc+=" + gcov on $gcov_objects"
fi
if [ ${#changed_env[@]} -gt 0 ]; then
	stage "building the changed kernel (${changed_desc#"$baseline_desc + "})"
	build changed "${changed_env[@]}"
	kernel_b=$built
else
	stage "no --patch, no --tree, no --config, no --changed-gcov-objects: the changed kernel is the baseline (compared with itself)"
	kernel_b=$kernel_a
	cp "$work/bzImage-baseline" "$work/bzImage-changed"
	[ ! -d "$work/coverage-baseline" ] || cp -a "$work/coverage-baseline" "$work/coverage-changed"
fi
release_lock "$KERNEL_BUILD_LOCK"

# run_corpus LABEL KERNEL ENTRIES [attribute]: one boot of the KERNEL
# (baseline or changed) running every run of ENTRIES (the corpus
# scenario), results in $out/runs/LABEL; with "attribute", each run's
# perf_event_open calls are traced with kprobes on the functions that
# decide their results (qemu/scenarios/corpus).
run_corpus() {
	local label=$1 kernel=$work/bzImage-$2 entries=$3 extra=$work/extra-$1
	mkdir -p "$out/runs/$label"
	corpus_files "$extra" "$entries"
	if [ "${4:-}" = attribute ]; then
		python3 "$ANTINOMIE_ROOT/scripts/regress-report.py" functions >"$extra/etc/antinomie/corpus/attribute" ||
			die "cannot list the functions to probe"
	fi
	stage "guest image for the $label run ($(wc -l <"$entries") runs)"
	"$ANTINOMIE_ROOT/qemu/build-initramfs.sh" --out "$work/$label.cpio" "$extra" "$selftests" "${image_dirs[@]}" \
		>"$work/initramfs-$label.log" 2>&1 || { tail -n 5 "$work/initramfs-$label.log" >&2; die "building the guest image failed"; }
	stage "booting the $label kernel: the corpus, one boot"
	# A change that makes a call loop forever in the kernel stalls RCU
	# (the test kernels do not preempt the kernel), and one that oopses
	# may leave a lock held: panicking then ends the boot within the stall
	# timeout (21 s), or at once, with the kernel's report, instead of at
	# the boot's time limit, hours on. A WARNING panics too: the boot
	# that reported it hands back no results either way (see boot_both).
	guest_run_collect "$kernel" "$work/$label.cpio" corpus "$out/runs/$label" \
		$((600 + $(wc -l <"$entries") * entry_timeout)) 2G 4G "sysctl.kernel.panic_on_rcu_stall=1 oops=panic panic_on_warn=1"
	grep -a '^corpus: ' "$out/runs/$label/console.log" | tail -n 1 | sed 's/^/    /'
}

# boot_both SUFFIX ENTRIES [attribute]: run_corpus of the baseline
# (label baseline-SUFFIX, or baseline with no SUFFIX) and of the changed
# kernel at once: QEMU runs a TCG guest on one host thread, and the two
# boots share nothing. Each one's output is shown once both have ended.
# A changed kernel that reports a failure of its own in its console (a
# panic, an Oops, an RCU stall, a WARNING: kernel_reports) while the
# baseline runs ENTRIES to the end is a finding, not a failure of this
# command: boot_splat is then 1 (else 0), and its console.log says more.
# Any other failure of a boot (the baseline's, or the changed kernel's
# with no report of its own: a timeout, QEMU, the results disk) could
# not test: it stops the other boot, whose result no longer matters. An
# interrupt stops both and exits as the signal's (130, 143), not as
# could not test, which git bisect run would take for a skip. Their
# temporary files (the results disks) are in $work, which the exit
# removes, however they end.
boot_left=() boot_splat=0
boot_both() {
	local suffix=${1:+-$1} entries=$2 attribute=${3:-} side pid rc failed="" label
	declare -A side_of=() rc_of=()
	stage "booting the baseline and the changed kernel at once: the corpus ($(wc -l <"$entries") runs), one boot each"
	boot_left=() boot_splat=0
	trap 'boots_interrupted INT 130' INT
	trap 'boots_interrupted TERM 143' TERM
	for side in baseline changed; do
		TMPDIR=$work run_corpus "$side$suffix" "$side" "$entries" "$attribute" >"$work/boot-$side$suffix.log" 2>&1 &
		boot_left+=($!)
		side_of[$!]=$side
	done
	while [ ${#boot_left[@]} -gt 0 ]; do
		rc=0
		wait -n -p pid "${boot_left[@]}" || rc=$?
		mapfile -t boot_left < <(printf '%s\n' "${boot_left[@]}" | grep -vx "$pid")
		side=${side_of[$pid]}
		rc_of[$side]=$rc
		info "the $side$suffix boot ended (exit $rc)"
		if [ $rc -eq 0 ] || [ -n "$failed" ]; then
			continue
		fi
		if [ "$side" = changed ] && kernel_reported "$out/runs/changed$suffix"; then
			continue
		fi
		failed=$side$suffix
		stop_boots
	done
	trap - INT TERM
	for label in baseline$suffix changed$suffix; do
		sed 's/^/  /' "$work/boot-$label.log"
	done
	[ -z "$failed" ] || die "the boot of $failed failed (above)"
	[ "${rc_of[changed]}" -eq 0 ] || boot_splat=1
}
# kernel_reported DIR: whether the kernel of the boot whose results are
# DIR reported a failure of its own in DIR/console.log; the reports go
# to DIR/kernel-reports (kernel_reports' lines).
kernel_reported() {
	[ -f "$1/console.log" ] || return 1
	kernel_reports "$1/console.log" >"$1/kernel-reports"
	[ -s "$1/kernel-reports" ]
}
# boots_interrupted SIGNAL STATUS: the trap of an interrupt during
# boot_both.
# shellcheck disable=SC2317 # called from the trap
boots_interrupted() {
	stop_boots
	printf 'error: %s: interrupted (SIG%s): both boots stopped\n' "$ANTINOMIE_PROG" "$1" >&2
	exit "$2"
}
# stop_boots: every process of the boots still running, down to QEMU
# (which timeout(1) runs in a process group of its own, out of reach of
# a terminal's interrupt).
stop_boots() {
	stop_process_trees "${boot_left[@]}"
}

# rerun_differing: the runs of $work/differing once more on both kernels,
# results in $out/runs/{baseline,changed}-rerun.
rerun_differing() {
	awk 'NR == FNR { differing[$1 " " $2] = 1; next } ($1 " " $2) in differing' \
		"$work/differing" "$work/entries" >"$work/entries-rerun"
	boot_both rerun "$work/entries-rerun" attribute
	# A failure of the changed kernel's own is a finding of the first
	# boot's, where it would have shown: here it leaves the rerun with
	# nothing to compare.
	[ "$boot_splat" = 0 ] ||
		die "the changed kernel failed in the rerun: $(python3 "$ANTINOMIE_ROOT/scripts/regress-report.py" splat-run --title \
			--console "$out/runs/changed-rerun/console.log" --reports "$out/runs/changed-rerun/kernel-reports") (see $out/runs/changed-rerun/console.log)"
}

# splat_report: the changed kernel reported a failure of its own in the
# boot in which the baseline ran the whole corpus. The run it was in
# (regress-report.py splat-run: the scenario marks where each run starts
# and ends in the kernel's log) is booted again, alone, on both kernels.
# The same failure there (regress-report.py splat: a report of the same
# kind in the same place, in that run, not blamed on the host), and the
# baseline running it to the end both times, make that run a "splat", a
# change (exit 1);
# anything else, or a report outside every run, could not test. The
# other runs are not compared: that boot handed back no results. The
# report shows the changed kernel's console from its first report on.
splat_report() {
	local first=$out/runs/changed second=$out/runs/changed-splat run
	run=$(python3 "$ANTINOMIE_ROOT/scripts/regress-report.py" splat-run --console "$first/console.log" \
		--reports "$first/kernel-reports") || die "reading the changed kernel's report failed"
	if [ -n "$run" ]; then
		info "the changed kernel failed running ${run/ / as }: booting both kernels again with that run alone"
		awk -v run="$run" '$1 " " $2 == run' "$work/entries" >"$work/entries-splat"
		boot_both splat "$work/entries-splat"
		kernel_reports "$second/console.log" >"$second/kernel-reports"
	fi
	mkdir -p "$out/diffs"
	python3 "$ANTINOMIE_ROOT/scripts/regress-report.py" splat --runs "$work/runs" \
		--console "$first/console.log" --reports "$first/kernel-reports" \
		--rerun-console "$second/console.log" --rerun-reports "$second/kernel-reports" \
		--baseline-runs "$out/runs/baseline" --rerun-baseline-runs "$out/runs/baseline-splat" \
		--out "$out/diffs/compare.json" || die "reading the changed kernel's report failed"
	write_report "$baseline_desc" "$kernel_a" "$changed_desc" "$kernel_b"
}

boot_both "" "$work/entries"
[ "$boot_splat" = 0 ] || splat_report
compare_report "$out/runs/baseline" "$out/runs/changed" - - \
	"$baseline_desc" "$kernel_a" "$changed_desc" "$kernel_b"
