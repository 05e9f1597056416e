//go:build race

package otelx_test

// raceOn: the race detector slows every goroutine, the exporter's too.
const raceOn = true
