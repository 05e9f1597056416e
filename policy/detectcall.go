package policy

import (
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"
)

// activationName is the name under which an Activation resolves to itself.
// It is not a CEL identifier, so no expression can name it; detectorCall
// uses it to reach the Activation's detector memo from the execution frame.
const activationName = "\x00warden.activation"

// detectorCalls replaces each planned call of a detector (pii, secrets,
// injection, injection_parts) by a detectorCall. A late-bound call, as CEL plans it, builds
// an argument slice and a closure on every evaluation (two allocations per
// call); detectorCall answers from the Activation directly.
func detectorCalls(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
	c, ok := i.(interpreter.InterpretableCall)
	if !ok || len(c.Args()) != 1 {
		return i, nil
	}
	k := -1
	switch c.Function() {
	case "pii":
		k = 0
	case "secrets":
		k = 1
	case "injection":
		k = 2
	case "injection_parts":
		k = 3
	}
	if k < 0 {
		return i, nil
	}
	return &detectorCall{InterpretableCall: c, arg: c.Args()[0], k: k}, nil
}

// detectorCall is the planned call of detector k over arg. It behaves as
// CEL's late-bound call does: an error argument is the result; an argument
// that is not a string is "no such overload"; the call is charged to the
// cost tracker like any unary call. Evaluated with an activation that is
// not an Activation, it falls back to the planned call.
type detectorCall struct {
	interpreter.InterpretableCall
	arg interpreter.InterpretableV2
	k   int
}

// Eval implements interpreter.Interpretable.
func (c *detectorCall) Eval(vars interpreter.Activation) ref.Val {
	return interpreter.EvalActivation(vars, c.Exec)
}

// Exec implements interpreter.InterpretableV2.
func (c *detectorCall) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	v, _ := frame.ResolveName(activationName)
	a, ok := v.(*Activation)
	if !ok {
		return c.InterpretableCall.Exec(frame)
	}
	arg := c.arg.Exec(frame)
	if types.IsError(arg) {
		return arg
	}
	if types.IsUnknown(arg) {
		return c.InterpretableCall.Exec(frame) // CEL's own handling (no Activation has unknowns)
	}
	var res ref.Val
	if s, ok := arg.(types.String); ok {
		res = a.detectString(c.k, string(s))
	} else {
		res = types.NewErrWithNodeID(c.ID(), "no such overload: %s", c.Function())
	}
	if costs := frame.CostTracker(); costs != nil {
		costs.EvalUnary(frame, c.ID(), c, arg, res)
	}
	return res
}
