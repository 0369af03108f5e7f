package cmd

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/render"
)

// TestHeadersAgainAfterResync: the terminal's header line is printed again after a
// "re-synced" notice, and not after other notices.
func TestHeadersAgainAfterResync(t *testing.T) {
	p, err := render.NewPrinter(render.Options{Headers: true, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	h := &headerPrinters{}
	h.add(p)
	ev := &event.Event{Type: event.Added, Time: time.Now(), Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Kind: "ConfigMap", Object: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default"}}}
	headers := func() int {
		out, err := p.Append(nil, ev)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(out), "TIME")
	}
	if n := headers(); n != 1 {
		t.Fatalf("first line: %d header lines, want 1", n)
	}
	h.warned("watch of %s lost (%s); retrying…")
	if n := headers(); n != 0 {
		t.Errorf("after a lost notice: %d header lines, want 0", n)
	}
	h.warned("re-synced %s %s (%d changed, %d created, %d deleted while disconnected)")
	if n := headers(); n != 1 {
		t.Errorf("after a re-sync notice: %d header lines, want 1", n)
	}
	var none *headerPrinters
	none.warned("re-synced %s") // a run without a terminal sink: nothing to do, no panic
}
