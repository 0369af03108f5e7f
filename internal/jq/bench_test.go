package jq

import (
	"context"
	"testing"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
)

// BenchmarkEnvelopeValue builds the jq envelope of an event whose values and diff are
// computed (EnvelopeValue then caches it for further jq sinks).
func BenchmarkEnvelopeValue(b *testing.B) {
	ev := eventtest.Warm(b, eventtest.RolledPodEvent())
	d := diff.NewDiffer(nil)
	if _, err := d.Changes(ev); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := buildEnvelopeValue(ev, d, true, wholeValue); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJQSelect is a typical filter on a built envelope, the per-sink cost of --jq.
func BenchmarkJQSelect(b *testing.B) {
	ev := eventtest.Warm(b, eventtest.RolledPodEvent())
	envelope, err := EnvelopeValue(ev, diff.NewDiffer(nil), false)
	if err != nil {
		b.Fatal(err)
	}
	q := mustCompile(b, `select(.type=="DELETED")`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if outputs, err := q.Run(ctx, envelope); err != nil || len(outputs) != 0 {
			b.Fatal(outputs, err)
		}
	}
}

// BenchmarkJQInput is a jq sink's input for a fresh event (no sink built its values
// yet) and its run: an expression reading two fields (the three-sink benchmark's), whose
// input is projected (input.go), and `.`, which reads it whole, as every expression's
// did before the projection.
func BenchmarkJQInput(b *testing.B) {
	for _, c := range []struct{ name, expr string }{
		{"Projected", `select(.type=="DELETED") | .object.metadata.name`},
		{"Whole", `.`},
	} {
		b.Run(c.name, func(b *testing.B) {
			q := mustCompile(b, c.expr)
			d := diff.NewDiffer(nil)
			template := jqDeletedPodEvent()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				ev := &event.Event{Type: event.Deleted, Time: eventtest.T0, Seq: 42, Resource: eventtest.Pods, Kind: "Pod", Object: template.Object}
				input, err := q.Input(ev, d, false)
				if err != nil {
					b.Fatal(err)
				}
				if outputs, err := q.Run(ctx, input); err != nil || len(outputs) != 1 {
					b.Fatal(outputs, err)
				}
			}
		})
	}
}
