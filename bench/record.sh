# What bench/queue/run.sh and bench/maps/run.sh share (sourced): building a bench program for a
# bench-only module spec by the by-hand flow of README (mnemo-specialize, then clang-19 -flto with
# the pass and the runtime), and recording its event stream with mnemo-record in place of the
# backend.  Both print nothing on success; a failing command fails the caller (set -e).

# build_for_spec BUILD_DIR SPECS_DIR SPEC SRC EXE [FLAGS]: EXE is SRC built for module spec SPEC of
# SPECS_DIR; FLAGS (one word list: -I, -D, -l) are passed to the compile and link steps.
build_for_spec() {
	local build=$1 specs=$2 spec=$3 src=$4 exe=$5 flags=${6:-}
	local bin=$build/bin lib=$build/lib/mnemo tmp=$5.build heaplib=

	mkdir -p "$tmp"
	"$bin/mnemo-specialize" --catalogue "$build/share/mnemo/events.yaml" --modules-dir "$specs" \
		--modules "$spec" --backend "$bin/mnemo-record" -o "$tmp/spec" >"$tmp/heap"
	if grep -qx 'heap=1' "$tmp/heap"; then heaplib=$lib/libmnemo-heap.a; fi
	clang-19 -O2 -flto -I"$build/include/mnemo" -c "$tmp/spec/callbacks.c" -o "$tmp/callbacks.o"
	# shellcheck disable=SC2086  # FLAGS are words on purpose
	clang-19 -O2 -g -flto -fpass-plugin="$lib/mnemo-pass.so" $flags -c "$src" -o "$tmp/prog.o"
	# shellcheck disable=SC2086
	clang-19 -O2 -flto -fuse-ld=lld -Wl,--load-pass-plugin="$lib/mnemo-pass.so" "$tmp/prog.o" \
		"$tmp/callbacks.o" -Wl,--whole-archive "$lib/libmnemo-rt.a" $heaplib \
		-Wl,--no-whole-archive -lpthread -ldl $flags -o "$exe"
}

# record_run BUILD_DIR EXE RECORDING EVENTS [ARGS...]: runs EXE ARGS with mnemo-record as its backend,
# which writes the first EVENTS events to RECORDING; fails when no recording was made.
record_run() {
	local build=$1 exe=$2 rec=$3 events=$4

	shift 4
	MNEMO_BACKEND="$build/bin/mnemo-record" MNEMO_RECORD_FILE="$rec" MNEMO_RECORD_EVENTS=$events \
		MNEMO_OUTPUT="$rec.mnemo.yaml" "$exe" "$@" >/dev/null
	[ -s "$rec" ]
}
