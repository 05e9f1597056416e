// Command floor is the benchmark floor: the least an AOS Guardian endpoint can do.
//
// It decodes the JSON-RPC body with encoding/json into a map[string]any and answers
// allow, nothing else: no policy, no trace. Comparing warden with it measures what
// warden's policy evaluation and durable trace cost on top of plain HTTP + JSON.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/wardenhq/warden/jsonrpc"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8788", "listen address (port 0 picks a free port)")
	flag.Parse()
	if os.Getenv("GOGC") == "" {
		// The same GC target as `warden serve`, so the comparison is fair.
		debug.SetGCPercent(400)
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	srv := &http.Server{Handler: http.HandlerFunc(handle), ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()

	fmt.Printf("floor listening on http://%s\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

type result struct {
	Decision string `json:"decision"`
	Message  string `json:"message"`
}

func handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var req map[string]any
	if err := json.NewDecoder(io.LimitReader(r.Body, 4<<20)).Decode(&req); err != nil {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(jsonrpc.Response{
		JSONRPC: jsonrpc.Version,
		ID:      req["id"],
		Result:  result{Decision: "allow", Message: "allowed"},
	})
}
