package checker

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/streamcheck/streamcheck/hb"
	"github.com/streamcheck/streamcheck/model"
)

// Reports name a stream as the program does where the trace can tell: the
// variable the program assigns it to at the line that created it (or, in
// Python, the stream a line it was first used at names), read from the
// program's source; else the name the trace gives it (a JSON Lines trace's
// "s1"); else its number with the line that created it, "stream s5
// (created at main.cu:42)". Op.Stream keeps the stable id either way.

// streamNaming returns the program's name for a stream ("" when its
// source does not tell) and the phrase a sentence names it by: "stream
// `s2`", "stream s5 (created at main.cu:42)", "the legacy default stream".
// site is where reports place the stream (see streamSite).
func (c *Checker) streamNaming(a *hb.Agent, site streamSite) (name, ref string) {
	device := ""
	if c.engine.Devices() > 1 {
		device = fmt.Sprintf(" of device %d", a.Device)
	}
	switch a.Kind {
	case hb.KindHost:
		return "", "the host"
	case hb.KindLegacy:
		return "", "the legacy default stream" + device
	case hb.KindPerThread:
		return "", fmt.Sprintf("the per-thread default stream of host thread %d%s", a.TID, device)
	}
	id := c.StreamName(a)
	if name = sourceStreamName(site); name != "" {
		return name, "stream `" + name + "`"
	}
	switch {
	case c.tables.Name(model.ObjectStream, a.Handle) != "": // the trace's own name
		return "", "stream " + id
	case site.firstUsed != "":
		return "", fmt.Sprintf("stream %s (first used at %s)", id, shortSite(site.firstUsed))
	case site.created != "":
		return "", fmt.Sprintf("stream %s (created at %s)", id, shortSite(site.created))
	}
	return "", "stream " + id
}

// shortSite is the file and line of a place in a stream's phrase,
// "main.cu:42": the function and the helper the stream was made through
// are on the operation's own line of the report.
func shortSite(site string) string {
	if file, line, ok := siteFileLine(withoutHelper(site)); ok {
		return fmt.Sprintf("%s:%d", file, line)
	}
	return site
}

// streamRefOf is streamNaming's phrase for the stream of agent id.
func (c *Checker) streamRefOf(id hb.AgentID) string {
	_, ref := c.streamNaming(c.engine.Agent(id), c.streamSite(id))
	return ref
}

// ProgramStreamName is the program's own name for a stream, as reports
// give it (Op.StreamName), for other views of the trace (a timeline's
// tracks); "" where its source does not tell. Ask once the trace is read:
// telling streams apart needs all of their creations.
func (c *Checker) ProgramStreamName(a *hb.Agent) string {
	name, _ := c.streamNaming(a, c.streamSite(a.ID))
	return name
}

// tellApart makes the phrases of a finding's operations tell their
// streams apart where the program gives two of them one name (a variable
// reused in two functions, or in a loop): the stable id is added.
func tellApart(ops []*Op) {
	for i, a := range ops {
		for _, b := range ops[i+1:] {
			if a.StreamName != "" && a.StreamName == b.StreamName && a.Stream != b.Stream {
				for _, o := range ops {
					if o.StreamName == a.StreamName && !strings.HasSuffix(o.StreamRef, ")") {
						o.StreamRef += " (" + o.Stream + ")"
					}
				}
			}
		}
	}
}

// sourceStreamName reads, from the program's source, the name it gives a
// stream placed at site: in Python, see pythonStreamName; in C, C++ and
// CUDA, the variable the creating line assigns or passes by address to
// cudaStreamCreate*/cuStreamCreate* ("cudaStream_t s1 =
// make_stream();", "cudaStreamCreate(&s1)"). A C++ stream whose creation
// does not tell it apart (made in a loop, or by a pool) has no name: the
// line names every stream made there.
func sourceStreamName(site streamSite) string {
	if n := pythonStreamName(site.created, site.firstUsed); n != "" {
		return n
	}
	if site.firstUsed != "" || site.created == "" {
		return ""
	}
	file, line, ok := siteFileLine(withoutHelper(site.created))
	if !ok || !cSource[strings.ToLower(filepath.Ext(file))] {
		return ""
	}
	lines := sourceLines(file)
	if line > len(lines) {
		return ""
	}
	text, _, _ := strings.Cut(lines[line-1], "//")
	if m := cStreamCreate.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	if m := cStreamAssign.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	return ""
}

// withoutHelper drops the helper a stream was made through from its place
// of creation, "main app.cu:12 (via make_stream)", leaving the calling line.
func withoutHelper(site string) string {
	if i := strings.Index(site, " (via "); i >= 0 {
		return site[:i]
	}
	return site
}

// cSource holds the extensions of C, C++ and CUDA sources.
var cSource = map[string]bool{
	".c": true, ".cc": true, ".cpp": true, ".cxx": true, ".cu": true, ".cuh": true,
	".h": true, ".hh": true, ".hpp": true, ".hxx": true,
}

var (
	// cudaStreamCreateWithFlags(&s1, ...): a variable or member, not an
	// element of an array (which element is not known).
	cStreamCreate = regexp.MustCompile(`\b(?:cuda|cu)StreamCreate\w*\s*\(\s*&\s*([A-Za-z_]\w*(?:(?:\.|->)[A-Za-z_]\w*)*)\s*[,)]`)
	// cudaStream_t s1 = sc::make_stream(true); the right-hand side must
	// speak of a stream.
	cStreamAssign = regexp.MustCompile(`^\s*(?:[\w:<>]+[\s*&]+)*([A-Za-z_]\w*)\s*=[^=]*(?i:stream)`)
)

// firstMentionOnly keeps where a stream was made or first used to its
// first mention in each of a finding's sentences (message, why, fix: each
// is read on its own): "stream s5 (created at main.cu:42)" once, then
// "stream s5".
func firstMentionOnly(f *Finding, ops []*Op) {
	for _, o := range ops {
		short := "stream " + o.Stream
		if o.StreamRef == short || !strings.HasPrefix(o.StreamRef, short+" (") {
			continue
		}
		for _, text := range []*string{&f.Message, &f.Why, &f.Fix} {
			if i := strings.Index(*text, o.StreamRef); i >= 0 {
				j := i + len(o.StreamRef)
				*text = (*text)[:j] + strings.ReplaceAll((*text)[j:], o.StreamRef, short)
			}
		}
	}
}
