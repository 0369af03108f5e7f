package sink

import (
	"slices"
	"strings"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/listener"
)

// eventTypes passes on only the events of some types (a sink's event-types); the
// others are ErrFiltered, so that the sink's summary counts them as filtered. SYNC (a
// resync's re-delivery) is a type like the others: left out unless listed.
type eventTypes struct {
	listener.Sink
	types []event.EventType
}

// WithEventTypes wraps s so that it writes only events of those types ("ADDED|DELETED",
// as config.Sink holds them); s itself when types is empty.
func WithEventTypes(s listener.Sink, types string) listener.Sink {
	if types == "" {
		return s
	}
	f := &eventTypes{Sink: s}
	for _, t := range strings.Split(types, "|") {
		f.types = append(f.types, event.EventType(t))
	}
	// The listener asks the sink it is given whether it holds events after Write (exec,
	// http) and can abort them: the filter must answer as the sink it wraps does.
	if h, ok := s.(listener.Holder); ok {
		return &holdingEventTypes{eventTypes: f, holder: h}
	}
	return f
}

// holdingEventTypes is eventTypes around a sink that holds events after Write.
type holdingEventTypes struct {
	*eventTypes
	holder listener.Holder
}

func (f *holdingEventTypes) Hold(settle func(ev *event.Event, err error)) { f.holder.Hold(settle) }

func (f *holdingEventTypes) Abort() {
	if a, ok := f.holder.(listener.Aborter); ok {
		a.Abort()
	}
}

func (f *eventTypes) Write(ev *event.Event) error {
	if !slices.Contains(f.types, ev.Type) {
		return listener.ErrFiltered
	}
	return f.Sink.Write(ev)
}
