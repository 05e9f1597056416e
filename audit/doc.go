// Package audit is the trace as the rest of warden sees it: the Record of
// one decision, NewRecord that builds it, the Store that keeps records
// durably (package sqlite, package postgres) and its Query, and what is
// read back from a record (its provenance, its shadow decision, the text a
// query matches). The hash chain and the stores' SQL live in
// internal/tracehash and internal/tracesql; the API over it in package
// server (docs/runs-api.md).
package audit
