package storetest

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/wardenhq/warden/acsstate"
)

// Mem is also an acsstate.Store: acsstate.Rules over rows in maps
// (TestMemACS runs RunACS against it), changed under one mutex; they
// outlive Close (Reopen sees them), and changes fail after Close.

var _ acsstate.Store = (*Mem)(nil)

// memACS are a Mem's ACS rows, under memData.mu: each session's row and
// chain, and its replay window's keys.
type memACS struct {
	sessions map[string]*memACSSession
	replays  map[string]*memReplays // by session id
}

type memACSSession struct {
	s     acsstate.Session
	chain []acsstate.Entry
}

// memReplays are the keys one session remembers, with the time each was
// recorded. When the map has grown to sweepAt, Remember deletes the keys
// before its cutoff and sets sweepAt to twice what is left (at least
// minSweep): about twice one window's keys at most, for O(1) amortized
// work per call.
type memReplays struct {
	at      map[string]time.Time
	sweepAt int
}

// minSweep is the fewest keys a session's replay map sweeps at.
const minSweep = 64

// acsRules is the acsstate.Store a Mem embeds (newACS).
type acsRules = acsstate.Rules

// memACSRows are a Mem's ACS rows as acsstate.Rows.
type memACSRows Mem

func newACS(m *Mem) acsRules { return acsstate.Rules{Rows: (*memACSRows)(m)} }

// sessionRows runs fn on m's data under lockData (a change fails after
// Close).
func (m *Mem) sessionRows(ctx context.Context, change bool, fn func(d *memData)) error {
	unlock, err := m.lockData(ctx, change)
	if err != nil {
		return err
	}
	defer unlock()
	if m.d.acs == nil {
		m.d.acs = &memACS{sessions: map[string]*memACSSession{}, replays: map[string]*memReplays{}}
	}
	fn(m.d)
	return nil
}

func (r *memACSRows) PutSession(ctx context.Context, s *acsstate.Session) error {
	return (*Mem)(r).sessionRows(ctx, true, func(d *memData) {
		if old, ok := d.acs.sessions[s.ID]; ok {
			s.Head, s.Entries, s.Ended = old.s.Head, old.s.Entries, old.s.Ended || s.Ended
			old.s = *s
		} else {
			d.acs.sessions[s.ID] = &memACSSession{s: *s}
		}
	})
}

func (r *memACSRows) Session(ctx context.Context, id string) (c *acsstate.Session, err error) {
	err = (*Mem)(r).sessionRows(ctx, false, func(d *memData) {
		if s, ok := d.acs.sessions[id]; ok {
			cp := s.s
			c = &cp
			c.Methods, c.Profiles = slices.Clone(s.s.Methods), slices.Clone(s.s.Profiles)
		}
	})
	return c, err
}

func (r *memACSRows) Remember(ctx context.Context, session, key string, at, cutoff time.Time) (ok bool, err error) {
	err = (*Mem)(r).sessionRows(ctx, true, func(d *memData) {
		w := d.acs.replays[session]
		if w == nil {
			w = &memReplays{at: map[string]time.Time{}, sweepAt: minSweep}
			d.acs.replays[session] = w
		}
		if prev, held := w.at[key]; held && !prev.Before(cutoff) {
			return
		}
		if len(w.at) >= w.sweepAt {
			maps.DeleteFunc(w.at, func(_ string, t time.Time) bool { return t.Before(cutoff) })
			w.sweepAt = max(2*len(w.at), minSweep)
		}
		w.at[key], ok = at, true
	})
	return ok, err
}

func (r *memACSRows) Append(ctx context.Context, session, prev string, e *acsstate.Entry) (ok bool, err error) {
	err = (*Mem)(r).sessionRows(ctx, true, func(d *memData) {
		if s := d.acs.sessions[session]; s != nil && s.s.Head == prev {
			s.chain = append(s.chain, *e)
			s.s.Head, s.s.Entries, ok = e.EntryHash, int64(len(s.chain)), true
		}
	})
	return ok, err
}

func (r *memACSRows) Entries(ctx context.Context, session string, after int64, limit int) (es []acsstate.Entry, err error) {
	err = (*Mem)(r).sessionRows(ctx, false, func(d *memData) {
		if s := d.acs.sessions[session]; s != nil && after < int64(len(s.chain)) {
			es = slices.Clone(s.chain[after:][:min(limit, len(s.chain)-int(after))])
		}
	})
	return es, err
}

func (r *memACSRows) End(ctx context.Context, id string, _ time.Time) (ok bool, err error) {
	err = (*Mem)(r).sessionRows(ctx, true, func(d *memData) {
		if s := d.acs.sessions[id]; s != nil {
			s.s.Ended, ok = true, true
		}
	})
	return ok, err
}
