package ocsf

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden"
)

func closeSink(t *testing.T, s *Sink) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// lines reads path's JSONL, failing on a line that is not a JSON object.
func lines(t *testing.T, path string) []Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: %v: %s", path, err, sc.Bytes())
		}
		out = append(out, e)
	}
	return out
}

// TestSinkRotates: past MaxSize the file rotates to PATH.1, PATH.2, ...;
// no more than MaxFiles rotated files are kept; every file is mode 0600,
// no larger than MaxSize, and holds whole events.
func TestSinkRotates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "ocsf.jsonl")
	const maxSize = 8 << 10
	s, err := NewSink(SinkOptions{Path: path, MaxSize: maxSize, MaxFiles: 2, Queue: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const n = 200
	for i := range n {
		r := record("steps/toolCallRequest", "deny", map[string]any{"tool": map[string]any{"name": "t"}})
		r.ID = fmt.Sprintf("rec-%03d", i)
		s.ObserveRecord(ctx, &warden.Event{}, &warden.Outcome{}, r, nil)
		if i%10 == 0 {
			if err := s.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	closeSink(t, s)
	if s.Dropped() != 0 {
		t.Fatalf("dropped %d", s.Dropped())
	}
	var files []string
	for _, p := range []string{path, path + ".1", path + ".2"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", p, fi.Mode().Perm())
		}
		if fi.Size() > maxSize {
			t.Errorf("%s: %d bytes, more than %d", p, fi.Size(), maxSize)
		}
		files = append(files, p)
	}
	if _, err := os.Stat(path + ".3"); !os.IsNotExist(err) {
		t.Errorf("PATH.3 kept: %v", err)
	}
	// The newest events are in PATH, older in .1, older still in .2.
	last := lines(t, path)
	if len(last) == 0 || last[len(last)-1]["metadata"].(map[string]any)["uid"] != "rec-199:finding" {
		t.Errorf("newest event: %v", last[len(last)-1]["metadata"])
	}
	older := lines(t, path+".2")
	newer := lines(t, path+".1")
	if older[0]["metadata"].(map[string]any)["uid"].(string) >= newer[0]["metadata"].(map[string]any)["uid"].(string) {
		t.Errorf("rotation order: %v then %v", older[0]["metadata"], newer[0]["metadata"])
	}
}

// TestSinkUnrecorded: a decision without a stored record is written
// without its input (never redacted, so never written).
func TestSinkUnrecorded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o.jsonl")
	s, err := NewSink(SinkOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	ev := &warden.Event{Name: "steps/toolCallRequest", Surface: warden.SurfaceSDK, Raw: []byte(`{"secret":"AKIAIOSFODNN7EXAMPLE"}`),
		Payload: map[string]any{"secret": "AKIAIOSFODNN7EXAMPLE"}}
	ev.Tool.Name = "t"
	s.Observe(ev, &warden.Outcome{Verdict: warden.Deny}, nil)
	closeSink(t, s)
	b, _ := os.ReadFile(path)
	if len(lines(t, path)) != 2 || strings.Contains(string(b), "AKIAIOSFODNN7EXAMPLE") {
		t.Errorf("got %s", b)
	}
}

// TestSinkNeverBlocks: with the writer unable to keep up (a queue of one),
// observing returns at once and what does not fit is counted as dropped.
func TestSinkNeverBlocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "o.jsonl")
	s, err := NewSink(SinkOptions{Path: path, Queue: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := record("steps/toolCallRequest", "deny", map[string]any{"tool": map[string]any{"name": "t"}})
	const n = 20000
	start := time.Now()
	for range n {
		s.ObserveRecord(context.Background(), nil, nil, r, nil)
	}
	per := time.Since(start) / n
	closeSink(t, s)
	written := len(lines(t, path)) / 2
	t.Logf("%v per decision observed; %d written, %d dropped", per, written, s.Dropped())
	if uint64(written)+s.Dropped() != n || s.Dropped() == 0 {
		t.Errorf("written %d + dropped %d != %d", written, s.Dropped(), n)
	}
	if per > 50*time.Microsecond {
		t.Errorf("observing took %v per decision", per)
	}
}

func TestSinkErrors(t *testing.T) {
	if _, err := NewSink(SinkOptions{}); err == nil {
		t.Error("no path: no error")
	}
	dir := t.TempDir()
	if _, err := NewSink(SinkOptions{Path: dir}); err == nil {
		t.Error("a directory: no error")
	}
}
