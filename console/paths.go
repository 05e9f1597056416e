package console

import "strings"

// IsPage reports whether path is one of the console's pages (GET): what a
// read token may look at, and where a browser without a session is sent to
// sign in.
func IsPage(path string) bool {
	switch path {
	case "/", "/decisions", "/approvals", "/policies", "/overview":
		return true
	}
	for _, p := range []string{"/decisions/", "/sessions/", "/approvals/"} {
		if strings.HasPrefix(path, p) && len(path) > len(p) {
			return true
		}
	}
	return false
}

// IsApprovalPage reports whether path is the approvals page or one
// approval's page: an approver may see them without the read scope.
func IsApprovalPage(path string) bool {
	return path == "/approvals" || strings.HasPrefix(path, "/approvals/")
}

// IsPublic reports whether a GET of path needs no credential: the sign-in
// page and the static files (stylesheet, scripts: nothing secret).
func IsPublic(path string) bool {
	return path == LoginPath || strings.HasPrefix(path, StaticPrefix)
}

// Routes are the ServeMux patterns the console serves; the server mounts
// it on these, so other paths and methods get the server's own 404 and 405.
var Routes = []string{
	"GET /{$}", "GET /decisions", "GET /decisions/{id}", "GET /sessions/{id}", "GET /approvals", "GET /approvals/{id}",
	"GET /policies", "GET /overview", "GET " + LoginPath, "GET " + StaticPrefix,
	"POST " + SessionPath, "POST " + LogoutPath,
}

// Paths of the sign-in page, the static files and the session API.
const (
	LoginPath    = "/login"
	StaticPrefix = "/static/"
	// SessionPath signs in (POST {"token": "..."}); SessionPath + "/logout"
	// signs out.
	SessionPath = "/api/session"
	LogoutPath  = SessionPath + "/logout"
)
