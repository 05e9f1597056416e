#!/bin/sh
# Reads the payload from stdin and answers with a patch derived from it,
# proving the payload was delivered: {"tool":{"name":"X"}} -> {"tool_input":{"seen":"X"}}.
input=$(cat)
name=$(printf '%s' "$input" | sed -n 's/.*"name" *: *"\([^"]*\)".*/\1/p')
printf '\n  {"tool_input":{"seen":"%s"}}  \n\n' "$name"
