package informer

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubeevents/kubeevents/internal/fastpath"
)

// clientGoVersion is the client-go whose reflector (tools/cache: reflector.go, controller.go,
// shared_informer.go) this file was written against. reflector_test.go drives that
// reflector, through the informers kubeevents builds, and fails where a behaviour relied on
// below changed; TestClientGoIsThePinnedOne fails on any other version, so that a
// `go get k8s.io/client-go@…` is answered by those tests before this constant is moved.
const clientGoVersion = "v0.37.1"

// This file is the one place that knows how client-go's reflector reacts to what its
// ListerWatcher (the watchReporter) hands it. kubeevents recovers from an outage within a
// second (README, Guarantees) by steering the reflector around its backoff: every wait of
// the reflector after a failure (a failed list or watch call, a watch that ended with an
// error or too soon) comes from one exponential backoff, 0.8 s doubled up to 30 s with up
// to as much again at random (reflectorBackoff), which SharedIndexInformerOptions,
// InformerOptions and cache.Config leave no way to set (ReflectorOptions.Backoff is
// there, but only NewReflectorWithOptions reads it: client-go's TODO #136943). Three
// pieces keep the reflector from ever reaching that wait, each with an off switch
// (Recovery):
//
//   - the re-list in place (relist.go) takes a watch's 410 Gone ERROR event and hands the
//     reflector, instead, what changed as watch events and then ContinueAt's events;
//   - the ended-early BOOKMARK (listwatch.go, endedEarly) hands a watch the server closed
//     before any event, which the reflector TakesForFailure, ContinueAt's events;
//   - the readiness probes (probe.go) hold a failed list or watch call of an unreachable
//     server inside the call until the server answers, so that the reflector sees a slow
//     call rather than a failure.
//
// The watchReporter (listwatch.go), which sees every call to say what an outage is and
// when it is over, also ends a watch whose connection was lost as if the server had
// closed it (connectionLost), sparing the reflector's re-list after its backoff.
//
// They rely on these behaviours of the reflector, each checked by a test of
// reflector_test.go against the real one:
//
//  1. a watch that ends, its channel closed, after an event or after running for at
//     least a second is opened again at once, from the resourceVersion of its last event;
//  2. a watch that ends before any event within a second is a failure (handleAnyWatch's
//     VeryShortWatchError): the reflector waits its backoff and re-lists
//     (both: TestReflectorTakesAShortWatchForAFailure);
//  3. a BOOKMARK counts as an event and moves the reflector's resourceVersion: the next
//     watch opens at it (TestReflectorContinuesAtABookmark);
//  4. a watch that ends with an ERROR event (410 Gone, or a 500 for a lost connection)
//     makes the reflector wait its backoff and re-list (TestReflectorRelistsAfterAnError);
//  5. a failed list or watch call makes it wait its backoff before the next call
//     (TestReflectorBacksOffAfterAFailedCall);
//  6. that backoff is reflectorBackoff, grows with every failure, and is not reset by a
//     success; it starts again from 0.8 s only when two minutes have passed since it last
//     started (wait.Backoff.DelayWithReset) (TestReflectorBackoff);
//  7. after its first list, every List call the reflector makes is a re-list whose first
//     page has no continue token, and its cache holds the old state until the whole list
//     is in (the watchReporter's re-sync count); a re-list comes in pages only if the
//     first list did (mostRecentPages); a reflector whose ListerWatcher says
//     IsWatchListSemanticsUnSupported lists rather than streams
//     (TestReflectorListsAfterTheFirstWatchOnlyToRelist, TestReflectorStreamsUnlessToldNot).
//
// Watch-list (streaming lists) and watchtools.RetryWatcher were weighed and not taken:
// watch-list waits out the same backoff before it streams again, and streams the state
// into a store of its own, so a re-sync could not be counted; RetryWatcher re-opens an
// ended watch within a second, but drops BOOKMARKs (TestRetryWatcherDropsBookmarks), so
// the reflector's resourceVersion would stop moving, and it cannot get past 410 Gone.

// reflectorRules is what the recovery pieces need to know of client-go's reflector, and
// all they need: every rule is one of the behaviours listed above. clientGoRules is the
// only implementation, for clientGoVersion.
type reflectorRules interface {
	// TakesForFailure reports whether the reflector takes the end of a watch that ran
	// for ranFor and handed on no event for a failure, and so waits its backoff and
	// re-lists (behaviour 2) rather than opening the next watch at once (1).
	TakesForFailure(ranFor time.Duration) bool
	// ContinueAt returns the events that, handed on by a watch as its last, have the
	// reflector open its next watch at resourceVersion rv at once, with neither a
	// re-list nor its backoff (behaviours 1 and 3); example is an object of the type the
	// reflector expects.
	ContinueAt(example runtime.Object, rv string) ([]watch.Event, error)
}

// rules are the reflector's rules as the pieces use them.
var rules reflectorRules = clientGoRules{}

// clientGoRules are the rules of client-go clientGoVersion's reflector.
type clientGoRules struct{}

// shortWatch is handleAnyWatch's bound: a watch that ends sooner, with no event, is a
// VeryShortWatchError.
const shortWatch = time.Second

func (clientGoRules) TakesForFailure(ranFor time.Duration) bool { return ranFor < shortWatch }

func (clientGoRules) ContinueAt(example runtime.Object, rv string) ([]watch.Event, error) {
	obj := example.DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	m.SetResourceVersion(rv)
	return []watch.Event{{Type: watch.Bookmark, Object: obj}}, nil
}

// reflectorBackoff is the reflector's backoff (reflector.go's defaultBackoff*), reset when
// two minutes passed since it last started (defaultBackoffReset).
var reflectorBackoff = wait.Backoff{Duration: 800 * time.Millisecond, Factor: 2, Jitter: 1, Cap: 30 * time.Second, Steps: 38}

const reflectorBackoffReset = 2 * time.Minute

// IsWatchListSemanticsUnSupported makes the reflector list and then watch, rather than
// stream the initial state through a watch (WatchListClient, on by default since v0.35): a
// LIST is a single call whose result can be counted and compared with the cache, which is
// how a re-list after an outage is reported ("re-synced 1,204 pods (3 changed, 1 deleted
// while disconnected)"). client-go's util/watchlist asks for this method by name.
func (w *watchReporter) IsWatchListSemanticsUnSupported() bool { return true }

// Recovery turns the recovery pieces off, one by one, so that what each gains can be
// measured (docs/development.md, "client-go's recovery"): the zero value has them all on.
type Recovery = fastpath.Recovery
