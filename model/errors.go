package model

import "fmt"

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
