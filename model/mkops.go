//go:build ignore

// mkops writes the files generated from the op spec (opspec.go): run by
// `go generate ./model`, from this folder.
package main

import (
	"bytes"
	"log"
	"os"
	"path/filepath"

	"github.com/streamcheck/streamcheck/model/internal/opgen"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("mkops: ")
	files, err := opgen.Files("..")
	if err != nil {
		log.Fatal(err)
	}
	for name, text := range files {
		path := filepath.Join("..", name)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, text) {
			continue
		}
		if err := os.WriteFile(path, text, 0o644); err != nil {
			log.Fatal(err)
		}
		log.Printf("wrote %s", name)
	}
}
