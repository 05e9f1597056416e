#!/bin/sh
# Never finishes: a background grandchild and a foreground child both sleep.
# Writes its own pid and its children's pids to $WARDEN_PIDFILE so the test
# can check that the whole process group was killed.
sleep 30 &
bg=$!
sleep 30 &
fg=$!
printf '%s %s %s\n' "$$" "$bg" "$fg" >"$WARDEN_PIDFILE"
wait
