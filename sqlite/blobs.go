package sqlite

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// BlobFileName is the file beside the database that holds each record's
// large parts: its per-policy results, its input and its output (JSON).
//
// Why a second file: a record is ~2 KB of JSON of which ~150 bytes are the
// columns Runs filters and sorts on. Kept in SQLite, those kilobytes are
// written twice (WAL, then checkpoint) in 16 KiB pages, and the commit also
// rewrites the partly filled last pages — measured, the trace then costs more
// CPU than everything else a decision does. Appended here with one write per
// batch, they are written once; the SQLite row stays small.
//
// Order makes it crash-safe without recovery: the writer appends a batch's
// blobs and only then commits the rows that point at them, so every row's
// bytes are in the file before the row exists. Bytes whose rows never
// committed (a failed batch, a kill between the two writes) are unreferenced:
// the next batch writes over them, or they stay unread.
const BlobFileName = "trace.blobs"

// blobFile is the writer's or a reader's handle on the blob file.
type blobFile struct {
	f    *os.File
	end  int64       // writer: where the next batch goes
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
	return &blobFile{f: f, end: fi.Size(), info: fi}, nil
}

// write puts buf at the end of the file in one write and returns its offset.
// The end advances only with commit, so a batch whose rows do not commit is
// written over by the next one.
func (b *blobFile) write(buf []byte) (int64, error) {
	off := b.end
	if _, err := b.f.WriteAt(buf, off); err != nil {
		// Drop what a short write left; the bytes are unreferenced anyway.
		_ = b.f.Truncate(off)
		return 0, fmt.Errorf("sqlite: write %s: %w", b.f.Name(), err)
	}
	return off, nil
}

// commit marks n bytes written at the end as referenced.
func (b *blobFile) commit(n int) { b.end += int64(n) }

// read returns n bytes at off.
func (b *blobFile) read(off, n int64) ([]byte, error) {
	if n == 0 {
		return nil, nil
	}
	if b.f == nil {
		return nil, fmt.Errorf("sqlite: %s is missing", BlobFileName)
	}
	buf := make([]byte, n)
	if _, err := b.f.ReadAt(buf, off); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("sqlite: read %s at %d: %w", BlobFileName, off, err)
	}
	return buf, nil
}

func (b *blobFile) close() error {
	if b == nil || b.f == nil {
		return nil
	}
	return b.f.Close()
}
