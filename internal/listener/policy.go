package listener

import (
	"fmt"
	"strings"
)

// Policy is what a listener does with a new event when its buffer is full. Its field is
// unexported, so the only Policies are the ones below and the zero Policy, which stands
// for "not set" (New makes it Block): a policy read from the user goes through
// ParsePolicy once, where the flags and the config file are read, and nothing later can
// hold a name it does not know.
type Policy struct{ name string }

var (
	// Block makes Add wait for room: lossless, at the cost of holding up the informer
	// handler that feeds this listener (and only this listener).
	Block = Policy{"block"}
	// DropOldest discards the oldest queued event to make room: the sink stays current.
	DropOldest = Policy{"drop-oldest"}
	// DropNewest discards the incoming event: the sink keeps what it already has queued.
	DropNewest = Policy{"drop-newest"}
	// Coalesce merges an event into the one already queued for the same object, at any
	// fill level, so the buffer holds at most one event per object and every object's
	// final state arrives. If the buffer is full of distinct objects, Add waits as under
	// Block. See coalesce for the merge rules.
	Coalesce = Policy{"coalesce"}
)

var policies = []Policy{Block, DropOldest, DropNewest, Coalesce}

// String is the policy's name, as the user gives it ("" for the zero Policy).
func (p Policy) String() string { return p.name }

// IsZero reports whether p is the zero Policy, which means "not set".
func (p Policy) IsZero() bool { return p == Policy{} }

// Lossless reports whether the policy never drops an event: Block, Coalesce (which
// merges events but keeps every object's final state), and the zero Policy, which
// stands for Block.
func (p Policy) Lossless() bool { return p.IsZero() || p == Block || p == Coalesce }

// Policies lists the valid policy names, for flag help and completion.
func Policies() []string {
	names := make([]string, len(policies))
	for i, p := range policies {
		names[i] = p.name
	}
	return names
}

// ParsePolicy turns a flag value into a Policy.
func ParsePolicy(s string) (Policy, error) {
	for _, p := range policies {
		if p.name == s {
			return p, nil
		}
	}
	return Policy{}, fmt.Errorf("unknown on-full policy %q; use one of: %s", s, strings.Join(Policies(), ", "))
}
