# Shared by the real-project tests (lua.sh, zlib.sh, leveldb.sh, cmake.sh): each fetches a public
# project's C or C++ source from the npm registry, builds it twice as its users do, natively and
# with nothing but CC=mnemo-cc / CXX=mnemo-c++, runs the project's own tests under both builds,
# and compares what they print and how they exit.  Sourced, not run.
#
# The only thing a test adds to the environment is the build tree's bin/ at the head of PATH, as a
# user adds an install prefix's bin/.  Exit status: 0 passed, 1 failed, 77 skipped (ctest's
# SKIP_RETURN_CODE), with a closing "N passed, N failed" line.

set -u
rp_passed=0
rp_failed=0

# rp_init NAME BUILD_DIR: the work directory ($work), PATH, and a check that the tools are built.
rp_init() {
	rp_name=$1
	rp_build=$(cd "$2" && pwd) || { echo "FAIL: no build directory '$2'"; exit 1; }
	[ -x "$rp_build/bin/mnemo-cc" ] || { echo "FAIL: no $rp_build/bin/mnemo-cc: build Mnemo first"; exit 1; }
	PATH=$rp_build/bin:$PATH
	export PATH
	work=$(mktemp -d "${TMPDIR:-/tmp}/mnemo-rp-$rp_name.XXXXXX") || exit 1
	[ -n "${MNEMO_RP_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
	[ -z "${MNEMO_RP_KEEP:-}" ] || echo "keeping $work"
	rp_t0=$(date +%s)
}

rp_ok() {
	rp_passed=$((rp_passed + 1))
	printf 'ok   %s\n' "$1"
}

# rp_bad NAME [DETAIL...]: one failed check; the test goes on to the next.
rp_bad() {
	rp_failed=$((rp_failed + 1))
	printf 'FAIL %s\n' "$1"
	shift
	for line in "$@"; do printf '     %s\n' "$line"; done
}

# rp_die WHAT LOG: a step the rest depends on failed; shows the end of its log and stops.
rp_die() {
	rp_bad "$1" "last lines of $2:"
	tail -n 25 "$2" | sed 's/^/     | /'
	rp_finish
}

rp_finish() {
	echo "$rp_name: $(($(date +%s) - rp_t0)) s"
	echo "$rp_passed passed, $rp_failed failed"
	[ "$rp_failed" -eq 0 ] || exit 1
	exit 0
}

# rp_skip WHY: the project could not be fetched; not Mnemo's failure (ctest reports it skipped).
rp_skip() {
	echo "SKIPPED: $rp_name: $*" >&2
	exit 77
}

# rp_fetch PACKAGE@VERSION SHA1: prints the path of the package's tarball, kept in the build tree
# (realprojects-cache/) so that later runs fetch nothing.  Fetched with npm pack (npm's own cache
# first); where npm is missing, with curl from $MNEMO_NPM_REGISTRY (a registry's base address) if
# set.  A registry that cannot be reached skips the test: the registry being down says nothing
# about Mnemo, and a red CI for it would block unrelated work.  The checksum is the registry's
# dist.shasum: a tarball that differs fails the test, since its tests' outputs could differ too.
rp_fetch() {
	pkg=$1 sum=$2
	name=${pkg%@*} ver=${pkg##*@}
	base=${name##*/}
	cache=$rp_build/realprojects-cache
	tgz=$cache/$base-$ver.tgz
	mkdir -p "$cache"
	if [ ! -s "$tgz" ]; then
		if command -v npm >/dev/null 2>&1; then
			(cd "$cache" && npm pack --prefer-offline --silent "$pkg") >"$work/fetch.log" 2>&1 ||
				rp_skip "npm pack $pkg failed (is the npm registry reachable?): $(tail -n 3 "$work/fetch.log" | tr '\n' ' ')"
		elif [ -n "${MNEMO_NPM_REGISTRY:-}" ] && command -v curl >/dev/null 2>&1; then
			curl -fsSL -o "$tgz.part" "${MNEMO_NPM_REGISTRY%/}/$name/-/$base-$ver.tgz" &&
				mv "$tgz.part" "$tgz" || rp_skip "curl could not fetch $pkg from $MNEMO_NPM_REGISTRY"
		else
			rp_skip "npm is not installed (or set MNEMO_NPM_REGISTRY for curl): cannot fetch $pkg"
		fi
	fi
	got=$(sha1sum "$tgz" | cut -d' ' -f1)
	if [ "$got" != "$sum" ]; then
		rm -f "$tgz"
		echo "FAIL: $pkg: sha1 $got, expected $sum (the registry's dist.shasum)" >&2
		exit 1
	fi
	printf '%s' "$tgz"
}

# rp_compare NAME NATIVE_DIR MNEMO_DIR COMMAND...: runs COMMAND (through sh -c) in each directory
# and compares its standard output, standard error and exit status; the instrumented run's
# profiles go to MNEMO_DIR/profiles/.  Passes when all three match and the native run exited 0
# (or $rp_want_status when set).
rp_compare() {
	cname=$1 nd=$2 md=$3
	shift 3
	mkdir -p "$md/profiles"
	(cd "$nd" && sh -c "$*") >"$work/n.out" 2>"$work/n.err" </dev/null
	ns=$?
	(cd "$md" && MNEMO_OUTPUT="$md/profiles/$cname-%p.mnemo.yaml" sh -c "$*") \
		>"$work/m.out" 2>"$work/m.err" </dev/null
	ms=$?
	want=${rp_want_status:-0}
	if [ "$ns" -ne "$want" ]; then
		rp_bad "$cname" "the native run exited $ns, expected $want:" "$(tail -n 5 "$work/n.err")"
	elif [ "$ms" -ne "$ns" ]; then
		rp_bad "$cname" "exit status: native $ns, instrumented $ms" "$(tail -n 5 "$work/m.err")"
	elif ! cmp -s "$work/n.out" "$work/m.out"; then
		rp_bad "$cname" "standard output differs (native, instrumented):" \
			"$(diff "$work/n.out" "$work/m.out" | head -n 10)"
	elif ! cmp -s "$work/n.err" "$work/m.err"; then
		rp_bad "$cname" "standard error differs (native, instrumented):" \
			"$(diff "$work/n.err" "$work/m.err" | head -n 10)"
	else
		rp_ok "$cname: same output ($(wc -l <"$work/n.out") lines, $(wc -l <"$work/n.err") on stderr) and status $ns"
	fi
}

# rp_sites PROFILE REGEX: how many sites of PROFILE's site table are in a file whose name matches
# REGEX (an extended regular expression on the file field's value).
rp_sites() {
	sed -n '/^sites:/,/^[a-z]/p' "$1" | grep -cE "file: \"?([^\",]*/)?($2)\"?," || true
}

# rp_check_profile NAME PROFILE REGEX: the profile is complete and has sites in the project's
# sources (REGEX: their file names), that is with line tables: mnemo-cc adds them when the
# project's flags have no -g.
rp_check_profile() {
	pname=$1 prof=$2 re=$3
	if [ ! -s "$prof" ]; then
		rp_bad "$pname" "no profile $prof"
		return
	fi
	if ! grep -q '^complete: true' "$prof"; then
		rp_bad "$pname" "$prof is not complete"
		return
	fi
	n=$(rp_sites "$prof" "$re")
	if [ "$n" -gt 0 ]; then
		rp_ok "$pname: $n sites in ($re)"
	else
		rp_bad "$pname" "no site of $prof names a file matching ($re); its sites:" \
			"$(sed -n '/^sites:/,/^[a-z]/p' "$prof" | sed -n 2,6p)"
	fi
}

# rp_clean_log NAME LOG: the instrumented build printed no complaint of a linker plugin or archiver
# (GNU ar and ranlib read LTO objects through the LLVM gold plugin and print one line per object
# when it cannot read them).
rp_clean_log() {
	if grep -qiE 'plugin.*failed|failed to create LTO module|error:' "$2"; then
		rp_bad "$1" "the instrumented build complained:" "$(grep -iE 'plugin.*failed|failed to create LTO module|error:' "$2" | sort | uniq -c | head -n 5)"
	else
		rp_ok "$1"
	fi
}

# rp_report NAME PROFILE REGEX: `mnemo report` reads the profile and prints rows located in the
# project's sources (REGEX: file names), as file:line.
rp_report() {
	if ! mnemo report "$2" >"$work/report" 2>"$work/report.err"; then
		rp_bad "$1" "mnemo report $2 failed: $(head -n 3 "$work/report.err")"
	elif n=$(grep -cE "(^|[ /])($3):[0-9]+" "$work/report") && [ "$n" -gt 0 ]; then
		rp_ok "$1: $n rows at file:line in ($3)"
	else
		rp_bad "$1" "mnemo report names no line of ($3); its first rows:" "$(sed -n 1,12p "$work/report")"
	fi
}
