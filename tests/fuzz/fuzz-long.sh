#!/bin/sh
# The long fuzz of one target: fuzz-long.sh FUZZER [WORKDIR [LIBFUZZER_FLAG...]], 10 minutes by
# default (MNEMO_FUZZ_SECONDS).  FUZZER is fuzz_profile (seeds: corpus/) or fuzz_restore (seeds:
# corpus-restore/), told apart by its name.  Not part of CI: README.md here.
#
# New inputs go to WORKDIR/corpus, never to the committed seeds; a crash, leak or timeout leaves its
# input as WORKDIR/crash-*, leak-*, timeout-* or oom-* and fails the run.
set -eu
fuzzer=$1
work=${2:-fuzz-work}
shift $(($# < 2 ? $# : 2))
here=$(cd "$(dirname "$0")" && pwd)
seconds=${MNEMO_FUZZ_SECONDS:-600}
case $(basename "$fuzzer") in
fuzz_restore*) seeds=$here/corpus-restore ;;
*) seeds=$here/corpus ;;
esac

mkdir -p "$work/corpus"
# One process: the machines this runs on are shared.  -timeout is per input; -rss_limit_mb bounds
# what one input may make the reader allocate.
exec "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
	-dict="$here/profile.dict" -artifact_prefix="$work/" -print_final_stats=1 "$@" \
	"$work/corpus" "$seeds"
