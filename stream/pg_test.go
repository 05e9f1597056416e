package stream_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/pgtest"
	"github.com/wardenhq/warden/postgres"
	"github.com/wardenhq/warden/stream"
)

// hangingCursor is a replica that hangs for good in its cursor write once
// armed: it holds the lease but stops renewing it, as a replica frozen or
// cut off would.
type hangingCursor struct {
	stream.Store
	armed atomic.Bool
	hung  atomic.Bool
}

func (h *hangingCursor) SetStreamCursor(ctx context.Context, name, id string) error {
	if h.armed.Load() {
		h.hung.Store(true)
		<-ctx.Done()
		return ctx.Err()
	}
	return h.Store.SetStreamCursor(ctx, name, id)
}

// Two replicas on one PostgreSQL database, both recording, both running a
// publisher with the lease: one publishes at a time; when the holder hangs
// the other takes over within the lease's TTL from the shared cursor, and
// every record of both replicas is on the stream exactly once.
func TestFleetOnPostgres(t *testing.T) {
	nurl := natsURL(t)
	purl := pgtest.SchemaURL(t)
	name, subj := names(t, nurl)
	ctx := context.Background()
	open := func() *postgres.Store {
		s, err := postgres.Open(ctx, purl, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	sa, sb := open(), open()
	ha := &hangingCursor{Store: sa}
	o := stream.Options{URL: nurl, Stream: name, Subject: subj, Lease: true, Batch: 16, Poll: 20 * time.Millisecond}
	o.Holder = "replica-a"
	pa, _ := stream.New(ha, o)
	o.Holder = "replica-b"
	pb, _ := stream.New(sb, o)
	stopA := run(pa)
	defer stopA()
	waitFor(t, 10*time.Second, "a to take the lease", func() bool { return pa.Lag().Publishing })
	stopB := run(pb)
	defer stopB()

	const each = 300
	var wg sync.WaitGroup
	for _, r := range []struct {
		s      *postgres.Store
		prefix string
	}{{sa, "a"}, {sb, "b"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				rec := audit.Record{ID: fmt.Sprintf("%s%04d", r.prefix, i), Time: time.Now().UTC(), Event: "steps/toolCallRequest",
					Surface: "aos", Decision: "allow", Input: []byte(`{}`), Results: []warden.Result{}}
				if err := r.s.Record(ctx, &rec); err != nil {
					t.Error(err)
					return
				}
				if i == each/2 && r.prefix == "a" {
					ha.armed.Store(true) // replica a's publisher hangs from here
				}
			}
		}()
	}
	wg.Wait()
	if pb.Lag().Publishing && !ha.hung.Load() {
		t.Error("b publishes while a holds the lease")
	}
	start := time.Now()
	waitFor(t, 30*time.Second, "b to take over and catch up", func() bool {
		c, _ := sb.StreamCursor(ctx, "nats:"+name)
		l := pb.Lag()
		return l.Publishing && l.Records == 0 && c != ""
	})
	t.Logf("a hung holding the lease; b took over and caught up %v later; a published %d, b %d",
		time.Since(start).Round(time.Millisecond), pa.Lag().Published, pb.Lag().Published)
	msgs := stored(t, nurl, name)
	if seen := ids(t, msgs); len(msgs) != 2*each || len(seen) != 2*each {
		t.Errorf("%d messages, %d distinct ids; want %d", len(msgs), len(seen), 2*each)
	}
}
