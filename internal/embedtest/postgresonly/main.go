// Command postgresonly embeds the Guardian with the PostgreSQL backend
// alone: it decides one step, recorded in the database its first argument
// names (postgres://…), with the redaction key in the directory of its
// second (default ./warden-data), and prints the verdict. It links no
// SQLite (sqliteonly's main_test.go checks it).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/guardian"

	_ "github.com/wardenhq/warden/postgres" // the PostgreSQL backend
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: postgresonly postgres://… [DIR]")
		os.Exit(2)
	}
	dir := "./warden-data"
	if len(os.Args) > 2 {
		dir = os.Args[2]
	}
	cfg := config.Default()
	cfg.Store = os.Args[1]
	g, err := guardian.Open(guardian.Options{Config: cfg, Data: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx := context.Background()
	out, err := g.Decide(ctx, &warden.Event{Name: "tool.pre_call", Payload: map[string]any{
		"session_id": "s1", "tool_name": "read_file", "tool_input": map[string]any{"path": "README.md"},
	}})
	if cerr := g.Close(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(out.Verdict)
}
