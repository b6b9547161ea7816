package model

import "fmt"

// The op spec's columns that drive the analyzer rather than the formats:
// what an op does to memory and through which fields (the checker's
// allocations, uses and frees), its ordering family (the happens-before
// engine's dispatch table), whether explanations and timelines name its
// event, and its timeline category. Each consumer builds its tables from
// these at init; their completeness tests fail when a row says something
// the consumer has no handler for.

// Mem says what an op does to memory.
type Mem uint8

const (
	MemNone         Mem = iota // Touches no memory the checker follows.
	MemAlloc                   // Allocates [Ptr, Ptr+Size), memory a free need not order after its uses.
	MemAllocOrdered            // Allocates [Ptr, Ptr+Size) stream-ordered (a pool's): its free must be ordered after its uses.
	MemFree                    // Frees the allocation at Ptr.
	MemUnmap                   // Frees the mappings in [Ptr, Ptr+Size).
	MemUse                     // Uses memory at the addresses its Uses name.
	MemGraph                   // Allocates, uses and frees what its graph's work does.
	memCount
)

var memNames = [...]string{"none", "allocates", "allocates, stream-ordered", "frees", "unmaps", "uses", "what its graph does"}

func (m Mem) String() string {
	if m < memCount {
		return memNames[m]
	}
	return fmt.Sprintf("mem(%d)", uint8(m))
}

// Allocates reports whether the op allocates memory.
func (m Mem) Allocates() bool { return m == MemAlloc || m == MemAllocOrdered }

// Frees reports whether the op frees memory.
func (m Mem) Frees() bool { return m == MemFree || m == MemUnmap }

// AddrField names an event field that carries an address an op uses, and
// how to read it.
type AddrField uint8

const (
	AddrNone    AddrField = iota
	AddrPtr               // Event.Ptr: device memory; 0 names none.
	AddrSrc               // Event.Src: device memory; 0 names none.
	AddrDst               // Event.Ptr, a copy's destination: device or host memory as Event.Kind says.
	AddrCopySrc           // Event.Src, a copy's source: device or host memory as Event.Kind says.
	AddrPtrs              // Event.Ptrs: a launch's parameter pointers, strong then weak (Event.Weak).
	AddrMemOp             // Event.Ptr, when Event.MemOp waits for it or writes it (or is not described).
	addrCount
)

var addrNames = [...]string{"", "ptr", "src", "dst", "src", "ptrs", "ptr"}

// Access says whether an op reads or writes memory at an address.
type Access uint8

const (
	Read      Access         = 1 << iota // Reads the memory.
	Write                                // Writes the memory.
	ReadWrite = Read | Write             // May do either (a kernel's arguments; a stream memory operation: a wait reads, a write writes).
)

func (a Access) String() string {
	switch a {
	case Read:
		return "read"
	case Write:
		return "write"
	case ReadWrite:
		return "read/write"
	}
	return fmt.Sprintf("access(%d)", uint8(a))
}

// AddrUse is one address an op uses: the field that carries it and how it
// is accessed. An address equal to the op's previous field's is the same
// use, made once.
type AddrUse struct {
	Field  AddrField
	Access Access
}

func (u AddrUse) String() string {
	if u.Field < addrCount {
		return addrNames[u.Field] + " (" + u.Access.String() + ")"
	}
	return fmt.Sprintf("field(%d)", uint8(u.Field))
}

// Order is an op's ordering family: which of the happens-before engine's
// functions applies it (package hb). The zero value is no family: every
// row names one (an op on a stream, OrderIssue, by OnStream).
type Order uint8

const (
	orderUnset          Order = iota
	OrderNothing              // A host call that orders nothing.
	OrderIssue                // Issued to its stream (OnStream).
	OrderStreamCreate         // Makes a stream agent.
	OrderStreamDestroy        // Ends a stream agent.
	OrderEventCreate          // Makes an event with no record.
	OrderEventDestroy         // Forgets an event's records.
	OrderIpcEventOpen         // Opens another process's event: records it cannot see.
	OrderStreamSync           // The host waits for a stream (a query: when it answers success).
	OrderEventSync            // The host waits for an event's record (likewise).
	OrderDeviceSync           // The host waits for a device.
	OrderAlloc                // A synchronous allocation or free: a step of the host.
	OrderCopy                 // A synchronous-API copy or set on the legacy or per-thread stream.
	OrderGraphChange          // Changes what a graph's launches do.
	OrderGraphClone           // Copies a graph's work into another.
	OrderGraphEventNode       // An event record or wait node of a graph.
	OrderHostFnRun            // A host function ran: the host follows its stream's earlier work.
	OrderCount                // The number of families, for tables indexed by them.
)

// Category is an op's kind in a timeline (its trace events' "cat").
type Category uint8

const (
	categoryUnset Category = iota
	CatSetup               // Handles, pools, graphs, mappings.
	CatMemory              // Allocations and frees.
	CatWork                // Kernels, host functions, graph launches.
	CatCopy                // Copies and sets.
	CatSync                // Records, waits, synchronizations.
	categoryCount
)

var categoryNames = [...]string{"", "setup", "memory", "work", "copy", "sync"}

func (c Category) String() string {
	if c < categoryCount {
		return categoryNames[c]
	}
	return fmt.Sprintf("category(%d)", uint8(c))
}

// Tables of the columns by op, for the analyzer's hot paths (Op.Spec
// copies a whole row).
var (
	opMem        [256]Mem
	opUses       [256][]AddrUse
	opOrder      [256]Order
	opNamesEvent [256]bool
	opCategory   [256]Category
)

// Mem returns what o does to memory.
func (o Op) Mem() Mem { return opMem[o] }

// Uses returns the addresses an op of MemUse uses, in the order they are
// used; nil for other ops.
func (o Op) Uses() []AddrUse { return opUses[o] }

// Order returns o's ordering family.
func (o Op) Order() Order { return opOrder[o] }

// NamesEvent reports whether o is an operation on an event that
// explanations and timelines name (numbered in order of first use): its
// create, records, waits, synchronizations, queries and destroy.
func (o Op) NamesEvent() bool { return opNamesEvent[o] }

// Category returns o's timeline category.
func (o Op) Category() Category { return opCategory[o] }

// fillColumns fills the tables above from the rows, and the columns a row
// may leave out: an op on a stream is issued (OrderIssue), and an op with
// no category is setup.
func fillColumns() {
	for i := range opSpecs {
		s := &opSpecs[i]
		if s.OnStream && s.Order == orderUnset {
			s.Order = OrderIssue
		}
		if s.Category == categoryUnset {
			s.Category = CatSetup
		}
		opMem[i], opUses[i], opOrder[i], opNamesEvent[i], opCategory[i] = s.Mem, s.Uses, s.Order, s.NamesEvent, s.Category
	}
}

// OpsWith returns the valid ops whose spec row satisfies keep, in op order.
func OpsWith(keep func(OpSpec) bool) []Op {
	var ops []Op
	for _, s := range opSpecs[1:] {
		if keep(s) {
			ops = append(ops, s.Op)
		}
	}
	return ops
}
