package guardian

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/wardenhq/warden/policy"
)

// Reload recompiles the policies from their files: the shared set, each
// tenant's, and their shadow sets. On any error (an empty or half-written
// file included) the set that failed stays in force, the reason is logged
// at WARN and returned, and the other sets still reload; removed policies
// are logged at WARN. log, when not nil, is used instead of the Guardian's
// logger.
func (g *Guardian) Reload(log *slog.Logger) error {
	if log == nil {
		log = g.log
	}
	var errs []error
	for _, w := range g.watched() {
		if err := w.engine.Reload(w.logger(log)); err != nil {
			errs = append(errs, w.wrap(err))
		}
	}
	return errors.Join(errs...)
}

// Watch reloads the policies whenever their files change, until ctx ends:
// the shared set's, each tenant's, and their shadow sets' (a change to a
// shared policy file reloads every set built from it). It returns at once
// when there are no policy files.
func (g *Guardian) Watch(ctx context.Context) error {
	var wg sync.WaitGroup
	ws := g.watched()
	errc := make(chan error, len(ws))
	for _, w := range ws {
		if len(w.engine.Set().Spec().Paths) == 0 {
			continue
		}
		log := w.logger(g.log)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.engine.Watch(ctx, log); err != nil && ctx.Err() == nil {
				// The other sets keep being watched; say so now, not at exit.
				log.Warn("policy file watching stopped", "err", err)
				errc <- fmt.Errorf("watching %s: %w", w.what(), err)
			}
		}()
	}
	wg.Wait()
	close(errc)
	var errs []error
	for err := range errc {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return ctx.Err()
	}
	return errors.Join(errs...)
}

// watchedSet is one policy engine that reloads from its files.
type watchedSet struct {
	engine *policy.Engine
	tenant string // "" for the shared set
	shadow bool   // the shadow set of the shared set or of tenant
}

// watched lists the Guardian's engines in a fixed order: the shared set,
// its shadow set, then each tenant's set and shadow set by name.
func (g *Guardian) watched() []watchedSet {
	var ws []watchedSet
	add := func(s *set, tenant string) {
		ws = append(ws, watchedSet{engine: s.engine, tenant: tenant})
		if s.shadow != nil {
			ws = append(ws, watchedSet{engine: s.shadow.engine, tenant: tenant, shadow: true})
		}
	}
	add(g.set, "")
	for _, name := range g.cfg.TenantNames() {
		add(g.tenants[name], name)
	}
	return ws
}

// logger is log with the set named (tenant, set=shadow).
func (w watchedSet) logger(log *slog.Logger) *slog.Logger {
	if w.tenant != "" {
		log = log.With("tenant", w.tenant)
	}
	if w.shadow {
		log = log.With("set", "shadow")
	}
	return log
}

// what names the set: "the shared policies", "tenant t's shadow set".
func (w watchedSet) what() string {
	switch {
	case w.tenant != "" && w.shadow:
		return "tenant " + w.tenant + "'s shadow set"
	case w.tenant != "":
		return "tenant " + w.tenant + "'s policies"
	case w.shadow:
		return "the shadow set"
	}
	return "the shared policies"
}

// wrap names the set in err: "tenant t: shadow set: ...".
func (w watchedSet) wrap(err error) error {
	if w.shadow {
		err = fmt.Errorf("shadow set: %w", err)
	}
	if w.tenant != "" {
		err = fmt.Errorf("tenant %s: %w", w.tenant, err)
	}
	return err
}
