package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/wardenhq/warden/guardian"
	"github.com/wardenhq/warden/mcpgate"
)

// mcpStopGrace is how long the MCP server gets between SIGTERM and SIGKILL.
const mcpStopGrace = 2 * time.Second

// cmdMCP is `warden mcp stdio [flags] -- CMD ARGS...` (docs/gateways.md): the
// agent's MCP client starts it in place of the server. stdout is the MCP
// channel, so everything warden has to say goes to stderr.
func cmdMCP(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "stdio" {
		return fail(stderr, "mcp: usage: warden mcp stdio [--config F] [--policy PATH]... [--data DIR] [--name N] -- CMD ARGS...")
	}
	fs := newFlags("mcp stdio", stderr)
	gf := addGuardianFlags(fs)
	data := fs.String("data", "./warden-data", "data directory (SQLite trace; several gateways may share it)")
	name := fs.String("name", "", "the server's name in the tool view (tool.server); default: the command's base name")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "Usage of warden mcp stdio [flags] -- CMD ARGS...:\n")
			fs.PrintDefaults()
			return exitOK
		}
		return exitError
	}
	argv := fs.Args()
	if len(argv) == 0 {
		return fail(stderr, "mcp stdio: the MCP server command is missing (warden mcp stdio [flags] -- CMD ARGS...)")
	}
	if *name == "" {
		*name = filepath.Base(argv[0])
	}

	opts := gf.options()
	cfg, err := opts.LoadConfig()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError
	}
	store, _, err := openServeStore(cfg.Store, *data, nil, false) // store: postgres://… when configured
	if err != nil {
		return fail(stderr, "%v", err)
	}
	defer store.Close()
	opts.Config, opts.ConfigFile, opts.Backend, opts.KeyDir = cfg, "", store, *data
	gd, err := guardian.Open(opts)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitError
	}
	defer func() {
		cctx, ccancel := context.WithTimeout(context.Background(), mcpStopGrace)
		defer ccancel()
		gd.Close(cctx)
	}()

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderr // the server's own diagnostics pass through
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Pipes of our own: exec's StdoutPipe would be closed by Wait while the
	// gateway still reads what a crashing server wrote last.
	srvIn, toServer, err := os.Pipe()
	if err != nil {
		return fail(stderr, "mcp stdio: %v", err)
	}
	fromServer, srvOut, err := os.Pipe()
	if err != nil {
		return fail(stderr, "mcp stdio: %v", err)
	}
	cmd.Stdin, cmd.Stdout = srvIn, srvOut
	err = cmd.Start()
	srvIn.Close()
	srvOut.Close()
	if err != nil {
		toServer.Close()
		fromServer.Close()
		return fail(stderr, "mcp stdio: starting %s: %v", argv[0], err)
	}
	defer fromServer.Close()
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()

	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "warden mcp: "+format+"\n", a...) }
	var pins *mcpgate.Pins // tool pinning, in the trace's store
	if bs := gd.AgBOMStore(); bs != nil {
		pins = &mcpgate.Pins{Store: bs, Logf: logf}
	}
	gw := mcpgate.NewStdio(gd, mcpgate.StdioOptions{Server: *name, MaxBatch: gd.Config().Limits.Batch, Logf: logf, Pins: pins})
	runErr := gw.Run(ctx, stdin, stdout, fromServer, toServer)

	// Stop the server: close its input, then SIGTERM its process group, then
	// SIGKILL (some servers ignore the end of stdin).
	_ = toServer.Close()
	stopProcess(cmd, exited)
	switch {
	case errors.Is(runErr, mcpgate.ErrServerExited):
		why := "exited"
		if waitErr != nil {
			why = waitErr.Error()
		}
		return fail(stderr, "mcp stdio: the MCP server %s stopped unexpectedly (%s)", *name, why)
	case runErr != nil && !errors.Is(runErr, context.Canceled):
		return fail(stderr, "mcp stdio: %v", runErr)
	}
	return exitOK
}

// stopProcess ends cmd's process group: SIGTERM, then SIGKILL after the grace.
func stopProcess(cmd *exec.Cmd, exited <-chan struct{}) {
	select {
	case <-exited:
		return
	case <-time.After(100 * time.Millisecond): // a server that exits on EOF gets the chance
	}
	pgid := -cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-exited:
		_ = syscall.Kill(pgid, syscall.SIGKILL) // leftovers of the group
		return
	case <-time.After(mcpStopGrace):
	}
	_ = syscall.Kill(pgid, syscall.SIGKILL)
	<-exited
}
