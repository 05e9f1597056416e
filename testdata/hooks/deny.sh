#!/bin/sh
# Denies whatever it is given.
cat >/dev/null
printf '{"deny": true, "deny_reason": "denied by deny.sh"}\n'
