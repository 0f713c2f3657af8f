#!/bin/sh
# One reader, one set of rules: `mnemo report` refuses exactly the profiles `mnemo merge` refuses,
# with the same message (file:line:column and field).  A real profile of every module is edited by
# hand: the cases (value-pattern's executions: -5 and 1e26), and in every section the
# first number of every key set to -5 and to 1e26.  For each, report and merge must agree; where
# they refuse, report says what merge says (without its "merge: "), exits 1 and prints nothing of
# that profile.  Both accept what a module's restore() does not read (figures its emit() derives
# again, such as object-relative's summary counts) and signed fields.
#
#   report_rules.sh BINDIR SOURCE_DIR
set -u
bin=$1 src=$2
work=$(mktemp -d /tmp/mnemo-report-rules.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
failed=0 refused=0 agreed=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { failed=1; printf 'FAIL %s\n' "$1"; }

"$bin/mnemo-cc" -O1 -g "$src/examples/demo.c" -o demo 2>build.err || {
	echo "FAIL build: $(cat build.err)"; exit 1; }
MNEMO_OUTPUT=p.yaml ./demo >/dev/null 2>run.err
grep -qx 'complete: true' p.yaml || { echo "FAIL: no complete profile: $(cat run.err)"; exit 1; }
"$bin/mnemo" report p.yaml >/dev/null 2>err && "$bin/mnemo" merge -o /dev/null p.yaml 2>>err ||
	{ echo "FAIL: the unedited profile is refused: $(cat err)"; exit 1; }

# compare NAME LINE FROM TO: edits line LINE of p.yaml (FROM -> TO, once) into NAME.yaml, then
# reports and merges it.  Sets $report_status and $report_err.
compare() {
	name=$1.yaml
	sed "$2s/$3/$4/" p.yaml >"$name"
	cmp -s p.yaml "$name" && { bad "$1: the edit changed nothing"; return; }
	"$bin/mnemo" report "$name" >report.out 2>report.err
	report_status=$?
	"$bin/mnemo" merge -o merged.yaml "$name" >/dev/null 2>merge.err
	merge_status=$?
	report_err=$(cat report.err)
	if [ "$report_status" -ne "$merge_status" ]; then
		bad "$1 ($3 -> $4): report exits $report_status, merge $merge_status: $report_err / $(cat merge.err)"
	elif [ "$merge_status" -ne 0 ]; then
		refused=$((refused + 1))
		[ "$report_err" = "$(sed 's/^mnemo: merge: /mnemo: /' merge.err)" ] ||
			bad "$1 ($3 -> $4): report says '$report_err', merge '$(cat merge.err)'"
		[ ! -s report.out ] || bad "$1: report printed the refused profile"
	else
		agreed=$((agreed + 1))
	fi
}

# The cases: value-pattern's first row's executions.
line=$(awk '/^  value-pattern:$/{m=1} m && /executions: [0-9]/{print NR; exit}' p.yaml)
[ -n "$line" ] || { echo "FAIL: no value-pattern executions in the profile"; exit 1; }
for v in -5 1e26; do
	compare "executions$v" "$line" 'executions: [0-9]*' "executions: $v"
	want="mnemo: module 'value-pattern': executions$v.yaml:$line:"
	case $report_err in
	"$want"*"field 'executions'"*"'$v'"*)
		[ "$report_status" -eq 1 ] && ok "executions: $v: report and merge refuse it, naming file:line and field" ||
			bad "executions: $v: report exits $report_status" ;;
	*) bad "executions: $v: report says '$report_err', expected '$want...field 'executions'...'" ;;
	esac
done

# A count in the header: libmnemo-profile's own rule, for both.
line=$(grep -n '^program:' p.yaml | cut -d: -f1)
compare events-5 "$line" 'events: [0-9]*' 'events: -5'
case $report_err in
"mnemo: events-5.yaml:$line:"*"'events'"*) ok "program events: -5: both refuse it, naming file:line" ;;
*) bad "program events: -5: report says '$report_err'" ;;
esac

# In every module section, the first number of each key, set to -5 and to 1e26.
awk '/^modules:/{m=1; next}
     m && /^  [^ ].*:$/ {sec=$1; sub(/:$/, "", sec); gsub(/"/, "", sec); next}
     m && sec {
	s = $0
	while (match(s, /[a-z_]+: [0-9]+([,}]|$)/)) {
		kv = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
		sub(/[,}]$/, "", kv)
		key = kv; sub(/:.*/, "", key)
		if (!seen[sec "." key]++) print NR, sec, key, kv
	}
     }' p.yaml >fields
[ "$(wc -l <fields)" -ge 20 ] || { echo "FAIL: too few fields found: $(cat fields)"; exit 1; }
while read -r line sec key kv; do
	for v in -5 1e26; do
		compare "$sec.$key$v" "$line" "\\b$key: [0-9][0-9]*" "$key: $v"
	done
done <fields
ok "$(wc -l <fields | tr -d ' ') fields of $(cut -d' ' -f2 fields | sort -u | wc -l | tr -d ' ') modules: report and merge refuse the same $refused edits and accept the same $agreed"

exit $failed
