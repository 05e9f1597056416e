package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestStreamSurvivesKill9 checks the decision stream (CONTRACT §16) across
// a kill -9 of `warden serve` under load, over SQLite: after a restart the
// stream catches up, and every record in the trace — every answered
// decision among them — is on the JetStream stream exactly once (counted by
// Nats-Msg-Id), with its record's JSON as the body. /readyz reports the lag
// and /api/instances the replica.
func TestStreamSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: builds and runs the warden binary; skipped with -short")
	}
	url := os.Getenv("WARDEN_NATS_URL")
	if url == "" {
		t.Skip("WARDEN_NATS_URL is not set: skipping the decision stream end-to-end test")
	}
	bin := wardenBinary(t)
	data, dir := t.TempDir(), t.TempDir()
	name := fmt.Sprintf("E2E_%d", time.Now().UnixNano())
	subject := "e2e." + strings.ToLower(name)
	cfg := filepath.Join(dir, "warden.yaml")
	body := fmt.Sprintf("stream:\n  nats: {url: %q, stream: %s, subject: %s}\ninstance: {id: e2e-replica, heartbeat: 200ms}\n", url, name, subject)
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(url, nats.Timeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = js.DeleteStream(ctx, name)
	})

	srv := startServer(t, bin, "--data", data, "--config", cfg)
	l := startLoad(t, srv.url+"/aos", workers, "stream")
	time.Sleep(loadTime)
	l.signal()
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	_ = srv.wait(t, 10*time.Second)
	l.halt()
	t.Logf("%s", l.summary())
	if len(l.answers) == 0 {
		t.Fatalf("nothing answered before the kill; output:\n%s", srv.out)
	}

	srv = startServer(t, bin, "--data", data, "--config", cfg)
	var ready struct {
		Ready  bool `json:"ready"`
		Stream struct {
			Records   int64 `json:"records"`
			Connected bool  `json:"connected"`
		} `json:"stream"`
	}
	end := time.Now().Add(60 * time.Second)
	for {
		code, b := send(t, "GET", srv.url+"/readyz", "", "", "", "")
		if err := json.Unmarshal([]byte(b), &ready); err != nil || code != 200 || !ready.Ready {
			t.Fatalf("/readyz: %d %s", code, b)
		}
		if ready.Stream.Connected && ready.Stream.Records == 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the stream did not catch up: /readyz %s", b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	code, b := send(t, "GET", srv.url+"/api/instances", "", "", "", "")
	if code != 200 || !strings.Contains(b, `"id":"e2e-replica"`) || !strings.Contains(b, `"self":true`) {
		t.Errorf("/api/instances: %d %s", code, b)
	}
	code, b = send(t, "GET", srv.url+"/metrics", "", "", "", "")
	if code != 200 || !strings.Contains(b, "warden_stream_lag_records 0") || !strings.Contains(b, "warden_stream_connected 1") {
		t.Errorf("/metrics lacks the stream's lag: %d", code)
	}

	recs := readTrace(t, bin, data, "stream")
	checkTrace(t, recs, l.answers, "stream")
	onStream, bodies, total := readStream(t, js, name, func(id, subj string) {
		if !strings.HasPrefix(subj, subject+"._.aos.") {
			t.Fatalf("message %s on subject %s", id, subj)
		}
	})
	twice, missing := 0, 0
	for id, n := range onStream {
		if n > 1 {
			twice++
			t.Errorf("record %s on the stream %d times", id, n)
		}
	}
	for _, r := range recs {
		if onStream[r.ID] == 0 {
			missing++
		} else if bodies[r.ID].requestID() != r.requestID() {
			t.Errorf("record %s: the stream's body has request %s, the trace %s", r.ID, bodies[r.ID].requestID(), r.requestID())
		}
	}
	t.Logf("answered %d, trace %d records, stream %d messages (%d distinct), missing %d, duplicated %d",
		len(l.answers), len(recs), total, len(onStream), missing, twice)
	if missing > 0 || total != len(recs) {
		t.Errorf("the stream holds %d messages for %d trace records; %d records missing", total, len(recs), missing)
	}
}

// readStream reads every message of the JetStream stream name: how many
// times each Nats-Msg-Id is on it, the record each body holds (its id must
// be the message's Nats-Msg-Id), and the number of messages. check sees
// each message's id and subject.
func readStream(t *testing.T, js jetstream.JetStream, name string, check func(id, subject string)) (map[string]int, map[string]record, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	total := int(info.State.Msgs)
	c, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	onStream := map[string]int{}
	bodies := map[string]record{}
	for n := 0; n < total; {
		batch, err := c.Fetch(min(total-n, 1000), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for m := range batch.Messages() {
			n++
			got++
			id := m.Headers().Get("Nats-Msg-Id")
			onStream[id]++
			var r record
			if err := json.Unmarshal(m.Data(), &r); err != nil || r.ID != id {
				t.Fatalf("message %s: body %.200s (%v)", id, m.Data(), err)
			}
			bodies[id] = r
			if check != nil {
				check(id, m.Subject())
			}
		}
		if got == 0 {
			t.Fatalf("reading the stream: nothing within 5s (%v) after %d of %d messages", batch.Error(), n, total)
		}
	}
	return onStream, bodies, total
}
