#!/bin/sh
# Reads the payload and prints nothing: an empty patch.
cat >/dev/null
