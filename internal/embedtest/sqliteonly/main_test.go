package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/sqlite"
)

// TestLinks: a program that embeds the Guardian with SQLite links SQLite's
// driver and no PostgreSQL driver; the PostgreSQL-only program links no
// SQLite; warden itself links both.
func TestLinks(t *testing.T) {
	for _, tc := range []struct {
		pkg       string
		want, not []string
	}{
		{pkg: ".", want: []string{"modernc.org/sqlite"}, not: []string{"github.com/jackc/pgx"}},
		{pkg: "../postgresonly", want: []string{"github.com/jackc/pgx"}, not: []string{"modernc.org/sqlite"}},
		{pkg: "../../../cmd/warden", want: []string{"modernc.org/sqlite", "github.com/jackc/pgx"}},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", tc.pkg).CombinedOutput()
			if err != nil {
				t.Fatalf("go list -deps %s: %v\n%s", tc.pkg, err, out)
			}
			deps := strings.Fields(string(out))
			for _, w := range tc.want {
				if !hasPrefix(deps, w) {
					t.Errorf("%s does not link %s", tc.pkg, w)
				}
			}
			for _, n := range tc.not {
				for _, d := range deps {
					if strings.HasPrefix(d, n) {
						t.Errorf("%s links %s", tc.pkg, d)
					}
				}
			}
		})
	}
}

func hasPrefix(deps []string, prefix string) bool {
	for _, d := range deps {
		if strings.HasPrefix(d, prefix) {
			return true
		}
	}
	return false
}

// TestRun: the program decides a step and records it in the SQLite trace.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	v, err := run(context.Background(), dir)
	if err != nil || v != warden.Allow {
		t.Fatalf("run = %v, %v; want allow", v, err)
	}
	st, err := sqlite.OpenReadOnly(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, err := audit.Collect(context.Background(), st, audit.Query{}, 10)
	if err != nil || len(recs) != 1 || recs[0].Event != "tool.pre_call" {
		t.Fatalf("trace = %+v, %v; want the one step", recs, err)
	}
}
