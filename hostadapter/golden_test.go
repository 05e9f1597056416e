package hostadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/wardenhq/warden/acs"
	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/hostadapter"
	"github.com/wardenhq/warden/server"
	"github.com/wardenhq/warden/sqlite"
)

var update = flag.Bool("update", false, "rewrite the golden files of the host adapters")

// decisions are the test setups. The first four are test policies
// (testdata/policies/<decision>.yaml), each making every step the adapters
// send get that decision from a policy; "default" and "default-deny" are
// a policy that matches nothing (testdata/policies/none.yaml), so only
// the default decision applies — allow, or deny with the config
// testdata/config/default-deny.yaml.
var decisions = []string{"allow", "deny", "ask", "modify", "default", "default-deny"}

// result is one golden answer: exactly what the hook writes and its exit.
type result struct {
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr,omitempty"`
	Exit   int    `json:"exit"`
}

// guardianFor opens an in-process warden with one test policy (no
// built-in pack) and its ACS Guardian, as `warden hook` does.
func guardianFor(t *testing.T, decision string) (*acs.Handler, *sqlite.Store) {
	t.Helper()
	store := newStore(t)
	gd := openGuardian(t, store, decision)
	h, err := acs.NewHandler(gd, acs.Options{Sessions: store, Approvals: gd.Approvals() != nil, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	return h, store
}

func newStore(t *testing.T) *sqlite.Store {
	t.Helper()
	store, err := sqlite.Open(t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

func openGuardian(t *testing.T, store *sqlite.Store, decision string) *guardian.Guardian {
	t.Helper()
	opts := guardian.Options{Store: store, NoBuiltin: true,
		Policies: []string{filepath.Join("testdata", "policies", decision+".yaml")}}
	switch decision {
	case "default":
		opts.Policies = []string{filepath.Join("testdata", "policies", "none.yaml")}
	case "default-deny":
		opts.Policies = []string{filepath.Join("testdata", "policies", "none.yaml")}
		opts.ConfigFile = filepath.Join("testdata", "config", "default-deny.yaml")
	}
	gd, err := guardian.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gd.Close(context.Background()) })
	return gd
}

func inProcess(h *acs.Handler) hostadapter.Checker {
	return &hostadapter.Client{T: hostadapter.HandlerFunc(func(ctx context.Context, b []byte) []byte { return h.Handle(ctx, b, "stdio") })}
}

// approvalRE matches the approval ids an ask names (random per run).
var approvalRE = regexp.MustCompile(`(warden approval |approvals approve )[0-9A-Za-z_-]+`)

func run(t *testing.T, host hostadapter.Host, d hostadapter.Checker, input []byte) result {
	t.Helper()
	o := hostadapter.Run(context.Background(), host, d, bytes.NewReader(input), hostadapter.Options{})
	return result{Stdout: approvalRE.ReplaceAllString(string(o.Stdout), "${1}<id>"), Stderr: approvalRE.ReplaceAllString(o.Stderr, "${1}<id>"), Exit: o.Exit}
}

// checkGolden compares got with the golden file (or writes it with
// -update).
func checkGolden(t *testing.T, path string, got map[string]result) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./hostadapter -update to write it)", err)
	}
	if !bytes.Equal(want, b) {
		t.Errorf("%s differs:\n--- got\n%s--- want\n%s", path, b, want)
	}
}

// TestGolden runs every hook event payload of every host
// (testdata/<host>/<event>.json) under each decision and compares what the
// hook writes, and its exit code, with testdata/<host>/<event>.golden.
func TestGolden(t *testing.T) {
	deciders := map[string]hostadapter.Checker{}
	for _, d := range decisions {
		h, _ := guardianFor(t, d)
		deciders[d] = inProcess(h)
	}
	for _, name := range sortedHosts() {
		host := hostadapter.Hosts[name]
		files, _ := filepath.Glob(filepath.Join("testdata", name, "*.json"))
		if len(files) == 0 {
			t.Fatalf("no payloads for %s", name)
		}
		for _, f := range files {
			ev := strings.TrimSuffix(filepath.Base(f), ".json")
			t.Run(name+"/"+ev, func(t *testing.T) {
				in, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				got := map[string]result{}
				for _, d := range decisions {
					got[d] = run(t, host, deciders[d], in)
				}
				checkGolden(t, strings.TrimSuffix(f, ".json")+".golden", got)
			})
		}
	}
}

// TestServerSameAnswers decides the same payloads through a running
// warden's POST /acs (an httptest server with warden's mux) and in-process:
// one core, the same answers.
func TestServerSameAnswers(t *testing.T) {
	for _, d := range decisions {
		h, _ := guardianFor(t, d)
		srv := httptest.NewServer(server.New(server.Options{Routes: []server.Route{acs.Route(h)}}))
		defer srv.Close()
		remote := &hostadapter.Client{T: &hostadapter.HTTP{URL: srv.URL + "/acs"}}
		local := inProcess(h)
		for _, name := range sortedHosts() {
			files, _ := filepath.Glob(filepath.Join("testdata", name, "*.json"))
			for _, f := range files {
				in, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				// A session of its own per path, so each negotiates.
				rin := bytes.ReplaceAll(in, []byte(`"6f1c2d3e-`), []byte(`"7f1c2d3e-`))
				want := run(t, hostadapter.Hosts[name], local, in)
				got := run(t, hostadapter.Hosts[name], remote, rin)
				if got != want {
					t.Errorf("%s %s %s: over HTTP %+v, in-process %+v", d, name, filepath.Base(f), got, want)
				}
			}
		}
	}
}

func sortedHosts() []string {
	var names []string
	for n := range hostadapter.Hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
