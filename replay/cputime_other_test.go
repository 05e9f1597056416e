//go:build !unix

package replay_test

import "time"

// processCPU is not measured here: BenchmarkReplay reports no CPU time.
func processCPU() time.Duration { return 0 }
