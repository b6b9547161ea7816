package model

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
)

// NewReader returns a reader for a trace in either form: binary when r
// starts with BinaryMagic, JSON Lines otherwise; a file named *.sctrace that
// starts with a zero byte is a binary trace cut before its header
// (ErrTruncated). Input that is neither (its first non-blank byte
// opens no JSON object or comment), or is empty (blank), gives a
// *PositionError wrapping ErrFormat; so does JSON Lines whose first line
// that is not a comment is no JSON object with an "op", or that holds no
// event at all (see JSONLReader). file names the trace in errors.
func NewReader(r io.Reader, file string) (Reader, error) {
	head := make([]byte, 512)
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, &PositionError{File: file, Err: err}
	}
	head = head[:n]
	whole := io.MultiReader(bytes.NewReader(head), r) // Give back what was sniffed.
	// The shim creates its file, sized with zeros, before it writes the
	// header: a recording that died in between leaves a .sctrace file that
	// starts with a zero byte. An empty file is no trace, whatever its name
	// (below), so that every empty input is told apart from a damaged one.
	if strings.HasSuffix(file, ".sctrace") && len(head) > 0 && head[0] == 0 {
		return nil, &PositionError{File: file, Err: truncatedf("%v: the recorder stopped before it wrote the header", ErrTruncated)}
	}
	if looksBinary(head) {
		return NewBinaryReader(whole, file)
	}
	text := bytes.TrimLeft(bytes.TrimPrefix(head, []byte(byteOrderMark)), " \t\r\n")
	if len(text) == 0 && len(head) < cap(head) {
		// An empty recording (a CI job whose program never ran) must not
		// read as a clean trace.
		return nil, &PositionError{File: file, Err: formatf("%v: the file is empty", ErrFormat)}
	}
	if len(text) > 0 && text[0] != '{' && text[0] != '#' {
		return nil, &PositionError{File: file, Err: formatf("%v: neither a binary trace (no magic %q) nor JSON Lines (starts with byte %#02x)", ErrFormat, BinaryMagic, text[0])}
	}
	return NewJSONLReader(whole, file), nil
}

// looksBinary reports whether head starts with the magic, or is a non-empty
// prefix of it (a binary file cut inside its header).
func looksBinary(head []byte) bool {
	n := min(len(head), len(BinaryMagic))
	return n > 0 && string(head[:n]) == BinaryMagic[:n]
}

// Open opens the trace file at path. The caller closes the returned Closer
// when done reading.
func Open(path string) (Reader, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open trace: %w", err)
	}
	r, err := NewReader(f, path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return r, f, nil
}
