package main

import (
	"net/url"
	"path/filepath"

	"github.com/streamcheck/streamcheck/baseline"
	"github.com/streamcheck/streamcheck/report"
)

// Names the CLI's tests look for in reports.
const (
	fingerprintKey = baseline.FingerprintKey
	junitReadCase  = report.JUnitReadCase
)

// escapePath escapes a path as SARIF uris hold it.
func escapePath(p string) string {
	return (&url.URL{Path: filepath.ToSlash(p)}).EscapedPath()
}
