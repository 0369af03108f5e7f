package generic

import (
	"reflect"
	"sync"
	"testing"
	"unsafe"
)

// countFunc counts the non-nil pointers reachable from the value at p.
type countFunc func(p unsafe.Pointer) int

type tree struct {
	left, right *tree
	leaf        *int
	siblings    []tree
}

// newCounts is a funcCache of countFuncs for structs, pointers and slices, and the number of
// times each type was compiled.
func newCounts() (*funcCache[countFunc], map[reflect.Type]int) {
	compiles := map[reflect.Type]int{}
	var mu sync.Mutex
	cache := &funcCache[countFunc]{build: func(c *compilation[countFunc], t reflect.Type) countFunc {
		mu.Lock()
		compiles[t]++
		mu.Unlock()
		switch t.Kind() {
		case reflect.Pointer:
			elem := c.compile(t.Elem())
			return func(p unsafe.Pointer) int {
				if to := *(*unsafe.Pointer)(p); to != nil {
					return 1 + elem(to)
				}
				return 0
			}
		case reflect.Struct:
			var fields []func(p unsafe.Pointer) int
			for i := range t.NumField() {
				f, count := t.Field(i), c.compile(t.Field(i).Type)
				fields = append(fields, func(p unsafe.Pointer) int { return count(unsafe.Add(p, f.Offset)) })
			}
			return func(p unsafe.Pointer) int {
				n := 0
				for _, field := range fields {
					n += field(p)
				}
				return n
			}
		case reflect.Slice:
			elem, size := c.compile(t.Elem()), t.Elem().Size()
			return func(p unsafe.Pointer) int {
				s, n := (*SliceHeader)(p), 0
				for i := range uintptr(s.Len) {
					n += elem(unsafe.Add(s.Data, i*size))
				}
				return n
			}
		}
		return func(unsafe.Pointer) int { return 0 }
	}, forward: func(slot *countFunc) countFunc {
		return func(p unsafe.Pointer) int { return (*slot)(p) }
	}}
	return cache, compiles
}

// A recursive type compiles once, refers to its own function through its slot, and is
// cached: the walk is right however deep the value.
func TestFuncCacheRecursiveType(t *testing.T) {
	cache, compiles := newCounts()
	one := 1
	value := tree{
		left:     &tree{leaf: &one, right: &tree{}},
		siblings: []tree{{leaf: &one}, {left: &tree{leaf: &one}}},
	}
	count := cache.of(reflect.TypeFor[tree]())
	if got := count(unsafe.Pointer(&value)); got != 6 {
		t.Errorf("counted %d pointers, want 6", got)
	}
	_ = cache.of(reflect.TypeFor[tree]())
	_ = cache.of(reflect.TypeFor[*tree]()) // builds on tree's cached function
	if n := compiles[reflect.TypeFor[tree]()]; n != 1 {
		t.Errorf("tree compiled %d times, want once", n)
	}
	if n := compiles[reflect.TypeFor[[]tree]()]; n != 1 {
		t.Errorf("[]tree compiled %d times, want once: within one compilation a type is built once", n)
	}
}
