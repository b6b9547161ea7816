// Package suppress reads suppression files and matches findings against
// them, so that known, accepted findings are neither reported nor fail a
// run.
//
// # File format
//
// A suppression file is line-based text. Blank lines are ignored, and so is
// everything from a "#" that starts a word (outside quotes) to the end of
// the line. Every other line is one entry:
//
//	RULE PATTERN... reason="WHY"
//
// RULE is a rule id (checker.Rules: "use-before-alloc", "leak", ...) or "*"
// for every rule. Each PATTERN is KEY=GLOB:
//
//	frame=GLOB   a stack frame of any operation of the finding (the
//	             allocation included) whose function name, or whose
//	             "file:line", matches GLOB
//	kernel=GLOB  the kernel name of any operation of the finding
//	file=GLOB    the source file of any stack frame of any operation
//
// A finding stands for every occurrence of its root cause
// (checker.Finding), and the operations and allocation it carries are its
// first occurrence's: frame= and file= match those. It has the rule of that
// occurrence; a reuse-while-in-flight folded into a use-before-alloc is
// matched by the use-before-alloc entry (both are one missing ordering
// before that use).
//
// An entry needs at least one pattern, and it matches a finding of its rule
// when every one of its patterns does (each may be satisfied by a different
// operation). reason= is required: it says why the finding is accepted and
// is kept for whoever reads the file next.
//
// Values may be quoted with double quotes, in which \" and \\ stand for a
// quote and a backslash; a value with spaces or "#" must be quoted.
//
// In a GLOB, "*" matches any run of characters ("/" and "::" included), "?"
// any one character, and "\" makes the next character literal; everything
// else matches itself. Patterns on paths (file=, and the "file:line" form of
// frame=) match the whole path or any tail of it that starts after a "/":
// file=third_party/* matches "third_party/cub/scan.cuh" and
// "/src/third_party/cub/scan.cuh" but not "my_third_party/x.cu". A pattern
// that starts with "/" matches whole paths only.
//
// Example:
//
//	# Prefetch is ordered by a host barrier streamcheck cannot see.
//	use-before-alloc  frame=*Trainer::prefetch*  reason="ordered by a host barrier"
//	free-while-in-flight  kernel=at::native::*  reason="PyTorch's caching allocator records its own events"
//	*  file=third_party/*  reason="vendored code, reported upstream"
//
// A malformed line, an unknown rule id, an unknown key, an entry without a
// pattern, and an entry without a reason are errors naming the file and
// line ("supp.txt:3: entry has no reason"). An entry that matched no
// finding in a run is reported by List.Unused, so stale entries are noticed.
package suppress
