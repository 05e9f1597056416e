package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// errMissing marks a source whose repository or commit is not on this
// machine; main reports it and, unless -strict, goes on without it.
var errMissing = errors.New("source not present")

// tree is read-only access to one repository at one commit: a bare git
// directory under -sources (read with git cat-file), or a plain directory
// the user exported there (owner+name/ with the files at their paths).
type tree interface {
	// list returns the paths under prefix ("" for all), sorted.
	list(prefix string) ([]string, error)
	// read returns one file's bytes.
	read(path string) ([]byte, error)
	close() error
}

// openRepo finds owner/name at commit under dir. It looks for
// dir/owner+name/repo (what the fetch tool leaves: a bare git directory,
// or a clone with .git), then dir/owner+name/.git, then dir/owner+name as
// a plain directory of exported files (no commit check possible: the
// user vouches for it).
func openRepo(dir, repo, commit string) (tree, error) {
	base := filepath.Join(dir, strings.ReplaceAll(repo, "/", "+"))
	for _, g := range []string{filepath.Join(base, "repo", ".git"), filepath.Join(base, "repo"), filepath.Join(base, ".git"), base} {
		if _, err := os.Stat(filepath.Join(g, "HEAD")); err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(g, "objects")); err != nil {
			continue
		}
		if err := exec.Command("git", "--git-dir="+g, "cat-file", "-e", commit+"^{commit}").Run(); err != nil {
			return nil, fmt.Errorf("%w: %s has no commit %s in %s (fetch the repository again, or check out that commit)", errMissing, repo, commit, g)
		}
		return newGitTree(g, commit)
	}
	if fi, err := os.Stat(base); err == nil && fi.IsDir() {
		return dirTree{root: base}, nil
	}
	return nil, fmt.Errorf("%w: %s not found under %s (expected %s/repo, a bare git directory)", errMissing, repo, dir, base)
}

// gitTree reads blobs through one long-running `git cat-file --batch`.
type gitTree struct {
	gitDir, commit string
	cmd            *exec.Cmd
	in             io.WriteCloser
	out            *bufio.Reader
}

func newGitTree(gitDir, commit string) (*gitTree, error) {
	cmd := exec.Command("git", "--git-dir="+gitDir, "cat-file", "--batch")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file in %s: %w", gitDir, err)
	}
	return &gitTree{gitDir: gitDir, commit: commit, cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<16)}, nil
}

func (g *gitTree) list(prefix string) ([]string, error) {
	args := []string{"--git-dir=" + g.gitDir, "ls-tree", "-r", "-z", "--name-only", g.commit}
	if prefix != "" {
		args = append(args, "--", prefix)
	}
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-tree %s in %s: %w", g.commit, g.gitDir, err)
	}
	var paths []string
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			paths = append(paths, string(p))
		}
	}
	sort.Strings(paths)
	return paths, nil
}

func (g *gitTree) read(path string) ([]byte, error) {
	if _, err := fmt.Fprintf(g.in, "%s:%s\n", g.commit, path); err != nil {
		return nil, err
	}
	header, err := g.out.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("git cat-file %s:%s: %w", g.commit, path, err)
	}
	f := strings.Fields(header)
	if len(f) != 3 {
		// "<object> missing": a path the snapshot lacks (files of 4 MiB
		// and more are listed but absent).
		return nil, fmt.Errorf("%w: %s:%s in %s (%s)", errMissing, g.commit, path, g.gitDir, strings.TrimSpace(header))
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return nil, fmt.Errorf("git cat-file header %q: %w", header, err)
	}
	buf := make([]byte, n+1) // the content and a trailing newline
	if _, err := io.ReadFull(g.out, buf); err != nil {
		return nil, fmt.Errorf("git cat-file %s:%s: %w", g.commit, path, err)
	}
	return buf[:n], nil
}

func (g *gitTree) close() error {
	g.in.Close()
	return g.cmd.Wait()
}

// dirTree is a plain directory: exported files, or a local tree such as
// GOROOT or a module in the module cache.
type dirTree struct{ root string }

func (d dirTree) list(prefix string) ([]string, error) {
	var paths []string
	start := filepath.Join(d.root, filepath.FromSlash(prefix))
	err := filepath.WalkDir(start, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.Type().IsRegular() {
			rel, _ := filepath.Rel(d.root, p)
			paths = append(paths, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", start, err)
	}
	sort.Strings(paths)
	return paths, nil
}

func (d dirTree) read(path string) ([]byte, error) {
	return os.ReadFile(filepath.Join(d.root, filepath.FromSlash(path)))
}

func (d dirTree) close() error { return nil }
