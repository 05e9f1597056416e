package main

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"unicode/utf8"
)

// toUTF8 returns b as text: UTF-8 as is, anything else read as Latin-1
// (every byte a code point), so the result is deterministic and valid.
func toUTF8(b []byte) string {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + len(b)/8)
	for _, c := range b {
		sb.WriteRune(rune(c))
	}
	return sb.String()
}

// readableMessage renders an RFC 5322 message as a reader sees it: the
// From/To/Cc/Date/Subject headers, then the decoded text/plain parts. ok
// is false when the message has no readable text.
func readableMessage(raw []byte) (string, bool) {
	m, err := mail.ReadMessage(bytes.NewReader(bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n"))))
	if err != nil {
		return "", false
	}
	var sb strings.Builder
	dec := new(mime.WordDecoder)
	for _, h := range []string{"From", "To", "Cc", "Date", "Subject"} {
		if v := m.Header.Get(h); v != "" {
			if d, err := dec.DecodeHeader(v); err == nil {
				v = d
			}
			sb.WriteString(h + ": " + v + "\n")
		}
	}
	sb.WriteString("\n")
	n := sb.Len()
	textParts(&sb, m.Header.Get("Content-Type"), m.Header.Get("Content-Transfer-Encoding"), m.Body, 0)
	if sb.Len() == n {
		return "", false
	}
	return sb.String(), true
}

func textParts(sb *strings.Builder, ctype, cte string, body io.Reader, depth int) {
	if depth > 4 {
		return
	}
	mt, params, err := mime.ParseMediaType(ctype)
	if ctype == "" || err != nil {
		mt, params = "text/plain", map[string]string{}
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err != nil {
				return
			}
			textParts(sb, p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p, depth+1)
		}
	}
	if mt != "text/plain" {
		return
	}
	cs := strings.ToLower(params["charset"])
	if cs != "" && cs != "us-ascii" && cs != "utf-8" && cs != "iso-8859-1" && cs != "windows-1252" {
		return
	}
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, body) // it skips line breaks itself
	}
	b, err := io.ReadAll(io.LimitReader(body, 1<<20))
	if err != nil && len(b) == 0 {
		return
	}
	s := strings.TrimSpace(toUTF8(b))
	if s != "" {
		sb.WriteString(s + "\n\n")
	}
}

// normKey is the de-duplication key of a text: lower case, whitespace
// collapsed.
func normKey(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// clean trims a text and makes it valid UTF-8 without NULs or CRs.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.TrimSpace(s)
}
