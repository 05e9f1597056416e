package approval

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/wardenhq/warden/internal/canon"

	"github.com/wardenhq/warden"
)

// Key identifies a step for an approved retry: the SHA-256 of the RFC 8785
// canonical JSON of its event, surface, tenant, session, agent, tool (server
// and name) and arguments — or, for a step without a tool, its text. Two
// requests for the same step get the same key whatever their ids, key order
// or number formatting; a changed argument gives another key.
func Key(ev *warden.Event) (string, error) {
	k := map[string]any{
		"event": ev.Name, "surface": ev.Surface, "tenant": ev.Principal.Tenant,
		"session": ev.SessionID, "agent": ev.Agent.ID,
	}
	if ev.Tool.Name != "" {
		k["tool"] = map[string]any{"server": ev.Tool.Server, "name": ev.Tool.Name, "args": ev.Tool.Args}
	} else {
		k["text"] = ev.Text()
	}
	b, err := json.Marshal(k)
	if err != nil {
		return "", fmt.Errorf("approval key: %w", err)
	}
	c, err := canon.Transform(b)
	if err != nil {
		return "", fmt.Errorf("approval key: %w", err)
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

// Summary is a one-line description of a step for an approver: the tool and
// its arguments, or the event and its text, passed through redact (the
// trace's redaction) and then cut to summaryMax bytes: cutting first could
// leave part of a secret the detectors no longer recognise.
func Summary(ev *warden.Event, redact func(string) string) string {
	var s string
	if ev.Tool.Name != "" {
		name := ev.Tool.Name
		if ev.Tool.Server != "" {
			name = ev.Tool.Server + "/" + name
		}
		args, _ := json.Marshal(ev.Tool.Args)
		s = name + " " + string(args)
	} else {
		s = ev.Name
		if t := ev.Text(); t != "" {
			s += ": " + t
		}
	}
	s = strings.Join(strings.Fields(redact(s)), " ") // one line
	if len(s) > summaryMax {
		cut := summaryMax
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
