package render

import (
	"testing"
	"time"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
)

func newBenchPrinter(b *testing.B, format Format) *Printer {
	p, err := NewPrinter(Options{Format: format, Color: true, Location: time.UTC})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkJSONLineEncode is the cost of a JSON line for the first sink that writes an
// event: encoding the object plus the envelope.
func BenchmarkJSONLineEncode(b *testing.B) {
	p, pod := newBenchPrinter(b, FormatJSON), eventtest.RealisticPod()
	var dst []byte
	b.ReportAllocs()
	for b.Loop() {
		ev := &event.Event{Type: event.Modified, Time: eventtest.T0, Seq: 42, Resource: eventtest.Pods, Kind: "Pod", Object: pod}
		var err error
		if dst, err = p.Append(dst[:0], ev); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(dst)))
}

// BenchmarkJSONLineEnvelope is the cost for every further sink: the object's JSON is
// already cached on the event.
func BenchmarkJSONLineEnvelope(b *testing.B) {
	p := newBenchPrinter(b, FormatJSON)
	ev := &event.Event{Type: event.Modified, Time: eventtest.T0, Seq: 42, Resource: eventtest.Pods, Kind: "Pod", Object: eventtest.RealisticPod()}
	if _, err := ev.ObjectJSON(); err != nil {
		b.Fatal(err)
	}
	var dst []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if dst, err = p.Append(dst[:0], ev); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(dst)))
}

func BenchmarkPrettyLine(b *testing.B) {
	p := newBenchPrinter(b, FormatPretty)
	ev := &event.Event{Type: event.Modified, Time: eventtest.T0, Seq: 42, Resource: eventtest.Pods, Kind: "Pod", Object: eventtest.RealisticPod()}
	var dst []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if dst, err = p.Append(dst[:0], ev); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(dst)))
}

// BenchmarkJSONLineWithDiff is a JSON line with "diff": for the first sink of a fresh
// event (encoding, decoding and diffing both objects) and for every further sink.
func BenchmarkJSONLineWithDiff(b *testing.B) {
	d := diff.NewDiffer(nil)
	b.Run("FirstSink", func(b *testing.B) {
		p, events := newBenchPrinter(b, FormatJSON), eventtest.RolledPodEvent()
		p.differ = d
		var dst []byte
		b.ReportAllocs()
		for b.Loop() {
			ev := &event.Event{Type: events.Type, Time: eventtest.T0, Seq: 42, Resource: eventtest.Pods, Kind: "Pod", Object: events.Object, Old: events.Old}
			var err error
			if dst, err = p.Append(dst[:0], ev); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(len(dst)))
	})
	b.Run("FurtherSink", func(b *testing.B) {
		p, ev := newBenchPrinter(b, FormatJSON), eventtest.RolledPodEvent()
		p.differ = d
		dst, err := p.Append(nil, ev)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if dst, err = p.Append(dst[:0], ev); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(len(dst)))
	})
}

// BenchmarkPrettyLineWithDiff is a pretty line with its change lines, diff cached.
func BenchmarkPrettyLineWithDiff(b *testing.B) {
	p, ev := newBenchPrinter(b, FormatPretty), eventtest.RolledPodEvent()
	p.differ = diff.NewDiffer(nil)
	dst, err := p.Append(nil, ev)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if dst, err = p.Append(dst[:0], ev); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(dst)))
}

// BenchmarkYAMLDocument is a YAML document for a sink: the object's JSON is cached on
// the event (as for every sink but the first), so this is the conversion to YAML and
// its encoding.
func BenchmarkYAMLDocument(b *testing.B) {
	p := newBenchPrinter(b, FormatYAML)
	ev := &event.Event{Type: event.Modified, Time: eventtest.T0, Seq: 42, Resource: eventtest.Pods, Kind: "Pod", Object: eventtest.RealisticPod()}
	dst, err := p.Append(nil, ev)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if dst, err = p.Append(dst[:0], ev); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(dst)))
}

// BenchmarkYAMLDocumentWithDiff is a YAML document with its "diff" and "old", diff
// cached.
func BenchmarkYAMLDocumentWithDiff(b *testing.B) {
	p, ev := newBenchPrinter(b, FormatYAML), eventtest.RolledPodEvent()
	p.differ, p.showOld = diff.NewDiffer(nil), true
	dst, err := p.Append(nil, ev)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if dst, err = p.Append(dst[:0], ev); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(dst)))
}
