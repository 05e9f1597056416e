package a2agate

import (
	"strings"
	"sync"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/aos"
)

// The view builders are lenient: they read what fits and skip the rest,
// because they also run on payloads a policy has rewritten.

func getObj(m map[string]any, k string) map[string]any { v, _ := m[k].(map[string]any); return v }
func getArr(m map[string]any, k string) []any          { v, _ := m[k].([]any); return v }
func getStr(m map[string]any, k string) string         { v, _ := m[k].(string); return v }

// contextKey is the payload member warden adds to carry the two sides of the
// exchange (seed 004's params.context.from/to); it is never forwarded, and
// warden.Event.Text leaves it out.
const contextKey = "context"

// role maps the 1.0 enum names to the 0.3 (and AOS) roles, so one policy
// (`message.role == "user"`) reads both dialects.
func role(s string) string {
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

func messageView(m map[string]any) warden.Message {
	if m == nil {
		return warden.Message{}
	}
	return warden.Message{Role: role(getStr(m, "role")), Text: aos.PartsText(getArr(m, "parts"))}
}

// streamKeys are the members of a 1.0 result wrapper (StreamResponse, the
// SendMessage result): exactly one is set.
var streamKeys = [...]string{"message", "task", "statusUpdate", "artifactUpdate"}

// unwrapResult returns the A2A object of a result: the result itself (0.3, or
// a 1.0 Task from GetTask) or the one member of a 1.0 wrapper.
func unwrapResult(r map[string]any) map[string]any {
	if r == nil {
		return nil
	}
	for _, k := range [...]string{"kind", "parts", "status", "id", "artifact"} {
		if _, ok := r[k]; ok {
			return r
		}
	}
	for _, k := range streamKeys {
		if o := getObj(r, k); o != nil {
			return o
		}
	}
	return r
}

// resultView is the message view of a response: the agent's message, a
// task's (or status update's) status message, else the artifact text.
func resultView(r map[string]any) warden.Message {
	o := unwrapResult(r)
	if o == nil {
		return warden.Message{}
	}
	if _, ok := o["parts"]; ok {
		return messageView(o)
	}
	if m := getObj(getObj(o, "status"), "message"); m != nil {
		return messageView(m)
	}
	if a := getObj(o, "artifact"); a != nil {
		return warden.Message{Role: "agent", Text: aos.PartsText(getArr(a, "parts"))}
	}
	var texts []string
	for _, a := range getArr(o, "artifacts") {
		a, _ := a.(map[string]any)
		if t := aos.PartsText(getArr(a, "parts")); t != "" {
			texts = append(texts, t)
		}
	}
	if len(texts) > 0 {
		return warden.Message{Role: "agent", Text: strings.Join(texts, "\n")}
	}
	return warden.Message{}
}

// views rebuilds the message view of an A2A event from its payload (the
// JSON-RPC message). It is the events' Normalize.
func views(ev *warden.Event) {
	p := ev.Payload
	if _, isReq := p["method"]; isReq {
		ev.Message = warden.Message{}
		if ev.Name == MethodSend || ev.Name == MethodStream {
			ev.Message = messageView(getObj(getObj(p, "params"), "message"))
		}
	} else {
		ev.Message = resultView(getObj(p, "result"))
	}
	if ev.Tool.Args == nil {
		ev.Tool.Args = map[string]any{}
	}
}

// requestIDs returns the context id and the task id a request names.
func requestIDs(params map[string]any) (contextID, taskID string) {
	if m := getObj(params, "message"); m != nil {
		return getStr(m, "contextId"), getStr(m, "taskId")
	}
	contextID = getStr(params, "contextId") // 1.0 ListTasks
	taskID = getStr(params, "taskId")       // push configs (1.0, 0.3 set)
	if taskID == "" {
		taskID = getStr(params, "id") // tasks/get, cancel, resubscribe; 0.3 push get
	}
	return contextID, taskID
}

// resultIDs returns the context id and task id a response carries.
func resultIDs(result map[string]any) (contextID, taskID string) {
	o := unwrapResult(result)
	contextID = getStr(o, "contextId")
	taskID = getStr(o, "taskId")
	if taskID == "" && (getStr(o, "kind") == "task" || o["status"] != nil && o["contextId"] != nil) {
		taskID = getStr(o, "id")
	}
	return contextID, taskID
}

// sessions remembers which context each task belongs to, so tasks/get,
// tasks/cancel and the push config calls (which name a task, not a context)
// are recorded under the session (context id) of their task. It is bounded:
// the oldest entries are forgotten first.
type sessions struct {
	mu    sync.Mutex
	byID  map[string]string
	order []string
	next  int
}

const maxSessions = 8192

func newSessions() *sessions {
	return &sessions{byID: map[string]string{}, order: make([]string, 0, 64)}
}

func (s *sessions) put(taskID, contextID string) {
	if taskID == "" || contextID == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[taskID]; ok {
		s.byID[taskID] = contextID
		return
	}
	if len(s.order) < maxSessions {
		s.order = append(s.order, taskID)
	} else {
		delete(s.byID, s.order[s.next])
		s.order[s.next] = taskID
		s.next = (s.next + 1) % maxSessions
	}
	s.byID[taskID] = contextID
}

func (s *sessions) get(taskID string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.byID[taskID]
	return c, ok
}

// session returns the session id of a request: its context id, else the
// context of the task it names, else the task id itself.
func (s *sessions) session(params map[string]any) string {
	ctxID, taskID := requestIDs(params)
	if ctxID != "" {
		s.put(taskID, ctxID)
		return ctxID
	}
	if c, ok := s.get(taskID); ok {
		return c
	}
	return taskID
}

// learn records the task of a response and returns its session id, or def
// when the response names no context.
func (s *sessions) learn(result map[string]any, def string) string {
	ctxID, taskID := resultIDs(result)
	s.put(taskID, ctxID)
	if ctxID != "" {
		return ctxID
	}
	if c, ok := s.get(taskID); ok {
		return c
	}
	return def
}
