package labels_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/labels"
	"github.com/wardenhq/warden/labels/labelstest"
)

func TestValidLabel(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"read_private", true}, {"a", true}, {"x.y-z_9", true}, {strings.Repeat("a", labels.MaxLen), true},
		{"", false}, {"Read", false}, {"9lives", false}, {"_x", false}, {"with space", false},
		{"ünï", false}, {strings.Repeat("a", labels.MaxLen+1), false}, {"a/b", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := labels.Valid(tt.name); (err == nil) != tt.ok {
				t.Fatalf("ValidLabel(%q) = %v, want ok %v", tt.name, err, tt.ok)
			}
		})
	}
}

func TestMergeLabels(t *testing.T) {
	a := []string{"b", "a"}
	got := labels.Merge(a, []string{"c", "a", "b"})
	if !reflect.DeepEqual(got, []string{"a", "b", "c"}) || !reflect.DeepEqual(a, []string{"b", "a"}) {
		t.Fatalf("MergeLabels = %q (a now %q)", got, a)
	}
	if labels.Merge(nil, nil) != nil {
		t.Fatal("MergeLabels(nil, nil) is not nil")
	}
}

func TestLabelCache(t *testing.T) {
	ctx := context.Background()
	st := &labelstest.Mem{}
	c := labels.NewCache(st, 2, time.Minute)
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	labels.SetNow(c, func() time.Time { return now })
	if _, err := c.Add(ctx, "t", "s1", []string{"read_private"}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if ls, err := c.Labels(ctx, "t", "s1"); err != nil || !reflect.DeepEqual(ls, []string{"read_private"}) {
			t.Fatalf("Labels = %q, %v", ls, err)
		}
	}
	if st.Reads() != 0 {
		t.Fatalf("%d store reads for cached labels, want 0", st.Reads())
	}
	// Another process adds a label: seen once the entry is older than the TTL.
	st.AddSessionLabels(ctx, "t", "s1", []string{"untrusted_input"}, now)
	now = now.Add(2 * time.Minute)
	if ls, _ := c.Labels(ctx, "t", "s1"); !reflect.DeepEqual(ls, []string{"read_private", "untrusted_input"}) || st.Reads() != 1 {
		t.Fatalf("after the TTL: %q, %d reads", ls, st.Reads())
	}
	// Bounded: a third session evicts the least recently used.
	c.Labels(ctx, "t", "s2")
	c.Labels(ctx, "t", "s1")
	c.Labels(ctx, "t", "s3")
	if c.Len() != 2 {
		t.Fatalf("Len = %d, want 2", c.Len())
	}
	reads := st.Reads()
	c.Labels(ctx, "t", "s1") // kept: used more recently than s2
	if st.Reads() != reads {
		t.Fatal("s1 was evicted, want s2")
	}
	c.Labels(ctx, "t", "s2")
	if st.Reads() != reads+1 {
		t.Fatal("s2 was not evicted")
	}
	// Tenants are apart; a session without an id has no labels.
	if ls, _ := c.Labels(ctx, "u", "s1"); ls != nil {
		t.Fatalf("tenant u sees %q", ls)
	}
	if ls, err := c.Add(ctx, "t", "", []string{"x"}); ls != nil || err != nil {
		t.Fatalf("Add without a session = %q, %v", ls, err)
	}
	if _, err := c.Add(ctx, "t", "s1", []string{"Bad Label"}); err == nil {
		t.Fatal("Add of an invalid label succeeded")
	}
}

func TestLabelCacheMemoryOnly(t *testing.T) {
	ctx := context.Background()
	c := labels.NewCache(nil, 0, -1)
	c.Add(ctx, "", "s", []string{"b"})
	c.Add(ctx, "", "s", []string{"a", "b"})
	if ls, _ := c.Labels(ctx, "", "s"); !reflect.DeepEqual(ls, []string{"a", "b"}) {
		t.Fatalf("Labels = %q", ls)
	}
	var many []string
	for i := range labels.MaxPerSession {
		many = append(many, fmt.Sprintf("l%d", i))
	}
	if _, err := c.Add(ctx, "", "s", many); !errors.Is(err, labels.ErrTooMany) {
		t.Fatalf("Add of too many = %v", err)
	}
}

// TestMemKeepsTheRules: the in-memory store refuses what labels.Rules
// refuses, as a real store does, and keeps nothing of a refused add.
func TestMemKeepsTheRules(t *testing.T) {
	var many []string
	for i := range labels.MaxPerSession + 1 {
		many = append(many, fmt.Sprintf("l%d", i))
	}
	tests := []struct {
		name    string
		session string
		add     []string
		want    error // nil: any error
	}{
		{"no session", "", []string{"a"}, nil},
		{"invalid label", "s1", []string{"ok", "Bad Label"}, nil},
		{"too many", "s1", many, labels.ErrTooMany},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st := &labelstest.Mem{}
			ls, err := st.AddSessionLabels(ctx, "t", tt.session, tt.add, time.Now())
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("AddSessionLabels = %q, %v; want an error (%v)", ls, err, tt.want)
			}
			if ls, err := st.SessionLabels(ctx, "t", tt.session); ls != nil || err != nil {
				t.Fatalf("after a refused add: %q, %v", ls, err)
			}
		})
	}
}

// BenchmarkLabelCacheHit is the cost session labels add to a decision in
// the steady state: one cached lookup.
func BenchmarkLabelCacheHit(b *testing.B) {
	ctx := context.Background()
	c := labels.NewCache(&labelstest.Mem{}, 0, 0)
	c.Add(ctx, "acme", "s1", []string{"read_private", "untrusted_input"})
	b.ReportAllocs()
	for b.Loop() {
		if ls, _ := c.Labels(ctx, "acme", "s1"); len(ls) != 2 {
			b.Fatal(ls)
		}
	}
}
