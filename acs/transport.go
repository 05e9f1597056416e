package acs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"

	"github.com/wardenhq/warden/jsonrpc"
)

// ServeHTTP serves POST /acs: the answer with HTTP 200 (JSON-RPC errors
// included); other methods get 405. Authentication, Origin and
// Content-Type are checked by the server before this runs.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		jsonrpc.WriteJSON(w, http.StatusMethodNotAllowed, encode(errorMessage(nil, errf(CodeInvalidRequest, "", "HTTP method %s not allowed: use POST", r.Method))))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		e := errf(CodeParseError, "", "reading the body: %v", err)
		if errors.As(err, &tooBig) {
			e = errf(CodeInvalidRequest, "", "the body exceeds the limit of %d bytes", h.opts.MaxBody).with("limit", h.opts.MaxBody)
		}
		jsonrpc.WriteJSON(w, http.StatusOK, encode(errorMessage(nil, e)))
		return
	}
	transport := "http"
	if r.TLS != nil {
		transport = "https"
	}
	jsonrpc.WriteJSON(w, http.StatusOK, h.Handle(r.Context(), body, transport))
}

// ServeStdio speaks ACS over a stream pair with the spec's Content-Length
// framing (`Content-Length: N`, a blank line, N bytes of UTF-8 JSON; other
// headers are ignored): each framed body is answered in order, until in
// ends (nil) or a frame is malformed or over MaxBody (an error, after a
// -32700/-32600 answer). The transport is "stdio".
func (h *Handler) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	br := bufio.NewReader(in)
	tp := textproto.NewReader(br)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tp.ReadMIMEHeader()
		if err == io.EOF && len(hdr) == 0 {
			return nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			writeFrame(out, encode(errorMessage(nil, errf(CodeParseError, "", "malformed frame header: %v", err))))
			return fmt.Errorf("acs stdio: malformed frame header: %w", err)
		}
		cl := strings.TrimSpace(hdr.Get("Content-Length"))
		n, err := strconv.ParseInt(cl, 10, 64)
		if err != nil || n < 0 {
			writeFrame(out, encode(errorMessage(nil, errf(CodeInvalidRequest, "", "a frame needs a Content-Length header (got %q)", clip(cl)))))
			return fmt.Errorf("acs stdio: frame without a valid Content-Length")
		}
		if n > h.opts.MaxBody {
			writeFrame(out, encode(errorMessage(nil, errf(CodeInvalidRequest, "", "a frame of %d bytes exceeds the limit of %d bytes", n, h.opts.MaxBody).with("limit", h.opts.MaxBody))))
			return fmt.Errorf("acs stdio: a frame of %d bytes exceeds the limit of %d", n, h.opts.MaxBody)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(br, body); err != nil {
			return fmt.Errorf("acs stdio: reading a frame of %d bytes: %w", n, err)
		}
		if err := writeFrame(out, h.Handle(ctx, body, "stdio")); err != nil {
			return fmt.Errorf("acs stdio: writing an answer: %w", err)
		}
	}
}

// writeFrame writes one Content-Length framed message.
func writeFrame(w io.Writer, b []byte) error {
	if _, err := fmt.Fprintf(w, "Content-Length: %d\r\n\r\n", len(b)); err != nil {
		return err
	}
	_, err := w.Write(b)
	return err
}
