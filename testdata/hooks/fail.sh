#!/bin/sh
# Writes to stderr and exits 1.
echo "hook failed: cannot reach policy store" >&2
exit 1
