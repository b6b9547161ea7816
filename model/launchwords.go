package model

import (
	"slices"
	"strings"
)

// Raw launch words: a recorder that writes them (FlagRawWords) copies the
// parameter words of a launch that can be device addresses into the event as
// they are, and leaves finding which of them name recorded memory to the
// reader, off the program's calling thread. The reader keeps the map the
// recorder kept before (intercept/allocmap.c): every allocation of the trace
// so far, and the last recentFrees ranges freed, each freed range until an
// allocation overlaps it or it falls out of the ring. A launch's words are
// looked up in it where the launch stands in the trace and the event is
// given the matches in the form recorders that look words up themselves
// write: the strong matches sorted and deduplicated, then the weak ones
// less the strong.
//
// A raw launch's Ptrs: the words of pointer slots first, then Weak others,
// of which the last live (event field "live") come from parameters larger
// than an aggregate (tables on the host stack, whose unused slots hold stale
// addresses): those match live allocations only.

// recentFrees is how many freed ranges the map remembers (the recorder's
// RECENT_FREES).
const recentFrees = 4096

// deadBatch forgotten ranges are removed from the arrays together.
const deadBatch = 512

type wordRange struct {
	hi    uint64
	freed uint32 // 0 live, else the generation of its free
	known bool   // false: forgotten (fell out of the ring), no lookup finds it
}

// names reports whether w, at or above the range's start, falls in it and
// the range counts: known, and live if liveOnly.
func (r wordRange) names(w uint64, liveOnly bool) bool {
	return w < r.hi && r.known && !(liveOnly && r.freed != 0)
}

// launchWords is the reader's allocation map for raw launch words.
type launchWords struct {
	los   []uint64 // sorted range starts
	rs    []wordRange
	ndead int
	ring  [recentFrees]struct {
		lo  uint64
		gen uint32
	}
	ringNext, ringLen   int
	gen                 uint32
	strong, weak, table []uint64 // scratch: each class of a launch's words
}

// recordsRawLaunchWords reports whether a trace's recorder may write raw
// launch words: the shim from version 0.3 on.
func recordsRawLaunchWords(version string) bool {
	v, ok := strings.CutPrefix(version, shimRecorder)
	return ok && !strings.HasPrefix(v, "0.1.") && !strings.HasPrefix(v, "0.2.")
}

// upper is the first index whose start is above addr.
func (m *launchWords) upper(addr uint64) int {
	i, found := slices.BinarySearch(m.los, addr)
	if found {
		i++
	}
	return i
}

func (m *launchWords) removeAt(i int) {
	if !m.rs[i].known {
		m.ndead--
	}
	m.los = slices.Delete(m.los, i, i+1)
	m.rs = slices.Delete(m.rs, i, i+1)
}

// add records the allocation [base, base+size); whatever it overlaps was
// handed out again, so it goes.
func (m *launchWords) add(base, size uint64) {
	if base == 0 {
		return
	}
	hi := rangeEnd(base, size)
	i := m.upper(base)
	if i > 0 && m.los[i-1] == base && m.rs[i-1].hi == hi { // a pool's range again: flip it in place
		if !m.rs[i-1].known {
			m.ndead--
		}
		m.rs[i-1] = wordRange{hi: hi, known: true}
		return
	}
	if i > 0 && m.rs[i-1].hi > base {
		i--
	}
	for i < len(m.los) && m.los[i] < hi {
		if m.rs[i].hi > base {
			m.removeAt(i)
		} else {
			i++
		}
	}
	i = m.upper(base)
	m.los = slices.Insert(m.los, i, base)
	m.rs = slices.Insert(m.rs, i, wordRange{hi: hi, known: true})
}

// rangeEnd is base+size, at least base+1, saturating.
func rangeEnd(base, size uint64) uint64 {
	if size == 0 {
		size = 1
	}
	if base+size < base {
		return ^uint64(0)
	}
	return base + size
}

// free makes the live range at base a recent free.
func (m *launchWords) free(base uint64) {
	if base == 0 {
		return
	}
	i := m.upper(base)
	if i == 0 || m.los[i-1] != base || m.rs[i-1].freed != 0 {
		return
	}
	if m.ringLen == recentFrees { // forget the oldest free, unless reused or freed again since
		old := &m.ring[(m.ringNext+recentFrees-m.ringLen)%recentFrees]
		if j := m.upper(old.lo); j > 0 && m.los[j-1] == old.lo && m.rs[j-1].freed == old.gen && m.rs[j-1].known {
			m.rs[j-1].known = false
			if m.ndead++; m.ndead >= deadBatch {
				m.removeDead()
			}
		}
		m.ringLen--
	}
	if m.gen++; m.gen == 0 {
		m.gen = 1
	}
	i = m.upper(base)
	m.rs[i-1].freed = m.gen
	m.ring[m.ringNext].lo, m.ring[m.ringNext].gen = base, m.gen
	m.ringNext = (m.ringNext + 1) % recentFrees
	m.ringLen++
}

// freeRange frees every live range that starts in [lo, hi): an unmap.
func (m *launchWords) freeRange(lo, hi uint64) {
	if lo == 0 {
		return
	}
	i := m.upper(lo)
	if i > 0 && m.los[i-1] == lo {
		i--
	}
	for i < len(m.los) && m.los[i] < hi {
		at := m.los[i]
		if m.rs[i].freed == 0 {
			m.free(at)
		}
		i = m.upper(at)
	}
}

func (m *launchWords) removeDead() {
	w := 0
	for r := range m.los {
		if !m.rs[r].known {
			continue
		}
		m.los[w], m.rs[w] = m.los[r], m.rs[r]
		w++
	}
	m.los, m.rs = m.los[:w], m.rs[:w]
	m.ndead = 0
}

// observe keeps the map up to date with ev, a successful event in trace
// order, as the recorder's map followed the calls.
func (m *launchWords) observe(ev *Event) {
	if ev.Result != ResultSuccess {
		return
	}
	switch ev.Op.Mem() {
	case MemAlloc, MemAllocOrdered:
		m.add(ev.Ptr, ev.Size)
	case MemFree:
		if ev.Flags&FlagGraphNode == 0 { // a graph's free node frees when the graph runs
			m.free(ev.Ptr)
		}
	case MemUnmap:
		m.freeRange(ev.Ptr, rangeEnd(ev.Ptr, ev.Size))
	}
}

// resolve turns ev's raw words, the last live of them live-only, into its
// matches: strong sorted and unique, then the weak ones not strong. Each
// class is sorted first and walked up the map once, each search starting
// where the last ended, which also leaves the matches in order.
func (m *launchWords) resolve(ev *Event, live int) {
	nweak := ev.weak()
	nstrong := len(ev.Ptrs) - nweak
	live = min(live, nweak)
	words := ev.Ptrs
	// Each class is copied out of words before ev.Ptrs is overwritten;
	// matchSorted writes its matches over the sorted words it has read.
	m.strong = m.matchSorted(sortedUnique(append(m.strong[:0], words[:nstrong]...)), false, m.strong[:0])
	m.weak = m.matchSorted(sortedUnique(append(m.weak[:0], words[nstrong:len(words)-live]...)), false, m.weak[:0])
	m.table = m.matchSorted(sortedUnique(append(m.table[:0], words[len(words)-live:]...)), true, m.table[:0])
	out := append(ev.Ptrs[:0], m.strong...)
	// The weak matches: both weak classes merged in order, less the strong.
	weak, i, j, s := 0, 0, 0, 0
	last, any := uint64(0), false
	for i < len(m.weak) || j < len(m.table) {
		var w uint64
		if j == len(m.table) || (i < len(m.weak) && m.weak[i] <= m.table[j]) {
			w = m.weak[i]
			i++
		} else {
			w = m.table[j]
			j++
		}
		if any && w == last {
			continue
		}
		last, any = w, true
		for s < len(m.strong) && m.strong[s] < w {
			s++
		}
		if s < len(m.strong) && m.strong[s] == w {
			continue
		}
		out = append(out, w)
		weak++
	}
	ev.Ptrs, ev.Weak = out, uint32(weak)
	ev.Flags &^= FlagRawWords
}

// sortedUnique sorts v and drops repeats, in place.
func sortedUnique(v []uint64) []uint64 {
	slices.Sort(v)
	return slices.Compact(v)
}

// matchSorted appends to out the words of sorted that name a range of the
// map (a live one only, if liveOnly), in order. The search for each word
// starts where the last one's ended: it gallops forward, then halves.
func (m *launchWords) matchSorted(sorted []uint64, liveOnly bool, out []uint64) []uint64 {
	los, j := m.los, 0
	for _, w := range sorted {
		// j: the first index whose start is above w. Every start before
		// the old j is at most the last word, so at most w.
		hi, step := j, 1
		for hi < len(los) && los[hi] <= w {
			j = hi + 1
			hi += step
			step *= 2
		}
		hi = min(hi, len(los))
		for j < hi { // the first start above w is in [j, hi]
			mid := int(uint(j+hi) >> 1)
			if los[mid] <= w {
				j = mid + 1
			} else {
				hi = mid
			}
		}
		if j > 0 && m.rs[j-1].names(w, liveOnly) {
			out = append(out, w)
		}
	}
	return out
}
