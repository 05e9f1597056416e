package seglog

import (
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"
)

// benchRecordSize is the size of the trace's typical encoded record.
const benchRecordSize = 2900

// BenchmarkAppend appends batches of 1, 8, 64 and 256 records of 2.9 KB
// (256: the batch of sqlite's BenchmarkWriterBatch): one op is one batch
// (one write(2), and one fdatasync(2) with SyncAlways), in a directory
// under the test's temporary directory. Reported: records/s, µs/batch and
// cpu-ns/rec, the CPU time of the appending thread per record (Linux).
func BenchmarkAppend(b *testing.B) {
	for _, sync := range []struct {
		name string
		s    Sync
	}{{"always", SyncAlways}, {"none", SyncNone}} {
		for _, n := range []int{1, 8, 64, 256} {
			b.Run(fmt.Sprintf("sync=%s/batch=%d", sync.name, n), func(b *testing.B) {
				l := mustOpen(b, b.TempDir(), Options{Sync: sync.s})
				defer l.Close()
				recs := make([][]byte, n)
				for i := range recs {
					recs[i] = make([]byte, benchRecordSize)
					for j := range recs[i] {
						recs[i][j] = byte(i + j)
					}
				}
				b.SetBytes(int64(n * benchRecordSize))
				b.ReportAllocs()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				start, cpu0 := time.Now(), threadCPU()
				for b.Loop() {
					if _, err := l.Append(recs); err != nil {
						b.Fatal(err)
					}
				}
				el, cpu := time.Since(start), threadCPU()-cpu0
				if cpu > 0 {
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*n), "cpu-ns/rec")
				}
				b.ReportMetric(float64(b.N*n)/el.Seconds(), "records/s")
				b.ReportMetric(float64(el.Microseconds())/float64(b.N), "µs/batch")
			})
		}
	}
}

// BenchmarkReader reads 2.9 KB records back (from the page cache): one op
// is one record.
func BenchmarkReader(b *testing.B) {
	l := mustOpen(b, b.TempDir(), Options{Sync: SyncNone})
	defer l.Close()
	recs := make([][]byte, 64)
	for i := range recs {
		recs[i] = make([]byte, benchRecordSize)
	}
	for range 1000 {
		if _, err := l.Append(recs); err != nil {
			b.Fatal(err)
		}
	}
	r, err := l.Reader(l.First())
	if err != nil {
		b.Fatal(err)
	}
	defer func() { r.Close() }()
	b.SetBytes(benchRecordSize)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := r.Next(); err == io.EOF {
			r.Close()
			if r, err = l.Reader(l.First()); err != nil {
				b.Fatal(err)
			}
		} else if err != nil {
			b.Fatal(err)
		}
	}
}
