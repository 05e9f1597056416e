// Package seglog is an append-only log of opaque records in segment files:
// the durable point of warden's trace when it logs first and indexes
// later. A batch of records is appended with one write(2) and one
// fdatasync(2); an indexer reads the records back in order, from any
// sequence number, and removes whole segments once they are indexed.
//
// # Files
//
// A log is a directory of segment files named <16 lowercase hex digits of
// the segment's first sequence number>.seg (0000000000000001.seg), plus a
// LOCK file that [Open] locks (flock, on Unix) so that two processes never
// append to one log. Other names in the directory are ignored. Segment
// files are created 0600 and the directory 0700: records hold what agents
// sent. Sequence numbers are consecutive, start at [Options.First]
// (default 1) in an empty directory and are never reused.
//
// # Format
//
// All integers are little-endian. A segment starts with a 20-byte header:
//
//	magic   [6]byte  "WDNSEG"
//	version uint16   1
//	first   uint64   sequence number of the segment's first record (= its name)
//	crc     uint32   CRC-32C (Castagnoli) of the 16 bytes above
//
// followed by frames. A frame is an 8-byte header and a payload:
//
//	word    uint32   payload length (bits 0-29) | kind << 30
//	crc     uint32   CRC-32C of seq (uint64), word and payload
//	payload [length]byte
//
// seq is the frame's sequence number: it is not stored but seeds the CRC, so
// a frame only validates at its own position in the sequence (a frame copied
// or left elsewhere does not). Kinds:
//
//	0 record, more records of its batch follow
//	1 record, the last of its batch: the batch's commit marker
//	2 seal: payload is the next sequence number (uint64); seq is that number
//	3 invalid
//
// A batch (one [Log.Append]) is its records' frames, the last of kind 1,
// written with one write(2) and made durable with one fdatasync(2). A batch
// is all or nothing: recovery keeps a batch only when every frame of it, its
// commit marker included, is present and valid, so a torn batch never
// surfaces part of its records, and since recovery stops at the first
// invalid frame, a valid frame after an invalid one is never accepted (the
// trace's hash chain cannot get a hole). A batch never spans segments.
//
// When the active segment cannot take the next batch, it is sealed: a seal
// frame is appended (and synced), and a new segment named by the next
// sequence number is created with its header, synced, and its directory
// entry synced, before the batch is written there. A sealed segment ends
// with its seal frame; only the newest segment is unsealed.
//
// # Bounds
//
//   - [Options.MaxRecord] (default 4 MiB, at most 1 GiB-1): the largest
//     payload. Append refuses a larger one; a Reader refuses to load one.
//   - [Options.SegmentSize] (default 64 MiB, from 4 KiB to 1 GiB): a segment
//     never grows beyond it, so a batch's frames (8 bytes + payload each)
//     must fit in SegmentSize - 32 bytes (the header and the seal).
//   - Memory: Append reuses one buffer as large as the largest batch; a
//     Reader reuses one buffer of 64 KiB or its largest record; recovery
//     reads in 64 KiB chunks whatever the length fields say.
//
// # Recovery
//
// [Open] checks each older segment's header and its seal (that the seal
// names the next segment's first sequence number, so no segment is missing
// in between) but not its frames: they were synced before the next segment
// was created, and each frame's CRC is checked whenever a [Reader] reads it
// (a mismatch there is an error, never a cut). [Log.Check] verifies every
// frame of every segment on demand. Open scans the newest segment in full
// and cuts it after the last valid commit marker: a torn or corrupt tail
// (the batch being written when the process or the machine stopped) is
// truncated, and [Log.Recovered] reports where and how many bytes, for a log
// line. The format cannot tell a torn tail from a corrupted byte inside the
// newest segment's committed batches: both end the log there. A newest
// segment shorter than a header (a crash while creating it) is created
// again.
//
// # Durability
//
// With [SyncAlways] (the default), Append returns only after fdatasync:
// the batch survives a power loss as far as the disk honours flushes. With
// [SyncNone], Append returns after write(2): the batch survives the process
// being killed but not a power loss or kernel crash (like the SQLite store's
// synchronous "normal"). If fdatasync fails, the log stops: every later
// Append returns that error (the kernel may have dropped the pages, so
// whether the batch is on disk is unknown until the log is opened again). A
// failed write is undone by truncating the segment back to the end of the
// last batch, and the next Append is tried afresh.
//
// # Concurrency
//
// A Log has a single writer: Append, Truncate and Close must be called from
// one goroutine at a time (the caller's writer goroutine). Readers may run
// on other goroutines while it appends: a [Reader] sees only batches whose
// Append has returned (synced, with SyncAlways), and stops cleanly with
// io.EOF at that end; calling Next again later continues with what was
// appended since.
package seglog
