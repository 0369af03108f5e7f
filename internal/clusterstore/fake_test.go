package clusterstore

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// memObjects is an API server's objects of one kind in one namespace, in memory, with
// its optimistic concurrency: an update names the resourceVersion it replaces, and fails
// with Conflict if the object changed since. Hooks let a test fail or watch a request.
type memObjects struct {
	mu   sync.Mutex
	rv   int
	objs map[string]*object
	// before, when not nil, is called before every request and may fail it; a request
	// whose context has ended by then fails with its error, as client-go's does.
	before func(verb, name string) error
	writes int // creates and updates
}

func newMemObjects() *memObjects { return &memObjects{objs: map[string]*object{}} }

var secretsGR = schema.GroupResource{Resource: "secrets"}

func (m *memObjects) hook(verb, name string) error {
	if m.before == nil {
		return nil
	}
	return m.before(verb, name)
}

func (m *memObjects) get(ctx context.Context, name string) (*object, error) {
	if err := m.hook("get", name); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objs[name]
	if !ok {
		return nil, apierrors.NewNotFound(secretsGR, name)
	}
	return clone(o), nil
}

func clone(o *object) *object {
	c := *o
	c.data = maps.Clone(o.data)
	c.labels = maps.Clone(o.labels)
	return &c
}

func (m *memObjects) create(ctx context.Context, o *object) (string, error) {
	if err := m.hook("create", o.name); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objs[o.name]; ok {
		return "", apierrors.NewAlreadyExists(secretsGR, o.name)
	}
	return m.store(o), nil
}

func (m *memObjects) update(ctx context.Context, o *object) (string, error) {
	if err := m.hook("update", o.name); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.objs[o.name]
	if !ok {
		return "", apierrors.NewNotFound(secretsGR, o.name)
	}
	if o.rv != "" && o.rv != old.rv {
		return "", apierrors.NewConflict(secretsGR, o.name, nil)
	}
	return m.store(o), nil
}

// store keeps o as a store's object (ours), with a new resourceVersion.
func (m *memObjects) store(o *object) string {
	m.rv++
	c := clone(o)
	c.rv, c.ours = strconv.Itoa(m.rv), true
	m.objs[o.name] = c
	m.writes++
	return c.rv
}

// put stores an object as a test sets it up (ours or not), bypassing the hooks.
func (m *memObjects) put(o *object) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rv++
	c := clone(o)
	c.rv = strconv.Itoa(m.rv)
	m.objs[o.name] = c
}

func (m *memObjects) delete(ctx context.Context, name string) error {
	if err := m.hook("delete", name); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objs[name]; !ok {
		return apierrors.NewNotFound(secretsGR, name)
	}
	delete(m.objs, name)
	return nil
}

// allowed is yes unless the hook fails "allowed" for the name (any error: no).
func (m *memObjects) allowed(_ context.Context, verb, name string) (bool, error) {
	return m.hook("allowed "+verb, name) == nil, nil
}

func (m *memObjects) names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.objs))
}
