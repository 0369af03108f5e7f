package generic

import (
	"reflect"
	"sync"
	"unsafe"
)

// The skeleton of the functions compiled once per type from its layout (EqualOf's
// comparisons, FuncOf's builders): a cache of each type's function, and the
// compilation that builds it, which lets a recursive type refer to its own function
// before that exists. Objects of client-go's scheme are plain trees of structs,
// pointers, slices and maps, so a walk over one can be worked out per type in advance
// (field offsets and the functions of their types) rather than found again through
// reflect for every value.

// funcCache holds the function of each type, built once by build and then shared. It is
// safe for concurrent use; two goroutines asking for a new type at once may both build it.
type funcCache[F any] struct {
	funcs sync.Map // reflect.Type → F
	// build builds t's function, compiling the types it needs (a struct's fields, a
	// pointer's element) through c.
	build func(c *compilation[F], t reflect.Type) F
	// forward returns a function that calls the one *slot will hold: how a type refers
	// to a type still being built (a recursive type), at the cost of one more call per
	// value.
	forward func(slot *F) F
}

// of is t's function, built on first use.
func (c *funcCache[F]) of(t reflect.Type) F {
	if f, ok := c.funcs.Load(t); ok {
		return f.(F)
	}
	f := (&compilation[F]{cache: c, building: map[reflect.Type]*F{}, done: map[reflect.Type]F{}}).compile(t)
	c.funcs.Store(t, f)
	return f
}

// compilation is one build of funcCache.of: the types being built, which refer to
// themselves through their slot, and those done, used directly (a Container is in three
// lists of a pod, a Probe in three fields of a Container).
type compilation[F any] struct {
	cache    *funcCache[F]
	building map[reflect.Type]*F
	done     map[reflect.Type]F
}

// compile is t's function, built now unless the cache or this compilation has it.
func (c *compilation[F]) compile(t reflect.Type) F {
	if f, ok := c.cache.funcs.Load(t); ok {
		return f.(F)
	}
	if f, ok := c.done[t]; ok {
		return f
	}
	if slot, ok := c.building[t]; ok {
		return c.cache.forward(slot)
	}
	slot := new(F)
	c.building[t] = slot
	*slot = c.cache.build(c, t)
	delete(c.building, t)
	c.done[t] = *slot
	return *slot
}

// SliceHeader is the layout of every slice value.
type SliceHeader struct {
	Data unsafe.Pointer
	Len  int
	Cap  int
}
