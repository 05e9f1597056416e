//go:build !linux

package sqlite

import "time"

// threadCPU is only measured on Linux; elsewhere the CPU metrics read 0.
func threadCPU() time.Duration { return 0 }
