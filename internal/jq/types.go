package jq

import (
	"github.com/itchyny/gojq"
)

// An expression that starts by selecting event types is not run on the other events.
//
// A jq sink or an exec/http query is most often a filter on the event type first:
// select(.type=="DELETED") | .object.metadata.name. Running it on every other event
// gives nothing, yet costs building its input and a run of the interpreter, more than
// all the rest of a sink's work on the event. So Compile recognises an expression
// whose first step is select(.type == "T"), or several such tests joined by or (in
// either order, in parentheses or not), and Selects tells the callers which event types
// it can give anything for.
//
// The invariant, stated once here: for an event whose type Selects rejects, running the
// expression gives no output and no error. It holds because select(f) gives nothing when
// f is false, a comparison of .type (always a string in the envelope) with a string
// literal is false for any other type and cannot fail, and nothing after the pipe runs
// on no input. An expression with definitions of its own (which could redefine select)
// is never filtered. TestSelectedTypesGiveNothingElse runs every filtered expression on
// events of every type and fails if a rejected one gives anything.

// Selects reports whether the expression can give an output or an error for an event of
// this type (the envelope's "type"); false only where running it surely gives neither.
func (q *Query) Selects(eventType string) bool {
	return q.types == nil || q.types[eventType]
}

// selectedTypes is the set of event types q's first step selects; nil when it does not
// start with such a select.
func selectedTypes(q *gojq.Query) map[string]bool {
	if q == nil || len(q.FuncDefs) > 0 || len(q.Imports) > 0 || q.Meta != nil {
		return nil
	}
	first := q
	for first != nil && first.Op == gojq.OpPipe && len(first.Patterns) == 0 {
		first = first.Left
	}
	if first == nil || first.Op != 0 || first.Term == nil || len(first.Patterns) > 0 {
		return nil
	}
	term := unparenthesised(first.Term)
	if term == nil || term.Type != gojq.TermTypeFunc || len(term.SuffixList) > 0 ||
		term.Func.Name != "select" || len(term.Func.Args) != 1 {
		return nil
	}
	types := map[string]bool{}
	if !typeTests(term.Func.Args[0], types) {
		return nil
	}
	return types
}

// typeTests adds to types the strings q compares .type with, and reports whether q is
// only such comparisons joined by or.
func typeTests(q *gojq.Query, types map[string]bool) bool {
	if q == nil || len(q.FuncDefs) > 0 {
		return false
	}
	switch q.Op {
	case gojq.OpOr:
		return typeTests(q.Left, types) && typeTests(q.Right, types)
	case gojq.OpEq:
		if s, ok := typeComparison(q.Left, q.Right); ok {
			types[s] = true
			return true
		}
		if s, ok := typeComparison(q.Right, q.Left); ok {
			types[s] = true
			return true
		}
		return false
	case 0:
		if q.Term != nil && q.Term.Type == gojq.TermTypeQuery && len(q.Term.SuffixList) == 0 {
			return typeTests(q.Term.Query, types)
		}
	}
	return false
}

// typeComparison reports whether index is .type and literal a string without
// interpolation, and returns the string.
func typeComparison(index, literal *gojq.Query) (string, bool) {
	if index == nil || literal == nil || index.Op != 0 || literal.Op != 0 {
		return "", false
	}
	i, l := unparenthesised(index.Term), unparenthesised(literal.Term)
	if i == nil || l == nil || len(i.SuffixList) > 0 || len(l.SuffixList) > 0 {
		return "", false
	}
	if i.Type != gojq.TermTypeIndex || i.Index == nil || i.Index.Name != "type" || i.Index.Str != nil ||
		i.Index.Start != nil || i.Index.End != nil || i.Index.IsSlice {
		return "", false
	}
	if l.Type != gojq.TermTypeString || l.Str == nil || len(l.Str.Queries) > 0 {
		return "", false
	}
	return l.Str.Str, true
}

// unparenthesised is the term inside parentheses around a single term, or t.
func unparenthesised(t *gojq.Term) *gojq.Term {
	for t != nil && t.Type == gojq.TermTypeQuery && len(t.SuffixList) == 0 && t.Query != nil &&
		t.Query.Op == 0 && t.Query.Term != nil && len(t.Query.FuncDefs) == 0 {
		t = t.Query.Term
	}
	return t
}
