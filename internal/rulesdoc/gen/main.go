// Command gen writes the rules table into the README (rulesdoc.Splice):
// go generate ./checker runs it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/streamcheck/streamcheck/checker"
	"github.com/streamcheck/streamcheck/internal/rulesdoc"
)

func main() {
	readme := flag.String("readme", "README.md", "the `README` to write the rules table into")
	flag.Parse()
	if err := run(*readme); err != nil {
		fmt.Fprintf(os.Stderr, "rulesdoc: %s: %v\n", *readme, err)
		os.Exit(1)
	}
}

func run(path string) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := rulesdoc.Splice(old, rulesdoc.Table(checker.Rules))
	if err != nil || bytes.Equal(out, old) {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}
