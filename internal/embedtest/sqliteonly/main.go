// Command sqliteonly embeds the Guardian with the SQLite trace backend
// alone, as a Go agent guarding its own tool calls would: it decides one
// step, recorded in the SQLite trace in the directory it is given
// (default ./warden-data), and prints the verdict. It links no PostgreSQL
// driver (main_test.go checks it).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/guardian"

	_ "github.com/wardenhq/warden/sqlite" // the SQLite trace backend
)

func main() {
	dir := "./warden-data"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	verdict, err := run(context.Background(), dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(verdict)
}

// run opens a Guardian whose trace is the SQLite trace in dir, decides one
// tool call and returns its verdict.
func run(ctx context.Context, dir string) (warden.Verdict, error) {
	g, err := guardian.Open(guardian.Options{Data: dir})
	if err != nil {
		return warden.Abstain, err
	}
	out, err := g.Decide(ctx, &warden.Event{Name: "tool.pre_call", Payload: map[string]any{
		"session_id": "s1", "tool_name": "read_file", "tool_input": map[string]any{"path": "README.md"},
	}})
	if cerr := g.Close(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		return warden.Abstain, err
	}
	return out.Verdict, nil
}
