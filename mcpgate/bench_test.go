package mcpgate

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/pipeline"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/mcpgate/testdata/mcpserver"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/sqlite"
	"github.com/wardenhq/warden/storetest"
)

// benchDecider decides with the built-in pack and records to trace: "mem",
// "sqlite", or "sqlite+log" (SQLite behind the trace log, Options.Log).
func benchDecider(b *testing.B, trace string) *pipeline.Pipeline {
	set, err := policy.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	var st audit.Store = storetest.NewMem()
	if trace == "sqlite" || trace == "sqlite+log" {
		s, err := sqlite.Open(b.TempDir(), sqlite.Options{Log: trace == "sqlite+log"})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		st = s
	}
	eng := policy.NewEngine(set, policy.Options{})
	return pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow, warden.Step{Name: "policy", Kind: "policy", Handler: eng}), Views: catalog.Views, Store: st})
}

// stdioSession connects a go-sdk client to the test server over pipes,
// through the stdio gateway when dec is not nil.
func stdioSession(b *testing.B, dec *pipeline.Pipeline) *mcp.ClientSession {
	ctx, cancel := context.WithCancel(context.Background())
	c2gR, c2gW := io.Pipe()
	g2cR, g2cW := io.Pipe()
	srvR, srvW := c2gR, g2cW // direct: the server reads the client's pipe
	if dec != nil {
		g2sR, g2sW := io.Pipe()
		s2gR, s2gW := io.Pipe()
		srvR, srvW = g2sR, s2gW
		gw := NewStdio(dec, StdioOptions{Server: "bench"})
		go func() { _ = gw.Run(ctx, c2gR, g2cW, s2gR, g2sW) }()
		b.Cleanup(func() { g2sR.Close(); g2sW.Close(); s2gR.Close(); s2gW.Close() })
	}
	srv, _ := mcpserver.New()
	ss, err := srv.Connect(ctx, &mcp.IOTransport{Reader: srvR, Writer: srvW}, nil)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: g2cR, Writer: c2gW}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cs.Close()
		ss.Close()
		cancel()
		c2gR.Close()
		c2gW.Close()
		g2cR.Close()
		g2cW.Close()
	})
	return cs
}

// httpSession connects a go-sdk client to the test server over Streamable
// HTTP, through the gateway when dec is not nil.
func httpSession(b *testing.B, dec *pipeline.Pipeline) *mcp.ClientSession {
	srv, _ := mcpserver.New()
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	b.Cleanup(up.Close)
	url := up.URL
	if dec != nil {
		front := httptest.NewServer(NewHTTP(dec, map[string]warden.Upstream{"bench": {URL: up.URL}}, HTTPOptions{}))
		b.Cleanup(front.Close)
		url = front.URL + "/mcp/bench"
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

type benchRow struct {
	name     string
	p50, p99 time.Duration
}

// BenchmarkGateway measures one small tools/call (echo) directly and through
// each gateway, and prints p50/p99 and the latency the gateway adds.
func BenchmarkGateway(b *testing.B) {
	setups := []struct {
		name    string
		session func(*testing.B) *mcp.ClientSession
	}{
		{"stdio/direct", func(b *testing.B) *mcp.ClientSession { return stdioSession(b, nil) }},
		{"stdio/gateway+memtrace", func(b *testing.B) *mcp.ClientSession { return stdioSession(b, benchDecider(b, "mem")) }},
		{"stdio/gateway+sqlite", func(b *testing.B) *mcp.ClientSession { return stdioSession(b, benchDecider(b, "sqlite")) }},
		{"http/direct", func(b *testing.B) *mcp.ClientSession { return httpSession(b, nil) }},
		{"http/gateway+memtrace", func(b *testing.B) *mcp.ClientSession { return httpSession(b, benchDecider(b, "mem")) }},
		{"http/gateway+sqlite", func(b *testing.B) *mcp.ClientSession { return httpSession(b, benchDecider(b, "sqlite")) }},
		{"http/gateway+sqlite+log", func(b *testing.B) *mcp.ClientSession { return httpSession(b, benchDecider(b, "sqlite+log")) }},
	}
	var rows []benchRow
	for _, s := range setups {
		var last benchRow
		b.Run(s.name, func(b *testing.B) {
			cs := s.session(b)
			ctx := context.Background()
			params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
			for range 50 { // warm up
				if _, err := cs.CallTool(ctx, params); err != nil {
					b.Fatal(err)
				}
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				if _, err := cs.CallTool(ctx, params); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(lat)
			last = benchRow{s.name, lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]}
			b.ReportMetric(float64(last.p50.Microseconds()), "p50-µs")
			b.ReportMetric(float64(last.p99.Microseconds()), "p99-µs")
		})
		rows = append(rows, last)
	}
	direct := map[string]benchRow{}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "setup\tp50\tp99\tadded p50\tadded p99\t")
	for _, r := range rows {
		kind := r.name[:len(r.name)-len(r.name[indexSlash(r.name):])]
		if d, ok := direct[kind]; ok {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", r.name, us(r.p50), us(r.p99), us(r.p50-d.p50), us(r.p99-d.p99))
		} else {
			direct[kind] = r
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t\n", r.name, us(r.p50), us(r.p99))
		}
	}
	tw.Flush()
}

func indexSlash(s string) int {
	for i := range s {
		if s[i] == '/' {
			return i
		}
	}
	return len(s)
}

func us(d time.Duration) string { return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond)) }
