package aos

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/payload"

	"github.com/wardenhq/warden"
)

var update = flag.Bool("update", false, "rewrite the golden files and the fuzz seed corpus")

// archive is a txtar-like file: a comment, then "-- name --" sections.
// (golang.org/x/tools/txtar is not a dependency of the module.)
type archive struct {
	comment string
	files   []section
}

type section struct {
	name string
	data string
}

func parseArchive(s string) archive {
	var a archive
	cur := &a.comment
	for _, line := range strings.SplitAfter(s, "\n") {
		t := strings.TrimRight(line, "\n")
		if strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") && len(t) > 6 {
			a.files = append(a.files, section{name: t[3 : len(t)-3]})
			cur = &a.files[len(a.files)-1].data
			continue
		}
		*cur += line
	}
	return a
}

func (a archive) format() []byte {
	var b bytes.Buffer
	b.WriteString(a.comment)
	for _, f := range a.files {
		b.WriteString("-- " + f.name + " --\n")
		b.WriteString(f.data)
		if !strings.HasSuffix(f.data, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func (a archive) get(name string) (string, bool) {
	for _, f := range a.files {
		if f.name == name {
			return f.data, true
		}
	}
	return "", false
}

func (a *archive) set(name, data string) {
	for i := range a.files {
		if a.files[i].name == name {
			a.files[i].data = data
			return
		}
	}
	a.files = append(a.files, section{name, data})
}

// goldenGuardian is the guardian.json section: a fixed decision; with
// "set", a modify that sets those top-level payload members.
type goldenGuardian struct {
	Decision      string         `json:"decision"`
	Reason        string         `json:"reason"`
	PolicyID      string         `json:"policyId"`
	PolicyVersion string         `json:"policyVersion"`
	ReasonCodes   []string       `json:"reasonCodes"`
	Set           map[string]any `json:"set"`
}

var traceIDRe = regexp.MustCompile(`"traceId":"[^"]*"`)

// normalizeVolatile replaces the fields that change from run to run.
func normalizeVolatile(b []byte) []byte {
	return traceIDRe.ReplaceAll(b, []byte(`"traceId":"<trace-id>"`))
}

// TestGolden replays the wire exchanges in testdata/golden/*.txtar: each has
// a guardian.json (the decision), a request (the HTTP body, possibly several
// lines = several requests to one handler, the last one's response kept)
// and the expected response. -update rewrites the responses.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/golden/*.txtar")
	if len(files) == 0 {
		t.Fatal("no golden files in testdata/golden")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			a := parseArchive(string(src))
			var g goldenGuardian
			if gs, ok := a.get("guardian.json"); ok {
				if err := json.Unmarshal([]byte(gs), &g); err != nil {
					t.Fatalf("guardian.json: %v", err)
				}
			}
			v := warden.Allow
			if g.Decision != "" {
				if v, err = warden.ParseVerdict(g.Decision); err != nil {
					t.Fatal(err)
				}
			}
			guard := warden.HandlerFunc(func(_ context.Context, ev *warden.Event) (warden.Decision, error) {
				d := warden.Decision{Verdict: v, Reason: g.Reason, PolicyID: g.PolicyID, PolicyVersion: g.PolicyVersion, ReasonCodes: g.ReasonCodes}
				if v == warden.Modify {
					p := payload.Clone(ev.Payload)
					for k, x := range g.Set {
						p[k] = x
					}
					d.Payload = p
				}
				return d, nil
			})
			h, _ := newTestHandler(guard)
			reqs, _ := a.get("request")
			var resp []byte
			for _, r := range strings.Split(strings.TrimRight(reqs, "\n"), "\n") {
				resp = h.Handle(context.Background(), []byte(r))
			}
			got := "(no response)\n"
			if resp != nil {
				got = string(normalizeVolatile(resp)) + "\n"
				if !json.Valid(resp) {
					t.Errorf("response is not valid JSON: %s", resp)
				}
			}
			if *update {
				a.set("response", got)
				if err := os.WriteFile(file, a.format(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, _ := a.get("response")
			if got != want {
				t.Errorf("response differs from %s (run with -update to accept):\n got %s\nwant %s", file, got, want)
			}
		})
	}
}
