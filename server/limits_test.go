package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/aos"
	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden/sqlite"
)

// TestRunsPageBytes is the attack of issue 8: GET /api/hooks/runs?last=50
// over 50 large records (1 MiB of input each) used 754 MB. The response
// now stops before limits.runs_bytes, says so in Warden-Runs-Truncated,
// and Warden-Runs-Next pages on (?after=) without skipping a record.
func TestRunsPageBytes(t *testing.T) {
	st, err := sqlite.Open(t.TempDir(), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const limit = 8 << 20
	srv := httptest.NewServer(New(Options{Store: st, RunsBytes: limit}))
	defer srv.Close()
	big := `{"k":"` + strings.Repeat("x", 1<<20) + `"}`
	for i := range 50 {
		rec := &audit.Record{ID: fmt.Sprintf("r%02d", i), Time: time.Unix(int64(i), 0), Event: "steps/message",
			Surface: "aos", Decision: "allow", Input: json.RawMessage(big)}
		if err := st.Record(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	seen := map[string]bool{}
	next, pages := "", 0
	for {
		url := srv.URL + "/api/hooks/runs?last=50"
		if next != "" {
			url += "&after=" + next
		}
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if len(body) > limit {
			t.Fatalf("page of %d bytes, over the %d limit", len(body), limit)
		}
		var recs []audit.Record
		if err := json.Unmarshal(body, &recs); err != nil || len(recs) == 0 && len(seen) < 50 {
			t.Fatalf("page %d: %v, %d records", pages, err, len(recs))
		}
		pages++
		for _, r := range recs {
			if seen[r.ID] {
				t.Fatalf("record %s twice", r.ID)
			}
			seen[r.ID] = true
		}
		tr, nx := resp.Header.Get(RunsTruncated), resp.Header.Get(RunsNext)
		t.Logf("page %d: %d records, %d bytes, truncated=%q next=%q", pages, len(recs), len(body), tr, nx)
		if len(seen) == 50 || nx == "" {
			break
		}
		if pages == 1 && tr != "bytes" {
			t.Fatalf("first page truncated=%q, want bytes", tr)
		}
		next = nx
	}
	runtime.ReadMemStats(&after)
	if len(seen) != 50 || pages < 7 {
		t.Fatalf("%d records in %d pages", len(seen), pages)
	}
	t.Logf("allocated %d MiB for %d pages (client side included)", (after.TotalAlloc-before.TotalAlloc)>>20, pages)
}

// TestBodyDeadline: a body that trickles is cut off after
// limits.body_timeout; a body sent at once is not affected.
func TestBodyDeadline(t *testing.T) {
	readErr := make(chan error, 4)
	h := New(Options{Routes: []Route{aos.Route(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		readErr <- err
		if err != nil {
			http.Error(w, err.Error(), http.StatusRequestTimeout)
			return
		}
		_, _ = io.WriteString(w, "read")
	}))}, BodyTimeout: 300 * time.Millisecond})
	srv := httptest.NewServer(h)
	defer srv.Close()

	if resp, err := http.Post(srv.URL+"/aos", "application/json", strings.NewReader(`{}`)); err != nil || resp.StatusCode != 200 {
		t.Fatalf("a prompt body: %v %v", resp, err)
	}
	if err := <-readErr; err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /aos HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
	t0 := time.Now()
	stop := make(chan struct{})
	go func() { // one byte every 50 ms: the whole body would take 50 s
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				if _, err := c.Write([]byte("x")); err != nil {
					return
				}
			}
		}
	}()
	defer close(stop)
	select {
	case err := <-readErr:
		took := time.Since(t0)
		if !errors.Is(err, ErrBodyTimeout) || took > 2*time.Second {
			t.Fatalf("read ended after %v with %v, want ErrBodyTimeout after 300ms", took, err)
		}
		t.Logf("trickled body cut off after %v: %v", took.Round(time.Millisecond), err)
	case <-time.After(5 * time.Second):
		t.Fatal("a trickled body was not cut off")
	}
}

// TestConnLimiter: with max connections all sending their headers slowly,
// a new client is still accepted and answered at once (the oldest slow
// one is closed), and the open count never passes max.
func TestConnLimiter(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const max = 50
	ln := LimitConns(inner, max)
	srv := &http.Server{Handler: New(Options{}), ConnState: ln.ConnState, ReadHeaderTimeout: 30 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	addr := inner.Addr().String()

	var slow []net.Conn
	defer func() {
		for _, c := range slow {
			c.Close()
		}
	}()
	for range 3 * max {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write([]byte("GET /healthz HTTP/1.1\r\n")) // headers never end
		slow = append(slow, c)
	}
	deadline := time.Now().Add(5 * time.Second)
	for ln.Evicted() < 2*max && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if open := ln.Open(); open > max {
		t.Fatalf("%d connections open, limit %d", open, max)
	}
	for i := range 5 {
		t0 := time.Now()
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("healthz %d: %v %v", i, resp, err)
		}
		c.Close()
		if took := time.Since(t0); took > 100*time.Millisecond {
			t.Fatalf("healthz took %v with %d slow connections held", took, max)
		}
	}
	t.Logf("open %d (limit %d), evicted %d", ln.Open(), max, ln.Evicted())

	// All max serving requests: Accept waits instead of closing them.
	var wg sync.WaitGroup
	release := make(chan struct{})
	inner2, _ := net.Listen("tcp", "127.0.0.1:0")
	ln2 := LimitConns(inner2, 2)
	srv2 := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }), ConnState: ln2.ConnState}
	go srv2.Serve(ln2)
	defer srv2.Close()
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get("http://" + inner2.Addr().String() + "/")
			if err == nil {
				resp.Body.Close()
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	if open, ev := ln2.Open(), ln2.Evicted(); open != 2 || ev != 0 {
		t.Fatalf("open %d, evicted %d; want 2 serving, none closed", open, ev)
	}
	close(release)
	wg.Wait()
}

// TestAttackRefusalLeavesBodyUnread: a request that is refused (no
// token, a cross-origin Origin, a token without the scope, a wrong
// Content-Type, a rebinding Host) or answered without its body being read
// (GET /healthz with a body) gets its answer at once and the connection
// is closed, while its client is still trickling the body: net/http used
// to read up to 256 KiB of the body, with no deadline, before writing the
// refusal. Without limits.body_timeout too (the refusal does not rely on
// it). A refused request sent whole keeps its JSON-RPC id.
func TestAttackRefusalLeavesBodyUnread(t *testing.T) {
	h, s := newGuarded(t, Security{Auth: testAuth(t)})
	srv := httptest.NewServer(h)
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	const js = "Content-Type: application/json\r\n"
	for _, c := range []struct {
		name, method, path, headers string
		want                        int
	}{
		{"no token", "POST", "/aos", js, 401},
		{"no token, not JSON-RPC", "POST", "/api/approvals/a1", js, 401},
		{"cross origin", "POST", "/mcp/x", js + "Authorization: Bearer " + tokDecide + "\r\nOrigin: https://evil.example\r\n", 403},
		{"no decide scope", "POST", "/aos", js + "Authorization: Bearer " + tokRead + "\r\n", 403},
		{"not JSON", "POST", "/aos", "Content-Type: text/plain\r\nAuthorization: Bearer " + tokDecide + "\r\n", 415},
		{"rebinding Host", "POST", "/aos", js, 403},
		{"body unread", "GET", "/healthz", "", 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			host := addr
			if c.name == "rebinding Host" {
				host = "evil.example"
			}
			fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\n%sContent-Length: 100000\r\n\r\nx", c.method, c.path, host, c.headers)
			stop := make(chan struct{})
			defer close(stop)
			go func() { // a byte every 100 ms: the whole body would take hours
				for {
					select {
					case <-stop:
						return
					case <-time.After(100 * time.Millisecond):
						if _, err := conn.Write([]byte("x")); err != nil {
							return
						}
					}
				}
			}()
			t0 := time.Now()
			_ = conn.SetReadDeadline(t0.Add(5 * time.Second))
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no answer after %v: %v", time.Since(t0).Round(time.Millisecond), err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			answered := time.Since(t0)
			_, err = br.ReadByte() // the server closes the connection
			closed := time.Since(t0)
			if resp.StatusCode != c.want || !resp.Close {
				t.Errorf("status %d, Connection: close %v; want %d and close", resp.StatusCode, resp.Close, c.want)
			}
			if err == nil || errors.Is(err, os.ErrDeadlineExceeded) || answered > time.Second || closed > 2*time.Second {
				t.Errorf("answered after %v, read after it %v at %v; want an answer within 1s and the connection closed",
					answered.Round(time.Millisecond), err, closed.Round(time.Millisecond))
			}
		})
	}
	if n := s.total(); n != 0 {
		t.Errorf("%d refused requests reached a surface", n)
	}

	// Sent whole, a refused request is answered for its id, and the
	// connection is kept.
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr}
	for range 2 {
		resp, err := cl.Post(srv.URL+"/aos", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":"call-9","method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 401 || resp.Close || !strings.Contains(string(b), `"id":"call-9"`) {
			t.Errorf("whole body: %d close=%v %s", resp.StatusCode, resp.Close, b)
		}
	}
}
