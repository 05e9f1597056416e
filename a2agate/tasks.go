package a2agate

import (
	"errors"
	"net/http"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/internal/sealid"
)

// Task ids without sticky replicas. A task id the proxy hands a
// client is not the upstream's: it seals (internal/sealid: AES-256-GCM,
// bound to the agent's name and the caller's tenant and name) the
// upstream's task id and the task's context id, as a stable id (the same
// string for one task every time, on every replica: clients correlate a
// task's events and answers by it; it has no issue time, so it lives as
// long as the upstream keeps the task). When the client names the
// task again — tasks/get, tasks/cancel, a resubscription, a push config, a
// message continuing the task or referring to it — whichever replica serves
// it opens the id: the agent it is bound to is the one the request is
// addressed to (an id of another agent, tenant or caller does not open),
// the upstream gets its own id back, and the request is recorded under the
// task's context (its session) without any replica having seen the task
// before. An id that does not open is answered "task not found" and never
// forwarded.

// TaskKind is the sealid kind of an A2A task id.
const TaskKind = "a2a-task"

// maxUpstreamTaskID bounds an upstream task id (or context id) the proxy
// seals, so the sealed id stays under sealid.MaxIDLen; a longer one is
// relayed as it is, and naming it again is "task not found".
const maxUpstreamTaskID = 512

// CodeTaskNotFound is A2A's TaskNotFoundError, the answer to a task id that
// does not open.
const CodeTaskNotFound = -32001

// errTaskID is a task id that does not open.
var errTaskID = errors.New("task not found")

// taskBinding is what the ids of agent ag are bound to for the caller of r.
func taskBinding(r *http.Request, ag *agent) sealid.Binding {
	p := warden.PrincipalFrom(r.Context())
	return sealid.Binding{Kind: TaskKind, Server: ag.name, Tenant: p.Tenant, Caller: p.Name}
}

// taskIDCarriers are the request methods whose params.id is a task id (by
// event; the 0.3 push config calls name the task in params.id too, the 1.0
// ones in params.taskId and their config in params.id).
func paramsIDIsTask(m method) bool {
	switch m.event {
	case MethodGet, MethodCancel, MethodResubscribe:
		return true
	case MethodPushGet, MethodPushList, MethodPushDelete:
		return m.dialect == dialect03
	}
	return false
}

// openRequestTasks replaces every task id params name by the upstream's,
// opened from the sealed id. It returns the context id sealed with the
// first task id opened ("" for none), whether params changed, and
// errTaskID when an id does not open.
func (g *Gate) openRequestTasks(b sealid.Binding, m method, params map[string]any) (ctxID string, changed bool, err error) {
	if params == nil {
		return "", false, nil
	}
	open := func(o map[string]any, k string) error {
		id, ok := o[k].(string)
		if !ok || id == "" {
			return nil
		}
		f, err := g.tasks.OpenStableStrings(b, id, 2)
		if err != nil {
			return errTaskID
		}
		o[k], changed = f[0], true
		if ctxID == "" {
			ctxID = f[1]
		}
		return nil
	}
	openList := func(o map[string]any, k string) error {
		l, _ := o[k].([]any)
		for i, v := range l {
			id, ok := v.(string)
			if !ok || id == "" {
				continue
			}
			f, err := g.tasks.OpenStableStrings(b, id, 2)
			if err != nil {
				return errTaskID
			}
			l[i], changed = f[0], true
		}
		return nil
	}
	if msg := getObj(params, "message"); msg != nil {
		if err := open(msg, "taskId"); err != nil {
			return "", false, err
		}
		if err := openList(msg, "referenceTaskIds"); err != nil {
			return "", false, err
		}
	}
	if err := open(params, "taskId"); err != nil {
		return "", false, err
	}
	if paramsIDIsTask(m) {
		if err := open(params, "id"); err != nil {
			return "", false, err
		}
	}
	return ctxID, changed, nil
}

// sealer seals the task ids of one answer for the caller.
type taskSealer struct {
	s       *sealid.Sealer
	b       sealid.Binding
	def     string // the context of the exchange, for an id without one beside it
	changed bool
}

func (t *taskSealer) seal(id, ctxID string) string {
	if ctxID == "" {
		ctxID = t.def
	}
	if len(id) > maxUpstreamTaskID || len(ctxID) > maxUpstreamTaskID {
		return id
	}
	t.changed = true
	return t.s.SealStableStrings(t.b, id, ctxID)
}

// object returns a copy of one A2A object (a task, a message, a status or
// artifact update, a push config) with its task ids sealed, and those of the
// objects it is made of. It walks the protocol's structure only, never the
// contents of parts or metadata, where a "taskId" is the agent's data. The
// maps and lists it changes are copies: the decided message, which the
// trace and observers hold, is left as it was decided.
func (t *taskSealer) object(o map[string]any) map[string]any {
	if o == nil {
		return nil
	}
	c := make(map[string]any, len(o))
	for k, v := range o {
		c[k] = v
	}
	ctxID, _ := o["contextId"].(string)
	if id, ok := o["taskId"].(string); ok && id != "" {
		c["taskId"] = t.seal(id, ctxID)
	}
	if l, ok := o["referenceTaskIds"].([]any); ok {
		nl := make([]any, len(l))
		for i, v := range l {
			nl[i] = v
			if id, ok := v.(string); ok && id != "" {
				nl[i] = t.seal(id, ctxID)
			}
		}
		c["referenceTaskIds"] = nl
	}
	if id, ok := o["id"].(string); ok && id != "" && isTask(o) {
		c["id"] = t.seal(id, ctxID)
	}
	for _, k := range [...]string{"task", "message", "statusUpdate", "artifactUpdate", "status"} {
		if e := getObj(o, k); e != nil {
			c[k] = t.object(e)
		}
	}
	for _, k := range [...]string{"history", "tasks", "configs"} {
		if l := getArr(o, k); l != nil {
			c[k] = t.list(l)
		}
	}
	return c
}

// list is object for each object of l, in a new list.
func (t *taskSealer) list(l []any) []any {
	nl := make([]any, len(l))
	for i, v := range l {
		nl[i] = v
		if e, ok := v.(map[string]any); ok {
			nl[i] = t.object(e)
		}
	}
	return nl
}

// isTask reports whether o is a Task: a status and a context beside its id
// (0.3 adds kind "task"; 1.0 has no kind).
func isTask(o map[string]any) bool {
	if k, ok := o["kind"].(string); ok && k != "task" {
		return false
	}
	_, hasStatus := o["status"].(map[string]any)
	_, hasCtx := o["contextId"].(string)
	return hasStatus && hasCtx
}

// sealResponse returns a copy of a JSON-RPC response with the task ids of
// its result (an object, or 0.3's list of push configs) sealed, and whether
// there were any; msg itself is not changed.
func (g *Gate) sealResponse(b sealid.Binding, def string, msg map[string]any) (map[string]any, bool) {
	t := &taskSealer{s: g.tasks, b: b, def: def}
	var res any
	switch r := msg["result"].(type) {
	case map[string]any:
		res = t.object(r)
	case []any:
		res = t.list(r)
	}
	if !t.changed {
		return msg, false
	}
	c := make(map[string]any, len(msg))
	for k, v := range msg {
		c[k] = v
	}
	c["result"] = res
	return c, true
}
