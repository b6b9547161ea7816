package model

import (
	"fmt"
	"strings"
)

// detailError carries a one-line description of a problem while unwrapping
// to one of the sentinel errors, so PositionError prints the detail alone
// ("field \"stream\": unknown stream name \"s9\"") and errors.Is still works.
type detailError struct {
	sentinel error
	msg      string
}

func (e *detailError) Error() string { return e.msg }
func (e *detailError) Unwrap() error { return e.sentinel }

func corruptf(format string, args ...any) error {
	return &detailError{ErrCorrupt, fmt.Sprintf(format, args...)}
}

func truncatedf(format string, args ...any) error {
	return &detailError{ErrTruncated, fmt.Sprintf(format, args...)}
}

func formatf(format string, args ...any) error {
	return &detailError{ErrFormat, fmt.Sprintf(format, args...)}
}

// copiedDamage is the damage a trace copied from a damaged one ends with
// (a Damage record, or a JSON Lines damage comment): the source's own
// message, which names the source and its position when the copy was made
// by convert (not when the run/record rewrite made it: the recording it
// replaces is gone), and whether the source was truncated rather than
// corrupt.
func copiedDamage(note string, truncated bool) error {
	sentinel := ErrCorrupt
	if truncated {
		sentinel = ErrTruncated
	}
	return &detailError{sentinel, Printable(note)}
}

// noteTruncated reports whether a damage message says the trace was
// truncated (else it was corrupt).
func noteTruncated(note string) bool { return strings.Contains(note, ErrTruncated.Error()) }
