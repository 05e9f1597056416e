// Package console is warden's operator console: server-rendered pages
// (html/template) over the trace, the approvals and the policies, with a
// small script of our own for live updates and deciding approvals. Every
// file is embedded in the binary; nothing is fetched from elsewhere, and the
// pages send a strict Content-Security-Policy (no inline script or style).
// Pages read the store one bounded page at a time (PageSize records).
//
// The pages: decisions (filters, cursor paging, live), one decision, one
// session's timeline, approvals (the pending queue and the decided ones),
// one approval, policies, and an overview of the last hour; the unseals
// (decisions?surface=unseal: who saw sealed originals, and who erased
// them); plus the sign-in page and the session API when auth is configured
// (docs/console.md). Viewers who may see them get the originals of redacted
// values, each view recorded (originals.go).
package console

import (
	"context"
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/wardenhq/warden/approval"
	"github.com/wardenhq/warden/audit"

	"github.com/wardenhq/warden"
	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/policy"
	"github.com/wardenhq/warden/stats"
	"github.com/wardenhq/warden/unseal"
)

// PageSize is the number of records a page shows.
const PageSize = 50

// readTimeout bounds the store reads of one page.
const readTimeout = 10 * time.Second

// CSP is the Content-Security-Policy of every console response: only our
// own files, no inline script or style, no framing.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"

// Approvals is what the console reads of the approvals (an
// *approval.Manager); it decides them through the API.
type Approvals interface {
	List(ctx context.Context, q approval.ApprovalQuery) ([]approval.Approval, error)
	Get(ctx context.Context, id, tenant string) (*approval.Approval, error)
}

// Policies is what the console shows of the policies in force (a
// *guardian.Guardian): the shared set, each tenant's, and their shadow
// sets (nil when there are none).
type Policies interface {
	Policies() *policy.Set
	TenantPolicies(tenant string) *policy.Set
	ReloadStatus(tenant string) policy.ReloadStatus
	ShadowPolicies(tenant string) *policy.Set
	ShadowReloadStatus(tenant string) policy.ReloadStatus
}

// Options are what the console reads. Every field may be nil: the pages then
// say what is missing.
type Options struct {
	// Store is the trace.
	Store audit.Store
	// Approvals lists approvals (nil: approvals are off).
	Approvals Approvals
	// Policies are the policy sets in force; Tenants the declared tenants.
	Policies Policies
	Tenants  []string
	// Stats counts the decisions of the last day (the overview, the
	// policies' match counts).
	Stats *stats.Observer
	// Auth and Sessions enable sign-in (both needed; nil: no sign-in, the
	// console is open, as the server is).
	Auth     *auth.Config
	Sessions *auth.Sessions
	// RunsStream is the path of the trace's SSE stream (GET, the filters of
	// the decisions page as its query) the newest decisions page follows;
	// "": the page is not live.
	RunsStream string
	// Instances lists the replicas sharing the store (GET /api/instances):
	// the overview shows them and flags one running other policies; nil:
	// not shown.
	Instances Instances
	// Unseal opens the sealed originals of redacted values for the viewers
	// who may see them (the unseal scope; approve for the approvals it may
	// decide), recording each unseal; nil: every page shows the redacted
	// form.
	Unseal *unseal.Service
	// Log reports failures; nil discards.
	Log *slog.Logger
	// Now is the clock (tests); nil: time.Now.
	Now func() time.Time
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Console serves the console's pages. Build it with New.
type Console struct {
	o     Options
	log   *slog.Logger
	pages map[string]*template.Template
	mux   *http.ServeMux
	// static maps a static file's name to its content hash, for cache
	// busting links.
	static map[string]string
}

// New returns the console handler. It serves GET of its pages, /login and
// /static/*, and POST /api/session and /api/session/logout; the server's
// guard has authenticated each request before (IsPage, IsPublic).
func New(o Options) *Console {
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Console{o: o, log: o.Log, mux: http.NewServeMux()}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.static = hashStatic()
	c.pages = c.parsePages()
	m := c.mux
	m.HandleFunc("GET /{$}", c.decisions)
	m.HandleFunc("GET /decisions", c.decisions)
	m.HandleFunc("GET /decisions/{id}", c.decision)
	m.HandleFunc("GET /sessions/{id}", c.session)
	m.HandleFunc("GET /approvals", c.approvals)
	m.HandleFunc("GET /approvals/{id}", c.approval)
	m.HandleFunc("GET /policies", c.policies)
	m.HandleFunc("GET /overview", c.overview)
	m.HandleFunc("GET "+LoginPath, c.login)
	m.HandleFunc("POST "+SessionPath, c.signIn)
	m.HandleFunc("POST "+LogoutPath, c.signOut)
	sub, _ := fs.Sub(staticFS, "static")
	files := http.FileServerFS(sub)
	m.Handle("GET "+StaticPrefix, http.StripPrefix(StaticPrefix[:len(StaticPrefix)-1], http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	})))
	return c
}

// ServeHTTP serves the console with its security headers.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Content-Type-Options", "nosniff")
	c.mux.ServeHTTP(w, r)
}

// signInOn reports whether the console has sign-in (auth configured).
func (c *Console) signInOn() bool { return c.o.Sessions != nil && c.o.Auth.Enabled() }

// viewer is who looks at a page.
type viewer struct {
	Name, Tenant string
	// SignedIn: a session (sign-out is offered); CanApprove: the
	// approve buttons are shown; CanRead: the pages besides the approvals'
	// are linked (an approver without read sees the approvals only);
	// CanUnseal: the pages show the originals of redacted values (the
	// unseal scope, which admin implies; everyone without auth).
	SignedIn, CanApprove, CanRead, CanUnseal bool
	// Originals: the script asks the approvals API for the originals of a
	// pending approval that arrives live (sealing on, and the viewer may
	// see an approval's: mayReveal).
	Originals bool
}

func (c *Console) viewer(r *http.Request) viewer {
	p := warden.PrincipalFrom(r.Context())
	v := viewer{Name: p.Name, Tenant: p.Tenant, CanApprove: true, CanRead: true, CanUnseal: true}
	if s, ok := auth.ScopesFrom(r.Context()); ok {
		v.CanApprove, v.CanRead, v.CanUnseal = s.Allows(auth.Approve), s.Allows(auth.Read), s.Allows(auth.Unseal)
		v.SignedIn = c.signInOn()
	}
	v.Originals = c.o.Unseal != nil && v.mayReveal()
	return v
}

// page is what every page template gets.
type page struct {
	Title  string
	Nav    string // the nav entry to mark
	Viewer viewer
	// Live is the stream the page's script follows ("" for none).
	Live string
	Data any
}

// render writes the page tmpl with data.
func (c *Console) render(w http.ResponseWriter, r *http.Request, code int, tmpl string, p page) {
	t := c.pages[tmpl]
	p.Viewer = c.viewer(r)
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, "layout", p); err != nil {
		c.log.Warn("console: rendering", "page", tmpl, "err", err)
		http.Error(w, "rendering the page failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(b.String()))
}

// fail renders the error page.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, code int, msg string) {
	c.render(w, r, code, "error", page{Title: http.StatusText(code), Data: msg})
}
