package main

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"
)

func TestTemplate(t *testing.T) {
	cases := []struct {
		name, in string
	}{
		{"string id", `{"jsonrpc":"2.0","id":"abc","method":"ping","params":{"id":"inner"}}`},
		{"number id", `{ "jsonrpc": "2.0", "id" : 7 , "method": "ping" }`},
		{"id last", `{"method":"ping","params":{"id":1},"id":null}`},
		{"no id", `{"jsonrpc":"2.0","method":"ping"}`},
		{"empty", `{}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tpl, err := newTemplate([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			body := string(tpl.head) + `"new-id"` + string(tpl.tail)
			var m map[string]any
			if err := json.Unmarshal([]byte(body), &m); err != nil {
				t.Fatalf("%s: %v", body, err)
			}
			if m["id"] != "new-id" {
				t.Fatalf("id = %v in %s", m["id"], body)
			}
			var orig map[string]any
			_ = json.Unmarshal([]byte(tc.in), &orig)
			_, hadID := orig["id"]
			if want := len(orig) + map[bool]int{true: 0, false: 1}[hadID]; len(m) != want {
				t.Fatalf("members changed: %s", body)
			}
		})
	}
	if _, err := newTemplate([]byte(`[1]`)); err == nil {
		t.Fatal("array accepted")
	}
}

func TestTemplateIn(t *testing.T) {
	in := `{ "input": {"jsonrpc":"2.0","id":"abc","method":"m","params":{"id":"inner"}}, "id": "outer" }`
	tpl, err := newTemplateIn([]byte(in), "input")
	if err != nil {
		t.Fatal(err)
	}
	body := string(tpl.head) + `"new-id"` + string(tpl.tail)
	var m struct {
		ID    string `json:"id"`
		Input struct {
			ID     string         `json:"id"`
			Method string         `json:"method"`
			Params map[string]any `json:"params"`
		} `json:"input"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	if m.Input.ID != "new-id" || m.ID != "outer" || m.Input.Method != "m" || m.Input.Params["id"] != "inner" {
		t.Fatalf("want only input.id rewritten: %s", body)
	}
	// No id inside: one is added there.
	tpl, err = newTemplateIn([]byte(`{"input":{"method":"m"}}`), "input")
	if err != nil {
		t.Fatal(err)
	}
	if body := string(tpl.head) + `7` + string(tpl.tail); body != `{"input":{"id":7,"method":"m"}}` {
		t.Fatalf("body %s", body)
	}
	for _, bad := range []string{`{"input":[1]}`, `{"other":{}}`, `[1]`} {
		if _, err := newTemplateIn([]byte(bad), "input"); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestHistogram(t *testing.T) {
	var h histogram
	var all []time.Duration
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		d := time.Duration(r.ExpFloat64() * float64(300*time.Microsecond))
		all = append(all, d)
		h.record(d)
	}
	slices.Sort(all)
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		want := all[int(q*float64(len(all)))-1]
		got := h.quantile(q)
		if diff := float64(got-want) / float64(want); diff > 0.01 || diff < -0.01 {
			t.Errorf("q%v = %v, want %v (%.2f%%)", q, got, want, diff*100)
		}
	}
	if h.quantile(1) != all[len(all)-1] {
		t.Errorf("max %v, want %v", h.quantile(1), all[len(all)-1])
	}
	for i := range 1 << 20 {
		if b := bucketOf(uint64(i)); bucketMid(b) > uint64(i)+uint64(i)/200+1 || bucketMid(b)+uint64(i)/200+1 < uint64(i) {
			t.Fatalf("value %d -> bucket %d mid %d", i, b, bucketMid(b))
		}
	}
}

// TestCPUSample: the CPU accounting reads a live process's time, which
// grows with work, and rejects a process that does not exist.
func TestCPUSample(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	pid := os.Getpid()
	a, err := sampleCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	// Spin until getrusage has counted 150 ms of this process's CPU (on a
	// loaded machine 150 ms of wall time may be far less CPU), at most 20 s.
	var b cpuSample
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); {
		for spin := time.Now().Add(10 * time.Millisecond); time.Now().Before(spin); {
		}
		if b, err = sampleCPU(pid); err != nil {
			t.Fatal(err)
		}
		if b.client-a.client >= 150*time.Millisecond && b.server-a.server >= 60*time.Millisecond {
			break
		}
	}
	if d := b.server - a.server; d < 50*time.Millisecond {
		t.Errorf("the process's CPU grew by %v over 150 ms of spinning CPU", d)
	}
	if d := b.client - a.client; d < 100*time.Millisecond {
		t.Errorf("getrusage grew by %v within 20 s of spinning", d)
	}
	if b.total <= a.total || b.idle < a.idle {
		t.Errorf("machine ticks %d→%d, idle %d→%d", a.total, b.total, a.idle, b.idle)
	}
	var rep report
	cpuReport(&rep, a, b, 10, true)
	if rep.ServerCPUUS < 5000 || rep.ClientCPUUS < 10000 || rep.IdlePct < 0 || rep.IdlePct > 100 {
		t.Errorf("report %+v", rep)
	}
	if _, err := sampleCPU(1 << 30); err == nil {
		t.Error("sampleCPU of a process that does not exist: no error")
	}
}
