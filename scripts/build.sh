#!/usr/bin/env bash
# Builds the streamcheck CLI and the recording shim into bin/.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
go build -o bin/streamcheck ./cmd/streamcheck
go build -buildmode=c-shared -o bin/libstreamcheck.so ./intercept
rm -f bin/libstreamcheck.h
echo "built bin/streamcheck and bin/libstreamcheck.so"
