package seglog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// fuzzOpts: small segments, so that the committed prefix spans a sealed
// segment and the newest one.
var fuzzOpts = Options{Sync: SyncNone, SegmentSize: MinSegmentSize}

// fuzzBatches are the committed batches before the tail.
var fuzzBatches = []int{2, 3, 1, 2, 3, 1}

// refDecode is a plain reference decoder of frames at seq: it returns how
// many bytes of tail form complete valid batches (or end with a valid seal)
// and their records. It stops at the first frame that is torn, invalid or
// fails its CRC, and drops the records of a batch without its commit.
func refDecode(tail []byte, seq uint64) (accepted int, recs [][]byte) {
	var pending [][]byte
	for off := 0; len(tail)-off >= 8; {
		word := binary.LittleEndian.Uint32(tail[off:])
		kind, n := word>>30, int(word&(1<<30-1))
		if kind == 3 || n > len(tail)-off-8 {
			break
		}
		p := tail[off+8 : off+8+n]
		var h [12]byte
		binary.LittleEndian.PutUint64(h[:], seq)
		binary.LittleEndian.PutUint32(h[8:], word)
		c := crc32.New(crc32.MakeTable(crc32.Castagnoli))
		c.Write(h[:])
		c.Write(p)
		if c.Sum32() != binary.LittleEndian.Uint32(tail[off+4:]) {
			break
		}
		off += 8 + n
		switch kind {
		case 0:
			pending = append(pending, p)
			seq++
		case 1:
			recs = append(append(recs, pending...), p)
			pending = nil
			accepted = off
			seq++
		case 2:
			if len(pending) == 0 && n == 8 && binary.LittleEndian.Uint64(p) == seq {
				accepted = off
			}
			return accepted, recs
		}
	}
	return accepted, recs
}

// flipBytes xors b at the positions and with the masks pairs of ops name
// (position modulo len(b); a zero mask is 0x80), within [lo, hi).
func flipBytes(b []byte, ops []byte, lo, hi int) {
	if hi <= lo {
		return
	}
	for i := 0; i+1 < len(ops); i += 2 {
		pos := lo + (int(ops[i])*7+i)%(hi-lo)
		mask := ops[i+1]
		if mask == 0 {
			mask = 0x80
		}
		b[pos] ^= mask
	}
}

// FuzzReader writes a committed prefix of batches, then puts after it a
// batch being written (cut after cut bytes, its bytes flipped by flips)
// followed by arbitrary bytes (extra), and flips bytes of an older, sealed
// segment (rot). Reopened, the log must hold the whole committed prefix,
// plus exactly the complete valid batches the tail begins with (by a plain
// reference decoder), nothing after the first torn or invalid frame; its
// Readers must never return a wrong record; appends must continue.
func FuzzReader(f *testing.F) {
	f.Add(uint16(65535), []byte{}, []byte{}, []byte{})
	f.Add(uint16(100), []byte{}, []byte{1, 2, 3}, []byte{})
	f.Add(uint16(65535), []byte{40, 1}, []byte{}, []byte{})
	f.Add(uint16(65535), []byte{}, make([]byte, 4096), []byte{})
	f.Add(uint16(0), []byte{}, []byte{0xff, 0xff, 0xff, 0x3f}, []byte{9, 0x20})
	// The committed prefix is written once, then copied for each input.
	pdir := f.TempDir()
	l := mustOpen(f, pdir, fuzzOpts)
	next := appendN(f, l, fuzzBatches...)
	if len(l.segs) < 2 {
		f.Fatal("the prefix did not rotate")
	}
	sealed, newest := l.segs[0], l.segs[len(l.segs)-1]
	prefixEnd := l.size
	pending := appendBatch(nil, &l.scratch, next, batch(next, 3))
	l.Close()
	prefix := map[string][]byte{}
	for _, s := range l.segs {
		b, err := os.ReadFile(filepath.Join(pdir, segmentName(s.first)))
		if err != nil {
			f.Fatal(err)
		}
		prefix[segmentName(s.first)] = b
	}

	f.Fuzz(func(t *testing.T, cut uint16, flips, extra, rot []byte) {
		dir := t.TempDir()
		for name, b := range prefix {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}

		tail := append([]byte(nil), pending[:min(int(cut), len(pending))]...)
		flipBytes(tail, flips, 0, len(tail))
		tail = append(tail, extra...)
		wantBytes, wantRecs := refDecode(tail, next)

		np := filepath.Join(dir, segmentName(newest.first))
		fw, err := os.OpenFile(np, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(tail)
		fw.Close()
		sp := filepath.Join(dir, segmentName(sealed.first))
		sb, err := os.ReadFile(sp)
		if err != nil {
			t.Fatal(err)
		}
		orig := append([]byte(nil), sb...)
		flipBytes(sb, rot, headerSize, len(sb)-sealSize) // frames only: Open checks the header and seal
		rotted := !bytes.Equal(sb, orig)
		if err := os.WriteFile(sp, sb, 0o600); err != nil {
			t.Fatal(err)
		}

		l, err := Open(dir, fuzzOpts)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer l.Close()
		if want := next + uint64(len(wantRecs)); l.Next() != want {
			t.Fatalf("Next %d, want %d (%d records accepted from the tail by the reference)", l.Next(), want, len(wantRecs))
		}
		if fi, err := os.Stat(np); err != nil || fi.Size() != prefixEnd+int64(wantBytes) {
			t.Fatalf("newest segment has %d bytes after recovery, want %d (%v)", fi.Size(), prefixEnd+int64(wantBytes), err)
		}
		if rec := l.Recovered(); rec.Cut != int64(len(tail)-wantBytes) || (rec.Cut > 0) != (rec.Reason != nil) {
			t.Fatalf("Recovered %+v, want a cut of %d bytes", rec, len(tail)-wantBytes)
		}
		if pendingIntact := len(tail) >= len(pending) && bytes.Equal(tail[:len(pending)], pending); pendingIntact && len(wantRecs) < 3 {
			t.Fatalf("the reference rejected an intact batch")
		}

		// The committed prefix of the newest segment and what the tail added.
		r, err := l.Reader(newest.first)
		if err != nil {
			t.Fatal(err)
		}
		for seq := newest.first; ; seq++ {
			s, p, err := r.Next()
			if err == io.EOF {
				if seq != l.Next() {
					t.Fatalf("EOF at %d, want %d", seq, l.Next())
				}
				break
			}
			if err != nil {
				t.Fatalf("record %d: %v", seq, err)
			}
			want := payload(s)
			if s >= next {
				want = wantRecs[s-next]
			}
			if s != seq || !bytes.Equal(p, want) {
				t.Fatalf("record %d read back wrong", seq)
			}
		}
		r.Close()

		// The sealed segment: right records, or a CorruptError, never wrong.
		r, err = l.Reader(l.First())
		if err != nil {
			t.Fatal(err)
		}
		for {
			s, p, err := r.Next()
			if err == io.EOF || (err == nil && s >= newest.first) {
				if rotted { // CRC-32C misses a flip within 32 bits never, others with p = 2^-32
					t.Fatalf("read a rotten sealed segment through without an error")
				}
				break
			}
			if err != nil {
				if !rotted || !errors.Is(err, ErrCorrupt) {
					t.Fatalf("sealed segment: %v (rotten: %v)", err, rotted)
				}
				break
			}
			if !bytes.Equal(p, payload(s)) {
				t.Fatalf("record %d of the sealed segment read back wrong", s)
			}
		}
		r.Close()

		// Appends continue after the recovered end.
		end := appendN(t, l, 2)
		if got := readAll(t, l, end-2); got != end {
			t.Fatalf("after appending: read to %d, want %d", got, end)
		}
	})
}

// TestWriteFuzzSeeds writes testdata/fuzz/FuzzReader's seed corpus when
// SEGLOG_WRITE_SEEDS=1 (its files are committed; this regenerates them).
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("SEGLOG_WRITE_SEEDS") != "1" {
		t.Skip("set SEGLOG_WRITE_SEEDS=1 to regenerate the seed corpus")
	}
	l := mustOpen(t, t.TempDir(), fuzzOpts)
	next := appendN(t, l, fuzzBatches...)
	pending := appendBatch(nil, &l.scratch, next, batch(next, 3))
	stale := appendBatch(nil, &l.scratch, next+7, batch(next+7, 2))
	one := appendBatch(nil, &l.scratch, next, batch(next, 1)) // a whole batch of one
	seal := appendSeal(nil, &l.scratch, next)
	l.Close()
	seeds := map[string][4][]byte{
		"intact":           {nil, nil, nil, nil},
		"intact-then-junk": {nil, nil, []byte("junk after the batch"), nil},
		"torn-then-intact": {{1, 0x10}, nil, pending, nil},         // a valid batch after a torn one: not accepted
		"cut-then-intact":  {nil, nil, pending, nil},               // cut at 0 below: the tail is a whole batch
		"stale-frames":     {nil, nil, stale, nil},                 // valid frames for other sequence numbers
		"batch-of-one":     {nil, nil, one, nil},                   // cut at 0: one whole batch, then nothing
		"seal-then-junk":   {nil, nil, append(seal, 1, 2, 3), nil}, // a seal ends the segment
		"zeros":            {nil, nil, make([]byte, 4096), nil},
		"huge-length":      {nil, nil, []byte{0xff, 0xff, 0xff, 0x3f, 0, 0, 0, 0}, nil},
		"rot":              {nil, nil, nil, []byte{3, 0x01, 200, 0xff}},
	}
	cuts := map[string]uint16{"torn-then-intact": 65535, "intact": 65535, "intact-then-junk": 65535, "rot": 65535}
	dir := filepath.Join("testdata", "fuzz", "FuzzReader")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, s := range seeds {
		var b bytes.Buffer
		b.WriteString("go test fuzz v1\n")
		b.WriteString("uint16(" + itoa(int64(cuts[name])) + ")\n")
		for _, a := range []int{0, 2, 3} { // flips, extra, rot
			b.WriteString("[]byte(" + strconv.Quote(string(s[a])) + ")\n")
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
