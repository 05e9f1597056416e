package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/wardenhq/warden"
)

// Runs returns the records matching f, newest first (by time, then by
// insertion order). f.Last defaults to warden.DefaultLast and is capped at
// MaxLast.
func (s *Store) Runs(ctx context.Context, f warden.Filter) ([]warden.Record, error) {
	last := f.Last
	if last <= 0 {
		last = warden.DefaultLast
	}
	if last > MaxLast {
		last = MaxLast
	}
	var q strings.Builder
	q.WriteString(`SELECT id, time, event, surface, direction, request_id,
		agent_id, session_id, turn_id, step_id, decision, reason, reason_codes,
		policy_id, policy_version, latency_us, blob_off, results_len, input_len,
		output_len FROM runs`)
	var args []any
	where := func(col, v string) {
		if v == "" {
			return
		}
		if len(args) == 0 {
			q.WriteString(" WHERE ")
		} else {
			q.WriteString(" AND ")
		}
		q.WriteString(col)
		q.WriteString(" = ?")
		args = append(args, v)
	}
	where("session_id", f.Session)
	where("event", f.Event)
	where("decision", f.Decision)
	q.WriteString(" ORDER BY time DESC, rowid DESC LIMIT ?")
	args = append(args, last)

	rows, err := s.rdb.QueryContext(ctx, q.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: query runs: %w", err)
	}
	defer rows.Close()
	out := []warden.Record{}
	for rows.Next() {
		var (
			r                        warden.Record
			us, off, nRes, nIn, nOut int64
			codes                    []byte
		)
		if err := rows.Scan(&r.ID, &us, &r.Event, &r.Surface, &r.Direction,
			&r.RequestID, &r.AgentID, &r.SessionID, &r.TurnID, &r.StepID,
			&r.Decision, &r.Reason, &codes, &r.PolicyID, &r.PolicyVersion,
			&r.LatencyUS, &off, &nRes, &nIn, &nOut); err != nil {
			return nil, fmt.Errorf("sqlite: read run: %w", err)
		}
		blob, err := s.rblobs.read(off, nRes+nIn+nOut)
		if err != nil {
			return nil, fmt.Errorf("sqlite: run %s: %w", r.ID, err)
		}
		results := blob[:nRes]
		if nIn > 0 {
			r.Input = json.RawMessage(blob[nRes : nRes+nIn])
		}
		if nOut > 0 {
			r.Output = json.RawMessage(blob[nRes+nIn:])
		}
		r.Time = time.UnixMicro(us).UTC()
		if len(codes) > 0 {
			if err := json.Unmarshal(codes, &r.ReasonCodes); err != nil {
				return nil, fmt.Errorf("sqlite: run %s: reason codes: %w", r.ID, err)
			}
		}
		r.Results = []warden.Result{}
		if len(results) > 0 {
			if err := json.Unmarshal(results, &r.Results); err != nil {
				return nil, fmt.Errorf("sqlite: run %s: results: %w", r.ID, err)
			}
			if r.Results == nil { // stored "null"
				r.Results = []warden.Result{}
			}
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: read runs: %w", err)
	}
	return out, nil
}
