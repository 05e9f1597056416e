//go:build !race

package otelx_test

const raceOn = false
