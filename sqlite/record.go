package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/internal/jsonappend"

	"github.com/wardenhq/warden"
)

// request states.
const (
	pending   int32 = iota // queued, the writer has not taken it
	taken                  // the writer is inserting it
	abandoned              // its Record gave up (context done): skip it
)

const nCols = 30

// prevHashArg and hashArg are the indexes of prev_hash and hash in
// request.args: the writer sets them (hash.go).
const (
	prevHashArg = 26
	hashArg     = 27
	shadowArg   = 28 // the shadow set's verdict (schema 9)
	// sealedArg is the record's sealed originals (schema 17), nil for
	// none; the last argument, so that a trace log entry written before
	// it is the same encoding without it (logged.go).
	sealedArg = 29
)

// request is one Record call in flight. Its args are built on the caller's
// goroutine so that the writer only binds and steps.
type request struct {
	args [nCols]driver.NamedValue
	blob []byte // results, input, output, views back to back (blobs.go)
	// codes backs the reason codes' JSON while fill hashes it (the
	// argument is a string of its own).
	codes []byte
	// boxed keeps, per argument, the last string fill boxed into a
	// driver.Value, so that a column repeating its value from one record
	// to the next (event, surface, decision, policy, tool, ...) reuses the
	// box instead of allocating one (see boxString).
	boxed [nCols]driver.Value
	// content is SHA-256 of the record's canonical encoding, v2 (hash.go),
	// computed by fill so that the writer only chains it.
	content [32]byte
	canon   *canon
	// prev and hash back the prev_hash and hash arguments (set by the
	// writer).
	prev, hash [32]byte
	// op, when set, makes this an ACS write to run in the writer's
	// transaction instead of a record (acs.go).
	op    *acsOp
	state atomic.Int32
	err   error      // set by the writer when this record alone failed
	done  chan error // buffered 1; the writer sends exactly once
}

var requestPool = sync.Pool{New: func() any {
	r := &request{done: make(chan error, 1), canon: newCanon()}
	for i := range r.args {
		r.args[i].Ordinal = i + 1
	}
	return r
}}

func putRequest(r *request) {
	for i := range r.args {
		r.args[i].Value = nil
	}
	if cap(r.blob) > maxPooledBlob {
		r.blob = nil
	}
	r.blob = r.blob[:0]
	if cap(r.codes) > maxPooledBlob {
		r.codes = nil
	}
	r.err, r.op = nil, nil
	requestPool.Put(r)
}

// maxPooledBlob keeps a pooled request from pinning a huge input's buffer.
const maxPooledBlob = 64 << 10

// blobOffArg is the index of blob_off in request.args: the writer sets it
// once the batch's blobs are written.
const blobOffArg = 16

func (r *request) fill(rec *audit.Record) error {
	results := rec.Results
	if results == nil {
		results = []warden.Result{}
	}
	// The results and reason codes are encoded by warden's appenders, byte
	// for byte as encoding/json writes them (the hash chain covers them).
	var err error
	if r.blob, err = audit.AppendResults(r.blob[:0], results); err != nil {
		return fmt.Errorf("sqlite: encode results: %w", err)
	}
	resLen := len(r.blob)
	r.blob = append(r.blob, rec.Input...)
	r.blob = append(r.blob, rec.Output...)
	r.blob = append(r.blob, rec.Views...)
	var codes driver.Value
	var codeBytes []byte
	if len(rec.ReasonCodes) > 0 {
		r.codes = jsonappend.Strings(r.codes[:0], rec.ReasonCodes)
		codes, codeBytes = string(r.codes), r.codes
	}
	us := rec.Time.UnixMicro()
	shadow := rec.ShadowDecision()
	in := resLen + len(rec.Input) // the input's end
	out := in + len(rec.Output)   // the output's end
	r.canon.DigestV2(&rowContent{
		ID: rec.ID, TimeUS: us, Event: rec.Event, Surface: rec.Surface, Direction: rec.Direction,
		RequestID: rec.RequestID, AgentID: rec.AgentID, SessionID: rec.SessionID,
		TurnID: rec.TurnID, StepID: rec.StepID, Decision: rec.Decision, Reason: rec.Reason,
		ReasonCodes: codeBytes, PolicyID: rec.PolicyID, PolicyVersion: rec.PolicyVersion,
		LatencyUS: rec.LatencyUS, Results: r.blob[:resLen], Input: r.blob[resLen:in],
		Output: r.blob[in:out], PolicyRevision: rec.PolicyRevision, Views: r.blob[out:],
		Caller: rec.Caller, Tenant: rec.Tenant, ApprovalID: rec.ApprovalID, Tool: rec.Tool,
		Shadow: shadow, Sealed: rec.Sealed,
	}, &r.content)
	a := &r.args
	a[0].Value = rec.ID
	a[1].Value = us
	a[2].Value = r.boxString(2, rec.Event)
	a[3].Value = r.boxString(3, rec.Surface)
	a[4].Value = r.boxString(4, rec.Direction)
	a[5].Value = rec.RequestID
	a[6].Value = r.boxString(6, rec.AgentID)
	a[7].Value = r.boxString(7, rec.SessionID)
	a[8].Value = rec.TurnID
	a[9].Value = rec.StepID
	a[10].Value = r.boxString(10, rec.Decision)
	a[11].Value = r.boxString(11, rec.Reason)
	a[12].Value = codes
	a[13].Value = r.boxString(13, rec.PolicyID)
	a[14].Value = r.boxString(14, rec.PolicyVersion)
	a[15].Value = rec.LatencyUS
	a[blobOffArg].Value = int64(0) // set by the writer
	a[17].Value = int64(resLen)
	a[18].Value = int64(len(rec.Input))
	a[19].Value = int64(len(rec.Output))
	a[20].Value = r.boxString(20, rec.PolicyRevision)
	a[21].Value = int64(len(rec.Views))
	a[22].Value = r.boxString(22, rec.Caller)
	a[23].Value = r.boxString(23, rec.Tenant)
	a[24].Value = rec.ApprovalID
	a[25].Value = r.boxString(25, rec.Tool)
	a[prevHashArg].Value = nil // set by the writer
	a[hashArg].Value = nil
	a[shadowArg].Value = shadow
	// NULL when there are none: no box, nothing stored. Otherwise the
	// caller's bytes, which it leaves alone until Record returns (the
	// trace log copies them).
	a[sealedArg].Value = nil
	if len(rec.Sealed) > 0 {
		a[sealedArg].Value = []byte(rec.Sealed)
	}
	return nil
}

// maxBoxedString bounds the strings boxString keeps: a pooled request
// pins at most this many bytes per argument.
const maxBoxedString = 256

// boxString returns s as a driver.Value for argument i, the box fill made
// for the previous record's argument i when it holds the same string (the
// writer only reads the value, and the request is one record's at a time).
func (r *request) boxString(i int, s string) driver.Value {
	if b, ok := r.boxed[i].(string); ok && b == s {
		return r.boxed[i]
	}
	var v driver.Value = s
	if len(s) <= maxBoxedString {
		r.boxed[i] = v
	}
	return v
}

const insertSQL = `INSERT INTO runs (id, time, event, surface, direction,
	request_id, agent_id, session_id, turn_id, step_id, decision, reason,
	reason_codes, policy_id, policy_version, latency_us, blob_off, results_len,
	input_len, output_len, policy_revision, views_len, caller, tenant, approval_id, tool,
	prev_hash, hash, shadow, sealed)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// Record stores rec and returns once the transaction holding it has
// committed (see the package documentation for what that guarantees). An
// error means rec is not in the trace: the batch failed, the store is closed,
// or ctx was done before the writer took rec. Once the writer has taken rec,
// Record waits for that commit's result even if ctx is done, so the answer
// is always truthful. rec must not be modified until Record returns.
func (s *Store) Record(ctx context.Context, rec *audit.Record) error {
	if s.queue == nil {
		return ErrReadOnly
	}
	if rec == nil || rec.ID == "" {
		return errors.New("sqlite: record has no id")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: record not stored: %w", err)
	}
	req := requestPool.Get().(*request)
	if err := req.fill(rec); err != nil {
		putRequest(req)
		return err
	}
	return s.submit(ctx, req, "record not stored")
}

// submit queues req for the writer and waits for its answer; what says
// what was not done when it gives up (the store closed, ctx done).
func (s *Store) submit(ctx context.Context, req *request, what string) error {
	req.state.Store(pending)
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		putRequest(req)
		return ErrClosed
	}
	select {
	case s.queue <- req:
		s.mu.RUnlock()
	case <-ctx.Done():
		s.mu.RUnlock()
		putRequest(req)
		return fmt.Errorf("sqlite: %s (queue full): %w", what, ctx.Err())
	}

	var err error
	select {
	case err = <-req.done:
	case <-ctx.Done():
		if req.state.CompareAndSwap(pending, abandoned) {
			// The writer will skip it and never touch req.done; req is
			// still referenced by the queue, so it is not reused.
			return fmt.Errorf("sqlite: %s: %w", what, ctx.Err())
		}
		// The writer is committing it: its result is the truth.
		err = <-req.done
	}
	putRequest(req)
	return err
}
