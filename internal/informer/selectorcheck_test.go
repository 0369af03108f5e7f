package informer

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeevents/kubeevents/internal/event"
)

// scriptedLookup answers checks from present (name -> UID), one page per pageSize
// objects, each request once gate is closed; it counts the requests.
type scriptedLookup struct {
	gate     chan struct{}
	present  map[string]types.UID
	pageSize int // 0: one page

	mu          sync.Mutex
	gets, pages int
}

func newScriptedLookup(present map[string]types.UID) *scriptedLookup {
	return &scriptedLookup{gate: make(chan struct{}), present: present}
}

func (l *scriptedLookup) open() { close(l.gate) }

func (l *scriptedLookup) requests() (gets, pages int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gets, l.pages
}

func (l *scriptedLookup) uid(ctx context.Context, _, name string) (types.UID, error) {
	l.mu.Lock()
	l.gets++
	l.mu.Unlock()
	select {
	case <-l.gate:
		return l.present[name], nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (l *scriptedLookup) page(ctx context.Context, _, cont string) (map[string]types.UID, string, error) {
	l.mu.Lock()
	l.pages++
	l.mu.Unlock()
	select {
	case <-l.gate:
	case <-ctx.Done():
		return nil, "", ctx.Err()
	}
	names := make([]string, 0, len(l.present))
	for n := range l.present {
		names = append(names, n)
	}
	slices.Sort(names)
	start := 0
	if cont != "" {
		fmt.Sscan(cont, &start)
	}
	end := len(names)
	if l.pageSize > 0 {
		end = min(start+l.pageSize, len(names))
	}
	page := map[string]types.UID{}
	for _, n := range names[start:end] {
		page[n] = l.present[n]
	}
	next := ""
	if end < len(names) {
		next = fmt.Sprint(end)
	}
	return page, next, nil
}

// podWithUID is pod default/name with UID "uid-"+name.
func podWithUID(name, rv string) *unstructured.Unstructured {
	p := unstructuredPod(name, rv)
	p.SetUID(types.UID("uid-" + name))
	return p
}

// newOrdered is a handler that asks lookup about each DELETED and hands its events on
// in order to a recorder, numbering them as they come.
func newOrdered(lookup objectLookup) (*handler, *recorder) {
	r := &recorder{}
	var seq uint64
	h := &handler{inf: &Informer{Resource: podsRes}, checks: newSelectorChecks(context.Background(), lookup)}
	h.take = func(ev *event.Event) {
		seq++
		ev.Seq = seq
		r.Add(ev)
	}
	h.ordered = newInOrder(context.Background(), h.take)
	return h, r
}

func seqs(evs []*event.Event) []uint64 {
	out := make([]uint64, len(evs))
	for i, ev := range evs {
		out[i] = ev.Seq
	}
	return out
}

// A DELETED that waits for its answer holds back everything after it: the receiver gets
// the notifications in client-go's order, numbered in that order, once the answer is
// known; with nothing waiting, notifications go straight through again.
func TestInOrderKeepsTheOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lookup := newScriptedLookup(map[string]types.UID{"relabelled": "uid-relabelled"})
		o, r := newOrdered(lookup)
		terminating := podWithUID("terminating", "3")
		terminating.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
		o.OnDelete(podWithUID("relabelled", "2"))
		o.OnAdd(podWithUID("b", "1"), false)
		o.OnUpdate(podWithUID("b", "1"), podWithUID("b", "2"))
		o.OnDelete(terminating) // not asked about, but after the others all the same
		synctest.Wait()
		if evs := r.all(); len(evs) != 0 {
			t.Fatalf("%v handed on before the first DELETED's answer", names(evs))
		}
		lookup.open()
		synctest.Wait()
		o.OnAdd(podWithUID("c", "1"), false)
		evs := r.all()
		want := []string{"DELETED default/relabelled", "ADDED default/b", "MODIFIED default/b", "DELETED default/terminating", "ADDED default/c"}
		if got := names(evs); !slices.Equal(got, want) {
			t.Fatalf("events %v, want %v", got, want)
		}
		if got := seqs(evs); !slices.Equal(got, []uint64{1, 2, 3, 4, 5}) {
			t.Errorf("seqs %v, want 1..5 in the notifications' order", got)
		}
		if evs[0].Reason != event.ReasonSelector || evs[3].Reason != "" {
			t.Errorf("reasons %q, %q: want selector for the object still there, none for the one being deleted", evs[0].Reason, evs[3].Reason)
		}
		o.ordered.wait()
	})
}

// A mass deletion costs requests per round, not per object: the questions that gather
// while a request runs are answered together by one LIST of their namespace.
func TestSelectorChecksAskTogether(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lookup := newScriptedLookup(map[string]types.UID{"cm-7": "uid-cm-7"}) // relabelled; the rest deleted
		o, r := newOrdered(lookup)
		o.OnDelete(podWithUID("cm-0", "2"))
		synctest.Wait() // the first is asked about alone, and waits for its GET
		for i := 1; i < 1000; i++ {
			o.OnDelete(podWithUID(fmt.Sprintf("cm-%d", i), "2"))
		}
		lookup.open()
		synctest.Wait()
		evs := r.all()
		if len(evs) != 1000 {
			t.Fatalf("%d events, want 1000", len(evs))
		}
		for i, ev := range evs {
			want := ""
			if i == 7 {
				want = event.ReasonSelector
			}
			if name := names(evs[i : i+1])[0]; name != fmt.Sprintf("DELETED default/cm-%d", i) || ev.Seq != uint64(i+1) || ev.Reason != want {
				t.Fatalf("event %d: %s seq %d reason %q; want cm-%d, seq %d, reason %q", i, name, ev.Seq, ev.Reason, i, i+1, want)
			}
		}
		if gets, pages := lookup.requests(); gets != 1 || pages != 1 {
			t.Errorf("%d GETs and %d LIST pages for 1,000 deletions; want 1 and 1", gets, pages)
		}
	})
}

// A LIST reads at most as many pages as it answers questions: in a namespace far larger
// than what was deleted, the rest are asked one by one.
func TestSelectorChecksListBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		present := map[string]types.UID{"a-kept": "uid-a-kept"}
		for i := range 100 {
			present[fmt.Sprintf("other-%03d", i)] = "x"
		}
		lookup := newScriptedLookup(present)
		lookup.pageSize = 10
		checks := newSelectorChecks(context.Background(), lookup)
		// A first question, alone in its round, holds the round until the lookup opens:
		// the two below are then asked together, in the next round.
		first := checks.ask(podWithUID("first", "2"))
		synctest.Wait()
		kept, gone := checks.ask(podWithUID("a-kept", "2")), checks.ask(podWithUID("z-gone", "2"))
		lookup.open()
		if first.wait(context.Background()) || !kept.wait(context.Background()) || gone.wait(context.Background()) {
			t.Error("want a-kept found (left the selection), first and z-gone not (deleted)")
		}
		// first: a GET. a-kept is on the first page; z-gone on none of the two read, so
		// it is asked for.
		if gets, pages := lookup.requests(); gets != 2 || pages != 2 {
			t.Errorf("%d GETs and %d pages; want a GET, then 2 pages and a GET", gets, pages)
		}
	})
}

// An answer that does not come in time makes a plain deletion, selectorCheckTimeout
// after the notification, and the stream goes on.
func TestSelectorCheckDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lookup := newScriptedLookup(map[string]types.UID{"slow": "uid-slow"})
		defer lookup.open()
		o, r := newOrdered(lookup)
		o.OnDelete(podWithUID("slow", "2"))
		o.OnAdd(podWithUID("b", "1"), false)
		time.Sleep(selectorCheckTimeout - time.Millisecond)
		synctest.Wait()
		if evs := r.all(); len(evs) != 0 {
			t.Fatalf("%v handed on before the deadline", names(evs))
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		evs := r.all()
		if got := names(evs); !slices.Equal(got, []string{"DELETED default/slow", "ADDED default/b"}) || evs[0].Reason != "" {
			t.Errorf("events %v (reason %q); want the DELETED as a deletion, then the ADDED", got, evs[0].Reason)
		}
	})
}

// At most limit notifications wait behind an unanswered check; the next one waits for
// room on the informer's goroutine.
func TestInOrderBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lookup := newScriptedLookup(nil)
		o, r := newOrdered(lookup)
		o.ordered.limit = 2
		o.OnDelete(podWithUID("a", "2")) // handed to the drain, which waits for its answer
		synctest.Wait()
		o.OnAdd(podWithUID("b", "1"), false)
		o.OnAdd(podWithUID("c", "1"), false)
		returned := make(chan struct{})
		go func() {
			o.OnAdd(podWithUID("d", "1"), false)
			close(returned)
		}()
		synctest.Wait()
		select {
		case <-returned:
			t.Fatal("a third notification queued behind the check; the limit is 2")
		default:
		}
		lookup.open()
		<-returned
		synctest.Wait()
		want := []string{"DELETED default/a", "ADDED default/b", "ADDED default/c", "ADDED default/d"}
		if got := names(r.all()); !slices.Equal(got, want) {
			t.Errorf("events %v, want %v", got, want)
		}
	})
}
