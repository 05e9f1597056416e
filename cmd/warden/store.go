package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/wardenhq/warden/audit"
	"github.com/wardenhq/warden/backend"

	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/postgres"
)

// storeOpenTimeout bounds connecting to PostgreSQL and migrating at start.
const storeOpenTimeout = 30 * time.Second

// storeFlagUsage is the help of --store.
const storeFlagUsage = "PostgreSQL database of the trace and the shared state, postgres://… (default: the config's store:, else the SQLite trace under --data)"

// addStoreFlag registers --store on fs.
func addStoreFlag(fs *flag.FlagSet) *string {
	return fs.String("store", "", storeFlagUsage)
}

// checkStoreFlag validates a --store value ("" is none).
func checkStoreFlag(url string) error {
	if url == "" {
		return nil
	}
	if err := backend.CheckStoreURL(url); err != nil {
		return fmt.Errorf("--store: %v", err)
	}
	return nil
}

// openReadTrace opens the trace read only: PostgreSQL when url is set, else
// the SQLite trace in data. where names it in messages.
func openReadTrace(url, data string) (st audit.Store, where string, err error) {
	if url != "" {
		if err := checkStoreFlag(url); err != nil {
			return nil, "", err
		}
		ctx, cancel := context.WithTimeout(context.Background(), storeOpenTimeout)
		defer cancel()
		where = "PostgreSQL"
		b, err := backend.Open(ctx, url, backend.Options{ReadOnly: true})
		if err != nil {
			return nil, where, fmt.Errorf("opening the trace in %s: %v", where, err)
		}
		return b.Trace, where, nil
	}
	b, err := backend.Open(context.Background(), backend.DirURL(data), backend.Options{ReadOnly: true})
	if err != nil {
		return nil, data, fmt.Errorf("opening the trace in %s: %v", data, err)
	}
	return b.Trace, data, nil
}

// cmdMigrate applies the embedded PostgreSQL schema (docs/postgres.md).
func cmdMigrate(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("migrate", stderr)
	url := fs.String("store", "", "PostgreSQL database to migrate, postgres://… (default: the config's store:)")
	cfgFile := fs.String("config", "", "config file whose store: names the database")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *url == "" && *cfgFile != "" {
		c, err := config.Load(*cfgFile)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exitError
		}
		*url = c.Store
	}
	if *url == "" {
		return fail(stderr, "migrate: --store postgres://… (or a --config with store:) is required")
	}
	if err := checkStoreFlag(*url); err != nil {
		return fail(stderr, "%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeOpenTimeout)
	defer cancel()
	from, err := postgres.MigrateURL(ctx, *url)
	if err != nil {
		return fail(stderr, "migrate: %v", err)
	}
	if from == postgres.SchemaVersion {
		fmt.Fprintf(stdout, "ok: schema version %d, already current\n", from)
	} else {
		fmt.Fprintf(stdout, "ok: migrated the schema from version %d to %d\n", from, postgres.SchemaVersion)
	}
	return exitOK
}

// openServeStore opens the backend serve, acs stdio and the in-process hook
// write: PostgreSQL when url is set (--store or the config's store:;
// migrating it under the advisory lock), else the SQLite trace in data.
// onBatch (nil: none) observes the writer's batches. logged makes the
// SQLite trace's segment log each record's durable point (sqlite.Options.Log:
// serve --trace-log; a short-lived process never takes the log).
func openServeStore(url, data string, onBatch func(n int, d time.Duration, err error), logged bool) (*backend.Backend, string, error) {
	opts := backend.Options{OnBatch: onBatch, TraceLog: logged}
	if url != "" {
		if err := checkStoreFlag(url); err != nil {
			return nil, "", err
		}
		ctx, cancel := context.WithTimeout(context.Background(), storeOpenTimeout)
		defer cancel()
		b, err := backend.Open(ctx, url, opts)
		if err != nil {
			return nil, "PostgreSQL", fmt.Errorf("opening the store in PostgreSQL: %v", err)
		}
		return b, "PostgreSQL", nil
	}
	b, err := backend.Open(context.Background(), backend.DirURL(data), opts)
	if err != nil {
		return nil, data, fmt.Errorf("opening the trace in %s: %v", data, err)
	}
	return b, data, nil
}
