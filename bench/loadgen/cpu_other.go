//go:build !unix

package main

import (
	"errors"
	"time"
)

// selfCPU is not implemented off Unix: the CPU figures are left out.
func selfCPU() (time.Duration, error) {
	return 0, errors.New("CPU accounting needs getrusage (Unix)")
}
