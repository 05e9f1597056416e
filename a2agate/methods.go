package a2agate

// A2A JSON-RPC method names. The seeds use the A2A 0.3 names; A2A 1.0 (what
// github.com/a2aproject/a2a-go/v2 and @a2a-js/sdk 1.x speak) renamed them.
// Both are accepted and map to one event name, the 0.3 name, which is the
// catalog's.
const (
	MethodSend            = "message/send"
	MethodStream          = "message/stream"
	MethodGet             = "tasks/get"
	MethodCancel          = "tasks/cancel"
	MethodResubscribe     = "tasks/resubscribe"
	MethodPushGet         = "tasks/pushNotificationConfig/get"
	MethodPushSet         = "tasks/pushNotificationConfig/set"
	MethodPushList        = "tasks/pushNotificationConfig/list"
	MethodPushDelete      = "tasks/pushNotificationConfig/delete"
	MethodList            = "tasks/list"
	MethodExtendedCard    = "agent/getAuthenticatedExtendedCard"
	methodExtendedCardOld = "agent/authenticatedExtendedCard"
)

// dialect is the A2A protocol version a request was written in; errors warden
// makes up are shaped for it (the a2a-go v2 client decodes error.data as a
// list of typed details).
type dialect uint8

const (
	dialect03 dialect = iota
	dialect10
)

// method is what warden knows of one JSON-RPC method name.
type method struct {
	event   string // the event (catalog) name: the 0.3 method name
	dialect dialect
}

// methods maps every accepted wire method name to its event. The first seven
// events are the catalog's A2A hook events; the others (list/delete push
// configs, list tasks, the extended card) have no catalog entry but are
// governed alike: policies match them by name or glob ("tasks/*").
var methods = map[string]method{
	// A2A 0.3 (the seeds).
	MethodSend:            {MethodSend, dialect03},
	MethodStream:          {MethodStream, dialect03},
	MethodGet:             {MethodGet, dialect03},
	MethodCancel:          {MethodCancel, dialect03},
	MethodResubscribe:     {MethodResubscribe, dialect03},
	MethodPushGet:         {MethodPushGet, dialect03},
	MethodPushSet:         {MethodPushSet, dialect03},
	MethodPushList:        {MethodPushList, dialect03},
	MethodPushDelete:      {MethodPushDelete, dialect03},
	MethodExtendedCard:    {MethodExtendedCard, dialect03},
	methodExtendedCardOld: {MethodExtendedCard, dialect03},

	// A2A 1.0 (a2a-go v2 internal/jsonrpc, the spec's §7 names).
	"SendMessage":                      {MethodSend, dialect10},
	"SendStreamingMessage":             {MethodStream, dialect10},
	"GetTask":                          {MethodGet, dialect10},
	"CancelTask":                       {MethodCancel, dialect10},
	"SubscribeToTask":                  {MethodResubscribe, dialect10},
	"GetTaskPushNotificationConfig":    {MethodPushGet, dialect10},
	"CreateTaskPushNotificationConfig": {MethodPushSet, dialect10},
	"ListTaskPushNotificationConfigs":  {MethodPushList, dialect10},
	"DeleteTaskPushNotificationConfig": {MethodPushDelete, dialect10},
	"ListTasks":                        {MethodList, dialect10},
	"GetExtendedAgentCard":             {MethodExtendedCard, dialect10},
	// Names of 1.0 drafts that some SDKs shipped.
	"TaskResubscription":                {MethodResubscribe, dialect10},
	"SetTaskPushNotificationConfig":     {MethodPushSet, dialect10},
	"ListTaskPushNotificationConfig":    {MethodPushList, dialect10},
	"GetAuthenticatedExtendedCard":      {MethodExtendedCard, dialect10},
	"GetAuthenticatedExtendedAgentCard": {MethodExtendedCard, dialect10},
}

// EventName returns the event name of a wire method (0.3 or 1.0) and whether
// warden proxies it.
func EventName(wire string) (string, bool) {
	m, ok := methods[wire]
	return m.event, ok
}
