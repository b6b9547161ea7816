package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"iter"
)

// spliceArray writes doc, an indented JSON document (encoding/json's
// indentation by two spaces) in which key, the line "\n" + indent +
// "\"name\": []", appears once, with that empty array holding the values
// elems yields: each is encoded when its turn comes, as it would be inside
// the document, so that the array is never in memory whole. escapeHTML is
// whether the document was encoded escaping <, > and & (json.Marshal does;
// an Encoder may not). edit, if not nil, rewrites each encoded element.
func spliceArray(w io.Writer, doc []byte, key, indent string, escapeHTML bool, edit func([]byte) []byte, elems iter.Seq[any]) error {
	at := bytes.Index(doc, []byte(key))
	if at < 0 {
		return fmt.Errorf("report: %q not in the document", key)
	}
	open := at + len(key) - 1 // the "]"
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(doc[:open])
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	enc.SetIndent(indent+"  ", "  ")
	n := 0
	var err error
	for v := range elems {
		buf.Reset()
		if err = enc.Encode(v); err != nil {
			break
		}
		if n > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n" + indent + "  ")
		elem := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if edit != nil {
			elem = edit(elem)
		}
		bw.Write(elem)
		n++
	}
	if err != nil {
		return err
	}
	if n > 0 {
		bw.WriteString("\n" + indent)
	}
	bw.Write(doc[open:])
	return bw.Flush()
}
