package informer

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// Receiver takes events from the informer's handler goroutine. listener.Listener is one.
type Receiver interface {
	Add(ev *Event)
}

// Registration is one receiver and the resync period it asked for (0: none).
type Registration struct {
	Receiver Receiver
	Resync   time.Duration
}

// Clients are the API clients an informer may use. Typed is preferred for built-in
// types: decoding into typed objects (protobuf on the wire) costs a fraction of the CPU
// of unstructured maps, and typed objects are far smaller in the cache.
type Clients struct {
	Typed   kubernetes.Interface
	Dynamic dynamic.Interface
}

// Options select which objects are watched.
type Options struct {
	Namespace     string // "" for all namespaces (or a cluster-scoped resource)
	LabelSelector string
	FieldSelector string
	// Names restricts the stream to these object names. One name becomes a server-side
	// field selector; several are filtered here, since field selectors cannot OR.
	Names []string
	// Seq numbers events across all informers of one command; nil starts at zero.
	Seq *atomic.Uint64
	// WatchError reports a failed list or watch (the informer retries by itself).
	WatchError func(err error)
}

// Informer is ONE shared informer for one resource, with one client-go event handler per
// registered receiver, so each receiver gets its own resync period.
type Informer struct {
	Resource Resource
	Typed    bool // typed (client-go scheme) or dynamic (unstructured) objects
	informer cache.SharedIndexInformer
	ctx      context.Context
	cancel   context.CancelFunc
	done     chan struct{}
}

// New builds the informer and registers every receiver before it starts, as client-go
// requires for resync periods to be honoured.
func New(res Resource, clients Clients, opts Options, regs []Registration) (*Informer, error) {
	resync := smallestResync(regs)
	tweak := func(lo *metav1.ListOptions) {
		lo.LabelSelector = opts.LabelSelector
		lo.FieldSelector = opts.FieldSelector
	}
	ns := opts.Namespace
	if !res.Namespaced {
		ns = metav1.NamespaceAll
	}
	inf := &Informer{Resource: res, done: make(chan struct{})}
	inf.ctx, inf.cancel = context.WithCancel(context.Background())
	if clients.Typed != nil {
		factory := informers.NewSharedInformerFactoryWithOptions(clients.Typed, resync,
			informers.WithNamespace(ns), informers.WithTweakListOptions(tweak))
		if generic, err := factory.ForResource(res.GVR); err == nil {
			inf.informer, inf.Typed = generic.Informer(), true
		}
	}
	if inf.informer == nil {
		factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(clients.Dynamic, resync, ns, tweak)
		inf.informer = factory.ForResource(res.GVR).Informer()
	}
	if err := inf.informer.SetTransform(inf.transform); err != nil {
		return nil, err
	}
	if opts.WatchError != nil {
		if err := inf.informer.SetWatchErrorHandler(func(_ *cache.Reflector, err error) { opts.WatchError(err) }); err != nil {
			return nil, err
		}
	}
	seq := opts.Seq
	if seq == nil {
		seq = new(atomic.Uint64)
	}
	m := &minter{res: res, receivers: len(regs), seq: seq, pending: map[notification]*pendingEvent{}}
	if len(opts.Names) > 1 {
		m.names = opts.Names
	}
	for _, reg := range regs {
		h := &handler{minter: m, receiver: reg.Receiver}
		if _, err := inf.informer.AddEventHandlerWithOptions(h, cache.HandlerOptions{ResyncPeriod: &reg.Resync}); err != nil {
			return nil, err
		}
	}
	return inf, nil
}

// Start runs the informer until Stop.
func (i *Informer) Start() {
	go func() {
		defer close(i.done)
		i.informer.RunWithContext(i.ctx)
	}()
}

// WaitForSync blocks until the initial list has been delivered to the handlers' queues,
// or ctx ends; it reports whether the informer synced.
func (i *Informer) WaitForSync(ctx context.Context) bool {
	return cache.WaitForCacheSync(ctx.Done(), i.informer.HasSynced)
}

// Stop stops the informer and waits until it no longer calls any handler.
func (i *Informer) Stop() {
	i.cancel()
	<-i.done
}

// Store is the informer's cache (used for --until-deleted and for tests).
func (i *Informer) Store() cache.Store { return i.informer.GetStore() }

// transform runs once per object as it enters the cache: it drops managedFields (large,
// and noise for a change tail) and fills in apiVersion/kind, which typed objects decoded
// by informers lack, so every sink prints them as kubectl does.
func (i *Informer) transform(obj any) (any, error) {
	ro, ok := obj.(runtime.Object)
	if !ok {
		return obj, nil // e.g. a DeletedFinalStateUnknown tombstone: its object was already transformed
	}
	if m, err := meta.Accessor(ro); err == nil {
		m.SetManagedFields(nil)
	}
	if ro.GetObjectKind().GroupVersionKind().Empty() {
		ro.GetObjectKind().SetGroupVersionKind(i.Resource.GVK)
	}
	return ro, nil
}

func smallestResync(regs []Registration) time.Duration {
	var periods []time.Duration
	for _, r := range regs {
		if r.Resync > 0 {
			periods = append(periods, r.Resync)
		}
	}
	if len(periods) == 0 {
		return 0
	}
	return slices.Min(periods)
}

// notification identifies one change that client-go hands to every handler: the same
// object pointer arrives at each of them.
type notification struct {
	typ EventType
	obj any
}

type pendingEvent struct {
	ev        *Event
	remaining int // handlers that have not picked it up yet
}

// minter turns client-go notifications into Events. The first handler to see a change
// creates its Event (and its sequence number); the others reuse it, so the object is
// encoded once for all sinks and every sink sees the same seq for the same change.
type minter struct {
	res       Resource
	names     []string
	receivers int
	seq       *atomic.Uint64

	mu      sync.Mutex
	pending map[notification]*pendingEvent
}

func (m *minter) shared(typ EventType, key, obj, old any, initial, unknown bool) *Event {
	if m.names != nil && !m.wanted(obj) {
		return nil
	}
	if m.receivers == 1 {
		return m.newEvent(typ, obj, old, initial, unknown)
	}
	n := notification{typ: typ, obj: key}
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.pending[n]
	if !ok {
		p = &pendingEvent{ev: m.newEvent(typ, obj, old, initial, unknown), remaining: m.receivers}
		m.pending[n] = p
	}
	if p.remaining--; p.remaining == 0 {
		delete(m.pending, n)
	}
	return p.ev
}

func (m *minter) newEvent(typ EventType, obj, old any, initial, unknown bool) *Event {
	ev := &Event{
		Type:              typ,
		Time:              time.Now(),
		Resource:          m.res.GVR,
		Kind:              m.res.GVK.Kind,
		Object:            obj.(runtime.Object),
		InInitialList:     initial,
		FinalStateUnknown: unknown,
	}
	if old != nil {
		ev.Old = old.(runtime.Object)
	}
	if typ != Sync {
		ev.Seq = m.seq.Add(1)
	}
	return ev
}

func (m *minter) wanted(obj any) bool {
	acc, err := meta.Accessor(obj)
	return err == nil && slices.Contains(m.names, acc.GetName())
}

// handler is the client-go event handler of one receiver. It only builds or picks up the
// Event and hands it over: sink work happens on the receiver's own goroutine.
type handler struct {
	minter   *minter
	receiver Receiver
}

func (h *handler) OnAdd(obj any, isInInitialList bool) {
	h.deliver(h.minter.shared(Added, obj, obj, nil, isInInitialList, false))
}

func (h *handler) OnUpdate(oldObj, newObj any) {
	if sameVersion(oldObj, newObj) {
		// client-go hands unchanged objects (resyncs) only to the handlers whose resync
		// period is due, so this event belongs to this receiver alone.
		if h.minter.names == nil || h.minter.wanted(newObj) {
			h.deliver(h.minter.newEvent(Sync, newObj, oldObj, false, false))
		}
		return
	}
	h.deliver(h.minter.shared(Modified, newObj, newObj, oldObj, false, false))
}

func (h *handler) OnDelete(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		if tomb.Obj == nil {
			return
		}
		h.deliver(h.minter.shared(Deleted, tomb.Obj, tomb.Obj, nil, false, true))
		return
	}
	h.deliver(h.minter.shared(Deleted, obj, obj, nil, false, false))
}

func (h *handler) deliver(ev *Event) {
	if ev != nil {
		h.receiver.Add(ev)
	}
}

func sameVersion(a, b any) bool {
	am, err1 := meta.Accessor(a)
	bm, err2 := meta.Accessor(b)
	return err1 == nil && err2 == nil && am.GetResourceVersion() == bm.GetResourceVersion()
}

// String describes the informer for diagnostics.
func (i *Informer) String() string {
	kind := "dynamic"
	if i.Typed {
		kind = "typed"
	}
	return fmt.Sprintf("%s (%s)", i.Resource, kind)
}
