package model

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
)

// Binary format constants (docs/trace-format.md, "Binary format, version 1").
const (
	BinaryVersion   = 1       // The only binary format version this package reads and writes.
	MaxRecordLen    = 1 << 20 // Largest record payload, in bytes.
	MaxLaunchPtrs   = 65536   // Most device addresses one launch may carry.
	binaryHeaderLen = 16
)

// BinaryMagic is the first 8 bytes of every binary trace.
const BinaryMagic = "strmchk\x00"

// RecordKind is the kind byte of a binary record.
type RecordKind uint8

const (
	RecordEnd     RecordKind = 1
	RecordString  RecordKind = 2
	RecordStack   RecordKind = 3
	RecordModule  RecordKind = 4
	RecordProcess RecordKind = 5
	RecordName    RecordKind = 6
	RecordDamage  RecordKind = 7
	RecordEvent   RecordKind = 16
)

func (k RecordKind) known() bool {
	return (k >= RecordEnd && k <= RecordDamage) || k == RecordEvent
}

// Record is one binary record as stored in the file.
type Record struct {
	Kind    RecordKind
	Offset  int64  // Byte offset of the record's kind byte.
	Payload []byte // Valid only until the next call of RawReader.Next.
}

// rawBufSize is the initial read buffer size. The buffer grows only to hold
// a record larger than it, so at most to MaxRecordLen plus the record head.
const rawBufSize = 64 << 10

// bufSlack is spare capacity kept past the read buffer's length, so that
// every payload has 8 bytes of capacity after it for readUvarints' 64-bit
// loads.
const bufSlack = 8

// recordHeadMax is the longest kind byte plus length.
const recordHeadMax = 1 + binary.MaxVarintLen64

// RawReader splits a binary trace into records without interpreting their
// payloads. It skips record kinds it does not know. It reads through one
// buffer of its own, handing out payloads that point into it, so memory stays
// bounded by the largest record.
type RawReader struct {
	file    string
	rd      io.Reader
	buf     []byte
	r, w    int   // Unread bytes are buf[r:w].
	off     int64 // File offset of buf[r].
	rerr    error // Error from rd, reported once the buffered bytes are used up.
	err     error // Sticky: returned by every call once set.
	version uint16
	// following is set when another trace's header follows the End
	// record (concatenated traces): see AfterEnd.
	following bool
}

// NewRawReader reads and checks the 16-byte header. Errors are
// *PositionError values naming file.
func NewRawReader(r io.Reader, file string) (*RawReader, error) {
	return newRawReaderAt(r, file, 0)
}

// newRawReaderAt is NewRawReader for a trace that starts at offset base of
// the file (the second of concatenated traces): errors give file offsets.
func newRawReaderAt(r io.Reader, file string, base int64) (*RawReader, error) {
	rr := &RawReader{file: file, rd: r, buf: make([]byte, rawBufSize, rawBufSize+bufSlack), off: base}
	if err := rr.readHeader(); err != nil {
		return nil, err
	}
	return rr, nil
}

// AfterEnd looks at what follows the End record, once it was read: the
// end of the file, or zeros only (the shim's pre-extended tail, kept when
// it could not cut the file to length), is the end (io.EOF); the header of
// another trace (traces concatenated with cat) is io.EOF too, and Following
// reads that trace; anything else is corrupt: data the End record would
// otherwise hide, which could be a whole process's events.
func (r *RawReader) AfterEnd() error {
	for {
		if r.r == r.w {
			r.fill(1)
			if r.r == r.w {
				if r.rerr != nil && r.rerr != io.EOF {
					return r.posErr(r.off, "", r.rerr)
				}
				return io.EOF
			}
		}
		b := r.buf[r.r:r.w]
		i := 0
		for i < len(b) && b[i] == 0 {
			i++
		}
		if i > 0 {
			r.consume(i)
			continue
		}
		r.fill(len(BinaryMagic))
		if looksBinary(r.buf[r.r:r.w]) {
			r.following = true
			return io.EOF
		}
		return r.posErr(r.off, "", corruptf("corrupt trace: data after the end record that is not another trace"))
	}
}

// Following returns a reader of the trace that AfterEnd found after this
// one's End record, and its offset in the file; nil if there is none. An
// error (always damage) is the following trace's header's.
func (r *RawReader) Following() (*RawReader, int64, error) {
	if !r.following {
		return nil, 0, nil
	}
	r.following = false
	off := r.off
	rest := append([]byte(nil), r.buf[r.r:r.w]...)
	r.r = r.w
	next, err := newRawReaderAt(io.MultiReader(bytes.NewReader(rest), r.rd), r.file, off)
	if err != nil && !IsDamage(err) {
		// Another trace's magic with a header this reader rejects (a later
		// version): this file is not one trace of this version, but it
		// did start as one.
		var pe *PositionError
		if errors.As(err, &pe) {
			pe.Err = corruptf("corrupt trace: after the end record, %v", pe.Err)
			return nil, off, pe
		}
		return nil, off, err
	}
	return next, off, err
}

func (r *RawReader) readHeader() error {
	r.fill(binaryHeaderLen)
	h := r.buf[r.r:r.w]
	if len(h) < binaryHeaderLen && r.rerr != io.EOF {
		return r.posErr(r.off, "", r.rerr)
	}
	if !looksBinary(h) {
		return r.posErr(r.off, "", formatf("%v: no binary trace magic %q at start of file", ErrFormat, BinaryMagic))
	}
	if len(h) < binaryHeaderLen {
		return r.posErr(r.off, "", truncatedf("%v: file ends inside the %d-byte header", ErrTruncated, binaryHeaderLen))
	}
	r.version = binary.LittleEndian.Uint16(h[8:])
	if r.version != BinaryVersion {
		return r.posErr(r.off, "", formatf("unsupported binary trace format version %d (this streamcheck reads version %d)", r.version, BinaryVersion))
	}
	if flags := binary.LittleEndian.Uint16(h[10:]); flags != 0 {
		return r.posErr(r.off, "", formatf("unsupported binary trace header flags %#x (this streamcheck knows none)", flags))
	}
	r.consume(binaryHeaderLen)
	return nil
}

// Version returns the format version from the header.
func (r *RawReader) Version() uint16 { return r.version }

// Next returns the next record of a known kind. After the End record has
// been returned, Next returns io.EOF. A trace that stops (zero kind byte, end
// of file, or a record cut short) before its End record gives a
// *PositionError wrapping ErrTruncated; an impossible length gives one
// wrapping ErrCorrupt.
func (r *RawReader) Next() (Record, error) {
	if p, off, ok := r.nextEvent(); ok {
		return Record{Kind: RecordEvent, Offset: off, Payload: p}, nil
	}
	return r.nextSlow()
}

// nextEvent is Next's fast path, small enough to inline into readers: if the
// next record is an event record of under 128 bytes, wholly buffered, it
// consumes it and returns its payload and offset.
func (r *RawReader) nextEvent() (payload []byte, off int64, ok bool) {
	b := r.buf[r.r:r.w]
	if len(b) < 2 || b[0] != byte(RecordEvent) || b[1] >= 0x80 || len(b) < 2+int(b[1]) || r.err != nil {
		return nil, 0, false
	}
	total := 2 + int(b[1])
	off = r.off
	r.consume(total)
	return b[2:total], off, true
}

func (r *RawReader) nextSlow() (Record, error) {
	for r.err == nil {
		rec, err := r.next()
		if err != nil {
			r.err = err
			break
		}
		if rec.Kind == RecordEnd {
			r.err = io.EOF // Nothing after the End record is read.
		}
		if rec.Kind.known() {
			return rec, nil
		}
	}
	return Record{}, r.err
}

func (r *RawReader) next() (Record, error) {
	off := r.off
	if r.w-r.r < recordHeadMax {
		r.fill(recordHeadMax)
	}
	b := r.buf[r.r:r.w]
	if len(b) == 0 {
		return Record{}, r.stopErr(off, "end of file before the end record")
	}
	kind := RecordKind(b[0])
	if kind == 0 {
		return Record{}, r.posErr(off, "", truncatedf("%v: the recording stops here, before its end record: the program was killed or crashed, or is still running", ErrTruncated))
	}
	var n uint64
	var w int
	if len(b) > 1 && b[1] < 0x80 { // Most records are shorter than 128 bytes.
		n, w = uint64(b[1]), 1
	} else {
		n, w = binary.Uvarint(b[1:])
	}
	switch {
	case w == 0 && len(b) < recordHeadMax:
		return Record{}, r.stopErr(off, "file ends inside a record length")
	case w <= 0:
		return Record{}, r.posErr(off, "length", corruptf("corrupt record: malformed length"))
	case n > MaxRecordLen:
		return Record{}, r.posErr(off, "length", corruptf("corrupt record: length %d exceeds the %d-byte limit", n, MaxRecordLen))
	}
	total := 1 + w + int(n)
	if len(b) < total {
		r.fill(total)
		if b = r.buf[r.r:r.w]; len(b) < total {
			return Record{}, r.stopErr(off, "file ends inside a record")
		}
	}
	r.consume(total)
	return Record{Kind: kind, Offset: off, Payload: b[1+w : total]}, nil
}

func (r *RawReader) consume(n int) {
	r.r += n
	r.off += int64(n)
}

// fill reads until n bytes are buffered or the input ends. It moves the
// unread bytes to the front first, so slices handed out earlier are invalid
// afterwards.
func (r *RawReader) fill(n int) {
	if r.r > 0 {
		r.w = copy(r.buf, r.buf[r.r:r.w])
		r.r = 0
	}
	if n > len(r.buf) {
		buf := make([]byte, n, n+bufSlack)
		copy(buf, r.buf[:r.w])
		r.buf = buf
	}
	for empty := 0; r.w < n && r.rerr == nil; {
		m, err := r.rd.Read(r.buf[r.w:])
		r.w += m
		r.rerr = err
		if m == 0 && err == nil {
			if empty++; empty == 100 {
				r.rerr = io.ErrNoProgress
			}
		}
	}
}

// stopErr reports data that ends at off: truncation, unless reading failed
// for another reason.
func (r *RawReader) stopErr(off int64, why string) error {
	if r.rerr != nil && r.rerr != io.EOF {
		return r.posErr(off, "", r.rerr)
	}
	return r.posErr(off, "", truncatedf("%v: %s", ErrTruncated, why))
}

func (r *RawReader) posErr(off int64, field string, err error) *PositionError {
	return &PositionError{File: r.file, Offset: off, Field: field, Err: err}
}
