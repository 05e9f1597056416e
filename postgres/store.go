package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/audit"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wardenhq/warden/internal/tracehash"
)

// Defaults of Options.
const (
	// DefaultTimeout bounds a Record (and a connection attempt) when
	// PostgreSQL is slow or unreachable: 2 s.
	DefaultTimeout = 2 * time.Second
	// DefaultMaxPending bounds the records queued for the writer.
	DefaultMaxPending = 4096
	// DefaultMaxBatch bounds the records one transaction commits.
	DefaultMaxBatch = 512
	// DefaultMaxConns is the pool's size.
	DefaultMaxConns = 8
	// readyTimeout bounds Ready's ping.
	readyTimeout = time.Second
)

// Options tune a Store; zero fields take the defaults above.
type Options struct {
	// Timeout bounds each Record: a record the writer has not taken by
	// then fails, and the transaction of a batch is given until its
	// oldest record's deadline (at least minCommit). It also bounds a
	// connection attempt. Default DefaultTimeout.
	Timeout time.Duration
	// MaxPending bounds the records waiting for the writer; Record blocks
	// (within its Timeout) while the queue is full.
	MaxPending int
	// MaxBatch bounds the records of one transaction.
	MaxBatch int
	// MaxConns bounds the pool's connections (the writer takes one, scans
	// and the shared state the others).
	MaxConns int32
	// NoMigrate opens without applying migrations: the schema must be
	// this binary's already (`warden runs`, `warden verify`).
	NoMigrate bool
	// ReadOnly opens for Scan and Verify only: Record fails with
	// ErrReadOnly. It implies NoMigrate.
	ReadOnly bool
	// OnBatch, if set, is called by the writer after each transaction
	// with its size, its duration and its error (the trace's batch
	// metrics); it must not block.
	OnBatch func(size int, dur time.Duration, err error)
	// ChainKey is the key the records are chained under (32 bytes,
	// HMAC-SHA256; chainkey.go, docs/verify.md): every replica writing the
	// database needs the same. When nil, it is read from ChainKeyFile,
	// else from tracehash.DefaultKeyFile ($WARDEN_TRACE_KEY_FILE, else
	// $XDG_CONFIG_HOME/warden/trace.chain.key), created there when there
	// is none. A database keyed with another key does not open for
	// writing. ReadOnly stores read no key at Open.
	ChainKey     []byte
	ChainKeyFile string
}

func (o *Options) defaults() {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxPending <= 0 {
		o.MaxPending = DefaultMaxPending
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.ReadOnly {
		o.NoMigrate = true
	}
}

// The trace and its readiness (/readyz).
var (
	_ audit.Store   = (*Store)(nil)
	_ audit.Readier = (*Store)(nil)
)

// Errors of a Store.
var (
	ErrClosed   = errors.New("postgres: store is closed")
	ErrReadOnly = errors.New("postgres: store is read-only")
)

// Store is the PostgreSQL trace (audit.Store) and the pool the shared state
// uses. Several Stores, in one process or many, may write one database: they
// share one order and one hash chain.
type Store struct {
	approvals  // the approval.ApprovalStore (approvals.go)
	agbomRules // the agbom.Store (agbom.go)
	fleetRules // the registry.Store and audit.CursorStore (fleet.go)
	acsRules   // the acsstate.Store (acs.go)
	labelRules // the labels.Store (labels.go)

	pool *pgxpool.Pool
	opts Options

	mu     sync.RWMutex // guards closed and sends on queue
	closed bool
	queue  chan *request
	done   chan struct{} // closed when the writer has drained the queue
	once   sync.Once

	nBatches, nRecords, nErrors atomic.Uint64

	// The chain head this Store's writer committed last (the writer
	// goroutine's alone): while known, a batch is chained after it and
	// written in one round trip (record.go, writeFast).
	headSeq   int64
	headHash  []byte
	headKnown bool

	labels labelReader // the session label reads waiting (labels.go)

	// chainKey is the key records are chained under (nil when ReadOnly);
	// keyed chains with it, on the writer goroutine.
	chainKey []byte
	keyed    *tracehash.Keyed
}

// TraceStats are the writer's counters since Open.
type TraceStats struct {
	Batches uint64 // transactions committed
	Records uint64 // records they stored
	Errors  uint64 // transactions that failed (their records were refused)
}

// TraceStats returns the writer's counters.
func (s *Store) TraceStats() TraceStats {
	return TraceStats{Batches: s.nBatches.Load(), Records: s.nRecords.Load(), Errors: s.nErrors.Load()}
}

// IsURL reports whether s names a PostgreSQL database (postgres:// or
// postgresql://), the form the `store:` key and --store take.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Open connects to the database url names (a postgres:// URL; libpq
// parameters such as sslmode and search_path pass through), applies the
// migrations unless opts.NoMigrate (then checks the version), and starts the
// writer. ctx bounds only the opening.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	opts.defaults()
	if !IsURL(url) {
		return nil, fmt.Errorf("postgres: %q is not a postgres:// URL", redactURL(url))
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's message may quote the URL: keep the password out of it.
		return nil, fmt.Errorf("postgres: parse store URL %s: invalid", redactURL(url))
	}
	cfg.MaxConns = opts.MaxConns
	cfg.ConnConfig.ConnectTimeout = opts.Timeout
	// A dead connection is found by the next use; health checks drop idle
	// ones meanwhile so that recovery does not start with a stale one.
	cfg.HealthCheckPeriod = 5 * time.Second
	// Every statement warden sends is a prepared one whose shape does not
	// depend on its parameters' values (filters are built into the SQL),
	// so a generic plan serves every execution: without this the server
	// plans the trace's insert anew for each batch, a tenth of its CPU
	// under load. A URL that sets plan_cache_mode keeps its own.
	if _, set := cfg.ConnConfig.RuntimeParams["plan_cache_mode"]; !set {
		cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	err = pool.Ping(pctx)
	cancel()
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect to %s: %w", redactURL(url), err)
	}
	if opts.NoMigrate {
		err = checkVersion(ctx, pool)
	} else {
		_, err = Migrate(ctx, pool)
	}
	if err != nil {
		pool.Close()
		return nil, err
	}
	s := &Store{pool: pool, opts: opts, done: make(chan struct{})}
	s.approvals = newApprovals(s)
	s.agbomRules, s.fleetRules = newAgBOM(s), newFleet(s)
	s.acsRules, s.labelRules = newACS(s), newLabels(s)
	if opts.ReadOnly {
		close(s.done)
		return s, nil
	}
	key, where, err := tracehash.ResolveKey(opts.ChainKey, opts.ChainKeyFile)
	if err == nil {
		err = ensureChain(ctx, pool, key, where)
	}
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s.chainKey, s.keyed = key, tracehash.NewKeyed(key)
	s.queue = make(chan *request, opts.MaxPending)
	go s.run()
	return s, nil
}

// Pool is the store's connection pool, for the shared state kept in the
// same database.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Ready reports whether PostgreSQL answers a ping within a second (or ctx's
// deadline, if sooner): /readyz.
func (s *Store) Ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: not ready: %w", err)
	}
	return nil
}

// Close stops taking records, commits the ones queued (each batch within
// the Timeout), and closes the pool. It is idempotent.
func (s *Store) Close() error {
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		if s.queue != nil {
			close(s.queue)
		}
		s.mu.Unlock()
		<-s.done
		s.pool.Close()
	})
	return nil
}

// redactURL is url with its password replaced, for messages.
func redactURL(url string) string {
	at := strings.LastIndexByte(url, '@')
	scheme := strings.Index(url, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return url
	}
	userinfo := url[scheme+3 : at]
	if i := strings.IndexByte(userinfo, ':'); i >= 0 {
		return url[:scheme+3] + userinfo[:i] + ":xxxxx" + url[at:]
	}
	return url
}

// beginRead starts a read-only REPEATABLE READ transaction: one snapshot.
func (s *Store) beginRead(ctx context.Context) (pgx.Tx, error) {
	return s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
}
