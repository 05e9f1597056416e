#!/bin/sh
# Prints the names of its environment variables plus two values as JSON.
names=$(env | sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)=.*/\1/p' | sort | tr '\n' ' ')
printf '{"names":"%s","secret":"%s","extra":"%s"}\n' "$names" "${WARDEN_TEST_SECRET-}" "${WARDEN_EXTRA-}"
