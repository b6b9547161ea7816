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
// message, and whether the source was truncated rather than corrupt.
const copiedSuffix = " (in the trace this one was copied from)"

func copiedDamage(note string, truncated bool) error {
	sentinel := ErrCorrupt
	if truncated {
		sentinel = ErrTruncated
	}
	note = Printable(note)
	if !strings.HasSuffix(note, copiedSuffix) { // a copy of a copy says it once
		note += copiedSuffix
	}
	return &detailError{sentinel, note}
}

// noteTruncated reports whether a damage message says the trace was
// truncated (else it was corrupt).
func noteTruncated(note string) bool { return strings.Contains(note, ErrTruncated.Error()) }
