//go:build !linux

package seglog

import "os"

// fdatasync flushes f (fsync: the platform has no fdatasync in package
// syscall).
func fdatasync(f *os.File) error { return f.Sync() }
