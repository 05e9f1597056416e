package warden

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The reference: the views as encoding/json encoded them before the
// hand-written encoder (the struct shape ViewsJSON had). The hash chain
// covers these bytes, so the encoder must write exactly these.
type refViews struct {
	Agent      refAgent         `json:"agent"`
	User       refUser          `json:"user"`
	Session    refSession       `json:"session"`
	Turn       string           `json:"turn"`
	Step       string           `json:"step"`
	Tool       refTool          `json:"tool"`
	Message    refMessage       `json:"message"`
	Reasoning  string           `json:"reasoning"`
	Provenance []provenanceJSON `json:"provenance,omitempty"`
	MCP        *refMCP          `json:"mcp,omitempty"`
	Approved   []Cover          `json:"approved,omitempty"`
}

type refMCP struct {
	ToolChanges []ToolChange `json:"tool_changes"`
}

type refAgent struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Version  string `json:"version"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

type refUser struct {
	ID           string `json:"id"`
	Email        string `json:"email"`
	Name         string `json:"name"`
	Organization string `json:"organization"`
}

type refSession struct {
	ID     string   `json:"id"`
	Labels []string `json:"labels,omitempty"`
	Unread bool     `json:"labels_unread,omitempty"`
}

type refTool struct {
	Name   string         `json:"name"`
	ID     string         `json:"id"`
	Server string         `json:"server"`
	Args   map[string]any `json:"args"`
}

type refMessage struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// refViewsJSON is ViewsJSON as encoding/json wrote it.
func refViewsJSON(e *Event) []byte {
	args := e.Tool.Args
	if args == nil {
		args = map[string]any{}
	}
	var prov []provenanceJSON
	for _, p := range e.Provenance {
		prov = append(prov, provenanceJSON(p))
	}
	var mcp *refMCP
	if len(e.ToolChanges) > 0 {
		mcp = &refMCP{e.ToolChanges}
	}
	b, err := json.Marshal(refViews{
		Agent: refAgent(e.Agent), User: refUser(e.User), Session: refSession{e.SessionID, e.SessionLabels, e.LabelsUnread},
		Turn: e.TurnID, Step: e.StepID,
		Tool:    refTool{Name: e.Tool.Name, ID: e.Tool.ID, Server: e.Tool.Server, Args: args},
		Message: refMessage(e.Message), Reasoning: e.Reasoning, Provenance: prov, MCP: mcp,
		Approved: e.Envelope.Approved,
	})
	if err != nil {
		return nil
	}
	return b
}

// gen draws random values for the property tests.
type gen struct{ r *rand.Rand }

// pieces are the parts random strings are made of: everything encoding/json
// escapes or treats specially, and ordinary text.
var pieces = []string{
	"", "a", "Z", "0", " ", "plain text", `"`, `\`, "/", "<", ">", "&", "<script>", "'",
	"\b", "\f", "\n", "\r", "\t", "\x00", "\x01", "\x1f", "\x7f", "\u0080", "é", "日本",
	"\u2027", "\u2028", "\u2029", "\u202a", "\U0001F600", "\uFFFD", "\xff", "\xc3", "\xe2\x80",
	"\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf", "\\u0041", "rm -rf /",
}

func (g gen) str() string {
	var b strings.Builder
	for n := g.r.IntN(5); n > 0; n-- {
		if g.r.IntN(4) == 0 {
			b.WriteByte(byte(g.r.IntN(256))) // any byte, valid UTF-8 or not
			continue
		}
		b.WriteString(pieces[g.r.IntN(len(pieces))])
	}
	return b.String()
}

func (g gen) strs() []string {
	switch g.r.IntN(4) {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	s := make([]string, 1+g.r.IntN(3))
	for i := range s {
		s[i] = g.str()
	}
	return s
}

// float draws numbers around the exponent-form cutoffs (1e-6, 1e21), as
// well as arbitrary bit patterns, zeros and, rarely, NaN and infinities
// (which encoding/json refuses).
func (g gen) float() float64 {
	switch g.r.IntN(12) {
	case 0:
		return math.Float64frombits(g.r.Uint64()) // may be NaN or ±Inf
	case 1:
		return []float64{0, math.Copysign(0, -1), 1e-6, 1e21, 9.999999999999999e-7, 1e20, 999999999999999900000, 1e-7, 5e-324, math.MaxFloat64, -1e-7, 1e100, 123456789}[g.r.IntN(13)]
	case 2:
		return float64(g.r.Int64N(1<<53)) - 1<<52
	case 3:
		return math.Inf(1 - 2*g.r.IntN(2))
	}
	return (g.r.Float64()*2 - 1) * math.Pow(10, float64(g.r.IntN(60)-30))
}

// val draws a value as a JSON decoder produces it, and now and then one of
// a type the encoder hands to encoding/json.
func (g gen) val(depth int) any {
	n := 9
	if depth > 3 {
		n = 4 // scalars only
	}
	switch g.r.IntN(n + 1) {
	case 0:
		return nil
	case 1:
		return g.r.IntN(2) == 0
	case 2, 3:
		return g.str()
	case 4:
		return g.float()
	case 5:
		return g.obj(depth + 1)
	case 6:
		if g.r.IntN(5) == 0 {
			return []any(nil)
		}
		a := make([]any, g.r.IntN(4))
		for i := range a {
			a[i] = g.val(depth + 1)
		}
		return a
	case 7:
		return g.strs()
	case 8:
		// handed to encoding/json
		return []any{g.r.IntN(1000) - 500, json.Number("12.5e3"), map[string]int{g.str(): 1}, struct{ A string }{g.str()}, []byte(g.str())}[g.r.IntN(5)]
	}
	return map[string]any(nil)
}

func (g gen) obj(depth int) map[string]any {
	m := make(map[string]any)
	for n := g.r.IntN(16); n > 0; n-- {
		m[g.str()] = g.val(depth)
	}
	return m
}

func (g gen) event() *Event {
	e := &Event{
		Agent:     Agent{g.str(), g.str(), g.str(), g.str(), g.str()},
		User:      User{g.str(), g.str(), g.str(), g.str()},
		SessionID: g.str(), TurnID: g.str(), StepID: g.str(),
		Tool:    Tool{Name: g.str(), ID: g.str(), Server: g.str()},
		Message: Message{g.str(), g.str()}, Reasoning: g.str(),
		SessionLabels: g.strs(), LabelsUnread: g.r.IntN(2) == 0,
	}
	if g.r.IntN(4) > 0 {
		e.Tool.Args = g.obj(0)
	}
	for n := g.r.IntN(3) * g.r.IntN(2); n > 0; n-- {
		e.Provenance = append(e.Provenance, Provenance{g.str(), g.str(), g.str(), g.str(), g.strs()})
	}
	for n := g.r.IntN(3) * g.r.IntN(2); n > 0; n-- {
		tc := ToolChange{Change: g.str(), Server: g.str(), Name: g.str()}
		if g.r.IntN(2) == 0 {
			tc.New = &ToolDef{Name: g.str(), Description: g.str()}
		}
		e.ToolChanges = append(e.ToolChanges, tc)
	}
	for n := g.r.IntN(3) * g.r.IntN(2); n > 0; n-- {
		e.Envelope.Approved = append(e.Envelope.Approved, Cover{g.str(), g.str()})
	}
	return e
}

// TestViewsJSONMatchesEncodingJSON checks ViewsJSON against encoding/json
// on random events: the same bytes, or both failing (a NaN in the tool
// arguments).
func TestViewsJSONMatchesEncodingJSON(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(1, 2))}
	failed := 0
	for i := range 20000 {
		e := g.event()
		want, got := refViewsJSON(e), e.ViewsJSON()
		if want == nil {
			failed++
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("event %d:\n got %s\nwant %s", i, got, want)
		}
	}
	if failed == 0 || failed > 10000 {
		t.Fatalf("%d of 20000 events failed to encode: the generator should make a few fail, not most", failed)
	}
}

// TestAppendResultsMatchesEncodingJSON checks AppendResults against
// encoding/json on random results, patches (valid, spaced, escaped and
// invalid) included.
func TestAppendResultsMatchesEncodingJSON(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(3, 4))}
	patches := []string{"", `[{"op":"replace","path":"/a","value":"<b>&\u2028"}]`, "{ \"a\" : [ 1 , 2 ] }\n", `{"a":`, `"x"`, "null"}
	for i := range 20000 {
		var rs []Result
		if g.r.IntN(8) > 0 {
			rs = make([]Result, g.r.IntN(4))
		}
		for j := range rs {
			rs[j] = Result{
				Guardian: g.str(), PolicyID: g.str(), PolicyVersion: g.str(), Decision: g.str(), Mode: g.str(),
				Reason: g.str(), LatencyUS: g.r.Int64() >> g.r.IntN(64) * int64(1-2*g.r.IntN(2)), Error: g.str(), Kind: g.str(),
				Patch: json.RawMessage(patches[g.r.IntN(len(patches))]), Refused: g.str(), PolicyRevision: g.str(), Labels: g.strs(),
			}
			if rs[j].Patch != nil && len(rs[j].Patch) == 0 && g.r.IntN(2) == 0 {
				rs[j].Patch = nil
			}
		}
		want, werr := json.Marshal(rs)
		got, gerr := AppendResults([]byte("prefix"), rs)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("results %d: error %v, encoding/json's %v", i, gerr, werr)
		}
		if werr == nil && !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("results %d:\n got %s\nwant prefix%s", i, got, want)
		}
	}
}

// TestAppendJSONValue checks single values against encoding/json, the
// edge cases named (the float cutoffs, escapes, every byte) and random ones.
func TestAppendJSONValue(t *testing.T) {
	cases := []any{
		nil, true, false, "", `"\`, "<>&", "\u2028\u2029", "\xff\xfe", "a\x00b\x1f\x7f",
		0.0, math.Copysign(0, -1), 1.0, -1.5, 1e-6, 9.99999e-7, 1e-7, 1e20, 1e21, 1.5e300, 5e-324, 123456789012345678.0,
		map[string]any{}, map[string]any(nil), []any{}, []any(nil), []string(nil), []string{},
		map[string]any{"b": 1.0, "a": []any{"x", nil}, "A": map[string]any{"z": true, "é": "<"}},
		7, json.Number("3.25"), struct{ X []int }{[]int{1}},
	}
	for b := range 256 { // every byte alone, as a string and as a key
		cases = append(cases, string([]byte{byte(b)}), map[string]any{string([]byte{byte(b)}): string([]byte{'x', byte(b)})})
	}
	for r := range rune(0x3000) { // every rune of the first planes
		cases = append(cases, string(r))
	}
	g := gen{rand.New(rand.NewPCG(5, 6))}
	for range 20000 {
		cases = append(cases, g.val(0))
	}
	for i, v := range cases {
		want, werr := json.Marshal(v)
		got, gerr := AppendJSONValue(nil, v)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("case %d (%#v): error %v, encoding/json's %v", i, v, gerr, werr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("case %d (%#v):\n got %s\nwant %s", i, v, got, want)
		}
	}
}

// TestAppendJSONValueDeep checks that a value deeper than maxAppendDepth is
// still encoded as encoding/json encodes it, and that a cycle is an error
// (as encoding/json reports it) rather than a stack overflow.
func TestAppendJSONValueDeep(t *testing.T) {
	deep := any("leaf")
	for i := range 3 * maxAppendDepth {
		if i%2 == 0 {
			deep = []any{deep}
		} else {
			deep = map[string]any{"k": deep}
		}
	}
	want, err := json.Marshal(deep)
	if err != nil {
		t.Fatal(err)
	}
	got, err := AppendJSONValue(nil, deep)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("deep value: %v, equal %v", err, bytes.Equal(got, want))
	}
	cyc := map[string]any{}
	cyc["self"] = cyc
	if _, err := AppendJSONValue(nil, cyc); err == nil {
		t.Fatal("a cyclic map encoded without an error")
	}
}

// FuzzAppendJSONString checks arbitrary bytes against encoding/json, as a
// string and as an object key.
func FuzzAppendJSONString(f *testing.F) {
	for _, p := range pieces {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(map[string]string{s: s})
		got := append(AppendJSONString([]byte("{"), s), ':')
		got = append(AppendJSONString(got, s), '}')
		if !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %s\nwant %s", s, got, want)
		}
		if !utf8.Valid(got) {
			t.Fatalf("%q: encoded to invalid UTF-8 %q", s, got)
		}
	})
}

// FuzzAppendJSONFloat checks arbitrary float64 bit patterns against
// encoding/json.
func FuzzAppendJSONFloat(f *testing.F) {
	for _, v := range []float64{0, 1e-6, 1e-7, 1e21, 1e20, -2.5, 5e-324} {
		f.Add(math.Float64bits(v))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		v := math.Float64frombits(bits)
		want, werr := json.Marshal(v)
		got, gerr := appendJSONFloat(nil, v)
		if (werr != nil) != (gerr != nil) || !bytes.Equal(got, want) && werr == nil {
			t.Fatalf("%v: %s (%v), encoding/json %s (%v)", v, got, gerr, want, werr)
		}
	})
}

// benchEvent is a tool call's event after the views: the request of
// bench/requests/tool_call.json as the catalog's views show it.
func benchEvent() *Event {
	return &Event{
		Name: "steps/toolCallRequest", Surface: SurfaceAOS,
		Agent:     Agent{ID: "1c88ab7d-395f-449a-af51-6028f9e842ea", Name: "Personal assistant", Version: "9889", Provider: "OpenAI"},
		User:      User{ID: "u-42", Email: "ada@example.com", Name: "Ada"},
		SessionID: "8c7f0f5e-3a6e-4d0c-9a43-2b8e6f0c1d11", TurnID: "turn-3", StepID: "step-7",
		Tool: Tool{Name: "search_calendar", ID: "c264f381-10cf-4403-bd11-383014c0fcc6", Args: map[string]any{
			"query": "team sync about the Q3 roadmap", "from": "2025-01-27", "to": "2025-01-31", "max_results": 10.0,
		}},
		Reasoning: "The user asked when the next roadmap sync is; search this week.",
	}
}

// BenchmarkViewsJSON is the views of a record (NewRecord's Views).
func BenchmarkViewsJSON(b *testing.B) {
	e := benchEvent()
	b.ReportAllocs()
	for b.Loop() {
		if e.ViewsJSON() == nil {
			b.Fatal("no views")
		}
	}
}

// TestNewRecordJSONFields checks the JSON fields NewRecord builds (the
// input when the event has no Raw, the modified output, the views) against
// encoding/json on random payloads, and that a payload encoding/json
// refuses (a NaN) leaves the field nil as json.Marshal's error did.
func TestNewRecordJSONFields(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(7, 8))}
	for i := range 5000 {
		e := g.event()
		e.Payload = g.obj(0)
		if g.r.IntN(8) == 0 {
			e.Payload = nil
		}
		out := &Outcome{Verdict: Modify, Payload: g.obj(0)}
		if g.r.IntN(4) == 0 {
			out.Verdict = Allow
		}
		r := NewRecord(e, out, time.Unix(0, 0))
		wantIn, err := json.Marshal(e.Payload)
		if err != nil {
			wantIn = nil
		}
		var wantOut []byte
		if out.Verdict == Modify {
			if wantOut, err = json.Marshal(out.Payload); err != nil {
				wantOut = nil
			}
		}
		if !bytes.Equal(r.Input, wantIn) || !bytes.Equal(r.Output, wantOut) || !bytes.Equal(r.Views, refViewsJSON(e)) {
			t.Fatalf("record %d:\ninput  %s\nwant   %s\noutput %s\nwant   %s\nviews  %s\nwant   %s", i, r.Input, wantIn, r.Output, wantOut, r.Views, refViewsJSON(e))
		}
	}
	nan := map[string]any{"x": math.NaN()}
	if r := NewRecord(&Event{Payload: nan}, &Outcome{Verdict: Modify, Payload: nan}, time.Unix(0, 0)); r.Input != nil || r.Output != nil {
		t.Fatalf("a NaN payload encoded: input %q, output %q", r.Input, r.Output)
	}
}

// BenchmarkMarshalPayload is NewRecord's encoding of a payload without Raw
// (the SDK and hooks surfaces): the tool call of benchEvent as a payload.
func BenchmarkMarshalPayload(b *testing.B) {
	p := map[string]any{"toolCallRequest": map[string]any{"executionId": "69dbf4c3-be33-4694-a9f0-8d3a824c5d5b", "toolId": "search_calendar",
		"inputs": []any{map[string]any{"name": "query", "value": "team sync about the Q3 roadmap"}, map[string]any{"name": "max_results", "value": 10.0}}},
		"reasoning": "The user asked when the next roadmap sync is; search this week.", "context": map[string]any{"session": map[string]any{"id": "s-1"}}}
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("marshalJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if marshalJSON(p) == nil {
				b.Fatal("no bytes")
			}
		}
	})
}
