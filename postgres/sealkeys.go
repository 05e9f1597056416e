package postgres

import (
	"github.com/wardenhq/warden/internal/tracesql"
	"github.com/wardenhq/warden/seal"
)

// The sealing keys (schema 7, schema.go) are kept by the statements
// shared with SQLite (tracesql.SealKeys), on the state pool: the partial
// unique index seal_keys_live makes the first of several replicas adding
// a key for one reference win.
//
// Destroying a key NULLs its wrapped bytes in a new row version; the old
// version stays in the table's pages until VACUUM reclaims them, and in
// the WAL (and any WAL archive or base backup) as PostgreSQL keeps it:
// the operator's retention of those decides when the bytes are gone for
// good (docs/postgres.md).

// SealKeys returns the store's seal.KeyStore.
func (s *Store) SealKeys() seal.KeyStore { return tracesql.SealKeys{DB: rowDB{s: s}} }
