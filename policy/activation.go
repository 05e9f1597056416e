package policy

import (
	"math/bits"
	"sync"

	"cel.dev/cel-go/common/functions"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/detect"
)

// Activation exposes one event to CEL programs of Env. Variables are built
// lazily, the first time a program asks for them, and cached until Release, so
// one Activation serves every policy evaluated for an event: a condition that
// reads only `event` and `tool` never pays for `text`, `payload` or `user`.
// It also supplies the detector functions, memoizing their results per string.
// An Activation is not safe for concurrent use.
type Activation struct {
	ev      *warden.Event
	payload map[string]any // overrides ev.Payload while modify ops run
	have    uint32
	vals    [numVars]ref.Val
	memo    []detectMemo
	fns     [4]functions.LateBoundOp
	// recs back the record variables (agent, session, user, tool, message):
	// built in place, so a pooled Activation allocates none of them.
	recs    [numRecs]recordMap
	recHave uint8 // bit k: recs[k] is in use
}

// The recordMap variables, indexes of Activation.recs.
const (
	recAgent = iota
	recSession
	recUser
	recTool
	recMessage
	numRecs
)

type detectMemo struct {
	s            string
	done         uint8 // bit 0 pii, 1 secrets, 2 injection (and its parts)
	pii, secrets ref.Val
	injection    ref.Val
	parts        detect.InjectionResult
	partsVal     ref.Val // injection_parts's map, built when asked
}

var (
	_ interpreter.Activation         = (*Activation)(nil)
	_ interpreter.FunctionActivation = (*Activation)(nil)
)

var activationPool = sync.Pool{New: func() any {
	a := &Activation{}
	a.fns = [4]functions.LateBoundOp{
		func(_ string, args ...ref.Val) ref.Val { return a.detect(0, args) },
		func(_ string, args ...ref.Val) ref.Val { return a.detect(1, args) },
		func(_ string, args ...ref.Val) ref.Val { return a.detect(2, args) },
		func(_ string, args ...ref.Val) ref.Val { return a.detect(3, args) },
	}
	return a
}}

// NewActivation returns a pooled Activation over ev; call Release when the
// evaluations for ev are done.
func NewActivation(ev *warden.Event) *Activation {
	a := activationPool.Get().(*Activation)
	a.ev = ev
	return a
}

// Release clears a and returns it to the pool; a must not be used afterwards.
func (a *Activation) Release() {
	// Only what was built is cleared (most decisions read a few variables):
	// clearing pointers costs a write barrier each while the GC runs.
	for h := a.have; h != 0; h &= h - 1 {
		a.vals[bits.TrailingZeros32(h)] = nil
	}
	for h := a.recHave; h != 0; h &= h - 1 {
		a.recs[bits.TrailingZeros8(h)] = recordMap{}
	}
	a.ev, a.payload, a.have, a.recHave = nil, nil, 0, 0
	clear(a.memo)
	a.memo = a.memo[:0]
	activationPool.Put(a)
}

// setPayload makes `payload` resolve to p (the payload under modification).
func (a *Activation) setPayload(p map[string]any) {
	a.payload = p
	a.have &^= 1 << varPayload
	a.vals[varPayload] = nil
}

// Parent implements interpreter.Activation; there is none.
func (a *Activation) Parent() interpreter.Activation { return nil }

// ResolveName implements interpreter.Activation, building the variable on
// first use.
func (a *Activation) ResolveName(name string) (any, bool) {
	var i int
	switch name {
	case activationName:
		return a, true
	case "event":
		i = varEvent
	case "surface":
		i = varSurface
	case "direction":
		i = varDirection
	case "payload":
		i = varPayload
	case "agent":
		i = varAgent
	case "session":
		i = varSession
	case "turn":
		i = varTurn
	case "step":
		i = varStep
	case "user":
		i = varUser
	case "tool":
		i = varTool
	case "message":
		i = varMessage
	case "text":
		i = varText
	case "reasoning":
		i = varReasoning
	case "mcp":
		i = varMCP
	case "provenance":
		i = varProvenance
	default:
		return nil, false
	}
	if a.have&(1<<i) == 0 {
		a.vals[i] = a.build(i)
		a.have |= 1 << i
	}
	return a.vals[i], true
}

var emptyMap = map[string]any{}

func (a *Activation) build(i int) ref.Val {
	ev := a.ev
	switch i {
	case varEvent:
		return types.String(ev.Name)
	case varSurface:
		return types.String(ev.Surface)
	case varDirection:
		return types.String(ev.Direction)
	case varPayload:
		p := a.payload
		if p == nil {
			p = ev.Payload
		}
		if p == nil {
			p = emptyMap
		}
		return types.NewStringInterfaceMap(types.DefaultTypeAdapter, p)
	case varAgent:
		g := &ev.Agent
		return a.rec(recAgent, recordMap{keys: agentKeys, strs: [5]string{g.ID, g.Name, g.Version, g.Provider, g.Model}})
	case varSession:
		return a.rec(recSession, recordMap{keys: sessionKeys, strs: [5]string{ev.SessionID}, labels: ev.SessionLabels})
	case varTurn:
		return types.String(ev.TurnID)
	case varStep:
		return types.String(ev.StepID)
	case varUser:
		u := &ev.User
		return a.rec(recUser, recordMap{keys: userKeys, strs: [5]string{u.ID, u.Email, u.Name, u.Organization}})
	case varTool:
		args := ev.Tool.Args
		if args == nil {
			args = emptyMap
		}
		return a.rec(recTool, recordMap{keys: toolKeys, strs: [5]string{ev.Tool.Name, ev.Tool.ID, ev.Tool.Server}, args: args})
	case varMessage:
		return a.rec(recMessage, recordMap{keys: messageKeys, strs: [5]string{ev.Message.Role, ev.Message.Text}})
	case varText:
		return types.String(ev.Text())
	case varReasoning:
		return types.String(ev.Reasoning)
	case varProvenance:
		return provenanceList(ev.Provenance)
	case varMCP:
		return types.NewStringInterfaceMap(types.DefaultTypeAdapter, mcpVar(ev.ToolChanges))
	}
	return types.NewErr("unknown variable")
}

// rec stores m in the Activation's slot k and returns it as a CEL value.
func (a *Activation) rec(k int, m recordMap) ref.Val {
	a.recs[k] = m
	a.recHave |= 1 << k
	return &a.recs[k]
}

// ResolveFunction implements interpreter.FunctionActivation: the detector
// functions pii, secrets, injection and injection_parts.
func (a *Activation) ResolveFunction(name string) (functions.LateBoundOp, bool) {
	switch name {
	case "pii":
		return a.fns[0], true
	case "secrets":
		return a.fns[1], true
	case "injection":
		return a.fns[2], true
	case "injection_parts":
		return a.fns[3], true
	}
	return nil, false
}

// detect runs detector k (0 pii, 1 secrets, 2 injection, 3 injection_parts)
// over args[0], once per distinct string per Activation.
func (a *Activation) detect(k int, args []ref.Val) ref.Val {
	if len(args) != 1 {
		return types.NewErr("detector: want one argument")
	}
	sv, ok := args[0].(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(args[0])
	}
	return a.detectString(k, string(sv))
}

// detectString runs detector k over s, once per distinct string per
// Activation.
func (a *Activation) detectString(k int, s string) ref.Val {
	var m *detectMemo
	for j := range a.memo {
		if a.memo[j].s == s {
			m = &a.memo[j]
			break
		}
	}
	if m == nil {
		a.memo = append(a.memo, detectMemo{s: s})
		m = &a.memo[len(a.memo)-1]
	}
	bit := uint8(1) << min(k, 2) // injection and its parts: one scan
	if m.done&bit == 0 {
		m.done |= bit
		switch k {
		case 0:
			m.pii = kindList(detect.PII(s))
		case 1:
			kinds := detect.Secrets(s)
			if a.isText(s) && (len(kinds) == 0 || kinds[0] != detect.FieldKind) && a.secretField() {
				kinds = append([]string{detect.FieldKind}, kinds...) // "api_key" sorts first
			}
			m.secrets = kindList(kinds)
		default:
			m.parts = detect.InjectionParts(s)
			m.injection = types.Double(m.parts.Score)
		}
	}
	switch k {
	case 0:
		return m.pii
	case 1:
		return m.secrets
	case 3:
		if m.partsVal == nil {
			m.partsVal = partsMap(m.parts)
		}
		return m.partsVal
	}
	return m.injection
}

// isText reports whether s is the event's text view (the variable text,
// already built: a detector's argument that is not it was never equal to
// it unless text was read).
func (a *Activation) isText(s string) bool {
	return s != "" && a.have&(1<<varText) != 0 && s == a.ev.Text()
}

// secretField reports whether the strings the event's text view is made of
// (the payload but its context) hold a secret by its key: secrets(text)
// finds {"api_key": "…"} and an AOS input named password as it finds
// api_key=… in a text (detect.Field).
func (a *Activation) secretField() bool {
	p := a.ev.Payload
	for k, v := range p {
		if k == contextKey {
			continue
		}
		if s, ok := v.(string); ok {
			if _, ok := detect.Field(k, s); ok {
				return true
			}
		} else if detect.HasSecretField(v) {
			return true
		}
	}
	if s, ok := p["value"].(string); ok {
		if name, ok := detect.PairKey(p); ok {
			_, ok = detect.Field(name, s)
			return ok
		}
	}
	return false
}

// noKinds is the detectors' answer when they find nothing: one shared
// immutable empty list.
var noKinds = types.NewStringList(types.DefaultTypeAdapter, []string{})

// partsMap is injection_parts's result: the combined score, the learned
// model's, the deterministic signals', and the names of the signals found
// ("learned" when the model alone reaches 0.5, "phrase", "hidden").
func partsMap(r detect.InjectionResult) ref.Val {
	signals := make([]string, 0, 3)
	if r.Learned >= detect.InjectionThreshold {
		signals = append(signals, "learned")
	}
	if r.Phrase {
		signals = append(signals, "phrase")
	}
	if r.Hidden {
		signals = append(signals, "hidden")
	}
	return types.NewStringInterfaceMap(types.DefaultTypeAdapter, map[string]any{
		"score":         r.Score,
		"learned":       r.Learned,
		"deterministic": r.Signals,
		"signals":       signals,
	})
}

func kindList(kinds []string) ref.Val {
	if len(kinds) == 0 {
		return noKinds
	}
	return types.NewStringList(types.DefaultTypeAdapter, kinds)
}
