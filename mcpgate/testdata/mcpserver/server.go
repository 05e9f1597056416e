// Package mcpserver is the MCP server the gateway tests run behind warden: a
// go-sdk server with one tool per scenario. It lives under testdata so it is
// never part of warden's build.
package mcpserver

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Seen counts the tool calls the server received, by tool name.
type Seen struct {
	mu sync.Mutex
	m  map[string]int
}

func (s *Seen) add(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]int{}
	}
	s.m[name]++
}

// Count returns how many calls of tool name the server received.
func (s *Seen) Count(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[name]
}

type textIn struct {
	Text string `json:"text,omitempty"`
}

type sizeIn struct {
	N int `json:"n"`
}

type slowIn struct {
	MS int `json:"ms"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// New returns the test server and its call counter.
func New() (*mcp.Server, *Seen) {
	seen := &Seen{}
	s := mcp.NewServer(&mcp.Implementation{Name: "testserver", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echoes text"},
		func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			seen.add("echo")
			return text("echo: " + in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "contact", Description: "returns a contact"},
		func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			seen.add("contact")
			return text("reach alice at alice@example.com"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "wire_money", Description: "moves money"},
		func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			seen.add("wire_money")
			return text("sent"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "secret_tool", Description: "hidden by policy"},
		func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			seen.add("secret_tool")
			return text("secret"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "returns n bytes"},
		func(ctx context.Context, req *mcp.CallToolRequest, in sizeIn) (*mcp.CallToolResult, any, error) {
			seen.add("big")
			return text(strings.Repeat("x", in.N)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "reports progress, then waits ms (or cancellation)"},
		func(ctx context.Context, req *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
			seen.add("slow")
			if tok := req.Params.GetProgressToken(); tok != nil {
				for i := 1; i <= 3; i++ {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3})
				}
			}
			select {
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
				return text("done"), nil, nil
			case <-ctx.Done():
				seen.add("slow:cancelled")
				return nil, nil, ctx.Err()
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sample", Description: "asks the client's model (sampling)"},
		func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			seen.add("sample")
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Text}}}})
			if err != nil {
				return nil, nil, fmt.Errorf("sampling: %w", err)
			}
			t, _ := res.Content.(*mcp.TextContent)
			if t == nil {
				return text("sampled: ?"), nil, nil
			}
			return text("sampled: " + t.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "roots", Description: "lists the client's roots"},
		func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			seen.add("roots")
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, nil, fmt.Errorf("roots: %w", err)
			}
			var names []string
			for _, r := range res.Roots {
				names = append(names, r.URI)
			}
			return text("roots: " + strings.Join(names, ",")), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "exits the process (stdio binary only)"},
		func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			seen.add("crash")
			if os.Getenv("MCPSERVER_CAN_CRASH") == "1" {
				fmt.Fprintln(os.Stderr, "mcpserver: crashing on request")
				os.Exit(3)
			}
			return nil, nil, fmt.Errorf("crash is only enabled in the binary")
		})
	return s, seen
}
