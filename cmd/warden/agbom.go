package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/wardenhq/warden/agbom"
	"github.com/wardenhq/warden/sqlite"
)

const agbomUsage = "agbom [--data DIR] [--agent ID [--format cyclonedx|spdx|acs]] [--tenant T]"

// cmdAgBOM prints an agent's AgBOM (docs/agbom.md) from the trace's store,
// or, without --agent, the agents that have one.
func cmdAgBOM(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("agbom", stderr)
	data := fs.String("data", "./warden-data", "data directory (SQLite trace)")
	agent := fs.String("agent", "", "the agent whose AgBOM to print; none: list the agents")
	format := fs.String("format", agbom.FormatCycloneDX, "cyclonedx (CycloneDX 1.6 JSON), spdx (SPDX 3.0.1 JSON-LD) or acs (the canonical components)")
	tenant := fs.String("tenant", "", "the agent's tenant (default: none); with no --agent, list only this tenant's agents")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return fail(stderr, "agbom: unexpected argument %q (usage: warden %s)", fs.Arg(0), agbomUsage)
	}
	tenantSet := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "tenant" {
			tenantSet = true
		}
	})
	store, err := sqlite.OpenReadOnly(*data)
	if err != nil {
		return fail(stderr, "opening the trace in %s: %v", *data, err)
	}
	defer store.Close()
	ctx, cancel := interrupted()
	defer cancel()
	if *agent == "" {
		as, err := store.AgBOMAgents(ctx, *tenant, !tenantSet, 0)
		if err != nil {
			return fail(stderr, "listing the agents: %v", err)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TENANT\tAGENT\tCOMPONENTS\tUPDATED")
		for _, a := range as {
			t := a.Tenant
			if t == "" {
				t = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", t, a.ID, a.Components, a.Updated.UTC().Format(time.RFC3339))
		}
		_ = tw.Flush()
		return exitOK
	}
	b, err := agbom.Render(ctx, store, *tenant, *agent, *format)
	switch {
	case errors.Is(err, agbom.ErrFormat):
		return fail(stderr, "--%v", err)
	case errors.Is(err, agbom.ErrNoAgBOM):
		return fail(stderr, "no AgBOM for agent %q in %s (warden agbom --data %s lists the agents)", *agent, *data, *data)
	case err != nil:
		return fail(stderr, "reading the AgBOM: %v", err)
	}
	_, _ = stdout.Write(b)
	return exitOK
}
