package postgres

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

// testBaseURL is WARDEN_POSTGRES_URL; the test is skipped when it is unset.
func testBaseURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("WARDEN_POSTGRES_URL")
	if u == "" {
		t.Skip("WARDEN_POSTGRES_URL is not set: skipping a PostgreSQL test")
	}
	return u
}

// withParam adds a query parameter to a postgres:// URL.
func withParam(url, key, value string) string {
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + key + "=" + value
}

// testSchemaURL creates a fresh schema for t in the test database and
// returns a URL whose connections use it (search_path); the schema is
// dropped when t ends. Opening the URL twice opens the same store.
func testSchemaURL(t testing.TB) string {
	t.Helper()
	base := testBaseURL(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "wt_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to WARDEN_POSTGRES_URL: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Logf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			t.Logf("drop schema %s: %v", schema, err)
		}
	})
	return withParam(base, "search_path", schema)
}

// openTest opens a store on url, closed when t ends.
func openTest(t testing.TB, url string, opts Options) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := Open(ctx, url, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
