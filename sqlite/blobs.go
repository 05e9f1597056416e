package sqlite

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// BlobFileName is the file beside the database that holds each record's
// large parts: its per-policy results, its input, its output and its views
// (JSON).
//
// Why a second file: a record is ~2 KB of JSON of which ~150 bytes are the
// columns Scan filters and sorts on. Kept in SQLite, those kilobytes are
// written twice (WAL, then checkpoint) in whole pages, and the commit also
// rewrites the partly filled last pages — measured, the trace then costs more
// CPU than everything else a decision does. Appended here with one write per
// batch, they are written once; the SQLite row stays small.
//
// Order makes it crash-safe without recovery: the writer appends a batch's
// blobs and only then commits the rows that point at them, so every row's
// bytes are in the file before the row exists. Bytes whose rows never
// committed (a failed batch, a kill between the two writes) are unreferenced
// and stay unread. The blob write happens under SQLite's write lock, at the
// file's current size, so several processes can share one data directory.
const BlobFileName = "trace.blobs"

// blobFile is the writer's or a reader's handle on the blob file.
type blobFile struct {
	f    *os.File
	info os.FileInfo // as opened, to notice a deleted or replaced file
}

// openBlobs opens the blob file for appending (creating it 0600) or, with
// readOnly, for reading; a reader of a store that has no records yet finds
// no file and reads nothing.
func openBlobs(path string, readOnly bool) (*blobFile, error) {
	var f *os.File
	var err error
	if readOnly {
		f, err = os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			return &blobFile{}, nil
		}
	} else {
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return &blobFile{f: f, info: fi}, nil
}

// size is the file's current end, where the next batch goes. It is read
// under SQLite's write lock each time, because another process writing the
// same store may have appended since.
func (b *blobFile) size() (int64, error) {
	fi, err := b.f.Stat()
	if err != nil {
		return 0, fmt.Errorf("sqlite: %w", err)
	}
	return fi.Size(), nil
}

// write puts buf at off (the current end) in one write. A short write's
// bytes are cut off again; bytes whose rows then do not commit stay
// unreferenced.
func (b *blobFile) write(buf []byte, off int64) error {
	if _, err := b.f.WriteAt(buf, off); err != nil {
		_ = b.f.Truncate(off)
		return fmt.Errorf("sqlite: write %s: %w", b.f.Name(), err)
	}
	return nil
}

// read returns n bytes at off.
func (b *blobFile) read(off, n int64) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	if b.f == nil {
		return nil, fmt.Errorf("sqlite: %s is missing", BlobFileName)
	}
	buf := make([]byte, n)
	if err := b.readAt(buf, off); err != nil {
		return nil, err
	}
	return buf, nil
}

// readAt fills buf with the bytes at off.
func (b *blobFile) readAt(buf []byte, off int64) error {
	if b.f == nil {
		return fmt.Errorf("sqlite: %s is missing", BlobFileName)
	}
	if _, err := b.f.ReadAt(buf, off); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("sqlite: read %s at %d: %w", BlobFileName, off, err)
	}
	return nil
}

func (b *blobFile) close() error {
	if b == nil || b.f == nil {
		return nil
	}
	return b.f.Close()
}
