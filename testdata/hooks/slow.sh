#!/bin/sh
# slow.sh: holds a marker file in $TMPDIR while it runs (0.3 s), so a test
# can count the processes running at once; allows.
f="$TMPDIR/running.$$"
: > "$f"
: > "$TMPDIR/started.$$"
sleep 0.3
rm -f "$f"
