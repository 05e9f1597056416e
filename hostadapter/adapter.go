// Package hostadapter connects the hook systems of the coding agents people
// run on their own machines — Claude Code, OpenAI Codex, Cursor and Gemini
// CLI — to warden: it reads a host's hook JSON, maps the hook event to the
// ACS step its mapping names (shared/acs/adapters/<host>/mapping.md, and
// Gemini CLI's own hook reference), has the one decision core decide it
// through the ACS Guardian (in-process or POST /acs of a running warden),
// and answers in exactly the shape and with the exit code that host reads.
//
// Every host is one file (claudecode.go, codex.go, cursor.go, gemini.go)
// with a Host value: the event table and the decision table of
// docs/hosts.md. Install (install.go) merges warden's entries into the
// host's settings file.
package hostadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/wardenhq/warden/jsonstrict"
)

// MaxInput bounds the hook JSON read from stdin: 4 MiB, the ACS endpoint's
// own body limit (a tool result can be large).
const MaxInput = 4 << 20

// DefaultTimeout bounds one decision, the handshake included, when Options
// name none: 10s, well inside every host's own hook timeout (Claude Code
// and Codex 60s or more, Gemini CLI 60s, Cursor's per-hook timeout).
const DefaultTimeout = 10 * time.Second

// Decisions as the Guardian answers them (ACS dispositions); a deferral is
// answered to a host as an ask where it has one, else as a deny.
const (
	Allow  = "allow"
	Deny   = "deny"
	Ask    = "ask"
	Modify = "modify"
	Defer  = "defer"
)

// Kind says what a host event lets warden do.
type Kind uint8

// Kinds of host events.
const (
	// Unmapped events are not forwarded: nothing is decided or recorded,
	// and the host proceeds (its own permission flow applies).
	Unmapped Kind = iota
	// Observe events are decided and recorded, but the host does not act
	// on the answer (the step has happened, or the host cannot block it).
	Observe
	// Gate events are decided and the host applies the answer.
	Gate
)

// Step is one host hook event mapped to an ACS step.
type Step struct {
	Host      string         // the host's name, e.g. "claude-code"
	Event     string         // the host's hook event name, e.g. "PreToolUse"
	Kind      Kind           // what the answer can do
	Method    string         // the ACS method, e.g. "steps/toolCallRequest" ("" when Unmapped)
	Payload   map[string]any // the ACS payload
	SessionID string         // the host's session id, recorded as metadata.session_id
	TurnID    string         // the host's turn id, when it has one
	Metadata  map[string]any // further ACS metadata (cwd, platform, ...)
	Tool      string         // the tool's name, for tool steps
	Input     map[string]any // the tool's input as the host sent it (a modify is merged onto it)
}

// Answer is the Guardian's answer to one step.
type Answer struct {
	Decision   string         // allow, deny, ask, modify or defer
	Reason     string         // the Guardian's reasoning ("" when none)
	Payload    map[string]any // with modify: the ACS payload after the modifications
	ApprovalID string         // with ask or defer: the approval warden opened
	// Explicit is set when a policy (or another guardian of the chain)
	// decided the step. An allow that is not explicit — only the default
	// decision applied (no policy matched), or a modify that changed
	// nothing — is no opinion: the adapters answer it as the host's
	// silence, so the host's own permission flow applies (NoOpinion).
	Explicit bool
}

// NoOpinion reports whether a is an allow that no policy gave: the
// default decision (reason code default_decision), or a policy's modify
// that changed nothing. A host must not read it as an approval: Claude
// Code's and Cursor's allow would skip the user's own permission prompt.
func (a Answer) NoOpinion() bool { return a.Decision == Allow && !a.Explicit }

// ToolInput returns the tool input a modify asks for: the host's original
// input with every argument of the modified payload set on it (hosts
// replace the whole input, so the arguments the policies left alone must
// be sent too). ok is false when the modified payload has no usable
// arguments object.
func (a Answer) ToolInput(st *Step) (map[string]any, bool) {
	args, ok := a.Payload["arguments"].(map[string]any)
	if !ok {
		return nil, false
	}
	out := make(map[string]any, len(st.Input)+len(args))
	for k, v := range st.Input {
		out[k] = v
	}
	for k, w := range args {
		m, ok := w.(map[string]any)
		if !ok {
			return nil, false
		}
		v, has := m["value"]
		if !has {
			return nil, false
		}
		out[k] = v
	}
	return out, true
}

// ResultOutput returns the tool output a modify of a steps/toolCallResult
// asks for: the value of its single output. ok is false otherwise.
func (a Answer) ResultOutput() (any, bool) {
	outs, _ := a.Payload["outputs"].([]any)
	if len(outs) != 1 {
		return nil, false
	}
	o, _ := outs[0].(map[string]any)
	v, ok := o["value"]
	return v, ok
}

// resultValue is ResultOutput's value, nil when there is none.
func (a Answer) resultValue() any {
	v, _ := a.ResultOutput()
	return v
}

// Output is what the hook command writes and how it exits.
type Output struct {
	Stdout []byte // the host's answer (JSON), or nothing
	Stderr string // one line for a person or, with exit 2, for the model
	Exit   int
}

// Host is one agent host's hook protocol.
type Host interface {
	// Name is the host's name on the command line: claude-code, codex,
	// cursor, gemini.
	Name() string
	// Map turns a decoded hook payload into a Step; an error names the
	// missing or wrong field.
	Map(in map[string]any) (*Step, error)
	// Render writes the host's answer to a decided step.
	Render(st *Step, a Answer) Output
}

// Checker has a step checked by the ACS Guardian, in-process or over HTTP
// (see Client). An error means no decision was made.
type Checker interface {
	Check(ctx context.Context, st *Step) (Answer, error)
}

// Options configure Run.
type Options struct {
	// Timeout bounds the decision (DefaultTimeout when 0).
	Timeout time.Duration
	// FailOpen lets a gate event proceed when warden cannot decide it
	// (--fail-open); the default is to answer the host's deny.
	FailOpen bool
}

// ErrInput marks a hook payload that could not be read or mapped.
var ErrInput = errors.New("bad hook input")

// Run answers one hook invocation: it reads the host's JSON from r
// (bounded by MaxInput, strictly decoded), maps it, has d decide it and
// renders the host's answer. It never panics on bad input: whatever cannot
// be read or decided is answered fail-closed (Fail).
func Run(ctx context.Context, h Host, d Checker, r io.Reader, opts Options) Output {
	in, err := Decode(r)
	if err != nil {
		return Fail(h, nil, err.Error(), opts.FailOpen)
	}
	st, err := h.Map(in)
	if err != nil {
		ev, _ := in["hook_event_name"].(string)
		return Fail(h, &Step{Host: h.Name(), Event: ev, Kind: Gate}, fmt.Sprintf("%s hook input: %v", h.Name(), err), opts.FailOpen)
	}
	if st.Kind == Unmapped {
		return h.Render(st, Answer{Decision: Allow})
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	a, err := d.Check(dctx, st)
	if err != nil {
		return Fail(h, st, "warden could not decide: "+oneLine(err.Error()), opts.FailOpen)
	}
	return h.Render(st, a)
}

// Fail is the answer when warden cannot decide: for a gate event the
// host's own deny with the reason (failOpen: proceed, the reason on
// stderr); for an event warden only observes, proceed with the reason on
// stderr and exit 1 (every host shows it as a non-blocking hook error);
// when the event is not known (unreadable input), exit 2 with the reason
// on stderr, which every host reads as a block.
func Fail(h Host, st *Step, reason string, failOpen bool) Output {
	reason = oneLine(reason)
	switch {
	case failOpen:
		out := Output{Stderr: "warden: " + reason + " (--fail-open: proceeding)", Exit: 1}
		if st != nil && st.Event != "" {
			out.Stdout = h.Render(&Step{Host: st.Host, Event: st.Event, Kind: Unmapped}, Answer{Decision: Allow}).Stdout
		}
		return out
	case st == nil || st.Event == "":
		return Output{Stderr: "warden: " + reason, Exit: 2}
	case st.Kind == Observe:
		return Output{Stderr: "warden: " + reason, Exit: 1}
	}
	out := h.Render(st, Answer{Decision: Deny, Reason: reason})
	if out.Stderr == "" {
		out.Stderr = "warden: " + reason
	}
	return out
}

// Decode reads one hook payload: a JSON object of at most MaxInput bytes,
// with no duplicate keys and nothing after it. Numbers stay json.Number.
func Decode(r io.Reader) (map[string]any, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading stdin: %v", ErrInput, err)
	}
	if len(b) > MaxInput {
		return nil, fmt.Errorf("%w: the hook payload exceeds %d bytes", ErrInput, MaxInput)
	}
	return DecodeBytes(b)
}

// DecodeBytes is Decode of a payload already read.
func DecodeBytes(b []byte) (map[string]any, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("%w: no hook payload on stdin (the host writes its hook JSON there)", ErrInput)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: not valid JSON: %v", ErrInput, syntaxWhere(b, err))
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: more than one JSON value on stdin", ErrInput)
	}
	if err := jsonstrict.Check(b); err != nil { // duplicate keys, invalid UTF-8
		return nil, fmt.Errorf("%w: %v", ErrInput, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: the hook payload is %s, not a JSON object", ErrInput, jsonKind(v))
	}
	return m, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "not an object"
}

// oneLine keeps the first line of s, at most 400 bytes.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

// encode renders v as one line of JSON (a host reads stdout as one value).
func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte("{}\n")
	}
	return b.Bytes()
}

// Field readers for host payloads: a wrong type is an error naming the
// field; a missing optional field is "".

func reqString(in map[string]any, key string) (string, error) {
	v, ok := in[key]
	if !ok {
		return "", fmt.Errorf("%s: required", key)
	}
	s, ok := v.(string)
	if !ok || s == "" {
		return "", fmt.Errorf("%s: must be a non-empty string", key)
	}
	return s, nil
}

func optString(in map[string]any, key string) (string, error) {
	v, ok := in[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s: must be a string", key)
	}
	return s, nil
}

func reqObject(in map[string]any, key string) (map[string]any, error) {
	v, ok := in[key]
	if !ok {
		return nil, fmt.Errorf("%s: required", key)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: must be an object", key)
	}
	return m, nil
}

// eventNames lists a host's event table, sorted, for error messages.
func eventNames[T any](m map[string]T) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Hosts are the supported hosts by name.
var Hosts = map[string]Host{"claude-code": ClaudeCode, "codex": Codex, "cursor": Cursor, "gemini": Gemini}

// Lookup returns the host named name, or an error listing the hosts.
func Lookup(name string) (Host, error) {
	if h, ok := Hosts[name]; ok {
		return h, nil
	}
	return nil, fmt.Errorf("unknown host %q (want one of %s)", name, eventNames(Hosts))
}
