package a2agate

import (
	"github.com/wardenhq/warden/catalog"
	"github.com/wardenhq/warden/jsonrpc"
)

// The gateway builds no views (the Decider does, with catalog.Views); it
// tracks which A2A context (its session) each task belongs to.

func getObj(m map[string]any, k string) map[string]any { v, _ := m[k].(map[string]any); return v }
func getArr(m map[string]any, k string) []any          { v, _ := m[k].([]any); return v }
func getStr(m map[string]any, k string) string         { v, _ := m[k].(string); return v }

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
	o := catalog.A2AResult(result)
	contextID = getStr(o, "contextId")
	taskID = getStr(o, "taskId")
	if taskID == "" && (getStr(o, "kind") == "task" || o["status"] != nil && o["contextId"] != nil) {
		taskID = getStr(o, "id")
	}
	return contextID, taskID
}

// sessions remembers which context each task belongs to, so tasks/get,
// tasks/cancel and the push config calls (which name a task, not a context)
// are recorded under the session (context id) of their task. It is a bounded
// jsonrpc.Cache: the oldest entries are forgotten first.
type sessions struct {
	c *jsonrpc.Cache[string]
}

const maxSessions = 8192

func newSessions() *sessions { return &sessions{c: jsonrpc.NewCache[string](maxSessions)} }

func (s *sessions) put(taskID, contextID string) {
	if taskID == "" || contextID == "" {
		return
	}
	s.c.Put(taskID, contextID)
}

func (s *sessions) get(taskID string) (string, bool) { return s.c.Get(taskID) }

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
