package labels_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/labels"
)

// TestBatch: reads asked while a query runs share the next one, each
// session once in it; each read gets its own session's labels (nil for
// none), a read whose caller gave up gets its context's error without
// failing the others, and a failed query fails the reads it answers.
func TestBatch(t *testing.T) {
	var b labels.Batch
	ctx := context.Background()
	release := make(chan struct{})
	var mu sync.Mutex
	var calls [][]labels.Key
	many := func(_ context.Context, ks []labels.Key) (map[labels.Key][]string, error) {
		mu.Lock()
		calls = append(calls, ks)
		first := len(calls) == 1
		mu.Unlock()
		if first {
			<-release // the first query runs while the others are asked
		}
		got := map[labels.Key][]string{}
		for _, k := range ks {
			if k.Session != "none" {
				got[k] = []string{"l_" + k.Tenant + "_" + k.Session}
			}
		}
		return got, nil
	}
	read := func(ctx context.Context, tenant, session string) ([]string, error) {
		return b.Read(ctx, labels.Key{Tenant: tenant, Session: session}, many)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if ls, err := read(ctx, "t", "first"); err != nil || !slices.Equal(ls, []string{"l_t_first"}) {
			t.Errorf("first read: %q, %v", ls, err)
		}
	})
	for {
		mu.Lock()
		n := len(calls)
		mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := read(gone, "t", "s0"); !errors.Is(err, context.Canceled) {
		t.Errorf("a read with a canceled context: %v", err)
	}
	for i := range 20 {
		wg.Go(func() {
			session := fmt.Sprint("s", i%5)
			if i%7 == 0 {
				session = "none"
			}
			want := []string{"l_t_" + session}
			if session == "none" {
				want = nil
			}
			if ls, err := read(ctx, "t", session); err != nil || !slices.Equal(ls, want) {
				t.Errorf("read %d of %s: %q, %v", i, session, ls, err)
			}
		})
	}
	for { // every read queued behind the first query
		if b.Pending() == 21 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if len(calls) != 2 || len(calls[1]) != 6 {
		t.Fatalf("queries %v; want the first, then one of the 6 sessions asked meanwhile", calls)
	}
	fail := errors.New("down")
	if _, err := b.Read(ctx, labels.Key{Session: "s"}, func(context.Context, []labels.Key) (map[labels.Key][]string, error) {
		return nil, fail
	}); !errors.Is(err, fail) {
		t.Fatalf("a failed query: %v", err)
	}
}
