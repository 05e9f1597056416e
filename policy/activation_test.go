package policy

import (
	"testing"

	"github.com/wardenhq/warden"
)

// TestActivationReuse: a pooled Activation's record variables (agent,
// session, user, tool, message) and detector answers belong to the event it
// was made for, whichever event used it before.
func TestActivationReuse(t *testing.T) {
	prg, msgs := compile(`tool.name + "|" + string(tool.args.path) + "|" + agent.name + "|" + session.id + "|" +
		session.labels.join(",") + "|" + user.email + "|" + message.role + "|" + secrets(text).join(",")`, nil)
	if msgs != nil {
		t.Fatal(msgs)
	}
	a := toolCall("read_file", map[string]any{"path": "/a"})
	a.SessionLabels = []string{"x"}
	b := toolCall("write_file", map[string]any{"path": "AKIAIOSFODNN7EXAMPLE"})
	b.Agent.Name, b.SessionID, b.User.Email, b.Message.Role = "other", "s2", "bob@x.io", "agent"
	want := map[*warden.Event]string{
		a: "read_file|/a|helper|s1|x|alice@company.io||",
		b: "write_file|AKIAIOSFODNN7EXAMPLE|other|s2||bob@x.io|agent|aws_access_key",
	}
	for i := range 20 {
		ev := a
		if i%2 == 1 {
			ev = b
		}
		act := NewActivation(ev)
		v, err := prg.eval(act)
		act.Release()
		if err != nil {
			t.Fatal(err)
		}
		if got := v.Value(); got != want[ev] {
			t.Fatalf("round %d: %q, want %q", i, got, want[ev])
		}
	}
}
