package policy

import (
	"strings"

	"github.com/wardenhq/warden/labels"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/common/types"

	"github.com/wardenhq/warden/detect"
)

// maxInputSize bounds the size (bytes of a string, entries of a list or map)
// of every value a policy expression reads from an event. Events reach the
// engine from request bodies of at most 4 MiB (jsonrpc.DefaultMaxBody; not
// imported, the engine does not depend on a transport; `warden eval` reads
// its input with the same limit), and no string, list or map decoded
// from such a body, nor Event.Text (its strings joined by one byte each, where
// the JSON spends at least two quotes), can be larger than the body.
//
// The bound is what lets compile prove an expression's worst-case cost
// statically. Modify ops are evaluated over a payload that earlier ops may
// have grown past it (redaction markers, set values), so their programs are
// always cost-tracked (see compileTracked).
const maxInputSize = 4 << 20

// costEstimator gives the CEL cost estimator the size bounds of the event
// variables (maxInputSize) and the costs of the functions of Env that CEL
// does not know. It returns nil for everything else, so CEL's own estimates
// of the standard and extension functions apply.
type costEstimator struct{}

var _ cost.Estimator = costEstimator{}

// EstimateSize bounds every string, bytes, list or map reached from an Env
// variable (the variable itself or anything under it, at any depth) by
// maxInputSize. Values computed by the expression are sized by CEL.
func (costEstimator) EstimateSize(n cost.AstNode) *cost.SizeEstimate {
	path := n.Path()
	if len(path) == 0 || !isEnvVar(path[0]) {
		return nil
	}
	if len(path) == 2 && path[0] == "session" && path[1] == "labels" {
		// A session holds at most MaxSessionLabels labels of at most
		// MaxLabelLen bytes (labels.Store).
		elem := cost.RangedSizeEstimate(0, labels.MaxLen)
		sz := cost.RangedSizeEstimate(0, labels.MaxPerSession)
		sz.Elem = &elem
		return &sz
	}
	if t := n.Type(); t != nil {
		switch t.Kind() {
		case types.StringKind, types.BytesKind, types.ListKind, types.MapKind,
			types.DynKind, types.AnyKind:
		default:
			return nil // scalars: CEL's fixed sizes
		}
	}
	sz := cost.RangedSizeEstimate(0, maxInputSize)
	return &sz
}

// kindListSize is the size of a pii or secrets result: a list of distinct
// kind names of its group. It is built fresh for each estimate, which CEL may
// keep and refine.
func kindListSize(kinds []string) *cost.SizeEstimate {
	var longest uint64
	for _, k := range kinds {
		longest = max(longest, uint64(len(k)))
	}
	elem := cost.RangedSizeEstimate(0, longest)
	sz := cost.RangedSizeEstimate(0, uint64(len(kinds)))
	sz.Elem = &elem
	return &sz
}

// EstimateCallCost estimates the custom functions of Env. The detectors pii,
// secrets and injection scan their argument: one traversal of the string
// (CEL's cost of contains or startsWith), plus the call. glob is linear in its
// subject times the longest literal run after a '*' of the pattern (the span
// the matcher can re-scan when it backtracks), or times the whole pattern when
// the pattern is not a literal. (At run time the cost tracker charges these
// calls 1 each, so the estimate only errs on the side of tracking.)
func (costEstimator) EstimateCallCost(_, overloadID string, _ *cost.AstNode, args []cost.AstNode) *cost.CallEstimate {
	if isFlowOverload(overloadID) && len(args) == 1 {
		// A flow function reads at most maxFlowBytes of its argument
		// (flow.go): one scan of that, whatever the argument's size.
		est := &cost.CallEstimate{CostEstimate: scanCost(cost.RangedSizeEstimate(0, maxFlowBytes), 1)}
		switch overloadID {
		case "tool_name_dyn":
			sz := cost.RangedSizeEstimate(0, maxToolName)
			est.ResultSize = &sz
		case "destructive_command_dyn":
			sz := cost.RangedSizeEstimate(0, maxDestructiveDesc)
			est.ResultSize = &sz
		}
		return est
	}
	switch overloadID {
	case "pii_string", "secrets_string", "injection_string", "injection_parts_string":
		if len(args) != 1 {
			return nil
		}
		c := scanCost(argSize(args[0]), 1)
		var res *cost.SizeEstimate
		switch overloadID {
		case "pii_string":
			res = kindListSize(detect.PIIKinds)
		case "secrets_string":
			res = kindListSize(detect.SecretKinds)
		}
		return &cost.CallEstimate{CostEstimate: c, ResultSize: res}
	case "glob_string_string":
		if len(args) != 2 {
			return nil
		}
		pat, subj := argSize(args[0]), argSize(args[1])
		var rescan uint64
		if lit, ok := stringLiteral(args[0]); ok {
			rescan = globRescan(lit)
		} else {
			rescan = pat.Max
		}
		c := scanCost(subj, cost.SafeAdd(rescan, 1)).Add(scanCost(pat, 1))
		return &cost.CallEstimate{CostEstimate: c}
	}
	return nil
}

// scanCost is the cost of traversing a string of size sz times passes: one
// call plus StringTraversalCostFactor per byte and pass.
func scanCost(sz cost.SizeEstimate, passes uint64) cost.CostEstimate {
	bytes := cost.SafeMultiply(sz.Max, passes)
	per := cost.SafeMultiplyByFactor(bytes, cost.StringTraversalCostFactor)
	return cost.RangedCostEstimate(1, cost.SafeAdd(per, 1))
}

// argSize is the size estimate of a call argument: computed by CEL, bounded by
// the estimator, or unknown.
func argSize(n cost.AstNode) cost.SizeEstimate {
	return cost.EstimateSize(costEstimator{}, n)
}

// stringLiteral returns the value of a string constant argument.
func stringLiteral(n cost.AstNode) (string, bool) {
	e := n.Expr()
	if e == nil || e.Kind() != ast.LiteralKind {
		return "", false
	}
	s, ok := e.AsLiteral().(types.String)
	return string(s), ok
}

// globRescan is the longest run of literal characters after a '*' in pattern:
// how often Glob may look at one subject byte again when it backtracks.
func globRescan(pattern string) uint64 {
	i := strings.IndexByte(pattern, '*')
	if i < 0 {
		return 0 // no backtracking: one pass
	}
	var longest, run uint64
	for _, c := range []byte(pattern[i:]) {
		if c == '*' {
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	return longest
}

func isEnvVar(name string) bool {
	for _, v := range varNames {
		if v == name {
			return true
		}
	}
	return false
}

// boundedCost reports whether the worst-case cost of ast, estimated with
// costEstimator, is within DefaultCostLimit: then its program needs no
// run-time cost tracking.
func boundedCost(env *cel.Env, ast *cel.Ast) bool {
	est, err := env.EstimateCost(ast, costEstimator{})
	return err == nil && est.Max <= DefaultCostLimit
}
