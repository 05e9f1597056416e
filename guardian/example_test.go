package guardian_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/guardian"
)

// A Go agent guards its own tool calls: before calling a tool it asks the
// Guardian, with the built-in pack plus a policy of its own, and only calls
// the tool on allow (or with the modified arguments on modify).
func Example() {
	dir, _ := os.MkdirTemp("", "warden-example")
	defer os.RemoveAll(dir)
	policy := filepath.Join(dir, "email.yaml")
	_ = os.WriteFile(policy, []byte(`id: no-external-email
version: "1"
events: ["tool.pre_call"]
when: 'tool.name == "send_email" && !string(tool.args.to).endsWith("@company.io")'
decision: deny
reason: external email is not allowed
`), 0o600)

	g, err := guardian.Open(guardian.Options{Policies: []string{policy}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close(context.Background())

	for _, to := range []string{"ann@company.io", "bob@evil.example"} {
		out, err := g.Decide(context.Background(), &warden.Event{Name: "tool.pre_call", Payload: map[string]any{
			"session_id": "s1", "tool_name": "send_email", "tool_input": map[string]any{"to": to},
		}})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %s %s\n", to, out.Verdict, out.Reason)
	}
	// Output:
	// ann@company.io: allow no policy matched; default decision allow
	// bob@evil.example: deny external email is not allowed
}

// Dispatch answers a hook event as `warden hooks dispatch` does: a secret in
// a tool's input is denied by the built-in pack.
func ExampleGuardian_Dispatch() {
	g, err := guardian.Open(guardian.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close(context.Background())
	res, err := g.Dispatch(context.Background(), "tool.pre_call",
		[]byte(`{"session_id":"s1","tool_name":"http_post","tool_input":{"body":"aws_access_key_id=AKIAIOSFODNN7EXAMPLE"}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Decision)
	// Output:
	// deny
}
