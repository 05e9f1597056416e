#!/bin/sh
# Records that it ran by creating the file named by its first argument.
cat >/dev/null
: >"$1"
echo '{}'
