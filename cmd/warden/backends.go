package main

// warden links every trace backend: the SQLite trace in a data directory
// (--data, the default) and PostgreSQL (--store, the config's store:).
// backend.Open finds each by its URL's scheme.
import (
	_ "github.com/wardenhq/warden/postgres"
	_ "github.com/wardenhq/warden/sqlite"
)
