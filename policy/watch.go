package policy

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// debounce is how long Watch waits for a burst of file events (an editor's
// write, rename and chmod) to settle before reloading.
const debounce = 100 * time.Millisecond

// Reload rebuilds the policy set from what the current one was built from
// (its Spec: the same pack and paths, the same event check) and swaps it in
// atomically. On failure — an unparseable, empty or half-written file, an
// unknown event — the current set stays in place, the reason is logged at
// WARN and the error (an ErrorList) returned. On success it logs at INFO what
// was added and changed and, at WARN, the ids of any policies removed. The
// CLI calls it on SIGHUP; Watch calls it on file changes. log may be nil.
func (e *Engine) Reload(log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	old := e.Set()
	s, err := LoadSet(old.Spec())
	defer func(at time.Time) { e.reloaded(at, err) }(time.Now())
	if err != nil {
		log.Warn("policy reload failed, keeping the previous policies",
			"policies", old.Len(), "revision", short(old.Revision()), "from", old.Spec().String(), "err", err.Error())
		return err
	}
	e.Swap(s)
	added, changed, removed := diff(old, s)
	if len(removed) > 0 {
		log.Warn("policy reload removed policies", "removed", removed, "policies", s.Len(), "from", s.Spec().String())
	}
	log.Info("policies reloaded", "policies", s.Len(), "added", added, "changed", changed,
		"removed", len(removed), "revision", short(s.Revision()), "from", s.Spec().String())
	return nil
}

// diff lists, by id, the policies of b not in a, those in both whose
// content differs, and those of a not in b.
func diff(a, b *Set) (added, changed, removed []string) {
	added, changed, removed = []string{}, []string{}, []string{}
	for _, p := range b.policies {
		switch q := a.byID[p.ID]; {
		case q == nil:
			added = append(added, p.ID)
		case q.canon != p.canon:
			changed = append(changed, p.ID)
		}
	}
	for _, p := range a.policies {
		if b.byID[p.ID] == nil {
			removed = append(removed, p.ID)
		}
	}
	sort.Strings(added)
	sort.Strings(changed)
	sort.Strings(removed)
	return added, changed, removed
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// Watch reloads the policies (Reload) whenever one of the current set's
// files, or a *.yaml/*.yml file in one of its directories, changes, until
// ctx is done. It watches directories rather than files, so editors that
// save by renaming a new file over the old one are seen. Changes are
// debounced (100 ms); each reload is logged through log as Reload says (nil
// discards). It returns ctx's error, or an error if the watch cannot be set
// up. The paths watched are those of the set in force when Watch starts.
func (e *Engine) Watch(ctx context.Context, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	paths := e.Set().Spec().Paths
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("policy watch: %w", err)
	}
	defer w.Close()
	files := map[string]bool{} // watched files, by clean path
	dirs := map[string]bool{}  // directories whose yaml files count
	for _, p := range paths {
		c := filepath.Clean(p)
		fi, err := os.Stat(c)
		if err == nil && fi.IsDir() {
			dirs[c] = true
			err = w.Add(c)
		} else {
			files[c] = true
			err = w.Add(filepath.Dir(c))
		}
		if err != nil {
			return fmt.Errorf("policy watch %s: %w", p, err)
		}
	}
	relevant := func(name string) bool {
		c := filepath.Clean(name)
		if files[c] {
			return true
		}
		ext := strings.ToLower(filepath.Ext(c))
		return dirs[filepath.Dir(c)] && (ext == ".yaml" || ext == ".yml")
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if relevant(ev.Name) && ev.Op != fsnotify.Chmod {
				timer.Reset(debounce)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			log.Warn("policy watch", "err", err.Error())
		case <-timer.C:
			_ = e.Reload(log)
		}
	}
}
