// Package pgtest gives tests a fresh PostgreSQL schema of their own in the
// database WARDEN_POSTGRES_URL names, and skips them when it is unset.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Env is the variable naming the test database.
const Env = "WARDEN_POSTGRES_URL"

// BaseURL is $WARDEN_POSTGRES_URL; t is skipped when it is unset.
func BaseURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(Env)
	if u == "" {
		t.Skip(Env + " is not set: skipping a PostgreSQL test")
	}
	return u
}

// SchemaURL creates a fresh schema in the test database and returns a URL
// whose connections use it (search_path); the schema is dropped when t
// ends. Opening the URL twice opens the same store.
func SchemaURL(t testing.TB) string {
	t.Helper()
	base := BaseURL(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "wt_" + hex.EncodeToString(b[:])
	exec(t, base, `CREATE SCHEMA `+schema, true)
	t.Cleanup(func() { exec(t, base, `DROP SCHEMA `+schema+` CASCADE`, false) })
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}

// Exec runs sql on url (a test's schema URL), failing t on error.
func Exec(t testing.TB, url, sql string) {
	t.Helper()
	exec(t, url, sql, true)
}

func exec(t testing.TB, url, sql string, fatal bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	report := t.Logf
	if fatal {
		report = t.Fatalf
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		report("pgtest: connect: %v", err)
		return
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql); err != nil {
		report("pgtest: %s: %v", sql, err)
	}
}
