package jq

import (
	"strings"

	"github.com/itchyny/gojq"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/generic"
)

// A jq expression's input is projected to what the expression reads.
//
// Building an envelope's generic values costs about as much as decoding the object's
// JSON (BenchmarkObjectValue, BenchmarkJQInput), most of it for fields a filter never
// reads: select(.type=="DELETED") | .object.metadata.name reads two strings of a
// pod's hundreds. So Compile works out from the parsed expression which paths of the
// envelope it can read (readPaths), and Query.Input builds only those.
//
// The invariant, stated once here: the expression's outputs and errors on the projected
// input are those it gives on the whole envelope. It holds because
//   - the projection keeps, at every path the analysis found, the value itself whole,
//     unless only some of its keys are read, and then a map with those keys (the
//     same kind of value, so `type`, truth and the errors of indexing it are the same);
//   - the analysis marks a value as read whole wherever anything but indexing it by a
//     constant key, passing it on, or select's test looks at it (a comparison, a
//     function, an iteration, a construction, being an output), and gives up (the
//     whole envelope) on anything it does not follow: variable bindings, reduce,
//     foreach, labels, definitions, assignments.
//
// TestJQProjectionGivesTheSameOutputs runs a list of expressions on both inputs and
// fails when they differ; TestJQProjectionReads checks what the analysis reads.

// child is the part of key's value that t names, added if absent.
func child(t *generic.Part, key string) *generic.Part {
	if t.Keys == nil {
		t.Keys = map[string]*generic.Part{}
	}
	c, ok := t.Keys[key]
	if !ok {
		c = &generic.Part{}
		t.Keys[key] = c
	}
	return c
}

// readPaths is the part of its input q reads; nil when that cannot be told (read it
// whole).
func readPaths(q *gojq.Query) *generic.Part {
	a := &readAnalysis{root: &generic.Part{}}
	out, ok := a.query(q, valueSet{paths: [][]string{nil}})
	if !ok {
		return nil
	}
	a.readWhole(out) // what it outputs is written whole
	if a.root.Whole {
		return nil
	}
	return a.root
}

// valueSet is where the values an expression works on may come from: subtrees of the
// input at paths, or values of their own (fresh: literals, computed values, or parts
// of a value read whole).
type valueSet struct {
	paths [][]string
	fresh bool
}

func (s valueSet) union(o valueSet) valueSet {
	return valueSet{paths: append(s.paths[:len(s.paths):len(s.paths)], o.paths...), fresh: s.fresh || o.fresh}
}

// index is s with key looked up in each value.
func (s valueSet) index(key string) valueSet {
	out := valueSet{fresh: s.fresh}
	for _, p := range s.paths {
		out.paths = append(out.paths, append(p[:len(p):len(p)], key))
	}
	return out
}

var freshValues = valueSet{fresh: true}

type readAnalysis struct {
	root *generic.Part
}

// readWhole marks every value of s as read whole.
func (a *readAnalysis) readWhole(s valueSet) {
	for _, p := range s.paths {
		t := a.root
		for _, key := range p {
			if t.Whole {
				break
			}
			t = child(t, key)
		}
		t.Whole, t.Keys = true, nil
	}
}

// readAll reads whole what q gives on in; false when the analysis does not follow q.
func (a *readAnalysis) readAll(q *gojq.Query, in valueSet) bool {
	values, ok := a.query(q, in)
	if ok {
		a.readWhole(values)
	}
	return ok
}

// query is what q outputs given inputs; ok is false when the analysis does not follow q.
func (a *readAnalysis) query(q *gojq.Query, in valueSet) (valueSet, bool) {
	if q.Meta != nil || len(q.Imports) > 0 || len(q.FuncDefs) > 0 || len(q.Patterns) > 0 {
		return valueSet{}, false
	}
	if q.Term != nil {
		return a.term(q.Term, in)
	}
	if q.Left == nil || q.Right == nil {
		return valueSet{}, false
	}
	left, ok := a.query(q.Left, in)
	if !ok {
		return valueSet{}, false
	}
	switch q.Op {
	case gojq.OpPipe:
		return a.query(q.Right, left)
	case gojq.OpComma:
		right, ok := a.query(q.Right, in)
		return left.union(right), ok
	case gojq.OpAlt:
		// a // b tests a's values and passes on those it keeps.
		a.readWhole(left)
		right, ok := a.query(q.Right, in)
		return left.union(right), ok
	case gojq.OpAdd, gojq.OpSub, gojq.OpMul, gojq.OpDiv, gojq.OpMod,
		gojq.OpEq, gojq.OpNe, gojq.OpGt, gojq.OpLt, gojq.OpGe, gojq.OpLe, gojq.OpAnd, gojq.OpOr:
		right, ok := a.query(q.Right, in)
		a.readWhole(left)
		a.readWhole(right)
		return freshValues, ok
	}
	return valueSet{}, false // assignments and updates
}

func (a *readAnalysis) term(t *gojq.Term, in valueSet) (valueSet, bool) {
	out, ok := freshValues, true
	switch t.Type {
	case gojq.TermTypeIdentity:
		out = in
	case gojq.TermTypeIndex:
		out, ok = a.index(t.Index, in, in)
	case gojq.TermTypeNull, gojq.TermTypeTrue, gojq.TermTypeFalse, gojq.TermTypeNumber:
	case gojq.TermTypeString:
		ok = a.interpolations(t.Str, in)
	case gojq.TermTypeFormat:
		if t.Str == nil {
			a.readWhole(in) // @base64 formats its input
		} else {
			ok = a.interpolations(t.Str, in)
		}
	case gojq.TermTypeRecurse:
		a.readWhole(in)
	case gojq.TermTypeFunc:
		out, ok = a.function(t.Func, in)
	case gojq.TermTypeObject:
		for _, kv := range t.Object.KeyVals {
			ok = ok && a.objectKeyVal(kv, in)
		}
	case gojq.TermTypeArray:
		ok = t.Array.Query == nil || a.readAll(t.Array.Query, in)
	case gojq.TermTypeUnary:
		var values valueSet
		values, ok = a.term(t.Unary.Term, in)
		a.readWhole(values)
	case gojq.TermTypeIf:
		out, ok = a.ifThen(t.If, in)
	case gojq.TermTypeTry:
		out, ok = a.query(t.Try.Body, in)
		if ok && t.Try.Catch != nil {
			// The catch's input is an error message, made of values read whole.
			var caught valueSet
			caught, ok = a.query(t.Try.Catch, freshValues)
			out = out.union(caught)
		}
	case gojq.TermTypeQuery:
		out, ok = a.query(t.Query, in)
	default: // reduce, foreach, label, break
		ok = false
	}
	if !ok {
		return valueSet{}, false
	}
	for _, suffix := range t.SuffixList {
		switch {
		case suffix.Index != nil:
			var ok bool
			if out, ok = a.index(suffix.Index, out, in); !ok {
				return valueSet{}, false
			}
		case suffix.Iter:
			a.readWhole(out)
			out = freshValues
		case suffix.Optional:
		default:
			return valueSet{}, false
		}
	}
	return out, true
}

// index is .key (or .["key"]) on values; any other index or slice reads them whole.
// Its expressions (.[EXPR]) run on termInput, the input of the term.
func (a *readAnalysis) index(idx *gojq.Index, values, termInput valueSet) (valueSet, bool) {
	switch {
	case idx.Name != "":
		return values.index(idx.Name), true
	case idx.Str != nil && len(idx.Str.Queries) == 0:
		return values.index(idx.Str.Str), true
	case idx.Str == nil && !idx.IsSlice && idx.End == nil && idx.Start != nil && idx.Start.Term != nil &&
		idx.Start.Term.Type == gojq.TermTypeString && len(idx.Start.Term.SuffixList) == 0 && len(idx.Start.Term.Str.Queries) == 0:
		return values.index(idx.Start.Term.Str.Str), true
	}
	a.readWhole(values)
	if idx.Str != nil && !a.interpolations(idx.Str, termInput) {
		return valueSet{}, false
	}
	for _, q := range []*gojq.Query{idx.Start, idx.End} {
		if q == nil {
			continue
		}
		if !a.readAll(q, termInput) {
			return valueSet{}, false
		}
	}
	return freshValues, true
}

// interpolations reads whole what a string's \(...) parts give.
func (a *readAnalysis) interpolations(s *gojq.String, in valueSet) bool {
	for _, q := range s.Queries {
		if !a.readAll(q, in) {
			return false
		}
	}
	return true
}

// inputFree are functions that do not read their input.
var inputFree = map[string]bool{"empty": true, "now": true, "env": true, "builtins": true, "input_filename": true, "halt": true}

// function: select(f) passes its input on; any other function reads its input and
// what its arguments give whole, and gives values of its own.
func (a *readAnalysis) function(f *gojq.Func, in valueSet) (valueSet, bool) {
	if strings.HasPrefix(f.Name, "$") {
		// $ENV, $__loc__: nothing can bind a variable to the input here (bindings are
		// not followed).
		return freshValues, true
	}
	for _, arg := range f.Args {
		if !a.readAll(arg, in) {
			return valueSet{}, false
		}
	}
	switch {
	case f.Name == "select" && len(f.Args) == 1:
		return in, true
	case f.Name == "empty" && len(f.Args) == 0:
		return valueSet{}, true
	case !inputFree[f.Name] || len(f.Args) > 0:
		a.readWhole(in)
	}
	return freshValues, true
}

func (a *readAnalysis) objectKeyVal(kv *gojq.ObjectKeyVal, in valueSet) bool {
	switch {
	case kv.KeyString != nil:
		if !a.interpolations(kv.KeyString, in) {
			return false
		}
		if kv.Val == nil {
			// {"key"} is {"key": .key}, and {"\(...)"} reads a key worked out.
			if len(kv.KeyString.Queries) == 0 {
				a.readWhole(in.index(kv.KeyString.Str))
			} else {
				a.readWhole(in)
			}
		}
	case kv.KeyQuery != nil:
		if !a.readAll(kv.KeyQuery, in) {
			return false
		}
	case kv.Val == nil && !strings.HasPrefix(kv.Key, "$"):
		a.readWhole(in.index(kv.Key)) // {name} is {name: .name}
	}
	if kv.Val != nil {
		if !a.readAll(kv.Val, in) {
			return false
		}
	}
	return true
}

func (a *readAnalysis) ifThen(e *gojq.If, in valueSet) (valueSet, bool) {
	if !a.readAll(e.Cond, in) {
		return valueSet{}, false
	}
	out, ok := a.query(e.Then, in)
	if !ok {
		return valueSet{}, false
	}
	for _, elif := range e.Elif {
		if !a.readAll(elif.Cond, in) {
			return valueSet{}, false
		}
		then, ok := a.query(elif.Then, in)
		if !ok {
			return valueSet{}, false
		}
		out = out.union(then)
	}
	if e.Else == nil {
		return out.union(in), true // if without else passes its input on
	}
	otherwise, ok := a.query(e.Else, in)
	return out.union(otherwise), ok
}

// Input is the input q runs on for ev: the envelope of EnvelopeValue (shared by every
// caller) when q reads it whole, else the part of it that q reads, built for q.
func (q *Query) Input(ev *event.Event, d *diff.Differ, showOld bool) (any, error) {
	if q.reads == nil {
		return EnvelopeValue(ev, d, showOld)
	}
	return buildEnvelopeValue(ev, d, showOld, q.reads)
}
