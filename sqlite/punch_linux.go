package sqlite

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// punchPrefix frees the blocks of path's first n bytes (FALLOC_FL_PUNCH_HOLE,
// keeping the file's size; they then read as zeros) and returns n, or 0
// when the file system cannot punch holes.
func punchPrefix(path string, n int64) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, fmt.Errorf("sqlite: prune: %w", err)
	}
	defer f.Close()
	const punchHole, keepSize = 0x02, 0x01
	for {
		err = syscall.Fallocate(int(f.Fd()), punchHole|keepSize, 0, n)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: prune: punch %s: %w", path, err)
	}
	return n, nil
}
