package catalog

import (
	"strings"

	"github.com/wardenhq/warden"
)

// The A2A methods the A2A proxy governs besides the seven hook methods
// (0.3 names; 1.0 wire names map to these).
const (
	A2APushList     = "tasks/pushNotificationConfig/list"
	A2APushDelete   = "tasks/pushNotificationConfig/delete"
	A2AList         = "tasks/list"
	A2AExtendedCard = "agent/getAuthenticatedExtendedCard"
)

// A2AMethods lists every A2A method that is an event: the hook methods,
// then the others the proxy governs. Policies match them by name or glob.
var A2AMethods = append(append([]string(nil), A2AHookMethods...),
	A2APushList, A2APushDelete, A2AList, A2AExtendedCard)

// a2aViews reads the message view of an A2A JSON-RPC message (or of a bare
// A2A Message object, as AOS protocols/A2A may carry).
func a2aViews(ev *warden.Event, msg map[string]any) {
	if m, isReq := msg["method"]; isReq {
		if a2aSends(ev.Name, m) {
			ev.Message = partsMessage(obj(obj(msg, "params"), "message"))
		}
		return
	}
	if r, ok := msg["result"]; ok {
		r, _ := r.(map[string]any)
		ev.Message = resultMessage(r)
		return
	}
	if _, ok := msg["parts"]; ok {
		ev.Message = partsMessage(msg)
	}
}

// a2aSends reports whether a request sends a message: the event is
// message/send or message/stream, or protocols/A2A wraps one (0.3 or 1.0
// method name).
func a2aSends(event string, method any) bool {
	switch event {
	case A2ASend, A2AStream:
		return true
	case MethodA2A:
		switch method {
		case A2ASend, A2AStream, "SendMessage", "SendStreamingMessage":
			return true
		}
	}
	return false
}

// a2aRole maps the A2A 1.0 enum names to the 0.3 (and AOS) roles, so one
// policy (`message.role == "user"`) reads both dialects.
func a2aRole(s string) string {
	switch s {
	case "ROLE_USER":
		return "user"
	case "ROLE_AGENT":
		return "agent"
	case "ROLE_UNSPECIFIED":
		return ""
	}
	return s
}

// partsMessage reads an AOS Message (content) or an A2A Message (parts).
func partsMessage(m map[string]any) warden.Message {
	if m == nil {
		return warden.Message{}
	}
	parts := arr(m, "content")
	if parts == nil {
		parts = arr(m, "parts")
	}
	return warden.Message{Role: a2aRole(str(m, "role")), Text: PartsText(parts)}
}

// PartsText joins, newline-separated, the text of a message's text parts:
// A2A 0.3 and AOS parts {"kind":"text","text"} and A2A 1.0 parts {"text"}
// (no kind).
func PartsText(parts []any) string {
	var b strings.Builder
	n := 0
	for _, v := range parts {
		p, _ := v.(map[string]any)
		t, ok := p["text"].(string)
		if !ok {
			continue
		}
		if k, has := p["kind"]; has && k != "text" {
			continue
		}
		if n > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(t)
		n++
	}
	return b.String()
}

// a2aStreamKeys are the members of a 1.0 result wrapper (StreamResponse,
// the SendMessage result): exactly one is set.
var a2aStreamKeys = [...]string{"message", "task", "statusUpdate", "artifactUpdate"}

// A2AResult returns the A2A object of a response's result: the result
// itself (0.3, or a 1.0 Task from GetTask) or the one member of a 1.0
// wrapper.
func A2AResult(r map[string]any) map[string]any {
	if r == nil {
		return nil
	}
	for _, k := range [...]string{"kind", "parts", "status", "id", "artifact"} {
		if _, ok := r[k]; ok {
			return r
		}
	}
	for _, k := range a2aStreamKeys {
		if o := obj(r, k); o != nil {
			return o
		}
	}
	return r
}

// resultMessage is the message view of a response: the agent's message, a
// task's (or status update's) status message, else the artifacts' text.
func resultMessage(r map[string]any) warden.Message {
	o := A2AResult(r)
	if o == nil {
		return warden.Message{}
	}
	if _, ok := o["parts"]; ok {
		return partsMessage(o)
	}
	if m := obj(obj(o, "status"), "message"); m != nil {
		return partsMessage(m)
	}
	if a := obj(o, "artifact"); a != nil {
		return warden.Message{Role: "agent", Text: PartsText(arr(a, "parts"))}
	}
	var texts []string
	for _, a := range arr(o, "artifacts") {
		a, _ := a.(map[string]any)
		if t := PartsText(arr(a, "parts")); t != "" {
			texts = append(texts, t)
		}
	}
	if len(texts) > 0 {
		return warden.Message{Role: "agent", Text: strings.Join(texts, "\n")}
	}
	return warden.Message{}
}
