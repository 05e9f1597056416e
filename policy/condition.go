package policy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	celast "cel.dev/cel-go/common/ast"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"

	"github.com/wardenhq/warden"
)

// program is one compiled CEL expression of Env.
type program struct {
	src string
	prg cel.Program
	// tracked: the program counts its cost at run time and stops at
	// DefaultCostLimit. Untracked programs have a static worst-case cost
	// estimate within the limit (see boundedCost).
	tracked bool
	// labels: the expression may read session.labels (see readsLabels).
	labels bool
	// direction: the expression reads the direction variable (see
	// readsIdent).
	direction bool
}

// compile parses, checks and plans src once. want is the required output type
// (nil: any); dyn is accepted and checked at run time. The returned messages
// are one line each, CEL's own wording with the position in src.
//
// No program runs past DefaultCostLimit: one whose worst-case cost, estimated
// at compile time over inputs of at most maxInputSize, is within the limit is
// planned without run-time cost tracking (which otherwise dominates a cheap
// evaluation); any other is tracked and fails when it reaches the limit.
func compile(src string, want *cel.Type) (*program, []string) {
	return compileWith(src, want, false)
}

// compileTracked is compile for expressions whose inputs are not bounded by
// maxInputSize (modify op values, which see the payload under modification):
// the program is always cost-tracked.
func compileTracked(src string, want *cel.Type) (*program, []string) {
	return compileWith(src, want, true)
}

func compileWith(src string, want *cel.Type, track bool) (*program, []string) {
	env := Env()
	ast, iss := env.Compile(src)
	if iss != nil && iss.Err() != nil {
		return nil, celIssues(iss)
	}
	if want != nil {
		out := ast.OutputType()
		if !out.IsExactType(want) && !out.IsExactType(cel.DynType) {
			return nil, []string{fmt.Sprintf("expression must be %s, not %s", want, out)}
		}
	}
	// OptOptimize only folds constants and prepares regexes at plan time; no
	// per-evaluation option (state tracking, exhaustive evaluation) is on.
	// The detector calls are planned as detectorCall (detectcall.go).
	opts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize), cel.CustomDecoratorV2(detectorCalls)}
	track = track || !boundedCost(env, ast)
	if track {
		opts = append(opts, cel.CostLimit(DefaultCostLimit))
	}
	prg, err := env.Program(ast, opts...)
	if err != nil {
		return nil, []string{err.Error()}
	}
	return &program{src: src, prg: prg, tracked: track, labels: readsLabels(ast), direction: readsIdent(ast, "direction")}, nil
}

// readsIdent reports whether the checked ast reads the variable name (a
// comprehension's local variable of that name counts too: the safe side).
func readsIdent(ast *cel.Ast, name string) bool {
	a := ast.NativeRep()
	refs := a.ReferenceMap()
	for _, id := range celast.MatchDescendants(celast.NavigateAST(a), celast.KindMatcher(celast.IdentKind)) {
		if r, ok := refs[id.ID()]; ok && r.Name == name {
			return true
		}
	}
	return false
}

// readsLabels reports whether the checked ast may read session.labels:
// whether it uses the session variable other than as session.id (the
// whole map, an index, has(), session.labels itself). A comprehension's
// local variable named session counts too (the checker's reference map
// names it like the variable): the safe side.
func readsLabels(ast *cel.Ast) bool {
	a := ast.NativeRep()
	refs := a.ReferenceMap()
	for _, id := range celast.MatchDescendants(celast.NavigateAST(a), celast.KindMatcher(celast.IdentKind)) {
		if r, ok := refs[id.ID()]; !ok || r.Name != "session" {
			continue
		}
		if p, ok := id.Parent(); ok && p.Kind() == celast.SelectKind {
			if sel := p.AsSelect(); !sel.IsTestOnly() && sel.FieldName() == "id" {
				continue
			}
		}
		return true
	}
	return false
}

// eval runs p over act. A CEL error (including the cost limit) is returned
// as an error, never as a value.
func (p *program) eval(act *Activation) (v ref.Val, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
		}
	}()
	v, _, err = p.prg.Eval(act)
	if err != nil {
		return nil, errors.New(oneLine(err.Error()))
	}
	return v, nil
}

// evalBool runs p and requires a bool.
func (p *program) evalBool(act *Activation) (bool, error) {
	v, err := p.eval(act)
	if err != nil {
		return false, err
	}
	b, ok := v.(types.Bool)
	if !ok {
		return false, fmt.Errorf("condition yielded %s, not bool", v.Type().TypeName())
	}
	return bool(b), nil
}

// evalString runs p and requires a string.
func (p *program) evalString(act *Activation) (string, error) {
	v, err := p.eval(act)
	if err != nil {
		return "", err
	}
	s, ok := v.(types.String)
	if !ok {
		return "", fmt.Errorf("reasonExpr yielded %s, not string", v.Type().TypeName())
	}
	return string(s), nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Condition is a compiled CEL bool expression over an event, with the policy
// variables and functions (Env). Hook declarations use it for their `when`.
type Condition struct {
	p *program
}

// CompileCondition compiles a CEL condition once; it must yield a bool (or a
// dyn value that is a bool at run time). An empty source is always true.
func CompileCondition(src string) (*Condition, error) {
	if strings.TrimSpace(src) == "" {
		return &Condition{}, nil
	}
	p, msgs := compile(src, cel.BoolType)
	if msgs != nil {
		return nil, errors.New(strings.Join(msgs, "; "))
	}
	return &Condition{p: p}, nil
}

// String returns the condition's source.
func (c *Condition) String() string {
	if c.p == nil {
		return ""
	}
	return c.p.src
}

// Eval evaluates the condition for ev. Errors (a missing map key, the cost
// limit, ctx already done) are returned; the caller applies its failure policy.
func (c *Condition) Eval(ctx context.Context, ev *warden.Event) (bool, error) {
	if c == nil || c.p == nil {
		return true, nil
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	act := NewActivation(ev)
	defer act.Release()
	return c.p.evalBool(act)
}
