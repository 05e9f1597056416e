package sigkey

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// PublicSuffix is appended to a key pair's prefix to name its public key
// file; the private key file is the prefix itself.
const PublicSuffix = ".pub"

// readBounded reads at most MaxFileSize bytes of the regular file path.
func readBounded(path string) ([]byte, fs.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, nil, err
	}
	return b, fi, nil
}

// LoadPrivateKey reads the private key file path. A key file that group
// or others may access is refused, as ssh refuses one.
func LoadPrivateKey(path string) (*PrivateKey, error) {
	b, fi, err := readBounded(path)
	if err != nil {
		return nil, fmt.Errorf("private key: %w", err)
	}
	k, err := ParsePrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("private key %s: %v", path, err)
	}
	if m := fi.Mode().Perm(); m&0o077 != 0 {
		return nil, fmt.Errorf("private key %s is accessible by group or others (mode %04o); run: chmod 600 %s", path, m, path)
	}
	return k, nil
}

// LoadPublicKey reads the public key file path (ParsePublicKey).
func LoadPublicKey(path string) (*PublicKey, error) {
	b, _, err := readBounded(path)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	k, err := ParsePublicKey(b)
	if err != nil {
		return nil, fmt.Errorf("public key %s: %v", path, err)
	}
	return k, nil
}

// ErrExists is returned by WriteKeyPair when a file is there and force is
// false.
var ErrExists = errors.New("exists")

// WriteKeyPair writes k's private key file to prefix (mode 0600) and its
// public key file to prefix+PublicSuffix (mode 0644, a line). Without
// force it refuses, before writing anything, when either file exists;
// with force it replaces them. Each file is written beside its place,
// synced and renamed into it, so a reader never sees half a key.
func WriteKeyPair(k *PrivateKey, prefix string, force bool) (privPath, pubPath string, err error) {
	privPath, pubPath = prefix, prefix+PublicSuffix
	if !force {
		for _, p := range []string{privPath, pubPath} {
			if _, err := os.Lstat(p); err == nil {
				return "", "", fmt.Errorf("%s: %w (use --force to replace it)", p, ErrExists)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return "", "", err
			}
		}
	}
	pub, _ := k.Public().MarshalText()
	if err := writeFile(privPath, k.MarshalPrivate(), 0o600, force); err != nil {
		return "", "", err
	}
	if err := writeFile(pubPath, append(pub, '\n'), 0o644, force); err != nil {
		return "", "", err
	}
	return privPath, pubPath, nil
}

// writeFile writes data to path through a temporary file in its
// directory; without replace an existing path is left alone (ErrExists).
func writeFile(path string, data []byte, mode os.FileMode, replace bool) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp") // mode 0600
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if replace {
		err = os.Rename(tmp.Name(), path)
	} else if err = os.Link(tmp.Name(), path); errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s: %w (use --force to replace it)", path, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
