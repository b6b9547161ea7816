package report

import (
	"fmt"
	"strings"
)

// formats is the registry, in the order Names lists it.
var formats []entry

type entry struct {
	name string
	f    Formatter
}

func init() {
	Register("text", Text{})
	Register("json", JSON{})
	Register("sarif", SARIF{})
	Register("junit", JUnit{})
}

// Register adds a formatter under name, replacing one registered under it
// before. It is not safe to call while others look formatters up.
func Register(name string, f Formatter) {
	for i := range formats {
		if formats[i].name == name {
			formats[i].f = f
			return
		}
	}
	formats = append(formats, entry{name, f})
}

// Lookup returns the formatter registered under name; the error lists the
// names there are.
func Lookup(name string) (Formatter, error) {
	for _, e := range formats {
		if e.name == name {
			return e.f, nil
		}
	}
	return nil, fmt.Errorf("unknown report format %q (want %s)", name, NameList())
}

// Names returns the registered formats' names, in registration order: text,
// json, sarif, junit, then any a driver added.
func Names() []string {
	names := make([]string, len(formats))
	for i, e := range formats {
		names[i] = e.name
	}
	return names
}

// NameList gives the names as a sentence does: "text, json, sarif or junit".
func NameList() string {
	names := Names()
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
