package guardian_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/storetest"
)

// Reload (SIGHUP, the file watcher) reloads the shadow set with the live
// one; a shadow file broken meanwhile keeps the previous shadow set, logs
// why at WARN and is returned, while the live set still reloads.
func TestShadowReload(t *testing.T) {
	dir := t.TempDir()
	live := write(t, dir, "live.yaml", denyTool("no-deploy", "deploy"))
	cand := write(t, dir, "cand.yaml", allowTool("deploys-ok", "deploy"))
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	gd, err := guardian.Open(guardian.Options{Policies: []string{live}, Shadow: []string{cand}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer gd.Close(context.Background())
	write(t, dir, "cand.yaml", allowTool("deploys-ok", "deploy")+"---\n"+denyTool("no-rm", "rm"))
	if err := gd.Reload(nil); err != nil {
		t.Fatal(err)
	}
	good := gd.ShadowPolicies("")
	if good.Get("no-rm") == nil || gd.ShadowReloadStatus("").Err != nil {
		t.Fatalf("shadow set after a good reload: %v", good)
	}
	write(t, dir, "cand.yaml", "id: half-writ")
	write(t, dir, "live.yaml", denyTool("no-deploy", "deploy")+"---\n"+denyTool("no-cat", "cat"))
	err = gd.Reload(nil)
	if err == nil || !strings.Contains(err.Error(), "shadow set: ") {
		t.Fatalf("Reload = %v, want the shadow set's error", err)
	}
	if gd.ShadowPolicies("") != good || gd.ShadowReloadStatus("").Err == nil {
		t.Fatalf("the previous shadow set was not kept")
	}
	if gd.Policies().Get("no-cat") == nil {
		t.Fatalf("the live set did not reload beside the broken shadow set")
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "set=shadow") {
		t.Fatalf("no WARN naming the shadow set:\n%s", logs.String())
	}
}

// The file watcher reloads the shadow set when one of its files changes.
func TestShadowWatch(t *testing.T) {
	dir := t.TempDir()
	cand := write(t, dir, "cand.yaml", allowTool("deploys-ok", "deploy"))
	gd, err := guardian.Open(guardian.Options{Shadow: []string{cand}})
	if err != nil {
		t.Fatal(err)
	}
	defer gd.Close(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- gd.Watch(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(10 * time.Second)
	for gd.ShadowPolicies("").Get("no-rm") == nil {
		if time.Now().After(deadline) {
			t.Fatal("the shadow set was not reloaded on a file change")
		}
		// Rewritten until seen: the watch may start after the first write.
		write(t, dir, "cand.yaml", allowTool("deploys-ok", "deploy")+"---\n"+denyTool("no-rm", "rm"))
		time.Sleep(150 * time.Millisecond)
	}
}

// Decisions beside a shadow set run concurrently with its reloads (go test
// -race): each record names one whole shadow set, the old or the new.
func TestShadowConcurrentReload(t *testing.T) {
	dir := t.TempDir()
	cand := write(t, dir, "cand.yaml", allowTool("deploys-ok", "deploy"))
	st := storetest.NewMem()
	gd, err := guardian.Open(guardian.Options{Shadow: []string{cand}, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	defer gd.Close(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 20 {
			write(t, dir, "cand.yaml", allowTool("deploys-ok", "deploy")+strings.Repeat("# edit\n", i))
			if err := gd.Reload(nil); err != nil {
				t.Error(err)
			}
		}
	}()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if _, err := gd.Decide(context.Background(), toolCall("deploy")); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	<-done
	for _, r := range st.Records() {
		if s, ok := audit.ShadowSummary(r.Results); !ok || s.Decision != "allow" || s.PolicyID != "deploys-ok" || s.PolicyRevision == "" {
			t.Fatalf("record %+v", r.Results)
		}
	}
}
