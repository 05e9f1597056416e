package seglog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

const (
	magic         = "WDNSEG"
	version       = 1
	headerSize    = 20
	frameHeader   = 8
	sealSize      = frameHeader + 8
	maxFrameLen   = 1<<30 - 1
	lengthMask    = 1<<30 - 1
	kindRecord    = 0
	kindCommit    = 1
	kindSeal      = 2
	segmentSuffix = ".seg"
	chunkSize     = 64 << 10
)

// castagnoli is the CRC-32C table (hardware-accelerated on amd64 and arm64).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt is wrapped by every error about bytes on disk that are not a
// valid log: a bad header, a CRC mismatch, a frame past the end, a missing
// segment.
var ErrCorrupt = errors.New("corrupt")

// ErrClosed is returned by the methods of a closed Log and by its Readers.
var ErrClosed = errors.New("seglog: log closed")

// ErrRemoved is wrapped by the error of Reader (and Reader.Next) for a
// sequence number whose segment was removed by Truncate.
var ErrRemoved = errors.New("removed")

// CorruptError describes invalid bytes in a segment. It wraps ErrCorrupt.
type CorruptError struct {
	Segment string // the segment's file name, 0000000000000001.seg
	Offset  int64  // the offset of the header or frame at fault
	Reason  string // what is wrong, "CRC mismatch"
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("seglog: segment %s at offset %d: %s", e.Segment, e.Offset, e.Reason)
}

// Unwrap returns ErrCorrupt.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

func corrupt(first uint64, off int64, format string, args ...any) error {
	return &CorruptError{Segment: segmentName(first), Offset: off, Reason: fmt.Sprintf(format, args...)}
}

// segmentName is the file name of the segment whose first record is first.
func segmentName(first uint64) string {
	return fmt.Sprintf("%016x%s", first, segmentSuffix)
}

// parseSegmentName returns the first sequence number a segment file name
// encodes, and false for any other name.
func parseSegmentName(name string) (uint64, bool) {
	hex, ok := strings.CutSuffix(name, segmentSuffix)
	if !ok || len(hex) != 16 || strings.ToLower(hex) != hex {
		return 0, false
	}
	v, err := strconv.ParseUint(hex, 16, 64)
	return v, err == nil
}

// appendHeader appends a segment header for first to b.
func appendHeader(b []byte, first uint64) []byte {
	start := len(b)
	b = append(b, magic...)
	b = binary.LittleEndian.AppendUint16(b, version)
	b = binary.LittleEndian.AppendUint64(b, first)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli))
}

// checkHeader validates a segment header h (headerSize bytes) of the
// segment named by first.
func checkHeader(h []byte, first uint64) error {
	switch {
	case string(h[:6]) != magic:
		return corrupt(first, 0, "bad magic %q", h[:6])
	case crc32.Checksum(h[:16], castagnoli) != binary.LittleEndian.Uint32(h[16:]):
		return corrupt(first, 0, "header CRC mismatch")
	case binary.LittleEndian.Uint16(h[6:]) != version:
		return corrupt(first, 0, "unsupported version %d", binary.LittleEndian.Uint16(h[6:]))
	case binary.LittleEndian.Uint64(h[8:]) != first:
		return corrupt(first, 0, "header names first sequence %d, the file name %d", binary.LittleEndian.Uint64(h[8:]), first)
	}
	return nil
}

// frameCRC is the CRC of a frame at sequence seq with header word word and
// payload p. seqBuf is scratch space (8 bytes) that does not escape per call.
func frameCRC(seqBuf *[12]byte, seq uint64, word uint32, p []byte) uint32 {
	binary.LittleEndian.PutUint64(seqBuf[:8], seq)
	binary.LittleEndian.PutUint32(seqBuf[8:], word)
	return crc32.Update(crc32.Update(0, castagnoli, seqBuf[:]), castagnoli, p)
}

// appendFrame appends a frame of kind for payload p at sequence seq to b.
func appendFrame(b []byte, scratch *[12]byte, seq uint64, kind uint32, p []byte) []byte {
	word := uint32(len(p)) | kind<<30
	b = binary.LittleEndian.AppendUint32(b, word)
	b = binary.LittleEndian.AppendUint32(b, frameCRC(scratch, seq, word, p))
	return append(b, p...)
}

// appendSeal appends a seal frame naming next to b.
func appendSeal(b []byte, scratch *[12]byte, next uint64) []byte {
	var p [8]byte
	binary.LittleEndian.PutUint64(p[:], next)
	return appendFrame(b, scratch, next, kindSeal, p[:])
}

// appendBatch appends the frames of a batch whose first record is seq.
func appendBatch(b []byte, scratch *[12]byte, seq uint64, payloads [][]byte) []byte {
	for i, p := range payloads {
		kind := uint32(kindRecord)
		if i == len(payloads)-1 {
			kind = kindCommit
		}
		b = appendFrame(b, scratch, seq+uint64(i), kind, p)
	}
	return b
}
