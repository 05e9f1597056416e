// Package policy is warden's built-in policy engine: YAML policies whose
// conditions are CEL expressions over a normalized event, combined with the Joch
// rule (any deny wins, modifies apply in order, allow is unanimous). It loads
// and compiles policy files once, evaluates them per event without building a
// variable map (see Activation), reloads them atomically, and ships a built-in
// pack that user policies add to (LoadSet).
package policy

import (
	"fmt"
	"sync"

	"github.com/wardenhq/warden/internal/glob"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"
)

// DefaultCostLimit bounds the runtime cost of one CEL evaluation (a condition,
// a reasonExpr, an op value). An expression over the limit fails with an
// evaluation error instead of hanging the decision.
const DefaultCostLimit = 1_000_000

// Variable names, exactly as policies see them.
const (
	varEvent = iota
	varSurface
	varDirection
	varPayload
	varAgent
	varSession
	varTurn
	varStep
	varUser
	varTool
	varMessage
	varText
	varReasoning
	varMCP
	varProvenance
	numVars
)

var varNames = [numVars]string{"event", "surface", "direction", "payload", "agent", "session",
	"turn", "step", "user", "tool", "message", "text", "reasoning", "mcp", "provenance"}

var (
	envOnce sync.Once
	envVal  *cel.Env
	envErr  error
)

// Env returns the CEL environment of policy and hook conditions: the variables
// event, surface, direction, payload, agent, session, turn, step, user, tool,
// message, text, reasoning, mcp and provenance; the functions pii, secrets,
// injection and glob; session.labels is the session's labels (a list of
// strings), provenance the ACS Provenance objects of the payload (a list of
// maps: field, provenance_id, origin, source_id, derived_from);
// the strings, lists, sets and math extensions and optional types. Programs built
// from it are evaluated with an Activation (NewActivation), which also supplies
// the detector functions.
func Env() *cel.Env {
	envOnce.Do(func() {
		envVal, envErr = newEnv()
		if envErr == nil { // the session flow functions (flow.go)
			envVal, envErr = envVal.Extend(flowEnvOptions()...)
		}
	})
	if envErr != nil {
		panic("policy: building the CEL environment: " + envErr.Error())
	}
	return envVal
}

func newEnv() (*cel.Env, error) {
	strMap := cel.MapType(cel.StringType, cel.StringType)
	dynMap := cel.MapType(cel.StringType, cel.DynType)
	strList := cel.ListType(cel.StringType)
	return cel.NewEnv(
		cel.Variable("event", cel.StringType),
		cel.Variable("surface", cel.StringType),
		cel.Variable("direction", cel.StringType),
		cel.Variable("payload", dynMap),
		cel.Variable("agent", strMap),
		cel.Variable("session", dynMap), // id (string), labels (list of strings)
		cel.Variable("turn", cel.StringType),
		cel.Variable("step", cel.StringType),
		cel.Variable("user", strMap),
		cel.Variable("tool", dynMap),
		cel.Variable("message", strMap),
		cel.Variable("text", cel.StringType),
		cel.Variable("reasoning", cel.StringType),
		cel.Variable("provenance", cel.ListType(dynMap)),
		// mcp.tool_changes: the changes of an MCP tools/list answer against
		// the server's pinned tools (warden.ToolChange), else empty.
		cel.Variable("mcp", dynMap),
		// Detectors are bound late, by the Activation, so that one decision runs
		// each detector once per distinct string however many policies ask.
		cel.Function("pii", cel.Overload("pii_string", []*cel.Type{cel.StringType}, strList,
			cel.LateFunctionBinding())),
		cel.Function("secrets", cel.Overload("secrets_string", []*cel.Type{cel.StringType}, strList,
			cel.LateFunctionBinding())),
		cel.Function("injection", cel.Overload("injection_string", []*cel.Type{cel.StringType},
			cel.DoubleType, cel.LateFunctionBinding())),
		// injection_parts(s): {"score", "learned", "deterministic": double,
		// "signals": list of "learned", "phrase", "hidden"}.
		cel.Function("injection_parts", cel.Overload("injection_parts_string", []*cel.Type{cel.StringType},
			dynMap, cel.LateFunctionBinding())),
		cel.Function("glob", cel.Overload("glob_string_string",
			[]*cel.Type{cel.StringType, cel.StringType}, cel.BoolType,
			cel.BinaryBinding(func(p, s ref.Val) ref.Val {
				ps, ok1 := p.(types.String)
				ss, ok2 := s.(types.String)
				if !ok1 || !ok2 {
					return types.NewErr("glob: want (string, string)")
				}
				return types.Bool(Glob(string(ps), string(ss)))
			}))),
		ext.Strings(),
		ext.Lists(),
		ext.Sets(),
		ext.Math(),
		cel.OptionalTypes(),
	)
}

// Glob reports whether s matches pattern ('*' any run, '?' one character);
// it is warden.Glob, the event-name matching every package shares.
func Glob(pattern, s string) bool { return glob.Match(pattern, s) }

// isGlob reports whether an events entry is a pattern rather than a name.
func isGlob(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '*' || s[i] == '?' {
			return true
		}
	}
	return false
}

// celIssues turns CEL compile issues into one-line messages with their column.
func celIssues(iss *cel.Issues) []string {
	var out []string
	for _, e := range iss.Errors() {
		msg := e.Message
		if loc := e.Location; loc != nil && loc.Line() > 0 {
			msg = fmt.Sprintf("%s (at %d:%d)", msg, loc.Line(), loc.Column()+1)
		}
		out = append(out, msg)
	}
	if len(out) == 0 && iss.Err() != nil {
		out = append(out, iss.Err().Error())
	}
	return out
}
