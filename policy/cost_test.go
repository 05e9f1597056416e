package policy

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden"
)

func estimate(t *testing.T, src string) uint64 {
	t.Helper()
	env := Env()
	ast, iss := env.Compile(src)
	if iss != nil && iss.Err() != nil {
		t.Fatalf("%s: %v", src, iss.Err())
	}
	est, err := env.EstimateCost(ast, costEstimator{})
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return est.Max
}

// TestCostTracking proves both paths of compile: an expression with a static
// worst-case cost within DefaultCostLimit runs untracked, one without runs
// tracked and still stops at the limit.
func TestCostTracking(t *testing.T) {
	untracked := []string{
		`tool.name == "x"`,
		`tool.name == "rm" || tool.name == "delete_database"`,
		`"tool " + tool.name + " is not allowed"`,
		`size(secrets(text)) > 0`,
		`pii(text).exists(k, k in ["credit_card", "iban", "ssn"])`,
		`injection(text) >= 0.5`,
		`glob("internal-*", tool.server)`,
		`text.contains("rm -rf /")`,
		`has(tool.args.to) && !string(tool.args.to).endsWith("@company.io")`,
	}
	for _, src := range untracked {
		p, msgs := compile(src, nil)
		if msgs != nil {
			t.Fatalf("%s: %v", src, msgs)
		}
		if p.tracked {
			t.Errorf("%s: tracked (estimate %d), want untracked", src, estimate(t, src))
		}
	}

	tracked := []string{
		// Nested comprehensions over payload lists: quadratic in the body.
		`payload.items.exists(a, payload.items.exists(b, a == b))`,
		// Over the limit on a 4 MiB text: a map over a split, repeated.
		`text.split(" ").map(w, w + w).size() + text.split(",").map(w, w + w).size() > 0`,
		// A non-literal pattern can make glob quadratic.
		`glob(text, tool.name)`,
		// Unbounded: a range whose size is not known.
		`lists.range(int(turn)).size() > 0`,
	}
	for _, src := range tracked {
		p, msgs := compile(src, nil)
		if msgs != nil {
			t.Fatalf("%s: %v", src, msgs)
		}
		if !p.tracked {
			t.Errorf("%s: untracked (estimate %d), want tracked", src, estimate(t, src))
		}
	}

	// A tracked program still stops at the limit at run time.
	c, err := CompileCondition(`payload.items.map(a, payload.items.map(b, a + b)).size() > 0`)
	if err != nil {
		t.Fatal(err)
	}
	if !c.p.tracked {
		t.Fatal("nested map over payload: untracked")
	}
	items := make([]any, 2000)
	for i := range items {
		items[i] = int64(i)
	}
	_, err = c.Eval(context.Background(), &warden.Event{Payload: map[string]any{"items": items}})
	if err == nil || !strings.Contains(err.Error(), "cost limit exceeded") {
		t.Fatalf("err = %v, want cost limit exceeded", err)
	}

	// Modify op values see a payload that may outgrow maxInputSize: tracked.
	p, msgs := compileTracked(`tool.name`, nil)
	if msgs != nil || !p.tracked {
		t.Fatalf("compileTracked: %v, tracked %v", msgs, p != nil && p.tracked)
	}
}

// TestCostTrackingPacks reports which expressions of the built-in pack and the
// bench policies are cost-tracked, and checks the built-in pack's conditions
// are all proven within the limit (they run on every event).
func TestCostTrackingPacks(t *testing.T) {
	builtin, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	bench, err := Load(filepath.Join("..", "bench", "policies"))
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []struct {
		name string
		s    *Set
	}{{"builtin", builtin}, {"bench", bench}} {
		for _, p := range set.s.Policies() {
			for _, e := range []struct {
				what string
				prg  *program
			}{{"when", p.when}, {"reasonExpr", p.reasonExpr}} {
				if e.prg == nil {
					continue
				}
				state := "untracked"
				if e.prg.tracked {
					state = "tracked"
				}
				t.Logf("%s %s %s: %s (estimate %d)", set.name, p.ID, e.what, state, estimate(t, e.prg.src))
				if set.name == "builtin" && e.what == "when" && e.prg.tracked {
					t.Errorf("builtin %s when: tracked", p.ID)
				}
			}
		}
	}
}
