// Package informer runs one client-go informer per watched resource: it picks the typed,
// dynamic or metadata client and this project's watch decoders (package decode), prepares
// objects as they enter the cache (managedFields read for attribution and dropped,
// Secrets redacted, apiVersion and kind filled in), turns client-go's notifications into
// numbered Events for the registered receivers, checks access before starting, and
// reports outages and API errors as one line each.
package informer

import (
	"context"
	"encoding/json"
	"slices"
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
	"github.com/kubeevents/kubeevents/internal/informer/decode"
	"github.com/kubeevents/kubeevents/internal/managedfields"
	"github.com/kubeevents/kubeevents/internal/pipeline"
	"github.com/kubeevents/kubeevents/internal/render/partjson"
	"github.com/kubeevents/kubeevents/internal/resource"
)

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
	// NoWireDecoders lists and watches with client-go's decoders, not this package's
	// (KUBEEVENTS_WIRE_DECODERS=off): no part reuse either.
	NoWireDecoders bool
	// Related marks this informer's events as core Events about watched objects
	// (--with-events).
	Related bool
	// Child marks this informer's events as those of a type --owned watches for what the
	// followed object owns.
	Child bool
	// Resync, if set, is the schedule of the listeners' resyncs: the informer resyncs on
	// its period and hands its objects, as SYNC events, to the listeners it says are due.
	Resync *pipeline.Resync
	// Unchanged are the listeners (by their index in the run) that show every object as
	// it is now (the view, --ui): the first list after Seed hands them, as SYNC events,
	// the objects unchanged since, of which no other listener gets anything.
	Unchanged []int
	// Warn prints one diagnostic line (watch lost, re-synced, ...); Fatal ends the
	// command, for errors before the first watch is established. Both may be called from
	// client-go's goroutines.
	Warn  func(format string, args ...any)
	Fatal func(err error)
	// Observer, if set, is told of every outage, for metrics.
	Observer Observer
}

// Informer is one client-go informer for one resource, with one event handler: a
// source of the pipeline (pipeline.Source), which hands over each change as a raw event.
type Informer struct {
	Resource  resource.Resource
	Typed     bool   // typed (client-go scheme) or dynamic (unstructured) objects
	namespace string // the namespace watched; "" for all, or a cluster-scoped resource
	// ctrl and store are client-go's informer's; handler makes its events.
	ctrl     cache.Controller
	handler  *handler
	lw       *cache.ListWatch // the lists and watches, without the watchReporter's reports
	store    cache.Store
	redactor *redactor       // nil when Secrets are shown (or this is not a Secret informer)
	example  runtime.Object  // an empty object of the cache's type, for Seed
	ctx      context.Context // ends with Run: the selector checks' requests
	// managers follows the objects' managedFields, for the events' attribution; nil
	// with NoAttribution, and for core Events (--with-events).
	managers *managedfields.Tracker
}

// crdResource is where CustomResourceDefinitions are served.
var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// New builds the informer; Run starts it.
func New(res resource.Resource, clients Clients, opts Options) (*Informer, error) {
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
	inf := &Informer{Resource: res, namespace: ns}
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
		if opts.NoWireDecoders {
			break // client-go's list and watch, decoded by the client's codec
		}
		lister := decode.NewTypedLister(client, res.GVR.Resource, ns)
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
			decoding := decode.TypedDecoding{DropManagedFields: true, NoPartReuse: opts.NoFastPaths}
			if inf.managers != nil {
				decoding.ManagedFields = inf.managers.ObserveProtobuf
			}
			if w, ok := decode.WatchTyped(ctx, client, res.GVR.Resource, ns, o, decoding); ok {
				return w, nil
			}
			return clientGoWatch(ctx, o)
		}
	default:
		// Custom resources, and Secrets being redacted (whose values must become strings
		// rather than typed []byte).
		lw = listWatchOf(clients.Dynamic.Resource(res.GVR).Namespace(ns), tweak)
		if clients.DynamicREST != nil && !opts.NoWireDecoders {
			dynamicWatch := lw.WatchFuncWithContext
			lw.WatchFuncWithContext = func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				tweak(&o)
				if w, ok := decode.WatchUnstructured(ctx, clients.DynamicREST, res.GVR, ns, o); ok {
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
	var encoder event.Encoder // nil: every object encoded whole
	if !opts.NoFastPaths {
		encoder = partjson.NewEncoder()
	}
	h := &handler{inf: inf, cluster: opts.Cluster, watchOnly: opts.WatchOnly, related: opts.Related, child: opts.Child,
		encoder: encoder, resync: opts.Resync, unchanged: opts.Unchanged, vanished: reporter.vanished.has}
	if len(opts.Names) > 1 {
		h.names = opts.Names
	}
	// With selectors, a DELETED may be an object that only stopped matching them: it is
	// asked about, and the events go on in order behind it (inorder.go).
	if opts.LabelSelector != "" || opts.FieldSelector != "" {
		h.lookup = newObjectLookup(clients, res.GVR)
	}
	inf.handler = h
	resync := time.Duration(0)
	if opts.Resync != nil {
		resync = opts.Resync.Period()
	}
	// client-go's plain informer: its one handler runs in the informer's own goroutine,
	// as the cache takes each change in. (Its default watch error handler stays: it logs
	// through klog, which kubeevents shows only from -v=6; the reporter says the rest.)
	inf.store, inf.ctrl = cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: reporter,
		ObjectType:    example,
		Handler:       h,
		ResyncPeriod:  resync,
		Transform:     inf.transform,
	})
	reporter.store = func() cache.Store { return inf.store }
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
		if h := i.handler; h.unchanged != nil {
			if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
				if h.seeded == nil {
					h.seeded = map[string]struct{}{}
				}
				h.seeded[key] = struct{}{}
			}
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

// Run runs the informer until ctx ends, handing each change to take as a raw event
// (pipeline.Source): from the informer's goroutine, or, under selectors, from the
// goroutine that hands events on in order behind a DELETED being asked about. It
// returns once take is no longer called.
func (i *Informer) Run(ctx context.Context, take func(*event.Event) bool) error {
	i.ctx = ctx
	h := i.handler
	h.take = func(ev *event.Event) { take(ev) }
	if h.lookup != nil {
		h.checks = newSelectorChecks(ctx, h.lookup)
		h.ordered = newInOrder(ctx, h.take)
	}
	i.ctrl.RunWithContext(ctx)
	if h.ordered != nil {
		h.ordered.wait()
	}
	return nil
}

// WaitForSync blocks until the initial list has been handed over, or ctx ends; it reports
// whether the informer synced.
func (i *Informer) WaitForSync(ctx context.Context) bool {
	return cache.WaitForCacheSync(ctx.Done(), i.ctrl.HasSynced)
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
// other parts may be shared with its previous version (package decode's invariant).
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

// handler is the informer's one client-go event handler: it makes each change a raw
// event, which only the informer can (its cache's old state, its managedFields record,
// its part encoder, whether a re-list found it gone), and hands it on; the pipeline's
// steps do the rest.
type handler struct {
	inf       *Informer
	cluster   string
	names     []string // several NAME arguments, filtered here (field selectors cannot OR)
	watchOnly bool
	related   bool
	child     bool
	encoder   event.Encoder    // shared by this informer's events
	resync    *pipeline.Resync // nil: no listener resyncs
	// unchanged are Options.Unchanged; seeded the keys of the objects Seed put into the
	// cache that the first list has not yet brought (nil once it brought them all).
	unchanged []int
	seeded    map[string]struct{}
	// vanished tells a DELETED notification of an object that a re-list found gone
	// (final state unknown) from one the watch reported.
	vanished func(obj any) bool
	// Set by Run: take hands an event on; under selectors lookup, checks and ordered
	// ask about each DELETED and keep the events in order behind it.
	take    func(ev *event.Event)
	lookup  objectLookup
	checks  *selectorChecks
	ordered *inOrder
}

func (h *handler) OnAdd(obj any, isInInitialList bool) {
	if isInInitialList && h.watchOnly || !h.wanted(obj) {
		h.drop(obj)
		return
	}
	h.put(h.event(event.Added, obj, nil, isInInitialList), nil)
}

func (h *handler) OnUpdate(oldObj, newObj any) {
	firstSeen := h.firstSeen(newObj)
	if sameVersion(oldObj, newObj) {
		if firstSeen && h.wanted(newObj) {
			// A seeded object the first list found unchanged: no change, but the
			// listeners that show every object must have it.
			ev := h.event(event.Sync, newObj, newObj, false)
			ev.SyncTo = h.unchanged
			h.put(ev, nil)
		}
		// A resync, or a re-list's unchanged object: no change. The listeners whose
		// resync period has come get every object now (client-go's resyncs come in order
		// with the changes, and so does its cache here).
		h.drop(newObj)
		if h.resync == nil {
			return
		}
		if due := h.resync.Due(time.Now()); due != nil {
			h.resyncTo(due)
		}
		return
	}
	if !h.wanted(newObj) {
		h.drop(newObj)
		return
	}
	h.put(h.event(event.Modified, newObj, oldObj, false), nil)
}

func (h *handler) OnDelete(obj any) {
	unknown := false
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		if obj, unknown = tomb.Obj, true; obj == nil {
			return
		}
	} else {
		unknown = h.vanished != nil && h.vanished(obj)
	}
	h.forget(obj)
	h.firstSeen(obj)
	if !h.wanted(obj) {
		return
	}
	ev := h.event(event.Deleted, obj, nil, false)
	ev.FinalStateUnknown = unknown
	var answer *selectorAnswer
	if h.checks != nil {
		answer = h.checks.ask(obj)
	}
	h.put(ev, answer)
}

// firstSeen reports whether obj is a seeded object the first list brings now (updated,
// or gone), and forgets it.
func (h *handler) firstSeen(obj any) bool {
	if h.seeded == nil {
		return false
	}
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return false
	}
	if _, ok := h.seeded[key]; !ok {
		return false
	}
	delete(h.seeded, key)
	if len(h.seeded) == 0 {
		h.seeded = nil
	}
	return true
}

// resyncTo hands every cached object to the listeners due, as SYNC events.
func (h *handler) resyncTo(due []int) {
	for _, obj := range h.inf.store.List() {
		if h.wanted(obj) {
			ev := h.event(event.Sync, obj, obj, false)
			ev.SyncTo = due
			h.put(ev, nil)
		}
	}
}

// put hands ev on, in order behind any DELETED being asked about.
func (h *handler) put(ev *event.Event, answer *selectorAnswer) {
	if h.ordered != nil {
		h.ordered.put(ev, answer)
		return
	}
	h.take(ev)
}

// event is the raw event of a change: what the informer knows of it.
func (h *handler) event(typ event.EventType, obj, old any, initial bool) *event.Event {
	ev := &event.Event{
		Type:          typ,
		Time:          time.Now(),
		Cluster:       h.cluster,
		Resource:      h.inf.Resource.GVR,
		Kind:          h.inf.Resource.GVK.Kind,
		Object:        obj.(runtime.Object),
		InInitialList: initial,
		Related:       h.related,
		Child:         h.child,
		Encoder:       h.encoder,
	}
	if old != nil {
		ev.Old = old.(runtime.Object)
	}
	if h.inf.managers != nil && typ != event.Sync {
		ev.ManagedFields = h.inf.managers.Take(obj)
	}
	return ev
}

// forget lets go of what is kept of a deleted object's managedFields: a deletion is
// attributed to nobody.
func (h *handler) forget(obj any) {
	if h.inf.managers != nil {
		h.inf.managers.Forget(obj)
	}
}

// drop lets go of the managedFields record of an object no event is made of.
func (h *handler) drop(obj any) {
	if h.inf.managers != nil {
		h.inf.managers.Take(obj)
	}
}

// wanted reports whether obj is one of the names asked for (all are without names).
func (h *handler) wanted(obj any) bool {
	if h.names == nil {
		return true
	}
	acc, err := meta.Accessor(obj)
	return err == nil && slices.Contains(h.names, acc.GetName())
}

func sameVersion(a, b any) bool {
	am, err1 := meta.Accessor(a)
	bm, err2 := meta.Accessor(b)
	return err1 == nil && err2 == nil && am.GetResourceVersion() == bm.GetResourceVersion()
}

// Kind is the group and kind of the informer's objects.
func (i *Informer) Kind() schema.GroupKind { return i.Resource.GVK.GroupKind() }

// GVR is the informer's resource.
func (i *Informer) GVR() schema.GroupVersionResource { return i.Resource.GVR }

// Describe names the informer's resource as messages do ("deployments.apps").
func (i *Informer) Describe() string { return i.Resource.String() }
