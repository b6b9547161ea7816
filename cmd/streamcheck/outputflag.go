package main

import "flag"

// outputFile is the value of an -o FILE flag: "-" names standard output, as
// the empty default does, so that `-o -` does not write a file named "-".
type outputFile string

func (o *outputFile) String() string { return string(*o) }

func (o *outputFile) Set(s string) error {
	if s == "-" {
		s = ""
	}
	*o = outputFile(s)
	return nil
}

// outputFlag defines -o on fs as an outputFile and returns where its value is
// kept (the empty string for standard output).
func outputFlag(fs *flag.FlagSet, usage string) *string {
	var o outputFile
	fs.Var(&o, "o", usage)
	return (*string)(&o)
}
