// Package safefile opens files in a directory that another user may be
// able to write (a trace directory, /tmp): without following a symbolic
// link at the last component, without blocking on a FIFO or a device, and
// only when the file is a regular file the current user owns. streamcheck
// reads and rewrites the files the recording shim leaves there, and must
// not be made to read (or copy, with its own rights) a file it was not
// meant to.
package safefile
