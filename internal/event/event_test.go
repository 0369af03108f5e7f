package event

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	v, err := ev.ObjectValue()
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
		want          Update
	}{
		{"modified", Modified, false, false, RecordVersion},
		{"added while watching", Added, false, false, RecordVersion},
		{"listed", Added, true, false, KeepVersions},
		{"core event", Added, false, true, KeepVersions},
		{"deleted", Deleted, false, false, ForgetObject},
	} {
		ev := &Event{Type: c.typ, InInitialList: c.initial, Related: c.core}
		if got := ev.objectUpdate(); got != c.want {
			t.Errorf("%s: update %d, want %d", c.name, got, c.want)
		}
	}
}

// Memo makes one value per key, shared by every caller, whatever goroutine asks first.
func TestMemo(t *testing.T) {
	type keyA struct{ n int }
	type keyB struct{ n int }
	ev := &Event{Type: Modified}
	var made atomic.Int32
	values := make(chan any, 20)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			var key any = keyA{1}
			if i%2 == 1 {
				key = keyB{1}
			}
			values <- ev.Memo(key, func() any { made.Add(1); return new(int) })
		})
	}
	wg.Wait()
	close(values)
	distinct := map[any]bool{}
	for v := range values {
		distinct[v] = true
	}
	if len(distinct) != 2 || made.Load() != 2 {
		t.Errorf("%d values made, %d distinct, for two keys: want 2 and 2", made.Load(), len(distinct))
	}
	if ev.Memo(keyA{1}, func() any { return nil }) == ev.Memo(keyB{1}, func() any { return nil }) {
		t.Error("keys of two types with equal fields share a value")
	}
}
