package wire

import (
	"context"

	"k8s.io/apimachinery/pkg/watch"
)

// errorHookKey carries, in a watch call's context, what a watch that decodes its own
// events calls on an ERROR event.
type errorHookKey struct{}

// WithErrorHook returns ctx carrying onError, which the watches of this package call
// before they hand on an ERROR event (the informer's outage reporting needs to know
// before the reflector reacts to it).
func WithErrorHook(ctx context.Context, onError func()) context.Context {
	return context.WithValue(ctx, errorHookKey{}, onError)
}

func errorHook(ctx context.Context) func() {
	f, _ := ctx.Value(errorHookKey{}).(func())
	return f
}

// HookedWatch marks a watch that calls the context's error hook itself: it needs no
// spy of its own between the decoder and the reflector.
type HookedWatch struct{ watch.Interface }
