package render

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
	"github.com/kubeevents/kubeevents/internal/jq"
)

// A DELETED event for an object that only left the selector keeps its type and says why
// in every format: "reason" last in the envelope, words instead of "lived" in pretty.
func TestSelectorReason(t *testing.T) {
	left := func() *event.Event {
		return &event.Event{Type: event.Deleted, Time: eventtest.T0.Add(time.Minute), Seq: 7, Resource: eventtest.Pods, Kind: "Pod",
			Object: eventtest.WebPod(corev1.PodRunning, true, "node-1", "42"), Reason: event.ReasonSelector}
	}
	for _, tc := range []struct {
		format Format
		want   string
	}{
		{FormatJSON, `,"reason":"selector"}`},
		{FormatYAML, "\nreason: selector\n"},
		{FormatPretty, "no longer matches the selector"},
		{FormatName, "DELETED pod/web-7d9f8-abc12"},
	} {
		out := string(render(t, Options{Format: tc.format, Location: time.UTC}, []*event.Event{left()}))
		if !strings.Contains(out, tc.want) || strings.Contains(out, "lived") {
			t.Errorf("%s: %q, want it to contain %q (and no lifetime)", tc.format, out, tc.want)
		}
	}
	envelope, err := jq.EnvelopeValue(left(), nil, false)
	if err != nil || envelope["reason"] != "selector" || envelope["type"] != "DELETED" {
		t.Errorf("jq input: reason %v, type %v (%v)", envelope["reason"], envelope["type"], err)
	}
}
