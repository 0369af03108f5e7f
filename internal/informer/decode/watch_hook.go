package decode

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// ErrorHook is what a watch of this package calls on an ERROR event, before it hands the
// event on; status is the event's object (a *metav1.Status). When it says replace, the
// replacement events (none, or some) are handed on instead of the ERROR event, and the
// watch ends after them, as a watch the server closed. The informer re-lists in place of
// a watch the server ended with 410 Gone this way, and re-opens a watch whose connection
// was lost, rather than letting client-go's reflector re-list after its backoff.
type ErrorHook func(status runtime.Object) (replacement []watch.Event, replace bool)

// errorHookKey carries, in a watch call's context, the ErrorHook of a watch that decodes
// its own events.
type errorHookKey struct{}

// WithErrorHook returns ctx carrying onError, for the watches of this package opened with
// it (the informer's outage reporting needs to know before the reflector reacts).
func WithErrorHook(ctx context.Context, onError ErrorHook) context.Context {
	return context.WithValue(ctx, errorHookKey{}, onError)
}

func errorHook(ctx context.Context) ErrorHook {
	f, _ := ctx.Value(errorHookKey{}).(ErrorHook)
	return f
}

// EndedEarlyHook is what a watch of this package calls when the server closed it before
// any event, ranFor after it was opened. The events it returns are handed on before the
// watch ends: the informer, for a watch that client-go's reflector would take for a
// failure (and re-list after its backoff), hands on a BOOKMARK, after a pause, so that the
// reflector opens its next watch from where it was (package informer, reflector.go).
type EndedEarlyHook func(ranFor time.Duration) []watch.Event

type endedEarlyHookKey struct{}

// WithEndedEarlyHook returns ctx carrying onEndedEarly, for the watches of this package
// opened with it and an ErrorHook.
func WithEndedEarlyHook(ctx context.Context, onEndedEarly EndedEarlyHook) context.Context {
	return context.WithValue(ctx, endedEarlyHookKey{}, onEndedEarly)
}

// HookedWatch marks a watch that calls the context's error hook itself: it needs no
// spy of its own between the decoder and the reflector.
type HookedWatch struct{ watch.Interface }

// streamErrorReporter makes the ERROR event of a watch whose stream could not be read,
// as client-go's watches make it (a 500 whose cause is ClientWatchDecoding).
var streamErrorReporter = apierrors.NewClientErrorReporter(http.StatusInternalServerError, http.MethodGet, "ClientWatchDecoding")

// hookedDecoder calls onError on the ERROR events dec decodes, and hands on what it
// returns instead of them. It sits between a decoder and client-go's StreamWatcher, so
// it costs one call per event and no goroutine.
type hookedDecoder struct {
	watch.Decoder
	onError      ErrorHook
	onEndedEarly EndedEarlyHook // nil: none
	opened       time.Time      // when the watch was opened
	decoded      bool           // an event came from the server
	queued       []watch.Event  // the replacement still to hand on
	ended        bool           // a replacement was handed on: the watch ends once it is
}

// withErrorHook wraps dec when ctx carries an error hook.
func withErrorHook(ctx context.Context, dec watch.Decoder) (_ watch.Decoder, hooked bool) {
	onError := errorHook(ctx)
	if onError == nil {
		return dec, false
	}
	onEndedEarly, _ := ctx.Value(endedEarlyHookKey{}).(EndedEarlyHook)
	return &hookedDecoder{Decoder: dec, onError: onError, onEndedEarly: onEndedEarly, opened: time.Now()}, true
}

func (d *hookedDecoder) Decode() (watch.EventType, runtime.Object, error) {
	if len(d.queued) > 0 {
		ev := d.queued[0]
		d.queued[0] = watch.Event{}
		d.queued = d.queued[1:]
		return ev.Type, ev.Object, nil
	}
	if d.ended {
		return "", nil, io.EOF
	}
	typ, obj, err := d.Decoder.Decode()
	if err == nil && typ != watch.Error {
		d.decoded = true
		return typ, obj, nil // the common case, first
	}
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF || utilnet.IsProbableEOF(err) || utilnet.IsTimeout(err) {
			if !d.decoded && d.onEndedEarly != nil {
				if replacement := d.onEndedEarly(time.Since(d.opened)); len(replacement) > 0 {
					d.ended = true
					d.queued = replacement[1:]
					return replacement[0].Type, replacement[0].Object, nil
				}
			}
			return typ, obj, err // client-go's StreamWatcher ends the watch quietly
		}
		// StreamWatcher would hand this on as an ERROR event of its own: show the hook
		// that event.
		obj = streamErrorReporter.AsObject(fmt.Errorf("unable to decode an event from the watch stream: %v", err))
	}
	d.decoded = true
	replacement, replace := d.onError(obj)
	switch {
	case !replace && err != nil:
		return "", nil, err
	case !replace:
		return typ, obj, nil
	}
	d.ended = true
	if len(replacement) == 0 {
		return "", nil, io.EOF
	}
	d.queued = replacement[1:]
	return replacement[0].Type, replacement[0].Object, nil
}
