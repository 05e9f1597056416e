#!/bin/sh
# Appends its first argument to tool_input.path, proving hooks run in order,
# each seeing the previous hook's output: {"tool_input":{"path":"/a"}} -> "/a+X".
input=$(cat)
path=$(printf '%s' "$input" | sed -n 's/.*"path" *: *"\([^"]*\)".*/\1/p')
printf '{"tool_input":{"path":"%s+%s"}}\n' "$path" "$1"
