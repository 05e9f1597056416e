#!/bin/sh
# Prints 10 MB to stderr, then a last line, and fails.
head -c 10485760 /dev/zero | tr '\0' 'e' >&2
echo >&2
echo "the real error is at the end" >&2
exit 3
