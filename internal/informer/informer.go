// Package informer runs one client-go informer per watched resource: it picks the typed,
// dynamic or metadata client and this project's watch decoders (package wire), prepares
// objects as they enter the cache (managedFields read for attribution and dropped,
// Secrets redacted, apiVersion and kind filled in), turns client-go's notifications into
// numbered Events for the registered receivers, checks access before starting, and
// reports outages and API errors as one line each.
package informer

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/managedfields"
	"github.com/kubeevents/kubeevents/internal/resource"
	"github.com/kubeevents/kubeevents/internal/switches"
	"github.com/kubeevents/kubeevents/internal/wire"
)

// Receiver takes events from the informer's handler goroutine. listener.Listener is one.
type Receiver interface {
	Add(ev *event.Event)
}

// Registration is one receiver and the resync period it asked for (0: none).
type Registration struct {
	Receiver Receiver
	Resync   time.Duration
}

// Options select which objects are watched and how.
type Options struct {
	Namespace     string // "" for all namespaces (or a cluster-scoped resource)
	LabelSelector string
	FieldSelector string
	// Names restricts the stream to these object names. One name becomes a server-side
	// field selector; several are filtered here, since field selectors cannot OR.
	Names []string
	// Cluster names the cluster every event of this informer comes from (Event.Cluster):
	// the kubeconfig context, when several clusters are watched; "" with one.
	Cluster string
	// Seq numbers events across all informers of one command (of every cluster); nil
	// starts at zero.
	Seq *atomic.Uint64
	// WatchOnly leaves out the ADDED events of the initial list (client-go's
	// isInInitialList), so only changes after start-up are reported.
	WatchOnly bool
	// MetadataOnly caches and reports only object metadata (a metadata informer).
	MetadataOnly bool
	// ShowSecrets keeps Secret values; by default they are redacted before caching.
	ShowSecrets bool
	// RedactionKey is the key of redacted values' fingerprints; empty draws one (see
	// redactor). --resume keeps it from one run to the next.
	RedactionKey []byte
	// NoAttribution leaves managedFields unread (--no-by): events name no manager, and
	// the protobuf watch need not decode them.
	NoAttribution bool
	// Coalesced says that some receiver merges changes of one object into one
	// (on-full=coalesce): attribution then keeps the field set of every change's
	// writer, to tell who made each part of the merged change.
	Coalesced bool
	// NoFastPaths decodes and encodes every object whole: no part reuse, no copied JSON
	// parts (KUBEEVENTS_FAST_PATHS=off).
	NoFastPaths bool
	// MaxEvents, if not zero, is the last Seq handed out: later changes are not turned
	// into events, so no sink ever gets more than MaxEvents, and Limit is called once
	// the event numbered MaxEvents has been made (from a client-go goroutine).
	MaxEvents uint64
	Limit     func()
	// Skip, if set, leaves an event out before it is numbered (--changes-only: an update
	// that changed nothing worth showing), so that it leaves no gap in Seq: a gap in a
	// sink's output is then only ever an event that sink dropped (or, for a jq sink,
	// one its expression yielded nothing for).
	Skip func(ev *event.Event) bool
	// Until, if set, ends the stream at the event that meets its condition; every
	// informer of a command shares the same one.
	Until *event.Until
	// Related marks this informer's events as core Events about watched objects
	// (--with-events); Accept, if set, picks the objects that become events at all.
	Related bool
	Accept  func(obj any) bool
	// Annotate, if set, completes each event before it is numbered (--owned: its owner
	// chain and rollout state), so that Until and every sink see the same.
	Annotate func(ev *event.Event)
	// Warn prints one diagnostic line (watch lost, re-synced, ...); Fatal ends the
	// command, for errors before the first watch is established. Both may be called from
	// client-go's goroutines.
	Warn  func(format string, args ...any)
	Fatal func(err error)
	// Observer, if set, is told of every event made and every outage, for metrics.
	Observer Observer
	// Made, if set, is called with every numbered event (not SYNC) once it is made,
	// before any receiver gets it, from the client-go goroutine that made it: the
	// checkpoint (--resume) follows each event to its delivery from there.
	Made func(ev *event.Event)
}

// Informer is ONE shared informer for one resource, with one client-go event handler per
// registered receiver, so each receiver gets its own resync period.
type Informer struct {
	Resource  resource.Resource
	Typed     bool   // typed (client-go scheme) or dynamic (unstructured) objects
	namespace string // the namespace watched; "" for all, or a cluster-scoped resource
	// run, hasSynced and store are those of client-go's shared informer, or, for a single
	// receiver, of its plain informer (see New).
	run       func(context.Context)
	lw        *cache.ListWatch // the lists and watches, without the watchReporter's reports
	hasSynced func() bool
	store     cache.Store
	redactor  *redactor      // nil when Secrets are shown (or this is not a Secret informer)
	example   runtime.Object // an empty object of the cache's type, for Seed
	ctx       context.Context
	cancel    context.CancelFunc
	done      chan struct{}
	// managers follows the objects' managedFields, for the events' attribution; nil
	// with NoAttribution, and for core Events (--with-events).
	managers *managedfields.Tracker
}

// crdResource is where CustomResourceDefinitions are served.
var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// New builds the informer and registers every receiver before it starts, as client-go
// requires for resync periods to be honoured.
func New(res resource.Resource, clients Clients, opts Options, regs []Registration) (*Informer, error) {
	ns := opts.Namespace
	if !res.Namespaced {
		ns = metav1.NamespaceAll
	}
	fieldSelector := opts.FieldSelector
	if len(opts.Names) == 1 {
		// Escaped: RBAC names may hold characters that field selectors use (',', '=').
		nameSelector := fields.OneTermEqualSelector("metadata.name", opts.Names[0]).String()
		if fieldSelector == "" {
			fieldSelector = nameSelector
		} else {
			fieldSelector += "," + nameSelector
		}
	}
	tweak := func(lo *metav1.ListOptions) {
		lo.LabelSelector = opts.LabelSelector
		lo.FieldSelector = fieldSelector
	}
	inf := &Informer{Resource: res, namespace: ns, done: make(chan struct{})}
	inf.ctx, inf.cancel = context.WithCancel(context.Background())
	isSecret := IsSecret(res)
	if isSecret && !opts.ShowSecrets {
		inf.redactor = newRedactor(opts.RedactionKey)
	}
	if !opts.NoAttribution && !opts.Related {
		inf.managers = managedfields.NewTracker()
		if opts.Coalesced {
			inf.managers.KeepFields()
		}
	}

	var lw *cache.ListWatch
	var example runtime.Object
	switch {
	case opts.MetadataOnly && clients.Metadata != nil:
		lw = listWatchOf(clients.Metadata.Resource(res.GVR).Namespace(ns), tweak)
		example = &metav1.PartialObjectMetadata{}
	case clients.TypedREST != nil && scheme.Scheme.Recognizes(res.GVK) && inf.redactor == nil:
		client, err := clients.TypedREST(res.GVR.GroupVersion())
		if err != nil {
			return nil, err
		}
		lw = cache.NewFilteredListWatchFromClient(client, res.GVR.Resource, ns, tweak)
		if example, err = scheme.Scheme.New(res.GVK); err != nil {
			return nil, err
		}
		inf.Typed = true
		if !switches.WireDecoders.Enabled() {
			break // client-go's list and watch, decoded by the client's codec
		}
		lister := wire.NewTypedLister(client, res.GVR.Resource, ns)
		//lint:ignore SA1019 clearing the deprecated field, so that client-go calls ListWithContextFunc
		lw.ListFunc = nil
		lw.ListWithContextFunc = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			tweak(&o)
			return lister.List(ctx, o)
		}
		clientGoWatch := lw.WatchFuncWithContext
		//lint:ignore SA1019 clearing the deprecated field, so that client-go calls WatchFuncWithContext
		lw.WatchFunc = nil
		lw.WatchFuncWithContext = func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			tweak(&o)
			// Without attribution the transform only drops managedFields: the watch need
			// not decode them. With it, the tracker reads them as they are decoded, which
			// costs less than decoding them into the object for the transform to read.
			decoding := wire.TypedDecoding{DropManagedFields: true, NoPartReuse: opts.NoFastPaths}
			if inf.managers != nil {
				decoding.ManagedFields = inf.managers.ObserveProtobuf
			}
			if w, ok := wire.WatchTyped(ctx, client, res.GVR.Resource, ns, o, decoding); ok {
				return w, nil
			}
			return clientGoWatch(ctx, o)
		}
	default:
		// Custom resources, and Secrets being redacted (whose values must become strings
		// rather than typed []byte).
		lw = listWatchOf(clients.Dynamic.Resource(res.GVR).Namespace(ns), tweak)
		if clients.DynamicREST != nil && switches.WireDecoders.Enabled() {
			dynamicWatch := lw.WatchFuncWithContext
			lw.WatchFuncWithContext = func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				tweak(&o)
				if w, ok := wire.WatchUnstructured(ctx, clients.DynamicREST, res.GVR, ns, o); ok {
					return w, nil
				}
				return dynamicWatch(ctx, o)
			}
		}
		example = &unstructured.Unstructured{}
	}

	warn, fatal := opts.Warn, opts.Fatal
	if warn == nil {
		warn = func(string, ...any) {}
	}
	if fatal == nil {
		fatal = func(error) {}
	}
	inf.lw, inf.example = lw, example
	reporter := &watchReporter{inner: lw, resource: res, warn: warn, fatal: fatal, probe: clients.probe, example: example,
		observer: opts.Observer, recovery: clients.recovery}
	if clients.Dynamic != nil && res.GVR.Group != "" && !scheme.Scheme.IsGroupRegistered(res.GVR.Group) {
		reporter.crdDeleted = func(ctx context.Context) bool {
			_, err := clients.Dynamic.Resource(crdResource).Get(ctx, crdName(res), metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		}
	}
	seq := opts.Seq
	if seq == nil {
		seq = new(atomic.Uint64)
	}
	var encoder *wire.PartEncoder // nil: every object encoded whole
	if !opts.NoFastPaths {
		encoder = wire.NewPartEncoder()
	}
	m := &minter{res: res, cluster: opts.Cluster, receivers: len(regs), seq: seq, watchOnly: opts.WatchOnly, encoder: encoder,
		maxSeq: opts.MaxEvents, limit: opts.Limit, skip: opts.Skip, until: opts.Until, pending: map[notification]*pendingEvent{},
		observer: opts.Observer, made: opts.Made, managers: inf.managers}
	if len(opts.Names) > 1 {
		m.names = opts.Names
	}
	// With selectors, a DELETED may be an object that only stopped matching them: each
	// handler is then fed in order by an inOrder, which asks (selectorcheck.go).
	selectors := opts.LabelSelector != "" || opts.FieldSelector != ""
	var wanted func(any) bool
	if m.names != nil {
		wanted = func(obj any) bool {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			return m.wanted(obj)
		}
	}
	m.related, m.accept, m.annotate = opts.Related, opts.Accept, opts.Annotate
	m.vanished = reporter.vanished.has
	handlers := make([]*handler, len(regs))
	for i, reg := range regs {
		handlers[i] = &handler{minter: m, receiver: reg.Receiver, resyncs: reg.Resync > 0}
	}

	if fanned, drained, ok := fanOutOf(handlers, regs); ok {
		handler := cache.ResourceEventHandler(fanned)
		if selectors {
			ordered := newInOrder(inf.ctx, fanned, newSelectorChecks(inf.ctx, newObjectLookup(clients, res.GVR), 1), wanted)
			lanesDrained := drained
			handler, drained = ordered, func() { ordered.wait(); lanesDrained() }
		}
		// The handlers run in the informer's own goroutine, which hands them each change
		// as the cache takes it in (fanout.go says why). One handler takes them directly;
		// several get them through lanes, so that one waiting for room does not hold up
		// the others. (client-go's default watch error handler stays: it logs through
		// klog, which kubeevents shows only from -v=6.)
		ctrl := cache.Controller(nil)
		inf.store, ctrl = cache.NewInformerWithOptions(cache.InformerOptions{
			ListerWatcher: reporter,
			ObjectType:    example,
			Handler:       handler,
			ResyncPeriod:  handlerResync(regs[0].Resync),
			Transform:     inf.transform,
		})
		inf.run = func(ctx context.Context) {
			ctrl.RunWithContext(ctx)
			drained()
		}
		inf.hasSynced = ctrl.HasSynced
		reporter.store = func() cache.Store { return inf.store }
		return inf, nil
	}

	shared := cache.NewSharedIndexInformerWithOptions(reporter, example, cache.SharedIndexInformerOptions{
		ResyncPeriod:      smallestResync(regs),
		ObjectDescription: res.String(),
	})
	inf.run, inf.hasSynced, inf.store = shared.RunWithContext, shared.HasSynced, shared.GetStore()
	eventHandlers := make([]cache.ResourceEventHandler, len(handlers))
	for i, h := range handlers {
		eventHandlers[i] = h
	}
	if selectors {
		checks := newSelectorChecks(inf.ctx, newObjectLookup(clients, res.GVR), len(handlers))
		ordered := make([]*inOrder, len(handlers))
		for i, h := range handlers {
			ordered[i] = newInOrder(inf.ctx, h, checks, wanted)
			eventHandlers[i] = ordered[i]
		}
		inf.run = func(ctx context.Context) {
			shared.RunWithContext(ctx)
			for _, o := range ordered {
				o.wait()
			}
		}
	}
	reporter.store = shared.GetStore
	if err := shared.SetTransform(inf.transform); err != nil {
		return nil, err
	}
	// The reporter says everything worth saying about failed lists and watches; client-go's
	// default handler would log the same errors again through klog.
	if err := shared.SetWatchErrorHandlerWithContext(func(context.Context, *cache.Reflector, error) {}); err != nil {
		return nil, err
	}
	for i, reg := range regs {
		if _, err := shared.AddEventHandlerWithOptions(eventHandlers[i], cache.HandlerOptions{ResyncPeriod: &reg.Resync}); err != nil {
			return nil, err
		}
	}
	return inf, nil
}

// listWatchClient is what the dynamic and the metadata clients have in common.
type listWatchClient[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// listWatchOf lists and watches through client with the selectors tweak sets.
func listWatchOf[L runtime.Object](client listWatchClient[L], tweak func(*metav1.ListOptions)) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			tweak(&o)
			return client.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			tweak(&o)
			return client.Watch(ctx, o)
		},
	}
}

// CheckAccess makes sure, before the informer starts, that it may list and watch what it
// is to watch: a list of at most one object, and a watch from there, stopped at once.
// Otherwise missing rights would be found only after something was printed: by a list
// after other informers printed theirs, or by the watch after the list was printed.
func (i *Informer) CheckAccess(ctx context.Context) error {
	list, err := i.lw.ListWithContext(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return APIError(err, "list", i.Resource)
	}
	opts := metav1.ListOptions{AllowWatchBookmarks: true}
	if lm, err := meta.ListAccessor(list); err == nil {
		opts.ResourceVersion = lm.GetResourceVersion()
	}
	w, err := i.lw.WatchWithContext(ctx, opts)
	if err != nil {
		return APIError(err, "watch", i.Resource)
	}
	w.Stop()
	return nil
}

// Seed puts objects into the cache before Start, each the JSON of an object as an earlier
// run delivered it (--resume): the first list then compares with them as a re-list
// compares with the cache, so the handlers see an update (MODIFIED, with these as the
// old state) for each one whose resourceVersion changed, nothing for the unchanged, a
// DeletedFinalStateUnknown tombstone for each one gone, and ADDED for the rest.
// It returns the objects as the cache holds them and, for each, what its managedFields
// said (the checkpoint keeps their managers and times in them; nil without
// attribution): the attribution of the first list's changes compares with these, as
// with any previous version's.
func (i *Informer) Seed(objects [][]byte) ([]runtime.Object, []managedfields.Managers, error) {
	seeded := make([]runtime.Object, 0, len(objects))
	var managers []managedfields.Managers
	if i.managers != nil {
		managers = make([]managedfields.Managers, 0, len(objects))
	}
	for _, raw := range objects {
		obj := i.example.DeepCopyObject()
		if err := json.Unmarshal(raw, obj); err != nil {
			return nil, nil, err
		}
		m, err := meta.Accessor(obj)
		if err == nil && i.namespace != "" && m.GetNamespace() != i.namespace {
			continue // another informer's (-n a,b: one per namespace)
		}
		var seen managedfields.Managers
		if err == nil {
			if i.managers != nil {
				seen = i.managers.Seed(obj)
			}
			m.SetManagedFields(nil) // as the transform leaves every object in the cache
		}
		// Not transformed again: it was when it entered the earlier run's cache (and
		// redacting a placeholder would make another one).
		if obj.GetObjectKind().GroupVersionKind().Empty() {
			obj.GetObjectKind().SetGroupVersionKind(i.Resource.GVK)
		}
		if err := i.store.Add(obj); err != nil {
			return nil, nil, err
		}
		seeded = append(seeded, obj)
		if managers != nil {
			managers = append(managers, seen)
		}
	}
	return seeded, managers, nil
}

// RedactionKey is the key of this informer's redacted values, or nil if it redacts none.
func (i *Informer) RedactionKey() []byte {
	if i.redactor == nil {
		return nil
	}
	return i.redactor.key
}

// Start runs the informer until Stop.
func (i *Informer) Start() {
	go func() {
		defer close(i.done)
		i.run(i.ctx)
	}()
}

// WaitForSync blocks until the initial list has been delivered to the handlers' queues
// (with one receiver: to the receiver itself), or ctx ends; it reports whether the
// informer synced.
func (i *Informer) WaitForSync(ctx context.Context) bool {
	return cache.WaitForCacheSync(ctx.Done(), i.hasSynced)
}

// Stop stops the informer and waits until it no longer calls any handler.
func (i *Informer) Stop() {
	i.cancel()
	<-i.done
}

// Namespace is the namespace i watches: "" for all namespaces, or a cluster-scoped type.
func (i *Informer) Namespace() string { return i.namespace }

// Store is the informer's cache (used for --until-deleted and for tests).
func (i *Informer) Store() cache.Store { return i.store }

// transform runs once per object as it enters the cache: it reads managedFields for
// attribution (managedfields.Tracker keeps what it needs) and drops them (large, and
// noise for a change tail), redacts Secret values unless they are to be shown, and
// fills in apiVersion/kind, which typed objects decoded by informers lack, so every sink
// prints them as kubectl does. Of a typed object it changes nothing but metadata: its
// other parts may be shared with its previous version (package wire's invariant).
func (i *Informer) transform(obj any) (any, error) {
	ro, ok := obj.(runtime.Object)
	if !ok {
		return obj, nil // e.g. a DeletedFinalStateUnknown tombstone: its object was already transformed
	}
	if m, err := meta.Accessor(ro); err == nil {
		if i.managers != nil {
			i.managers.Observe(ro)
		}
		m.SetManagedFields(nil)
	}
	switch o := ro.(type) {
	case *metav1.PartialObjectMetadata:
		// The metadata API calls every object a PartialObjectMetadata; name its real kind.
		o.SetGroupVersionKind(i.Resource.GVK)
		if i.redactor != nil {
			i.redactor.redactLastApplied(o)
		}
	case *unstructured.Unstructured:
		if i.redactor != nil {
			i.redactor.redactSecret(o)
		}
	}
	if ro.GetObjectKind().GroupVersionKind().Empty() {
		ro.GetObjectKind().SetGroupVersionKind(i.Resource.GVK)
	}
	return ro, nil
}

// minimumResync is client-go's least resync period for a shared informer's handler: a
// shorter one is raised to it. The single receiver's plain informer gets the same.
const minimumResync = time.Second

func handlerResync(d time.Duration) time.Duration {
	if d > 0 && d < minimumResync {
		return minimumResync
	}
	return d
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
	typ event.EventType
	obj any
}

type pendingEvent struct {
	ev        *event.Event
	remaining int // handlers that have not picked it up yet
}

// minter turns client-go notifications into Events. The first handler to see a change
// creates its Event (and its sequence number); the others reuse it, so the object is
// encoded once for all sinks and every sink sees the same seq for the same change.
type minter struct {
	res       resource.Resource
	cluster   string
	names     []string
	watchOnly bool
	maxSeq    uint64 // 0: no limit
	limit     func()
	skip      func(ev *event.Event) bool
	until     *event.Until
	made      func(ev *event.Event)
	related   bool
	accept    func(obj any) bool
	annotate  func(ev *event.Event)
	// vanished tells a DELETED notification of an object that a re-list found gone
	// (final state unknown) from one the watch reported.
	vanished  func(obj any) bool
	receivers int
	seq       *atomic.Uint64
	encoder   *wire.PartEncoder // shared by this informer's events
	observer  Observer          // nil: none
	// managers has the managedFields records of the objects the transform saw (nil:
	// no attribution); each event takes its object's, and every other way out of the
	// handlers drops it (drop), so that none is kept.
	managers *managedfields.Tracker

	mu      sync.Mutex
	pending map[notification]*pendingEvent
}

// shared returns the Event of a notification, made by the first handler that hands it
// on. left says that a DELETED object only stopped matching the selectors (inOrder).
func (m *minter) shared(typ event.EventType, key, obj, old any, initial, unknown, left bool) *event.Event {
	if m.names != nil && !m.wanted(obj) {
		m.drop(obj)
		return nil
	}
	if m.receivers == 1 {
		return m.acceptedEvent(typ, obj, old, initial, unknown, left)
	}
	n := notification{typ: typ, obj: key}
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.pending[n]
	if !ok {
		p = &pendingEvent{ev: m.acceptedEvent(typ, obj, old, initial, unknown, left), remaining: m.receivers}
		m.pending[n] = p
	}
	if p.remaining--; p.remaining == 0 {
		delete(m.pending, n)
	}
	return p.ev
}

// acceptedEvent makes the event unless Accept rejects the object. It runs once per
// change, so every receiver gets the same answer even though Accept may look at state
// that changes meanwhile.
func (m *minter) acceptedEvent(typ event.EventType, obj, old any, initial, unknown, left bool) *event.Event {
	if m.accept != nil && !m.accept(obj) {
		m.drop(obj)
		return nil
	}
	return m.newEvent(typ, obj, old, initial, unknown, left)
}

func (m *minter) newEvent(typ event.EventType, obj, old any, initial, unknown, left bool) *event.Event {
	ev := &event.Event{
		Type:              typ,
		Time:              time.Now(),
		Cluster:           m.cluster,
		Resource:          m.res.GVR,
		Kind:              m.res.GVK.Kind,
		Object:            obj.(runtime.Object),
		InInitialList:     initial,
		FinalStateUnknown: unknown,
		Related:           m.related,
		Encoder:           m.encoder,
	}
	if old != nil {
		ev.Old = old.(runtime.Object)
	}
	if m.managers != nil && typ != event.Sync {
		ev.ManagedFields = m.managers.Take(obj)
	}
	if m.annotate != nil {
		m.annotate(ev)
	}
	if typ == event.Sync {
		return ev
	}
	if typ == event.Deleted && left {
		ev.Reason = event.ReasonSelector
	}
	if m.skip != nil && m.skip(ev) {
		return nil
	}
	if m.until != nil {
		if !m.until.Number(ev, m.number) {
			return nil
		}
	} else if !m.number(ev) {
		return nil
	}
	// Only now, after Until was asked about it: the event that reaches the limit and
	// meets the condition ends the stream as a met condition.
	if m.maxSeq > 0 && ev.Seq == m.maxSeq && m.limit != nil {
		m.limit()
	}
	if m.observer != nil {
		m.observer.Made(ev)
	}
	if m.made != nil {
		m.made(ev)
	}
	return ev
}

// number gives ev the next Seq, and reports false if that is past MaxEvents: the event is
// then not made.
func (m *minter) number(ev *event.Event) bool {
	ev.Seq = m.seq.Add(1)
	return m.maxSeq == 0 || ev.Seq <= m.maxSeq
}

// forget lets go of what is kept of a deleted object's managedFields: a deletion is
// attributed to nobody.
func (m *minter) forget(obj any) {
	if m.managers != nil {
		m.managers.Forget(obj)
	}
}

// drop lets go of the managedFields record of an object no event is made of.
func (m *minter) drop(obj any) {
	if m.managers != nil {
		m.managers.Take(obj)
	}
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
	// resyncs is whether the receiver asked for a resync period. client-go counts every
	// handler as due for a resync until its first resync check, which never comes for a
	// handler without a period: so after a re-list it would hand such a handler every
	// unchanged object. Those are not changes, and the receiver did not ask for them.
	resyncs bool
}

func (h *handler) OnAdd(obj any, isInInitialList bool) {
	if isInInitialList && h.minter.watchOnly {
		h.minter.drop(obj)
		return
	}
	h.deliver(h.minter.shared(event.Added, obj, obj, nil, isInInitialList, false, false))
}

func (h *handler) OnUpdate(oldObj, newObj any) {
	if sameVersion(oldObj, newObj) {
		h.minter.drop(newObj) // a re-list's unchanged object: none was left for it, unless it was forgotten
		if !h.resyncs {
			return
		}
		// client-go hands unchanged objects (resyncs) only to the handlers whose resync
		// period is due, so this event belongs to this receiver alone.
		if h.minter.names == nil || h.minter.wanted(newObj) {
			h.deliver(h.minter.newEvent(event.Sync, newObj, oldObj, false, false, false))
		}
		return
	}
	h.deliver(h.minter.shared(event.Modified, newObj, newObj, oldObj, false, false, false))
}

func (h *handler) OnDelete(obj any) { h.OnDeleteChecked(obj, false) }

func (h *handler) OnDeleteChecked(obj any, left bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		if tomb.Obj == nil {
			return
		}
		h.minter.forget(tomb.Obj)
		h.deliver(h.minter.shared(event.Deleted, tomb.Obj, tomb.Obj, nil, false, true, left))
		return
	}
	h.minter.forget(obj)
	unknown := h.minter.vanished != nil && h.minter.vanished(obj)
	h.deliver(h.minter.shared(event.Deleted, obj, obj, nil, false, unknown, left))
}

func (h *handler) deliver(ev *event.Event) {
	if ev != nil {
		h.receiver.Add(ev)
	}
}

func sameVersion(a, b any) bool {
	am, err1 := meta.Accessor(a)
	bm, err2 := meta.Accessor(b)
	return err1 == nil && err2 == nil && am.GetResourceVersion() == bm.GetResourceVersion()
}
