package catalog

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/sharedtest"

	"github.com/wardenhq/warden"
)

// shared is sharedtest.Path: rel inside WARDEN_SHARED, or a skip.
func shared(t testing.TB, rel ...string) string { t.Helper(); return sharedtest.Path(t, rel...) }

// readSeed returns the lines of the seed file matching prefix ("003_").
func readSeed(t *testing.T, prefix string) []string {
	t.Helper()
	seedDir := shared(t, "seeds")
	paths, _ := filepath.Glob(filepath.Join(seedDir, prefix+"*.txt"))
	if len(paths) != 1 {
		t.Fatalf("seed %s*.txt not found in %s (WARDEN_SHARED; found %d files)", prefix, seedDir, len(paths))
	}
	f, err := os.Open(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// aghRow matches a row of seed 003's event tables: Event | Sync | Payload |
// Patch | Fires when (with or without the leading pipe).
var aghRowRE = regexp.MustCompile(`^\|?\s*([a-z][a-z0-9_.]*)\s*\|\s*(yes|async only)\s*\|\s*(\w+)\s*\|\s*(\w+)\s*\|\s*(.*?)\s*\|?\s*$`)

func TestSeedAGHEvents(t *testing.T) {
	type row struct{ name, sync, payload, patch, fires string }
	var rows []row
	for _, l := range readSeed(t, "003_") {
		if m := aghRowRE.FindStringSubmatch(l); m != nil {
			rows = append(rows, row{m[1], m[2], m[3], m[4], m[5]})
		}
	}
	if len(rows) != 52 {
		t.Fatalf("parsed %d AGH event rows from seed 003, want 52", len(rows))
	}
	var got []Event
	for _, e := range All() {
		if e.Source == SourceAGH {
			got = append(got, e)
		}
	}
	if len(got) != len(rows) {
		t.Fatalf("catalog has %d AGH events, seed 003 has %d", len(got), len(rows))
	}
	for i, r := range rows {
		e := got[i]
		if e.Name != r.name {
			t.Errorf("AGH event %d: catalog %q, seed %q (order follows the seed)", i, e.Name, r.name)
			continue
		}
		if e.SyncLabel() != r.sync || e.Payload != r.payload || e.Patch != r.patch || e.Fires != r.fires {
			t.Errorf("%s: catalog {%s, %s, %s, %q}, seed {%s, %s, %s, %q}", r.name,
				e.SyncLabel(), e.Payload, e.Patch, e.Fires, r.sync, r.payload, r.patch, r.fires)
		}
		if want, _, _ := strings.Cut(r.name, "."); e.Family != want {
			t.Errorf("%s: family %q, want %q", r.name, e.Family, want)
		}
		if l, ok := Lookup(r.name); !ok || l.Name != r.name {
			t.Errorf("Lookup(%q) = %v, %v", r.name, l.Name, ok)
		}
	}
}

func TestSeedStandardAgentsHooks(t *testing.T) {
	lines := readSeed(t, "002_")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == "HookTrigger PointPurpose" {
			start = i + 1
			break
		}
	}
	if start < 0 {
		t.Fatal(`seed 002: "1.1 Available Hooks" table header "HookTrigger PointPurpose" not found`)
	}
	lead := regexp.MustCompile(`^[a-z_]+`)
	var names, rest []string
	for _, l := range lines[start:] {
		if strings.TrimSpace(l) == "" {
			if len(names) > 0 {
				break
			}
			continue
		}
		n := lead.FindString(l)
		names, rest = append(names, n), append(rest, l[len(n):])
	}
	if len(names) != 9 {
		t.Fatalf("parsed %d hooks from seed 002's table, want 9: %v", len(names), names)
	}
	var got []Event
	for _, e := range All() {
		if e.Source == SourceStandardAgents {
			got = append(got, e)
		}
	}
	if len(got) != len(names) {
		t.Fatalf("catalog has %d Standard Agents hooks, seed has %d", len(got), len(names))
	}
	for i, n := range names {
		e := got[i]
		if e.Name != n {
			t.Errorf("hook %d: catalog %q, seed %q", i, e.Name, n)
			continue
		}
		// The table row is "<name><trigger><purpose>" without separators.
		if trig, purp, _ := strings.Cut(strings.TrimSuffix(e.Fires, "."), ": "); trig+purp != rest[i] {
			t.Errorf("%s: fires %q, seed row %q", n, e.Fires, rest[i])
		}
		if !e.Sync {
			t.Errorf("%s: Standard Agents hooks are awaited, want sync", n)
		}
		for _, f := range StandardAgentsStateFields {
			if !contains(e.PayloadFields, f) {
				t.Errorf("%s: payload fields %v lack %s", n, e.PayloadFields, f)
			}
		}
	}
}

func TestSeedAOSMethods(t *testing.T) {
	// Every method the AOS seeds show (outside wrapped MCP messages) is in
	// the catalog, and the catalog holds exactly aos's methods minus ping.
	methodRE := regexp.MustCompile(`"method":\s*"([^"]+)"`)
	seen := map[string]bool{}
	for _, prefix := range []string{"000_", "004_"} {
		for _, l := range readSeed(t, prefix) {
			for _, m := range methodRE.FindAllStringSubmatch(l, -1) {
				if m[1] != "tools/call" { // the MCP message inside protocols/MCP
					seen[m[1]] = true
				}
			}
		}
	}
	for m := range seen {
		if _, ok := Lookup(m); !ok {
			t.Errorf("seed method %q missing from the catalog", m)
		}
	}
	type key struct{ name, dir string }
	want := map[key]bool{}
	for _, m := range StepMethods {
		want[key{m, ""}] = true
	}
	for _, m := range append([]string{MethodMCP, MethodA2A}, A2AHookMethods...) {
		want[key{m, warden.Outbound}] = true
		want[key{m, warden.Inbound}] = true
	}
	got := map[key]bool{}
	for _, e := range All() {
		if e.Source != SourceAOS {
			continue
		}
		k := key{e.Name, e.Direction}
		if got[k] {
			t.Errorf("duplicate AOS entry %v", k)
		}
		got[k] = true
		if !want[k] {
			t.Errorf("unexpected AOS entry %v", k)
		}
		if !e.Sync {
			t.Errorf("%v: AOS methods are synchronous", k)
		}
	}
	for k := range want {
		if !got[k] {
			t.Errorf("AOS entry %v missing", k)
		}
	}
	if len(got) != 25 {
		t.Errorf("%d AOS entries, want 7 steps + 2×2 protocols + 7×2 A2A hooks = 25", len(got))
	}
	if _, ok := Lookup(MethodPing); ok {
		t.Error("ping is not an event and must not be in the catalog")
	}
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}
