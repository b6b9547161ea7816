// Package symbolize turns recorded program counters into source locations.
//
// The shim records raw return addresses and the module map of the traced
// process (docs/trace-format.md). While the program's files are still on
// disk, a Symbolizer reads their ELF symbol tables and DWARF line tables
// (debug/elf, debug/dwarf) and fills each frame's function, file and line:
// "file:line function" where the binary has debug info, "function" (from
// the symbol table, demangled) otherwise. Frames that cannot be resolved keep
// their module and offset.
package symbolize
