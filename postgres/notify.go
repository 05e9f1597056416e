package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wardenhq/warden/internal/tracesql"
)

// Wake-ups across replicas use PostgreSQL's LISTEN/NOTIFY
// (docs/DEPENDENCIES.md says why, not NATS): every change to an approval
// (approvals.go) runs pg_notify on the store's approval channel inside the
// transaction that makes it, so a notification is delivered exactly when
// the change commits, and never for one that rolled back. ApprovalChanges
// listens on the channel with one dedicated connection per Store, shared by
// all its subscribers, and hands each the ids other Stores changed. The
// channel is named after the schema ("warden_approvals:" + current_schema(),
// cut to PostgreSQL's 63 bytes), so wardens on separate schemas of one
// database do not wake each other; its payload is "<origin> <id>", origin
// naming the Store that notified, so a Store never feeds its own changes
// back (the approval manager that made them knows already).

// channelSQL is the SQL expression of the approval channel's name.
const channelSQL = `left('warden_approvals:' || current_schema(), 63)`

// Bounds of the listener.
const (
	// feedBuffer bounds the ids a subscriber may lag behind; one that falls
	// further behind has its channel closed (it should subscribe again and
	// re-read what it waits for).
	feedBuffer = 256
	// listenDial bounds connecting and LISTENing; listenPing is how long the
	// listener waits for a notification before it checks, within
	// listenDial, that its connection is alive.
	listenDial = 5 * time.Second
	listenPing = 15 * time.Second
	// listenBackoffMax bounds the wait between reconnection attempts
	// (doubling from listenBackoffMin).
	listenBackoffMin = 100 * time.Millisecond
	listenBackoffMax = 5 * time.Second
)

// processToken tells this process's Stores from other processes' in
// notification origins.
var processToken = func() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}()

// origin is s's name in the notifications it sends: unique among the live
// Stores of every process (a Store's address is unique while it lives).
func (s *Store) origin() string { return fmt.Sprintf("%s.%p", processToken, s) }

// notifyApprovals sends, in the transaction db, one notification per
// approval id changed.
func (s *Store) notifyApprovals(ctx context.Context, db tracesql.RowDB, ids []string) error {
	_, err := db.Exec(ctx, "notify approvals", `SELECT pg_notify(`+channelSQL+`, $1 || ' ' || id)
		FROM unnest($2::text[]) AS id`, s.origin(), ids)
	return err
}

// listeners holds each Store's listener while it has subscribers.
var (
	listenMu  sync.Mutex
	listeners = map[*Store]*listener{}
)

// listener is a Store's LISTEN connection and its subscribers.
type listener struct {
	s      *Store
	cancel context.CancelFunc
	mu     sync.Mutex
	subs   map[*feedSub]struct{}
}

type feedSub struct {
	ch     chan string
	closed bool
}

// ApprovalChanges returns the ids of the approvals that other Stores on the
// same database and schema (other replicas) create, decide or expire, each
// as its transaction commits, until ctx ends (then the channel is closed).
// An empty id means changes may have been missed (the listener connected,
// or reconnected after losing PostgreSQL): re-read what you wait for. A
// subscriber that falls feedBuffer ids behind has its channel closed early.
// The first call starts the Store's listener, the last subscriber's end
// stops it; the listener reconnects by itself. It implements
// approval.ChangeFeed.
func (s *Store) ApprovalChanges(ctx context.Context) (<-chan string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sub := &feedSub{ch: make(chan string, feedBuffer)}
	listenMu.Lock()
	l := listeners[s]
	if l == nil {
		lctx, cancel := context.WithCancel(context.Background())
		l = &listener{s: s, cancel: cancel, subs: map[*feedSub]struct{}{}}
		listeners[s] = l
		go l.run(lctx)
	}
	l.mu.Lock()
	l.subs[sub] = struct{}{}
	l.mu.Unlock()
	listenMu.Unlock()
	go func() {
		<-ctx.Done()
		listenMu.Lock()
		l.mu.Lock()
		delete(l.subs, sub)
		if !sub.closed {
			sub.closed = true
			close(sub.ch)
		}
		last := len(l.subs) == 0
		l.mu.Unlock()
		if last && listeners[s] == l {
			delete(listeners, s)
			l.cancel()
		}
		listenMu.Unlock()
	}()
	return sub.ch, nil
}

// send hands id to every subscriber, closing those that are full.
func (l *listener) send(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for sub := range l.subs {
		if sub.closed {
			continue
		}
		select {
		case sub.ch <- id:
		default:
			sub.closed = true
			close(sub.ch)
		}
	}
}

// run keeps a LISTEN connection until ctx ends, reconnecting with backoff.
func (l *listener) run(ctx context.Context) {
	backoff := listenBackoffMin
	for ctx.Err() == nil {
		err := l.listen(ctx, func() { backoff = listenBackoffMin })
		if ctx.Err() != nil {
			return
		}
		_ = err // the subscribers re-read on the "" sent after reconnecting
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, listenBackoffMax)
	}
}

// listen connects, LISTENs, tells the subscribers to re-read, and hands on
// notifications until the connection fails or ctx ends.
func (l *listener) listen(ctx context.Context, connected func()) error {
	dctx, cancel := context.WithTimeout(ctx, listenDial)
	conn, err := pgx.ConnectConfig(dctx, l.s.statePool().Config().ConnConfig.Copy())
	if err != nil {
		cancel()
		return err
	}
	defer conn.Close(context.Background())
	var channel string
	if err = conn.QueryRow(dctx, `SELECT `+channelSQL).Scan(&channel); err == nil {
		_, err = conn.Exec(dctx, "LISTEN "+pgx.Identifier{channel}.Sanitize())
	}
	cancel()
	if err != nil {
		return err
	}
	connected()
	l.send("") // anything before now may have been missed
	self := l.s.origin()
	for {
		wctx, cancel := context.WithTimeout(ctx, listenPing)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err == nil:
			if id, ok := parseNote(n.Payload, self); ok {
				l.send(id)
			}
		case conn.IsClosed():
			return err
		default: // quiet for listenPing: is the connection alive?
			pctx, cancel := context.WithTimeout(ctx, listenDial)
			err = conn.Ping(pctx)
			cancel()
			if err != nil {
				return err
			}
		}
	}
}

// parseNote reads a notification's payload, "<origin> <id>": the id, and
// whether to hand it on (well formed, and not from the Store self).
func parseNote(payload, self string) (string, bool) {
	origin, id, ok := strings.Cut(payload, " ")
	if !ok || origin == "" || id == "" || origin == self {
		return "", false
	}
	return id, true
}
