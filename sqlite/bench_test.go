package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

// benchRecord is a realistic record: a tool call of about 1 KiB and three
// results.
func benchRecord(id string) *audit.Record {
	return &audit.Record{
		ID: id, Time: time.Now().UTC(), Event: "steps/toolCallRequest", Surface: "aos", Tool: "bash",
		RequestID: "13fa8d6f-8a4b-4c1e-9f2a-1b2c3d4e5f60", AgentID: "agent-0193a4f2",
		SessionID: "session-0193a4f2-7c1e", TurnID: "turn-12", StepID: "step-34",
		Decision: "deny", Reason: "destructive shell command", ReasonCodes: []string{"no-rm-rf"},
		PolicyID: "no-rm-rf", PolicyVersion: "v3",
		Results: []warden.Result{
			{Guardian: "policy", PolicyID: "no-rm-rf", PolicyVersion: "v3", Decision: "deny", Mode: "enforce", Reason: "destructive shell command", LatencyUS: 12},
			{Guardian: "policy", PolicyID: "audit-all", PolicyVersion: "v1", Decision: "allow", Mode: "audit", LatencyUS: 3},
			{Guardian: "secrets", Decision: "allow", Mode: "enforce", LatencyUS: 40},
		},
		LatencyUS: 61,
		Input:     json.RawMessage(`{"tool":"bash","arguments":{"command":"rm -rf /tmp/build && make","cwd":"/home/dev/project"},"context":"` + strings.Repeat("lorem ipsum ", 70) + `"}`),
	}
}

// BenchmarkRecordParallel measures Record throughput with many concurrent
// callers (as under load: many decisions in flight). Reported: records/s;
// batch, the mean batch size; writer-µs/rec, the writer's wall time per
// record inserting and committing (from OnBatch; inflated when callers
// compete for the CPU); writer-cpu-µs/rec, the CPU time of the writer
// goroutine's thread per record (OnBatch runs on the writer goroutine, which
// it locks to its thread to measure it).
func BenchmarkRecordParallel(b *testing.B) {
	for _, sync := range []string{"normal", "full"} {
		b.Run(sync, func(b *testing.B) {
			var (
				writerNS   atomic.Int64
				locked     bool
				cpu0, cpu1 time.Duration
				cpuRecs    int64
			)
			s, err := Open(b.TempDir(), Options{Synchronous: sync, OnBatch: func(size int, d time.Duration, _ error) {
				writerNS.Add(int64(d))
				if !locked { // first batch: start measuring after it
					runtime.LockOSThread()
					locked = true
					cpu0 = threadCPU()
					return
				}
				cpu1 = threadCPU()
				cpuRecs += int64(size)
			}})
			if err != nil {
				b.Fatal(err)
			}
			var n atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(256) // 256 × GOMAXPROCS callers
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				for pb.Next() {
					r := benchRecord(fmt.Sprintf("bench-%d", n.Add(1)))
					if err := s.Record(ctx, r); err != nil {
						b.Error(err)
						return
					}
				}
			})
			el := time.Since(start)
			b.StopTimer()
			st := s.Stats()
			if err := s.Close(); err != nil { // the writer has exited: its counters are ours
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/el.Seconds(), "records/s")
			if st.Records > 0 {
				b.ReportMetric(float64(writerNS.Load())/1e3/float64(st.Records), "writer-µs/rec")
				b.ReportMetric(float64(st.Records)/float64(st.Batches), "batch")
			}
			if cpuRecs > 0 {
				b.ReportMetric(float64(cpu1-cpu0)/1e3/float64(cpuRecs), "writer-cpu-µs/rec")
			}
		})
	}
}

// BenchmarkRecordSerial measures the latency of one Record with no
// concurrency (a batch of one per commit), committed to SQLite or appended
// to the trace log (Options.Log).
func BenchmarkRecordSerial(b *testing.B) {
	for _, logged := range []bool{false, true} {
		b.Run(map[bool]string{false: "sqlite", true: "log"}[logged], func(b *testing.B) {
			s, err := Open(b.TempDir(), Options{Log: logged})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := s.Record(ctx, benchRecord(fmt.Sprintf("serial-%d", i))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkScan measures reading the 100 newest records of 10000 (the
// former BenchmarkRuns, Runs with the default Last).
func BenchmarkScan(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := audit.Collect(ctx, s, audit.Query{}, 100); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanAll measures visiting all 10000 records, oldest first; one op
// is the whole scan.
func BenchmarkScanAll(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		if err := s.Scan(ctx, audit.Query{Oldest: true}, func(*audit.Record) bool { n++; return true }); err != nil {
			b.Fatal(err)
		}
		if n != 10000 {
			b.Fatalf("scanned %d records, want 10000", n)
		}
	}
}

// benchStore returns a store holding 10000 records.
func benchStore(b *testing.B) *Store {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	ctx := context.Background()
	errs := make(chan error, 10000)
	for i := range 10000 {
		go func() { errs <- s.Record(ctx, benchRecord(fmt.Sprintf("runs-%d", i))) }()
	}
	for range 10000 {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkWriterBatch measures the writer alone: one op is one batch of
// 256 records inserted and committed by write (no callers, no queue), so
// ns/record is the writer's CPU per record.
func BenchmarkWriterBatch(b *testing.B) {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const size = 256
	batch := make([]*request, size)
	for i := range batch {
		batch[i] = requestPool.Get().(*request)
	}
	n := 0
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var inWrite, cpu time.Duration
	for b.Loop() {
		for _, r := range batch {
			n++
			if err := r.fill(benchRecord(fmt.Sprintf("w-%d", n))); err != nil {
				b.Fatal(err)
			}
		}
		start, c0 := time.Now(), threadCPU()
		if err := s.write(batch, 0); err != nil {
			b.Fatal(err)
		}
		cpu += threadCPU() - c0
		inWrite += time.Since(start)
	}
	b.ReportMetric(float64(inWrite.Nanoseconds())/float64(n), "writer-ns/rec")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "writer-cpu-ns/rec")
}
