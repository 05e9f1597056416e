// Package noredirect keeps warden's gateways from following an upstream's
// redirect. A followed redirect would send the request, with the headers
// configured for that upstream (tokens, API keys: Go drops Authorization
// and Cookie on a redirect to another host, not the others) and its body,
// to wherever the Location points, and relay that host's answer as the
// upstream's: a credential leak and a request forgery. The webhook, aos and
// notify clients refuse redirects the same way (webhook.SharedClient).
package noredirect

import (
	"errors"
	"fmt"
	"net/http"
)

// Error is a redirect an upstream answered, refused: the request is not
// sent again anywhere.
type Error struct {
	Status int    // the upstream's 3xx status
	To     string // scheme and host of the Location (for logs; no path or query)
}

// Error says what happened without the target, so that a message built
// from it can go to a client.
func (e *Error) Error() string {
	return fmt.Sprintf("answered HTTP %d, a redirect (not followed)", e.Status)
}

// Refuse is an http.Client CheckRedirect that follows no redirect: the
// client returns an *Error (wrapped in a *url.Error) and closes the 3xx
// answer's body.
func Refuse(req *http.Request, _ []*http.Request) error {
	e := &Error{To: req.URL.Scheme + "://" + req.URL.Host}
	if req.Response != nil {
		e.Status = req.Response.StatusCode
	}
	return e
}

// Client returns c (nil: a zero http.Client) refusing redirects; a client
// with its own CheckRedirect is returned as is (its owner decided).
func Client(c *http.Client) *http.Client {
	if c == nil {
		c = &http.Client{}
	} else if c.CheckRedirect != nil {
		return c
	} else {
		cp := *c
		c = &cp
	}
	c.CheckRedirect = Refuse
	return c
}

// Target is " to <scheme://host>" when err is a refused redirect, else "":
// for log lines (the operator's), never for a client's answer.
func Target(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return " to " + e.To
	}
	return ""
}
