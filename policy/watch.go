package policy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// debounce is how long Watch waits for a burst of file events (an editor's
// write, rename and chmod) to settle before reloading.
const debounce = 100 * time.Millisecond

// Reload loads and compiles the whole policy set from paths (the built-in
// pack when paths is empty) and swaps it in atomically. On failure the current
// set stays in place and the error (an ErrorList) is returned. The CLI calls
// it on SIGHUP; Watch calls it on file changes.
func (e *Engine) Reload(paths []string) error {
	var s *Set
	var err error
	if len(paths) == 0 {
		s, err = Builtin()
	} else {
		s, err = Load(paths...)
	}
	if err != nil {
		return err
	}
	e.Swap(s)
	return nil
}

// reloadLog reloads and reports the result through logf.
func (e *Engine) reloadLog(paths []string, logf func(string, ...any)) error {
	old := e.Set().Len()
	if err := e.Reload(paths); err != nil {
		logf("policy reload failed, keeping %d previous policies: %v", old, err)
		return err
	}
	logf("policies reloaded: %d policies from %s", e.Set().Len(), describe(paths))
	return nil
}

func describe(paths []string) string {
	if len(paths) == 0 {
		return "the built-in pack"
	}
	return strings.Join(paths, ", ")
}

// Watch reloads the policies from paths whenever one of their files, or a
// *.yaml/*.yml file in one of their directories, changes, until ctx is done.
// It watches directories rather than files, so editors that save by renaming
// a new file over the old one are seen. Changes are debounced (100 ms); each
// reload is logged through logf ("policies reloaded: ..." or "policy reload
// failed, keeping N previous policies: ..."). It returns ctx's error, or an
// error if the watch cannot be set up.
func (e *Engine) Watch(ctx context.Context, paths []string, logf func(format string, args ...any)) error {
	if logf == nil {
		logf = func(string, ...any) {}
	}
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
			logf("policy watch: %v", err)
		case <-timer.C:
			_ = e.reloadLog(paths, logf)
		}
	}
}
