package replay_test

import (
	"context"
	"fmt"
	"runtime/debug"
	"testing"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/replay"
	"github.com/wardenhq/warden/sqlite"
)

// BenchmarkReplay replays a SQLite trace of 10,000 decisions of the mixed
// workload (recorded once, before the timer) under the changed policy set
// and the built-in pack, as `warden replay` does: one op is the whole
// trace, read read-only and decided again. It runs at the default GOGC
// and at the GOGC `warden replay` sets (400). Reported: records/s, and
// cpu-µs/record, the process's CPU time per record (on an idle machine the
// throughput approaches GOMAXPROCS / cpu-µs/record; 0 where it cannot be
// measured).
func BenchmarkReplay(b *testing.B) {
	const n = 10000
	dir := b.TempDir()
	record(b, dir, nil, n, policyDir(b, livePolicies))
	st, err := sqlite.OpenReadOnly(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	r, err := replay.Open(guardian.Options{Policies: []string{policyDir(b, candidatePolicies)}})
	if err != nil {
		b.Fatal(err)
	}
	for _, gc := range []int{100, 400} {
		b.Run(fmt.Sprintf("GOGC=%d", gc), func(b *testing.B) {
			defer debug.SetGCPercent(debug.SetGCPercent(gc))
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				rep, err := r.Run(context.Background(), st, audit.Query{})
				if err != nil {
					b.Fatal(err)
				}
				if rep.Summary.Replayed != n {
					b.Fatalf("replayed %d records, want %d", rep.Summary.Replayed, n)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(n*b.N), "cpu-µs/record")
		})
	}
}
