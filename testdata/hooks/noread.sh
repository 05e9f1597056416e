#!/bin/sh
# Ignores stdin and prints an empty object.
echo '{}'
