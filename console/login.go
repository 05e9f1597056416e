package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/wardenhq/warden/auth"
	"github.com/wardenhq/warden/jsonstrict"
)

// maxSessionBody bounds a sign-in request's body.
const maxSessionBody = 4 << 10

// loginData is the sign-in page.
type loginData struct {
	Next string
	Off  bool // no auth configured: nothing to sign in to
}

// safeNext is where to go after signing in: a path of this server, never
// another site ("//host", "/\host") — "/" otherwise.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") ||
		strings.ContainsAny(next, "\r\n\t") {
		return "/"
	}
	return next
}

// login serves the sign-in page: a token field; the script posts it to
// the session API.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	d := loginData{Next: safeNext(r.URL.Query().Get("next")), Off: !c.signInOn()}
	c.render(w, r, http.StatusOK, "login", page{Title: "Sign in", Nav: "login", Data: &d})
}

// sessionJSON answers the session API.
func sessionJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// signIn serves POST /api/session with {"token": "..."}: for a configured
// token with the read, approve or admin scope, it sets the session cookie
// (auth.Sessions: HttpOnly, SameSite=Strict, Path=/, Secure over TLS,
// auth.SessionTTL) and answers the token's name, scopes and the session's
// expiry. The request must come from the console's own origin (an Origin
// header naming it), which also keeps another site from signing a browser
// in as someone else.
func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	if !c.signInOn() {
		sessionJSON(w, http.StatusNotFound, map[string]string{"error": "sign-in is off: no auth.tokens are configured, the console is open"})
		return
	}
	if !auth.SameOrigin(r) {
		sessionJSON(w, http.StatusForbidden, map[string]string{"error": "forbidden: signing in needs a same-origin Origin header"})
		return
	}
	var body struct {
		Token string `json:"token"`
	}
	// Strict decoding (jsonstrict.Decode): {"token":"x","Token":"..."} is
	// refused, not read as whichever key encoding/json takes.
	b, err := io.ReadAll(io.LimitReader(r.Body, maxSessionBody+1))
	if err == nil && len(b) > maxSessionBody {
		err = fmt.Errorf("more than %d bytes", maxSessionBody)
	}
	if err == nil {
		err = jsonstrict.Decode(b, &body)
	}
	if err != nil || body.Token == "" {
		msg := `body: expected {"token": "..."}`
		var amb *jsonstrict.Error
		if errors.As(err, &amb) { // what was refused; never the body's text
			msg += ": " + amb.Error()
		}
		sessionJSON(w, http.StatusBadRequest, map[string]string{"error": msg})
		return
	}
	tok, ok := c.o.Auth.Lookup(strings.TrimSpace(body.Token))
	if !ok {
		sessionJSON(w, http.StatusUnauthorized, map[string]string{"error": "unknown token"})
		return
	}
	if !tok.Scopes.Allows(auth.Read) && !tok.Scopes.Allows(auth.Approve) {
		sessionJSON(w, http.StatusForbidden, map[string]string{"error": "token " + tok.Name + " has neither the read nor the approve scope: it cannot use the console"})
		return
	}
	value, expires := c.o.Sessions.Issue(tok)
	http.SetCookie(w, sessionCookie(r, value, expires))
	c.log.Info("console sign-in", "token", tok.Name)
	home := "/"
	if !tok.Scopes.Allows(auth.Read) {
		home = "/approvals" // an approver without read sees the approvals only
	}
	sessionJSON(w, http.StatusOK, map[string]any{"name": tok.Name, "scopes": tok.Scopes.String(), "tenant": tok.Tenant,
		"expires": expires.UTC(), "home": home})
}

// signOut serves POST /api/session/logout: the cookie is cleared.
func (c *Console) signOut(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, sessionCookie(r, "", time.Unix(0, 0)))
	sessionJSON(w, http.StatusOK, map[string]string{"signed_out": "true"})
}

// sessionCookie is the session cookie with value until expires (a past
// expiry clears it).
func sessionCookie(r *http.Request, value string, expires time.Time) *http.Cookie {
	ck := &http.Cookie{Name: auth.SessionCookie, Value: value, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, Expires: expires.UTC()}
	if value == "" {
		ck.MaxAge = -1
	} else {
		ck.MaxAge = int(time.Until(expires).Seconds())
	}
	return ck
}
