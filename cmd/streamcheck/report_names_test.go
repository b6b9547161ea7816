package main

import (
	"github.com/streamcheck/streamcheck/baseline"
	"github.com/streamcheck/streamcheck/report"
)

// Names the CLI's tests look for in reports.
const (
	fingerprintKey = baseline.FingerprintKey
	junitReadCase  = report.JUnitReadCase
)
