// Command streamcheck finds races and misuse of CUDA stream-ordered memory
// allocation (cudaMallocAsync, cudaFreeAsync and memory pools) in traces of a
// program's CUDA calls.
//
//	streamcheck check [flags] TRACE|DIR...          analyze recorded traces
//	streamcheck run [flags] -- PROGRAM [ARG...]     record a program, then analyze it
//	streamcheck record -o DIR [flags] -- PROGRAM    record traces only
//	streamcheck convert [flags] TRACE               binary <-> JSON Lines
//	streamcheck explain [--dot] TRACE               happens-before graph of a finding
//	streamcheck timeline [-o FILE] TRACE            Chrome/Perfetto trace-event JSON
//	streamcheck demo [flags]                        analyze a built-in example
//	streamcheck doctor [flags]                      check the CUDA setup, self-test
//
// Run "streamcheck help COMMAND" for the flags of a command.
//
// The command parses flags, runs the analysis and decides the exit code;
// package report writes the reports, in the format --format names.
package main
