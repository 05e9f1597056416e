package hooks

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestCommandHookProcessLimit is the attack of issue 8: 50 concurrent
// dispatches to a slow command hook. At most MaxProcs (limits.hook_procs)
// of its processes run at once (counted by the marker files slow.sh holds
// while it runs, whose process is alive); with a timeout long enough every call waits its turn
// and is allowed; with a short one the calls that found no slot in time
// follow the failure policy (closed: deny) without starting a process.
func TestCommandHookProcessLimit(t *testing.T) {
	for _, tt := range []struct {
		name, timeout string
		procs         int
		wantDeny      bool
	}{
		{"all wait their turn", "20s", 4, false},
		{"excess times out and fails closed", "700ms", 4, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("TMPDIR", dir) // passed to the child: the env allow-list
			d, st, _, _ := dispatcherWith(t, `
- name: slow
  events: [tool.pre_call]
  timeout: `+tt.timeout+`
  failure: closed
  command: [$S/slow.sh]
`, 1, 1, func(d *Decl) { d.MaxProcs = tt.procs }) // the config sets it from limits.hook_procs

			var peak atomic.Int64
			stop := make(chan struct{})
			polled := make(chan struct{})
			go func() { // count the running processes every 2 ms
				defer close(polled)
				for {
					select {
					case <-stop:
						return
					case <-time.After(2 * time.Millisecond):
					}
					m, _ := filepath.Glob(filepath.Join(dir, "running.*"))
					var n int64
					for _, f := range m { // a killed hook leaves its marker: count the live ones
						pid, _ := strconv.Atoi(strings.TrimPrefix(filepath.Ext(f), "."))
						if pid > 0 && syscall.Kill(pid, 0) == nil {
							n++
						}
					}
					if n > peak.Load() {
						peak.Store(n)
					}
				}
			}()
			const calls = 50
			var wg sync.WaitGroup
			var denied atomic.Int64
			for range calls {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := d.Dispatch(context.Background(), "tool.pre_call", []byte(toolCall))
					if err != nil {
						t.Error(err)
						return
					}
					if res.Decision == "deny" {
						denied.Add(1)
					}
				}()
			}
			wg.Wait()
			close(stop)
			<-polled
			started, _ := filepath.Glob(filepath.Join(dir, "started.*"))
			t.Logf("%d calls, limit %d: peak %d processes at once, %d started, %d denied", calls, tt.procs, peak.Load(), len(started), denied.Load())
			if peak.Load() > int64(tt.procs) || peak.Load() == 0 {
				t.Fatalf("peak %d processes at once, want 1..%d", peak.Load(), tt.procs)
			}
			if !tt.wantDeny {
				if denied.Load() != 0 || len(started) != calls {
					t.Fatalf("%d denied, %d started; want every call to wait and run", denied.Load(), len(started))
				}
				return
			}
			if denied.Load() == 0 || len(started) >= calls || int64(len(started))+denied.Load() < calls {
				t.Fatalf("%d denied, %d started; want the excess denied without a process", denied.Load(), len(started))
			}
			var busy int
			for _, rec := range st.Records() {
				if rec.Decision == "deny" && len(rec.Results) > 1 && strings.Contains(rec.Results[1].Error, "timed out") {
					busy++
				}
			}
			if busy == 0 {
				t.Fatalf("no denial records the hook's timeout")
			}
		})
	}
}
