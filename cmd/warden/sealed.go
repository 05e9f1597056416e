package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/user"

	"github.com/wardenhq/warden/backend"
	"github.com/wardenhq/warden/config"
	"github.com/wardenhq/warden/seal"
	"github.com/wardenhq/warden/unseal"
)

// The commands that read or change the sealed originals of redacted
// values (docs/security.md "Sealed originals"): `warden forget`, `warden
// keys rotate` and `warden replay`. They find the trace as serve does
// (--store, else the config's store:, else the SQLite trace in --data;
// replay: --store, else --data) and the key-encryption key in the
// config's trace.seal section — never creating one: a reader that finds
// no key says so rather than sealing nothing under a new one.

// sealFlags are the flags of the commands that open a trace's sealing
// keys: where the trace is, and the config whose trace.seal names the KEK.
type sealFlags struct {
	data, store, config *string
}

func addSealFlags(fs *flag.FlagSet) sealFlags {
	return sealFlags{
		data:   fs.String("data", "./warden-data", "data directory (SQLite trace and its sealing keys)"),
		store:  addStoreFlag(fs),
		config: fs.String("config", "", "config file: its trace.seal names the key-encryption key (kek_file, kek_env; default $"+seal.KEKFileEnv+", else ~/.config/warden/"+seal.KEKFileName+"), its store: the trace"),
	}
}

// open loads the config and opens the backend the flags name, for
// writing: --store, else the config's store:, else the SQLite trace in
// --data, which must exist (no new trace is made to erase or rewrap in).
func (f sealFlags) open() (*backend.Backend, *config.Config, string, error) {
	cfg, err := loadConfigFile(*f.config)
	if err != nil {
		return nil, nil, "", err
	}
	url := *f.store
	if url == "" {
		url = cfg.Store
	}
	if url == "" {
		if _, err := os.Stat(*f.data); err != nil {
			return nil, nil, *f.data, fmt.Errorf("no trace in %s: %v (give --data DIR or --store postgres://…)", *f.data, err)
		}
	}
	b, where, err := openServeStore(url, *f.data, nil, false)
	if err != nil {
		return nil, nil, where, err
	}
	if where != "PostgreSQL" {
		where = "the trace in " + where
	}
	return b, cfg, where, nil
}

// loadConfigFile loads file, or the defaults for "".
func loadConfigFile(file string) (*config.Config, error) {
	if file == "" {
		return config.Default(), nil
	}
	return config.Load(file)
}

// errSealingOff is existingSealer's error for trace.seal.enabled: false.
var errSealingOff = errors.New("sealed originals are off (trace.seal.enabled: false): no original was sealed under this config")

// existingSealer returns a Sealer over b's key store with the config's
// KEK (trace.seal), never creating a KEK. where names the trace. Errors:
// errSealingOff; a trace that keeps no keys; seal.ErrNoKEK, naming the
// file looked for and where its name came from; a KEK that does not load.
func existingSealer(sc seal.Config, b *backend.Backend, where string) (*seal.Sealer, error) {
	if !sc.On() {
		return nil, errSealingOff
	}
	if b.Seal == nil {
		return nil, fmt.Errorf("%s keeps no sealing keys", where)
	}
	kek, path, err := sc.ExistingKEK()
	if errors.Is(err, seal.ErrNoKEK) {
		return nil, noKEK{path, sc}
	}
	if err != nil {
		return nil, fmt.Errorf("trace.seal: %w", err)
	}
	return seal.New(seal.Options{KEK: kek, Store: b.Seal, Granularity: sc.Granularity()})
}

// noKEK is seal.ErrNoKEK with the file looked for and where its name came
// from.
type noKEK struct {
	path string
	sc   seal.Config
}

func (e noKEK) Error() string {
	from := "the default place; set trace.seal.kek_file or $" + seal.KEKFileEnv + " to the server's key"
	switch {
	case e.sc.KEKFile != "":
		from = "named by trace.seal.kek_file"
	case os.Getenv(seal.KEKFileEnv) != "":
		from = "named by $" + seal.KEKFileEnv
	}
	return fmt.Sprintf("no sealing key: %s does not exist (%s); no key was created", e.path, from)
}

func (e noKEK) Unwrap() error { return seal.ErrNoKEK }

// cliViewer is who runs this command, for the unseal and forget records:
// "cli:" and the OS user, from the CLI.
func cliViewer() unseal.Viewer {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		name = "unknown"
	}
	return unseal.Viewer{Name: "cli:" + name, From: "cli", Via: "cli"}
}

// openReadBackend opens the trace read only, as openReadTrace does, with
// what the backend keeps beside it (its sealing keys).
func openReadBackend(url, data string) (*backend.Backend, string, error) {
	if url != "" {
		if err := checkStoreFlag(url); err != nil {
			return nil, "", err
		}
		ctx, cancel := context.WithTimeout(context.Background(), storeOpenTimeout)
		defer cancel()
		b, err := backend.Open(ctx, url, backend.Options{ReadOnly: true})
		if err != nil {
			return nil, "PostgreSQL", fmt.Errorf("opening the trace in PostgreSQL: %v", err)
		}
		return b, "PostgreSQL", nil
	}
	b, err := backend.Open(context.Background(), backend.DirURL(data), backend.Options{ReadOnly: true})
	if err != nil {
		return nil, data, fmt.Errorf("opening the trace in %s: %v", data, err)
	}
	return b, "the trace in " + data, nil
}
