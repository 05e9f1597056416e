package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers driver "sqlite"

	"github.com/wardenhq/warden/internal/tracehash"
)

// dsn returns the file: URI of path with the given query parameters.
func dsn(path string, params ...string) string {
	u := url.URL{Scheme: "file", Path: path}
	// url.URL.String gives file:///abs/path, which SQLite accepts.
	return u.String() + "?" + strings.Join(params, "&")
}

func busyParam(d time.Duration) string {
	if d <= 0 {
		d = DefaultBusyTimeout
	}
	return fmt.Sprintf("_pragma=busy_timeout(%d)", d.Milliseconds())
}

// Open opens (creating them if needed: the directory with mode 0700, the
// files 0600) the store in dir, migrates its schema and starts the writer.
// A directory or trace file that group or others may access is refused
// (ErrOpenPermissions), except an empty directory, which is made 0700.
func Open(dir string, opts Options) (*Store, error) {
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = DefaultMaxBatch
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = DefaultQueueSize
	}
	if opts.MaxUnindexed <= 0 {
		opts.MaxUnindexed = DefaultMaxUnindexed
	}
	var syncMode string
	switch strings.ToLower(opts.Synchronous) {
	case "", "normal":
		syncMode = "NORMAL"
	case "full":
		syncMode = "FULL"
	default:
		return nil, fmt.Errorf("sqlite: unknown Synchronous %q (want \"normal\" or \"full\")", opts.Synchronous)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("sqlite: create trace directory: %w", err)
	}
	if err := checkPrivate(abs, true); err != nil {
		return nil, err
	}
	path := filepath.Join(abs, FileName)
	// Records hold secrets: create the file 0600 before SQLite does (with the
	// umask's mode); SQLite gives the -wal and -shm files the same mode. An
	// empty file is a valid new database.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	f.Close()

	// undo closes what Open has opened so far, newest first, when a later
	// step fails.
	var undo []func()
	fail := func(err error) (*Store, error) {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
		return nil, err
	}
	wdb, err := sql.Open("sqlite", dsn(path,
		busyParam(opts.BusyTimeout),
		"_pragma=synchronous("+syncMode+")",
		"_pragma=wal_autocheckpoint(0)", // see checkpoint.go
		"_txlock=immediate",
	))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	undo = append(undo, func() { wdb.Close() })
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	wdb.SetConnMaxLifetime(0)
	wdb.SetConnMaxIdleTime(0)
	ctx := context.Background()
	// page_size only takes effect on a new database, and must be set before
	// it switches to WAL; both are persistent, and no-ops later.
	for _, p := range []string{fmt.Sprintf("PRAGMA page_size = %d", pageSize), "PRAGMA journal_mode = WAL"} {
		if _, err := wdb.ExecContext(ctx, p); err != nil {
			return fail(fmt.Errorf("sqlite: %s: %s: %w", path, p, err))
		}
	}
	if err := migrate(ctx, wdb); err != nil {
		return fail(fmt.Errorf("sqlite: %s: %w", path, err))
	}
	key, keyWhere, err := tracehash.ResolveKey(opts.ChainKey, opts.ChainKeyFile)
	if err != nil {
		return fail(fmt.Errorf("sqlite: %w", err))
	}
	if err := ensureChain(ctx, wdb, key, keyWhere); err != nil {
		return fail(fmt.Errorf("%w (%s)", err, path))
	}
	dbFile, err := os.Stat(path)
	if err != nil {
		return fail(fmt.Errorf("sqlite: %w", err))
	}

	rdb, err := openReader(path, opts.BusyTimeout)
	if err != nil {
		return fail(err)
	}
	undo = append(undo, func() { rdb.Close() })
	blobs, err := openBlobs(filepath.Join(abs, BlobFileName), false)
	if err != nil {
		return fail(err)
	}
	undo = append(undo, func() { blobs.close() })
	rblobs, err := openBlobs(filepath.Join(abs, BlobFileName), true)
	if err != nil {
		return fail(err)
	}
	undo = append(undo, func() { rblobs.close() })
	s := &Store{
		blobs:    blobs,
		rblobs:   rblobs,
		syncMode: syncMode,
		dir:      abs,
		path:     path,
		dbFile:   dbFile,
		rdb:      rdb,
		wdb:      wdb,
		opts:     opts,
		queue:    make(chan *request, opts.QueueSize),
		done:     make(chan struct{}),
		batch:    make([]*request, 0, opts.MaxBatch),
		chainKey: key,
		keyed:    tracehash.NewKeyed(key),
	}
	s.approvals = newApprovals(s)
	s.agbomRules, s.fleetRules = newAgBOM(s), newFleet(s)
	s.acsRules, s.labelRules = newACS(s), newLabels(s)
	if err := s.connect(); err != nil {
		return fail(err)
	}
	undo = append(undo, func() { s.disconnect(false) })
	cdb, err := sql.Open("sqlite", dsn(path, busyParam(opts.BusyTimeout), "_pragma=synchronous("+syncMode+")"))
	if err != nil {
		return fail(fmt.Errorf("sqlite: open %s: %w", path, err))
	}
	undo = append(undo, func() { cdb.Close() })
	cdb.SetMaxOpenConns(1)
	// Approvals are written on a connection of their own (the writer's is
	// the writer goroutine's alone), as durably as the records; sql.Open
	// connects on first use, so a store that keeps no approvals pays
	// nothing. Like the writer's, it leaves checkpoints to the
	// checkpointer.
	adb, err := sql.Open("sqlite", dsn(path,
		busyParam(opts.BusyTimeout),
		"_pragma=synchronous("+syncMode+")",
		"_pragma=wal_autocheckpoint(0)",
		"_txlock=immediate",
	))
	if err != nil {
		return fail(fmt.Errorf("sqlite: open %s: %w", path, err))
	}
	undo = append(undo, func() { adb.Close() })
	adb.SetMaxOpenConns(1)
	adb.SetConnMaxIdleTime(time.Minute)
	s.adb = adb
	// The point reads' connections: like rdb's, but without mmap (see
	// readerMmap); connected on first use.
	pdb, err := readerDB(path, opts.BusyTimeout, 0)
	if err != nil {
		return fail(err)
	}
	undo = append(undo, func() { pdb.Close() })
	s.pdb = pdb
	s.ckpt = startCheckpointer(cdb)
	undo = append(undo, func() { s.ckpt.close() }) // closes cdb (its own undo is then a no-op)
	if opts.Log {
		if err := s.openLog(); err != nil {
			return fail(err)
		}
	}
	go s.run()
	return s, nil
}

// OpenReadOnly opens the store in dir for reading only, as `warden runs`
// does; a server may be writing it at the same time. Record on the result
// returns ErrReadOnly.
func OpenReadOnly(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	path := filepath.Join(abs, FileName)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("sqlite: no trace in %s: %w", abs, err)
	}
	if err := checkPrivate(abs, false); err != nil {
		return nil, err
	}
	rdb, err := openReader(path, 0)
	if err != nil {
		return nil, err
	}
	if err := checkVersion(context.Background(), rdb); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	rblobs, err := openBlobs(filepath.Join(abs, BlobFileName), true)
	if err != nil {
		rdb.Close()
		return nil, err
	}
	s := &Store{dir: abs, rdb: rdb, rblobs: rblobs, closed: true}
	s.approvals = newApprovals(s)
	s.agbomRules, s.fleetRules = newAgBOM(s), newFleet(s)
	s.acsRules, s.labelRules = newACS(s), newLabels(s)
	return s, nil
}

// readerMmap is the mmap_size of the read-only connections: SQLite maps
// up to this much of the database file (it caps it at its own limit, just
// under 2 GiB) and reads those pages without a read system call. A scan of
// every row — a filter no record matches — of 1,000,000 records then takes
// ~80–170 ms instead of ~180–330 ms (docs/BENCHMARKS.md). The
// writer does not map: only reads use it, and only the scans (rdb): a read
// transaction that starts after a commit unmaps the whole file and faults
// its pages back in, which costs a point read (an ACS session each step)
// more than it saves; those read through pdb, which does not map (ACS
// steps: ~5 % less of warden's CPU a step, docs/BENCHMARKS.md). The cost,
// documented by SQLite: an I/O error while reading a mapped page (a failing
// disk) is a fault that ends the process instead of an error the read
// returns. The trace file never shrinks (no VACUUM), so a mapped page is
// never cut off under a reader.
const readerMmap = 1 << 31

// readerDB returns a pool of up to four read-only connections to path,
// mapping up to mmap bytes of it (0: none); it connects on first use.
func readerDB(path string, busy time.Duration, mmap int64) (*sql.DB, error) {
	db, err := sql.Open("sqlite", dsn(path,
		"mode=ro",
		busyParam(busy),
		"_pragma=query_only(1)",
		fmt.Sprintf("_pragma=mmap_size(%d)", mmap),
	))
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s read-only: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(2)
	db.SetConnMaxIdleTime(time.Minute)
	return db, nil
}

// openReader opens the scans' read-only connections (mapped: readerMmap)
// and connects one, so that a missing or unreadable file fails here.
func openReader(path string, busy time.Duration) (*sql.DB, error) {
	rdb, err := readerDB(path, busy, readerMmap)
	if err != nil {
		return nil, err
	}
	if err := rdb.Ping(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("sqlite: open %s read-only: %w", path, err)
	}
	return rdb, nil
}
