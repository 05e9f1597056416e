package backend

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Driver opens the Backend url names. url is as given to Open: it starts
// with the scheme the driver was registered for, except a bare directory
// path, given to the "sqlite" driver as "sqlite:" + the path.
type Driver func(ctx context.Context, url string, opts Options) (*Backend, error)

var (
	mu      sync.RWMutex
	drivers = map[string]Driver{}
)

// DefaultScheme is the driver of a URL that is a bare directory path
// (./warden-data): the SQLite trace in that directory.
const DefaultScheme = "sqlite"

// Register makes open the driver of URLs with scheme (without the colon:
// "postgres"). A backend's package registers itself in its init; a second
// driver for the same scheme panics.
func Register(scheme string, open Driver) {
	mu.Lock()
	defer mu.Unlock()
	if open == nil {
		panic("backend: Register of a nil driver for " + scheme)
	}
	if _, dup := drivers[scheme]; dup {
		panic("backend: Register called twice for " + scheme)
	}
	drivers[scheme] = open
}

// Schemes returns the schemes with a driver, sorted.
func Schemes() []string {
	mu.RLock()
	defer mu.RUnlock()
	return slices.Sorted(maps.Keys(drivers))
}

// DirURL is the URL of the trace in directory dir with the default
// backend (sqlite:DIR): unlike the bare path, it cannot be taken for a URL
// whatever dir's name.
func DirURL(dir string) string { return DefaultScheme + ":" + dir }

// Open opens the backend url names with the driver registered for its
// scheme: sqlite:DIR, postgres://… or postgresql://…; a URL without a
// scheme is a directory path, the SQLite trace in it. A scheme without a
// driver is an error naming the package to import. The driver's errors
// are returned as they are.
func Open(ctx context.Context, url string, opts Options) (*Backend, error) {
	scheme, ok := Scheme(url)
	if !ok {
		scheme, url = DefaultScheme, DirURL(url)
	}
	mu.RLock()
	open := drivers[scheme]
	mu.RUnlock()
	if open == nil {
		return nil, fmt.Errorf("backend: no driver for %s: URLs (import %s)", scheme, driverPackage(scheme))
	}
	return open(ctx, url, opts)
}

// Scheme returns the scheme of url ("postgres" of postgres://…, "sqlite"
// of sqlite:DIR), and false when url has none: a path, such as
// ./warden-data, /var/lib/warden or C:\warden. A scheme is two or more
// letters, digits, '+', '-' or '.', the first a letter, before a colon.
func Scheme(url string) (string, bool) {
	i := strings.IndexByte(url, ':')
	if i < 2 {
		return "", false
	}
	for j, c := range url[:i] {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case j > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return "", false
		}
	}
	return strings.ToLower(url[:i]), true
}

// driverPackage is the package whose import registers the driver of
// scheme, for Open's error.
func driverPackage(scheme string) string {
	switch scheme {
	case "sqlite":
		return "github.com/wardenhq/warden/sqlite"
	case "postgres", "postgresql":
		return "github.com/wardenhq/warden/postgres"
	}
	return "the package of its backend"
}
