package seglog

import (
	"encoding/binary"
	"hash/crc32"
)

// scanResult is what scanning a segment's frames found.
type scanResult struct {
	end    int64  // offset after the last valid commit marker or seal
	next   uint64 // sequence number after the last committed record
	sealed bool   // the segment ends with a valid seal at end
	bad    error  // why the bytes from end on are not part of the log; nil if there are none
}

// scanFrames checks every frame of the segment read by c (first sequence
// first, size bytes), streaming each payload through the CRC in chunks so
// that memory stays bounded whatever a length field says. Invalid bytes are
// reported in res.bad; err is an I/O error (which must not lead to a cut).
func scanFrames(c *chunkReader, first uint64, size int64) (res scanResult, err error) {
	off, seq := int64(headerSize), first
	res = scanResult{end: off, next: seq}
	var scratch [12]byte
	for off < size {
		if size-off < frameHeader {
			res.bad = corrupt(first, off, "torn frame header (%d of %d bytes)", size-off, frameHeader)
			return res, nil
		}
		h, err := c.bytes(off, frameHeader, size)
		if err != nil {
			return res, err
		}
		word, want := binary.LittleEndian.Uint32(h), binary.LittleEndian.Uint32(h[4:])
		kind, length := word>>30, int64(word&lengthMask)
		switch {
		case kind > kindSeal:
			res.bad = corrupt(first, off, "invalid frame kind %d", kind)
			return res, nil
		case off+frameHeader+length > size:
			res.bad = corrupt(first, off, "torn frame: %d-byte payload runs past the end of the file (%d)", length, size)
			return res, nil
		case kind == kindSeal && length != 8:
			res.bad = corrupt(first, off, "seal frame of %d bytes, not 8", length)
			return res, nil
		}
		binary.LittleEndian.PutUint64(scratch[:8], seq)
		binary.LittleEndian.PutUint32(scratch[8:], word)
		sum := crc32.Update(0, castagnoli, scratch[:])
		var sealed uint64
		for pos, rem := off+frameHeader, length; rem > 0; {
			k := min(rem, chunkSize)
			b, err := c.bytes(pos, int(k), size)
			if err != nil {
				return res, err
			}
			sum = crc32.Update(sum, castagnoli, b)
			if kind == kindSeal {
				sealed = binary.LittleEndian.Uint64(b)
			}
			pos, rem = pos+k, rem-k
		}
		if sum != want {
			res.bad = corrupt(first, off, "CRC mismatch")
			return res, nil
		}
		off += frameHeader + length
		switch kind {
		case kindRecord:
			seq++
		case kindCommit:
			seq++
			res.end, res.next = off, seq
		case kindSeal:
			if seq != res.next {
				res.bad = corrupt(first, off-sealSize, "seal inside a batch")
				return res, nil
			}
			if sealed != seq { // the CRC seeds seq, so only a crafted frame gets here
				res.bad = corrupt(first, off-sealSize, "seal names sequence %d, not %d", sealed, seq)
				return res, nil
			}
			res.end, res.sealed = off, true
			if off != size {
				res.bad = corrupt(first, off, "%d bytes after the seal", size-off)
			}
			return res, nil
		}
	}
	if seq != res.next {
		res.bad = corrupt(first, res.end, "torn batch: %d records without their commit marker", seq-res.next)
	}
	return res, nil
}
