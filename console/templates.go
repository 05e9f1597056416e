package console

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wardenhq/warden/approval"
)

// pageNames are the page templates; each is parsed with layout.html.
var pageNames = []string{"decisions", "decision", "session", "approvals", "approval", "policies", "overview", "login", "error"}

func (c *Console) parsePages() map[string]*template.Template {
	funcs := template.FuncMap{
		"static":   c.staticURL,
		"time":     fmtTime,
		"clock":    func(t time.Time) string { return t.UTC().Format("15:04:05") },
		"iso":      func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) },
		"us":       fmtMicros,
		"dur":      fmtDuration,
		"cut":      cut,
		"short":    func(s string) string { return cut(s, 12) },
		"add":      func(a, b int) int { return a + b },
		"plural":   plural,
		"pct":      func(a, b uint64) string { return pct(a, b) },
		"decClass": decisionClass,
		"none":     func() *approval.Approval { return nil },
		"dict_pending": func(a *approval.Approval, can bool) pendingItem {
			return pendingItem{A: a, Can: can}
		},
	}
	pages := make(map[string]*template.Template, len(pageNames))
	for _, name := range pageNames {
		pages[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS,
			"templates/layout.html", "templates/"+name+".html"))
	}
	return pages
}

// pendingItem is one pending approval of the queue, and whether the
// viewer may decide it.
type pendingItem struct {
	A   *approval.Approval
	Can bool
}

// hashStatic returns each static file's short content hash.
func hashStatic() map[string]string {
	out := map[string]string{}
	_ = fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[strings.TrimPrefix(p, "static/")] = hex.EncodeToString(sum[:6])
		return nil
	})
	return out
}

// staticURL is the link of a static file, with its hash (a new binary's
// files are never taken from a cache of the old one's).
func (c *Console) staticURL(name string) string {
	return StaticPrefix + name + "?v=" + c.static[name]
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000Z")
}

// fmtMicros formats a latency in microseconds.
func fmtMicros(us int64) string { return fmtDuration(time.Duration(us) * time.Microsecond) }

func fmtDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0"
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d/time.Microsecond)
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// plural is n and the noun, with an s unless n is 1: "2 values".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// cut shortens s to at most n runes, with an ellipsis.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

func pct(a, b uint64) string {
	if b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

// decisionClass is the CSS class of a decision's badge.
func decisionClass(d string) string {
	switch d {
	case "allow", "modify", "ask", "defer", "deny", "approved", "denied", "expired", "pending", "error":
		return "d-" + d
	}
	return "d-other"
}
