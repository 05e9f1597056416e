#!/bin/sh
# Prints 100 MB to stdout.
head -c 104857600 /dev/zero | tr '\0' 'x'
