package audit

import (
	"context"
	"errors"

	"github.com/wardenhq/warden"
)

// CursorStore keeps named positions in the trace beside it: the id of the
// last record a reader (the decision stream's publisher, stream/) has
// handled for good, so that after a restart it continues after that record
// and never handles an older one again. storetest.RunFleet is the contract.
type CursorStore interface {
	// StreamCursor returns the record id stored under name, or "" when
	// none has been stored.
	StreamCursor(ctx context.Context, name string) (string, error)
	// SetStreamCursor stores id under name, durably when it returns,
	// replacing the one before. name and id must not be empty.
	SetStreamCursor(ctx context.Context, name, id string) error
}

// Readier is a store that can tell cheaply whether it can serve a decision
// now (GET /readyz): nil, or why not.
type Readier interface {
	Ready(ctx context.Context) error
}

// ErrUnavailable wraps store failures: the decision could not be recorded,
// so it is not given (fail closed).
var ErrUnavailable = errors.New("trace store unavailable")

// Surfaces lists every surface, as a record's Surface names it.
var Surfaces = []string{warden.SurfaceAOS, warden.SurfaceACS, warden.SurfaceMCP, warden.SurfaceA2A, warden.SurfaceHooks, warden.SurfaceSDK}
