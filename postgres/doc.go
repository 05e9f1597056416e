// Package postgres is warden's PostgreSQL store: the trace (audit.Store,
// with the same hash chain as the SQLite store) and, in separate files, the
// state a fleet of replicas shares. Its schema is a list of embedded,
// versioned migrations (schema.go) applied under an advisory lock.
package postgres
