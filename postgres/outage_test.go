package postgres

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/pipeline"

	"github.com/wardenhq/warden"
)

// cutProxy forwards TCP connections to a PostgreSQL server until cut: then
// it drops every connection it carries and, blackholing, accepts new ones
// but forwards nothing (a server that does not answer), or refuses them.
type cutProxy struct {
	ln     net.Listener
	target string

	mu        sync.Mutex
	down      bool
	blackhole bool
	conns     map[net.Conn]bool
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.cut(false) })
	go p.serve()
	return p
}

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down, hole := p.down, p.blackhole
		if !down || hole {
			p.conns[c] = true
		}
		p.mu.Unlock()
		switch {
		case down && hole:
			continue // held open, never answered
		case down:
			c.Close()
			continue
		}
		go p.forward(c)
	}
}

func (p *cutProxy) forward(c net.Conn) {
	up, err := net.DialTimeout("tcp", p.target, 2*time.Second)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	p.conns[up] = true
	p.mu.Unlock()
	go func() { _, _ = io.Copy(up, c); up.Close() }()
	_, _ = io.Copy(c, up)
	c.Close()
}

// cut drops every connection; blackhole says what new ones get.
func (p *cutProxy) cut(blackhole bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down, p.blackhole = true, blackhole
	for c := range p.conns {
		c.Close()
		delete(p.conns, c)
	}
}

func (p *cutProxy) restore() {
	p.mu.Lock()
	p.down = false
	for c := range p.conns { // blackholed ones
		c.Close()
		delete(p.conns, c)
	}
	p.mu.Unlock()
}

// proxied is u (a postgres:// URL) pointed at the proxy.
func proxied(t *testing.T, u string, p *cutProxy) string {
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	pu.Host = p.ln.Addr().String()
	return pu.String()
}

// TestOutage cuts the connection to PostgreSQL: Record fails within its
// bound (so the decision core denies with trace_unavailable), Ready fails,
// and once PostgreSQL is back both recover on their own and the chain holds.
func TestOutage(t *testing.T) {
	for _, blackhole := range []bool{false, true} {
		t.Run(fmt.Sprintf("blackhole=%v", blackhole), func(t *testing.T) {
			u := testSchemaURL(t)
			pu, err := url.Parse(u)
			if err != nil {
				t.Fatal(err)
			}
			p := newCutProxy(t, pu.Host)
			const timeout = time.Second
			s := openTest(t, proxied(t, u, p), Options{Timeout: timeout})
			ctx := context.Background()
			rec := func(id string) error {
				return s.Record(ctx, &audit.Record{ID: id, Time: time.Now(), Decision: "allow"})
			}
			if err := rec("before"); err != nil {
				t.Fatal(err)
			}
			p.cut(blackhole)
			for i := range 3 {
				start := time.Now()
				err := rec(fmt.Sprintf("during-%d", i))
				d := time.Since(start)
				if err == nil {
					t.Fatalf("Record during the outage succeeded")
				}
				if d > timeout+minCommit+500*time.Millisecond {
					t.Errorf("Record during the outage took %v (bound %v)", d, timeout+minCommit)
				}
				t.Logf("Record during the outage: %v after %v", err, d.Round(time.Millisecond))
			}
			if err := s.Ready(ctx); err == nil {
				t.Errorf("Ready during the outage succeeded")
			}
			// The decision core turns the failure into a fail-closed deny.
			d := pipeline.New(pipeline.Options{Chain: warden.NewChain(warden.Allow), Store: s})
			out, _ := d.Decide(ctx, &warden.Event{Name: "steps/toolCallRequest", Surface: warden.SurfaceAOS})
			if out.Verdict != warden.Deny || len(out.ReasonCodes) != 1 || out.ReasonCodes[0] != warden.CodeTraceUnavailable {
				t.Errorf("Decide during the outage = %v %q, want deny trace_unavailable", out.Verdict, out.ReasonCodes)
			}

			p.restore()
			deadline := time.Now().Add(15 * time.Second)
			var n int
			for {
				n++
				err := rec(fmt.Sprintf("after-%d", n))
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("Record did not recover: %v", err)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err := s.Ready(ctx); err != nil {
				t.Errorf("Ready after the outage: %v", err)
			}
			t.Logf("recovered after %d attempts", n)
			rep, err := s.Verify(ctx)
			if err != nil || !rep.OK() {
				t.Fatalf("Verify after the outage: %+v %v", rep, err)
			}
			got, err := audit.Collect(ctx, s, audit.Query{ID: "during-0"}, 1)
			if err != nil || len(got) != 0 {
				t.Errorf("a record whose Record failed is stored: %v %v", got, err)
			}
		})
	}
}

// TestTerminatedBackends kills the store's server processes
// (pg_terminate_backend, as a failover or an operator does): the pool
// replaces the connections and recording goes on, the chain intact.
func TestTerminatedBackends(t *testing.T) {
	u := testSchemaURL(t)
	s := openTest(t, withParam(u, "application_name", "warden_terminate_test"), Options{})
	ctx := context.Background()
	rec := func(id string) error {
		return s.Record(ctx, &audit.Record{ID: id, Time: time.Now(), Decision: "allow"})
	}
	for i := range 3 {
		if err := rec(fmt.Sprintf("before-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	killer := openTest(t, u, Options{ReadOnly: true})
	var n int
	if err := killer.pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = 'warden_terminate_test'`).Scan(&n); err != nil || n == 0 {
		t.Fatalf("terminated %d backends: %v", n, err)
	}
	failed := 0
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		err := rec(fmt.Sprintf("after-%d", i))
		if err == nil {
			break
		}
		failed++
		if time.Now().After(deadline) {
			t.Fatalf("Record did not recover: %v", err)
		}
	}
	t.Logf("terminated %d backends; %d Records failed before recovery", n, failed)
	if failed > 0 {
		// The writer tries a batch once more on a fresh connection when
		// the first round trip fails: a dropped connection costs no record.
		t.Errorf("%d Records failed after the backends were terminated, want 0", failed)
	}
	if err := s.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("Verify: %+v %v", rep, err)
	}
}
