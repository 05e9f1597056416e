package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
)

// BenchmarkRecord measures Record throughput (records/s) with 1, 16 and 64
// concurrent writers on one Store: group commit batches the concurrent
// ones into one transaction under the chain head's lock.
//
//	WARDEN_POSTGRES_URL=postgres://… go test ./postgres -run '^$' -bench Record -benchtime 5000x
func BenchmarkRecord(b *testing.B) {
	input := json.RawMessage(`{"tool":{"name":"bash","input":{"command":"ls -la /tmp && echo hello"}},"session":{"id":"s-1"}}`)
	for _, writers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			s := openTest(b, testSchemaURL(b), Options{})
			var n atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := n.Add(1)
						if i > int64(b.N) {
							return
						}
						r := &audit.Record{ID: fmt.Sprintf("b-%d-%d", w, i), Time: time.Now(), Event: "steps/toolCallRequest",
							Surface: "aos", Decision: "allow", Reason: "ok", AgentID: "agent", SessionID: "s-1",
							Tool: "bash", Input: input, Results: []warden.Result{{Guardian: "policy", Decision: "allow"}}}
						if err := s.Record(context.Background(), r); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
			if st := s.TraceStats(); st.Batches > 0 {
				b.ReportMetric(float64(st.Records)/float64(st.Batches), "records/batch")
			}
		})
	}
}
