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

// ShowingOn keeps the transitions a sink names and nothing else of the event changes: the
// copy has every other field, shares the encodings of the objects (made once), and the
// event itself is handed on untouched when it names no other transition.
func TestShowingOn(t *testing.T) {
	ev := &Event{}
	// Every exported field set, so that a field added later and not copied is seen.
	v := reflect.ValueOf(ev).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int, reflect.Int64:
			f.SetInt(7)
		case reflect.Uint64:
			f.SetUint(7)
		case reflect.String:
			f.SetString("x")
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Func:
			f.Set(reflect.MakeFunc(f.Type(), func([]reflect.Value) []reflect.Value { return nil }))
		case reflect.Struct:
			if f.Type().NumField() > 0 && f.Field(0).CanSet() {
				f.Field(0).Set(reflect.ValueOf("x").Convert(f.Field(0).Type()))
			}
		}
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"}}}
	ev.Object, ev.Old, ev.Encoder = u, nil, nil
	ev.Type = Modified
	ev.On = []string{"crashloop", "not-ready", "restarted"}

	if got := ev.ShowingOn([]string{"crashloop", "not-ready", "restarted", "oomkilled"}); got != ev {
		t.Error("a sink that names every transition that happened did not get the event itself")
	}
	view := ev.ShowingOn([]string{"not-ready", "oomkilled"})
	if !reflect.DeepEqual(view.On, []string{"not-ready"}) {
		t.Errorf("On %q, want [not-ready]", view.On)
	}
	if none := ev.ShowingOn(nil); none.On != nil {
		t.Errorf("a sink that names none sees On %q, want nil", none.On)
	}
	if !reflect.DeepEqual(ev.On, []string{"crashloop", "not-ready", "restarted"}) {
		t.Errorf("the event's own On became %q", ev.On)
	}
	vv, ov := reflect.ValueOf(view).Elem(), reflect.ValueOf(ev).Elem()
	for i := range vv.NumField() {
		name := vv.Type().Field(i).Name
		if !vv.Type().Field(i).IsExported() || name == "On" {
			continue
		}
		a, b := vv.Field(i), ov.Field(i)
		if a.Kind() == reflect.Func {
			if a.Pointer() != b.Pointer() {
				t.Errorf("the copy's %s is not the event's", name)
			}
			continue
		}
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			t.Errorf("the copy's %s is %v, the event's %v", name, a.Interface(), b.Interface())
		}
	}
	raw, err := view.ObjectJSON()
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := ev.ObjectJSON()
	if &raw[0] != &orig[0] {
		t.Error("the copy encoded the object again")
	}
	if again := view.ShowingOn(nil); again.shown != ev {
		t.Error("a copy of a copy does not use the event's encodings")
	}
}
