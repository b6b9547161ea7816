package explain

import (
	"fmt"

	"github.com/streamcheck/streamcheck/checker"
)

// missingEdge returns the ordering whose absence a finding reports, from the
// operation that should come first to the one that should wait for it, as
// the finding's rule says (checker.MissingOrder). A use-after-free has none:
// the use was issued after the free, and no ordering added between them
// would make it right (an edge from the use back to the free would close a
// cycle), so the graph shows no missing edge.
func missingEdge(f *checker.Finding) *Edge {
	from, alloc, ok := checker.MissingOrder(f)
	if !ok {
		return nil
	}
	op := &f.Ops[0]
	label := fmt.Sprintf("missing: the %s must wait for #%d", op.Role, from)
	if alloc {
		label = fmt.Sprintf("missing: the %s must wait for the allocation #%d", op.Role, from)
	}
	return &Edge{From: vertexID(from), To: vertexID(op.Seq), Kind: EdgeMissing, Label: label}
}
