package event

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubeevents/kubeevents/internal/wire"
)

// An unstructured object's generic form has json.Number where it held int64, and the
// cached object itself is left as it was.
func TestUnstructuredValueNormalised(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "generation": int64(3)},
		"spec":     map[string]any{"sizes": []any{int64(1), 2.5, "x", true, nil}},
	}}
	ev := &Event{Type: Added, Object: u}
	v, err := ev.ObjectValue(nil)
	if err != nil {
		t.Fatal(err)
	}
	var fromJSON any
	raw, _ := ev.ObjectJSON()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&fromJSON); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v, fromJSON) {
		t.Errorf("normalised value %#v differs from the decoded JSON %#v", v, fromJSON)
	}
	if _, still := u.Object["metadata"].(map[string]any)["generation"].(int64); !still {
		t.Error("the cached object was modified")
	}
}

// An event's object is recorded for the next version unless nothing can follow it
// (DELETED), or nothing will share its memory (listed objects, core Events).
func TestEventRecordsOnlyWatchedVersions(t *testing.T) {
	for _, c := range []struct {
		name          string
		typ           EventType
		initial, core bool
		want          wire.Update
	}{
		{"modified", Modified, false, false, wire.RecordVersion},
		{"added while watching", Added, false, false, wire.RecordVersion},
		{"listed", Added, true, false, wire.KeepVersions},
		{"core event", Added, false, true, wire.KeepVersions},
		{"deleted", Deleted, false, false, wire.ForgetObject},
	} {
		ev := &Event{Type: c.typ, InInitialList: c.initial, Related: c.core}
		if got := ev.objectUpdate(); got != c.want {
			t.Errorf("%s: update %d, want %d", c.name, got, c.want)
		}
	}
}
