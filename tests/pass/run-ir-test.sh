#!/bin/bash
# Runs the "; RUN:" lines of one IR test, lit style, without lit.
#
#   run-ir-test.sh PLUGIN LLVM_BINDIR TEST.ll OUTPUT_DIR
#
# A RUN line may continue on the next RUN line with a trailing '\'.
# Substitutions: %s the test file, %t a scratch path for this test,
# %opt "opt -load-pass-plugin=PLUGIN", %plugin the plugin, %sitetable a
# filter that prints the site table of an IR module (print-site-table.sh).
# Tools (opt,
# FileCheck, not, diff) are found in LLVM_BINDIR first.  Each command runs
# under bash with pipefail; the test fails at the first command that fails.
set -u
if [ $# -ne 4 ]; then
	echo "usage: $0 PLUGIN LLVM_BINDIR TEST.ll OUTPUT_DIR" >&2
	exit 2
fi
plugin=$1 bindir=$2 test=$3 outdir=$4
name=$(basename "$test" .ll)
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$outdir" || exit 2
tmp="$outdir/$name.tmp"
export PATH="$bindir:$PATH"

if [ ! -f "$plugin" ]; then
	echo "$name: plugin $plugin not built" >&2
	exit 2
fi

cmds=()
cur=""
while IFS= read -r line; do
	case $line in
	*"RUN:"*) ;;
	*) continue ;;
	esac
	line=${line#*RUN:}
	if [ "${line%\\}" != "$line" ]; then
		cur="$cur${line%\\} "
		continue
	fi
	cmds+=("$cur$line")
	cur=""
done <"$test"

if [ ${#cmds[@]} -eq 0 ]; then
	echo "$name: no RUN lines" >&2
	exit 2
fi

n=0
for cmd in "${cmds[@]}"; do
	n=$((n + 1))
	cmd=${cmd//%opt/opt -load-pass-plugin=$plugin}
	cmd=${cmd//%plugin/$plugin}
	cmd=${cmd//%sitetable/bash $here/print-site-table.sh}
	cmd=${cmd//%s/$test}
	cmd=${cmd//%t/$tmp}
	echo "RUN $n: $cmd"
	if ! bash -o pipefail -c "$cmd"; then
		echo "$name: RUN $n failed" >&2
		exit 1
	fi
done
echo "$name: ${#cmds[@]} RUN lines passed"
