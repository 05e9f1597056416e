//go:build !linux

package sqlite

// punchPrefix cannot free blocks on this system: pruned records' blob
// bytes stay in trace.blobs (unreferenced) until the file is rewritten.
func punchPrefix(path string, n int64) (int64, error) { return 0, nil }
