// Package bench holds the analyzer's end-to-end benchmarks: the throughput
// and memory goals of streamcheck are measured here on synthetic traces from
// internal/synth. Run bench/run.sh to reproduce bench/results/analyzer.txt;
// bench/README.md records the numbers.
package bench
