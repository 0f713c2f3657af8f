#!/bin/bash
# Prints the site table of an instrumented IR module (stdin) one site per
# line, "id|kind|function|file|line|column|name|type_size|loop|fields|line_nearest|
# inlined_into|inlined_at"
# (mnemo-sites/3), then the line "count=N abi=V".  Undoes only the string
# escapes the tests need.
set -eu
ir=$(cat)
blob=$(printf '%s\n' "$ir" | sed -n 's/^@__mnemo_site_table = .*c"\(.*\)\\00".*$/\1/p')
count=$(printf '%s\n' "$ir" | sed -n 's/^@__mnemo_site_count = .* i32 \([0-9]*\).*$/\1/p')
abi=$(printf '%s\n' "$ir" | sed -n 's/^@__mnemo_pass_abi = .* i32 \([0-9]*\).*$/\1/p')
if [ -z "$blob" ]; then
	echo "no site table"
	exit 0
fi
printf '%s\n' "$blob" | sed 's/\\0A/\n/g' | sed '/^$/d' |
	sed 's/\\09/|/g; s/\\22/"/g; s/\\5C/\\/g' |
	awk 'NR == 1 { print "header=" $0; next } { print NR - 1 "|" $0 }'
echo "count=$count abi=$abi"
