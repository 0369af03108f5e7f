package listener

import (
	"strings"

	"github.com/kubeevents/kubeevents/internal/diag"
)

// Stats counts what became of the events given to a listener. Once Run has returned,
// Received == Delivered + Filtered + Dropped + Coalesced + Failed + Fenced.
type Stats struct {
	Received  uint64 // every Add
	Delivered uint64 // sink.Write returned nil
	Filtered  uint64 // sink.Write returned ErrFiltered: left out on purpose
	Dropped   uint64 // discarded by the on-full policy, at shutdown, or by Abort
	Coalesced uint64 // merged into an event for the same object that was already queued
	Failed    uint64 // not written because sink.Write returned an error or panicked
	// Fenced are held back by the fence (Config.Fence): not written, because this
	// process may no longer lead; the replica that leads delivers them.
	Fenced uint64
}

// Summary is one line for the exit report, e.g. "archive 11,950 delivered, 84 dropped";
// zero dropped, coalesced, failed and held back counts are left out.
func (s Stats) Summary(name string) string {
	var b strings.Builder
	b.WriteString(name + " " + diag.Count(s.Delivered) + " delivered")
	for _, part := range []struct {
		n    uint64
		what string
	}{{s.Filtered, "filtered"}, {s.Dropped, "dropped"}, {s.Coalesced, "coalesced"}, {s.Failed, "failed"}, {s.Fenced, "held back for the leader"}} {
		if part.n > 0 {
			b.WriteString(", " + diag.Count(part.n) + " " + part.what)
		}
	}
	return b.String()
}
