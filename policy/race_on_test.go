//go:build race

package policy

// raceEnabled: the race detector's instrumentation changes escape analysis,
// so allocation counts are not checked under it.
const raceEnabled = true
