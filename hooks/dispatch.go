package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"

	"github.com/wardenhq/warden/approval"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/jsonstrict"
)

// ErrUnknownEvent is returned for an event name the catalog does not have.
var ErrUnknownEvent = errors.New("unknown hook event")

// MaxPayload bounds a dispatched payload.
const MaxPayload = 4 << 20

// Dispatcher runs the configured chain for one hook event (docs/hooks.md)
// through the decision core, which records it and starts its async hooks.
type Dispatcher struct {
	dec warden.Core
}

// NewDispatcher returns a dispatcher deciding with dec.
func NewDispatcher(dec warden.Core) *Dispatcher {
	return &Dispatcher{dec: dec}
}

// Result is what dispatch answers: the decision, the merged patch and the
// payload after it. For Standard Agents events the patch is the return
// value the seed defines (the list, the message, the result), or null for
// "unchanged".
type Result struct {
	Decision   string         `json:"decision"`
	DenyReason string         `json:"deny_reason,omitempty"`
	Patch      any            `json:"patch"`
	Payload    map[string]any `json:"payload"`
	TraceID    string         `json:"trace_id,omitempty"`
}

// Dispatch runs event with payload (a JSON object).
func (d *Dispatcher) Dispatch(ctx context.Context, event string, payload []byte) (Result, error) {
	e, ok := catalog.Lookup(event)
	if !ok {
		return Result{}, fmt.Errorf("%w %q (see `warden hooks events`)", ErrUnknownEvent, event)
	}
	p, err := DecodePayload(payload)
	if err != nil {
		return Result{}, fmt.Errorf("payload: %w", err)
	}
	if err := catalog.CheckPayload(event, p); err != nil {
		return Result{}, err
	}
	ev := &warden.Event{Name: event, Surface: warden.SurfaceHooks, Payload: p, Raw: payload}
	out, _ := d.dec.Decide(ctx, ev)        // a trace failure is a deny, already in out
	out = approval.Settle(ctx, d.dec, out) // an asked step waits for its approval
	res := Result{Decision: out.Verdict.String(), Payload: p, TraceID: out.RecordID}
	switch out.Verdict {
	case warden.Deny:
		res.DenyReason = out.Reason
		res.Patch = map[string]any{"deny": true, "deny_reason": out.Reason}
	case warden.Modify:
		res.Payload = out.Payload
		res.Patch = diff(e, p, out.Payload)
	default:
		res.Patch = map[string]any{}
		if e.Source == catalog.Source("standard-agents") {
			res.Patch = nil
		}
	}
	return res, nil
}

// DecodePayload decodes a hook payload: one JSON object, refused when
// readers would read it differently (jsonstrict: a duplicate key, keys that
// differ only in case, invalid UTF-8), since a hook runtime acting on its
// own reading would act on what the policies did not see.
func DecodePayload(b []byte) (map[string]any, error) {
	if err := jsonstrict.Check(b); err != nil && !errors.Is(err, jsonstrict.ErrSyntax) {
		return nil, err
	}
	var p map[string]any
	if err := json.Unmarshal(b, &p); err != nil || p == nil {
		return nil, fmt.Errorf("expected a JSON object")
	}
	return p, nil
}

// diff is the merged patch: the fields whose values changed, or for a
// Standard Agents event the new return value.
func diff(e catalog.Event, before, after map[string]any) any {
	if e.Source == catalog.Source("standard-agents") && len(e.PatchFields) > 0 {
		f := e.PatchFields[0]
		if reflect.DeepEqual(before[f], after[f]) {
			return nil
		}
		return after[f]
	}
	patch := map[string]any{}
	for k, v := range after {
		if old, ok := before[k]; !ok || !reflect.DeepEqual(old, v) {
			patch[k] = v
		}
	}
	return patch
}

// ServeHTTP serves POST /api/hooks/dispatch: {"event": NAME, "payload": {...}}.
func (d *Dispatcher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		httpError(w, http.StatusMethodNotAllowed, "use POST")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxPayload+1024))
	if err != nil {
		httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body exceeds %d bytes", MaxPayload+1024))
		return
	}
	var req struct {
		Event   string          `json:"event"`
		Payload json.RawMessage `json:"payload"`
	}
	// Strict decoding, as every JSON body warden reads (jsonstrict): no
	// duplicate or case-variant keys, no invalid UTF-8 or lone surrogate,
	// "event" and "payload" spelled exactly (other keys are ignored).
	if err := jsonstrict.DecodeOpen(body, &req); err != nil {
		var amb *jsonstrict.Error
		if errors.As(err, &amb) {
			httpError(w, http.StatusBadRequest, "body: "+err.Error())
			return
		}
		httpError(w, http.StatusBadRequest, "body: expected {\"event\": NAME, \"payload\": {...}}: "+err.Error())
		return
	}
	if req.Event == "" {
		httpError(w, http.StatusBadRequest, "event: missing")
		return
	}
	res, err := d.Dispatch(r.Context(), req.Event, req.Payload)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(res)
}

func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
