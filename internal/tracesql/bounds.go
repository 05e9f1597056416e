package tracesql

// MaxBatchBytes bounds the record bytes one write batch of a trace store
// carries (SQLite's group commit, PostgreSQL's transaction; and the SQLite
// writer's buffer for them): a batch stops growing once it holds this
// much.
const MaxBatchBytes = 8 << 20
