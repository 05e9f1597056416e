// Command mcpserver runs the test MCP server over stdio (for `warden mcp
// stdio -- mcpserver`); the crash tool exits the process.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wardenhq/warden/mcpgate/testdata/mcpserver"
)

func main() {
	os.Setenv("MCPSERVER_CAN_CRASH", "1")
	fmt.Fprintln(os.Stderr, "mcpserver: started")
	s, _ := mcpserver.New()
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcpserver:", err)
		os.Exit(1)
	}
}
