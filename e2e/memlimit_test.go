package e2e

import (
	"math"
	"path/filepath"
	"testing"
)

// TestServeMemoryTargets: warden serve sets its GC target (GOGC 400) and
// its soft memory limit (192 MiB, which keeps RSS at 1,024 connections
// under issue 15's 256 MB: bench/rss.sh) unless the environment sets
// GOGC or GOMEMLIMIT, which win. Read from the Go collector's gauges in
// /metrics.
func TestServeMemoryTargets(t *testing.T) {
	bin := wardenBinary(t)
	for _, tc := range []struct {
		name, gogc, memlimit string
		wantGOGC, wantLimit  float64
	}{
		{"defaults", "", "", 400, 192 << 20},
		{"environment", "150", "off", 150, math.MaxInt64},
		{"environment limit", "", "1GiB", 400, 1 << 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOGC", tc.gogc)
			t.Setenv("GOMEMLIMIT", tc.memlimit)
			w := startServer(t, bin, "--data", filepath.Join(t.TempDir(), "data"))
			if got := metricSum(t, w.url, "go_gc_gogc_percent "); got != tc.wantGOGC {
				t.Errorf("go_gc_gogc_percent = %v, want %v", got, tc.wantGOGC)
			}
			if got := metricSum(t, w.url, "go_gc_gomemlimit_bytes "); got != tc.wantLimit {
				t.Errorf("go_gc_gomemlimit_bytes = %v, want %v", got, tc.wantLimit)
			}
		})
	}
}
