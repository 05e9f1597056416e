package hostadapter_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wardenhq/warden/hostadapter"
	"github.com/wardenhq/warden/internal/sharedtest"
)

// examplePayloads reads the hook payloads of a shared
// adapters/<host>/tests/example_payloads.md: the first JSON block under
// each "## <Event>" heading (or "## <Event> (<tool>)") whose name is an
// event; the response-shape sections are left out.
func examplePayloads(t *testing.T, md string) map[string][]byte {
	t.Helper()
	heading := regexp.MustCompile("(?m)^## ([A-Za-z]+)(?: \\(([^)]*)\\))?\\s*$")
	out := map[string][]byte{}
	locs := heading.FindAllStringSubmatchIndex(md, -1)
	for i, l := range locs {
		name := md[l[2]:l[3]]
		end := len(md)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		section := md[l[1]:end]
		start := strings.Index(section, "```json\n")
		if start < 0 {
			continue
		}
		body := section[start+len("```json\n"):]
		stop := strings.Index(body, "```")
		if stop < 0 {
			continue
		}
		if !strings.Contains(body[:stop], `"hook_event_name"`) {
			continue
		}
		out[name] = []byte(body[:stop])
	}
	return out
}

// TestSharedExamples runs the hosts' documented example payloads
// (shared/acs/adapters/<host>/tests/example_payloads.md, read in place)
// under each decision and compares the answers with
// testdata/<host>/shared/<event>.golden.
func TestSharedExamples(t *testing.T) {
	deciders := map[string]hostadapter.Checker{}
	for _, d := range decisions {
		h, _ := guardianFor(t, d)
		deciders[d] = inProcess(h)
	}
	for _, name := range []string{"claude-code", "cursor"} {
		b, err := os.ReadFile(sharedtest.Path(t, "acs", "adapters", name, "tests", "example_payloads.md"))
		if err != nil {
			t.Fatal(err)
		}
		ex := examplePayloads(t, string(b))
		if len(ex) < 4 {
			t.Fatalf("%s: only %d example payloads found", name, len(ex))
		}
		for ev, in := range ex {
			t.Run(name+"/"+ev, func(t *testing.T) {
				got := map[string]result{}
				for _, d := range decisions {
					got[d] = run(t, hostadapter.Hosts[name], deciders[d], in)
				}
				checkGolden(t, filepath.Join("testdata", name, "shared", ev+".golden"), got)
			})
		}
	}
}
