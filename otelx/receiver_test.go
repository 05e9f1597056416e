package otelx_test

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// span is a received span, flattened for assertions.
type span struct {
	Name            string
	TraceID, SpanID string
	ParentID        string
	Kind            tracepb.Span_SpanKind
	Start, End      time.Time
	Attrs           map[string]any
	Events          map[string]map[string]any
	StatusError     bool
}

// receiver collects the spans an OTLP exporter sends it.
type receiver struct {
	mu    sync.Mutex
	spans []span
	reqs  int
}

func (rc *receiver) add(req *coltracepb.ExportTraceServiceRequest) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.reqs++
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				rc.spans = append(rc.spans, flatten(s))
			}
		}
	}
}

func flatten(s *tracepb.Span) span {
	out := span{Name: s.GetName(), TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
		ParentID: hex.EncodeToString(s.GetParentSpanId()), Kind: s.GetKind(),
		Start: time.Unix(0, int64(s.GetStartTimeUnixNano())), End: time.Unix(0, int64(s.GetEndTimeUnixNano())),
		Attrs: attrs(s.GetAttributes()), Events: map[string]map[string]any{},
		StatusError: s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR}
	for _, e := range s.GetEvents() {
		out.Events[e.GetName()] = attrs(e.GetAttributes())
	}
	return out
}

func attrs(kvs []*commonpb.KeyValue) map[string]any {
	m := map[string]any{}
	for _, kv := range kvs {
		m[kv.GetKey()] = value(kv.GetValue())
	}
	return m
}

func value(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, value(e))
		}
		return out
	}
	return nil
}

// wait returns the spans once at least n arrived (or fails after 10s).
func (rc *receiver) wait(t *testing.T, n int) []span {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		rc.mu.Lock()
		got := append([]span(nil), rc.spans...)
		rc.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %d spans, want at least %d: %+v", len(got), n, got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// httpReceiver is an OTLP/HTTP receiver: POST /v1/traces with a protobuf
// ExportTraceServiceRequest (gzip or not).
func httpReceiver(t testing.TB) (*receiver, string) {
	rc := &receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/x-protobuf" {
			http.Error(w, "content type "+ct, http.StatusUnsupportedMediaType)
			return
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(io.LimitReader(body, 16<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.add(&req)
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return rc, srv.URL
}

// grpcReceiver is an OTLP/gRPC receiver (TraceService/Export).
type grpcTraceService struct {
	coltracepb.UnimplementedTraceServiceServer
	rc *receiver
}

func (g *grpcTraceService) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	g.rc.add(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func grpcReceiver(t *testing.T) (*receiver, string) {
	rc := &receiver{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(s, &grpcTraceService{rc: rc})
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(s.Stop)
	return rc, "http://" + ln.Addr().String()
}
