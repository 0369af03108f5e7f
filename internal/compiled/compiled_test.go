package compiled

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

// newCounts is a Cache of countFuncs for structs, pointers and slices, and the number of
// times each type was compiled.
func newCounts() (*Cache[reflect.Type, countFunc], map[reflect.Type]int) {
	compiles := map[reflect.Type]int{}
	var mu sync.Mutex
	cache := NewCache(func(c *Compilation[reflect.Type, countFunc], t reflect.Type) countFunc {
		mu.Lock()
		compiles[t]++
		mu.Unlock()
		switch t.Kind() {
		case reflect.Pointer:
			elem := c.Compile(t.Elem())
			return func(p unsafe.Pointer) int {
				if to := *(*unsafe.Pointer)(p); to != nil {
					return 1 + elem(to)
				}
				return 0
			}
		case reflect.Struct:
			var fields []func(p unsafe.Pointer) int
			for i := range t.NumField() {
				f, count := t.Field(i), c.Compile(t.Field(i).Type)
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
			elem, size := c.Compile(t.Elem()), t.Elem().Size()
			return func(p unsafe.Pointer) int {
				s, n := (*SliceHeader)(p), 0
				for i := range uintptr(s.Len) {
					n += elem(unsafe.Add(s.Data, i*size))
				}
				return n
			}
		}
		return func(unsafe.Pointer) int { return 0 }
	}, func(slot *countFunc) countFunc {
		return func(p unsafe.Pointer) int { return (*slot)(p) }
	})
	return cache, compiles
}

// A recursive type compiles once, refers to its own function through its slot, and is
// cached: the walk is right however deep the value.
func TestCacheRecursiveType(t *testing.T) {
	cache, compiles := newCounts()
	one := 1
	value := tree{
		left:     &tree{leaf: &one, right: &tree{}},
		siblings: []tree{{leaf: &one}, {left: &tree{leaf: &one}}},
	}
	count := cache.Of(reflect.TypeFor[tree]())
	if got := count(unsafe.Pointer(&value)); got != 6 {
		t.Errorf("counted %d pointers, want 6", got)
	}
	_ = cache.Of(reflect.TypeFor[tree]())
	_ = cache.Of(reflect.TypeFor[*tree]()) // builds on tree's cached function
	if n := compiles[reflect.TypeFor[tree]()]; n != 1 {
		t.Errorf("tree compiled %d times, want once", n)
	}
	if n := compiles[reflect.TypeFor[[]tree]()]; n != 1 {
		t.Errorf("[]tree compiled %d times, want once: within one compilation a type is built once", n)
	}
}
