// Package compiled is the skeleton of the functions built once per Go type from its
// layout (the diff's comparison and generic values in package diff, the JSON encoder in
// package wire): a cache of each type's function, and the compilation that builds it,
// which lets a recursive type refer to its own function before that exists.
//
// Objects of client-go's scheme are plain trees of structs, pointers, slices and maps,
// so a walk over one can be worked out per type in advance (field offsets and the
// functions of their types) rather than found again through reflect for every value.
package compiled

import (
	"sync"
	"unsafe"
)

// Cache holds the function of each key (a type, or a type and how its values are
// reached), built once by its compile function and then shared. It is safe for
// concurrent use; two goroutines asking for a new key at once may both build it.
type Cache[K comparable, F any] struct {
	funcs   sync.Map // K → F
	compile func(c *Compilation[K, F], key K) F
	forward func(slot *F) F
}

// NewCache returns a Cache whose functions compile builds, compiling the keys it needs
// (a struct's fields, a pointer's element) through c. forward returns a function that
// calls the one *slot will hold: how a key refers to a key still being built (a
// recursive type), at the cost of one more call per value.
func NewCache[K comparable, F any](compile func(c *Compilation[K, F], key K) F, forward func(slot *F) F) *Cache[K, F] {
	return &Cache[K, F]{compile: compile, forward: forward}
}

// Of is key's function, built on first use.
func (c *Cache[K, F]) Of(key K) F {
	if f, ok := c.funcs.Load(key); ok {
		return f.(F)
	}
	f := (&Compilation[K, F]{cache: c, building: map[K]*F{}, done: map[K]F{}}).Compile(key)
	c.funcs.Store(key, f)
	return f
}

// Compilation is one build of Cache.Of: the keys being built, which refer to themselves
// through their slot, and those done, used directly (a Container is in three lists of a
// pod, a Probe in three fields of a Container).
type Compilation[K comparable, F any] struct {
	cache    *Cache[K, F]
	building map[K]*F
	done     map[K]F
}

// Compile is key's function, built now unless the cache or this compilation has it.
func (c *Compilation[K, F]) Compile(key K) F {
	if f, ok := c.cache.funcs.Load(key); ok {
		return f.(F)
	}
	if f, ok := c.done[key]; ok {
		return f
	}
	if slot, ok := c.building[key]; ok {
		return c.cache.forward(slot)
	}
	slot := new(F)
	c.building[key] = slot
	*slot = c.cache.compile(c, key)
	delete(c.building, key)
	c.done[key] = *slot
	return *slot
}

// SliceHeader is the layout of every slice value.
type SliceHeader struct {
	Data unsafe.Pointer
	Len  int
	Cap  int
}
