package diff

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
)

func jsonDiff(t *testing.T, ev *event.Event) []map[string]any {
	t.Helper()
	patch, err := NewDiffer(nil).ChangesJSON(ev)
	if err != nil {
		t.Fatal(err)
	}
	old, err := ev.OldJSON()
	if err != nil {
		t.Fatal(err)
	}
	object, err := ev.ObjectJSON()
	if err != nil {
		t.Fatal(err)
	}
	return eventtest.CheckPatch(t, old, object, patch)
}

// TestKeyedListDiffsRandom changes keyed lists at random (elements inserted anywhere,
// removed, reordered, changed, in a list inside the elements too) and checks that the
// JSON diff is a patch from the old object to the new one and that pretty output names
// exactly the elements added and removed, and never shows a key changing.
func TestKeyedListDiffsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pool := []string{"a", "b", "c", "d", "e", "f", "g"}
	randomList := func(depth int) []any {
		keys := slices.Clone(pool)
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		keys = keys[:rng.IntN(len(keys)+1)]
		slices.Sort(keys[:rng.IntN(len(keys)+1)]) // often partly in order, as in real updates
		list := make([]any, len(keys))
		for i, key := range keys {
			element := map[string]any{"name": key, "value": int64(rng.IntN(2))}
			if depth > 0 {
				element["ports"] = []any{} // replaced below
			}
			list[i] = element
		}
		return list
	}
	object := func(items []any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1alpha1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": "default", "resourceVersion": "1"},
			"spec":     map[string]any{"items": items},
		}}
	}
	withInner := func(list []any) []any {
		for _, element := range list {
			element.(map[string]any)["ports"] = randomList(0)
		}
		return list
	}
	keysOf := func(list []any) map[string]bool {
		keys := map[string]bool{}
		for _, element := range list {
			keys[element.(map[string]any)["name"].(string)] = true
		}
		return keys
	}
	for round := range 300 {
		oldItems, newItems := withInner(randomList(1)), withInner(randomList(1))
		ev := func() *event.Event {
			return eventtest.Modified(uint64(round+1), eventtest.Widgets, "Widget", object(oldItems), object(newItems))
		}
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			jsonDiff(t, ev())
			// The paths pretty output shows, all of them (it shows the first 20).
			changes, paths, err := NewDiffer(nil).ReadableChanges(ev())
			if err != nil {
				t.Fatal(err)
			}
			heads := make([]string, len(changes))
			for i, change := range changes {
				heads[i] = map[string]string{OpAdd: "+ ", OpRemove: "- "}[change.Op] + paths[i]
			}
			var added, removed []string
			for _, head := range heads {
				if strings.HasSuffix(head, ".name") {
					t.Errorf("a key changes: %s", head)
				}
				if strings.HasPrefix(head, "+ spec.items[") && !strings.Contains(head, "].") {
					added = append(added, strings.TrimSuffix(strings.TrimPrefix(head, "+ spec.items["), "]"))
				}
				if strings.HasPrefix(head, "- spec.items[") && !strings.Contains(head, "].") {
					removed = append(removed, strings.TrimSuffix(strings.TrimPrefix(head, "- spec.items["), "]"))
				}
			}
			oldKeys, newKeys := keysOf(oldItems), keysOf(newItems)
			var wantAdded, wantRemoved []string
			for _, element := range newItems {
				if key := element.(map[string]any)["name"].(string); !oldKeys[key] {
					wantAdded = append(wantAdded, key)
				}
			}
			for _, element := range oldItems {
				if key := element.(map[string]any)["name"].(string); !newKeys[key] {
					wantRemoved = append(wantRemoved, key)
				}
			}
			if len(oldItems) == 0 || len(newItems) == 0 {
				return // the list itself is added or emptied: one change for it
			}
			if !slices.Equal(added, wantAdded) || !slices.Equal(removed, wantRemoved) {
				t.Errorf("pretty diff adds %q and removes %q, want %q and %q\n%s", added, removed, wantAdded, wantRemoved,
					strings.Join(heads, "\n"))
			}
		})
	}
}

// TestKeyedListInPlaceKeepsFastPath: an element changed in place, or elements appended
// or removed at the end, need no alignment by key (the common case stays as fast as it
// was), and a list whose keys are not unique is compared by index.
func TestKeyedListInPlaceKeepsFastPath(t *testing.T) {
	ev := eventtest.RolledPodEvent()
	old, object, err := comparedParts(ev, true)
	if err != nil {
		t.Fatal(err)
	}
	d := NewDiffer(nil)
	patch, err := d.compare(old, object)
	if err != nil {
		t.Fatal(err)
	}
	if mayMisalignKeyedList(patch) {
		t.Errorf("a pod whose container status and condition changed in place is aligned by key: %v", patch)
	}
	for _, tc := range []struct {
		old, object []any
		key         string
	}{
		{[]any{map[string]any{"name": "a"}}, []any{map[string]any{"name": "b"}, map[string]any{"name": "a"}}, "name"},
		{[]any{map[string]any{"type": "Ready"}}, []any{map[string]any{"type": "Ready"}}, "type"},
		{[]any{map[string]any{"name": "a"}, map[string]any{"name": "a"}}, []any{map[string]any{"name": "a"}}, ""},
		{[]any{map[string]any{"name": ""}}, []any{map[string]any{"name": "a"}}, ""},
		{[]any{"a"}, []any{"a"}, ""},
	} {
		if got := listKeyField(tc.old, tc.object); got != tc.key {
			t.Errorf("listKeyField(%v, %v) = %q, want %q", tc.old, tc.object, got, tc.key)
		}
	}
}

// TestKeyedListIgnoredElements: an ignore path on the elements of a keyed list keeps
// that list compared by index, as the ignore is written.
func TestKeyedListIgnoredElements(t *testing.T) {
	d := NewDiffer(mustParseIgnores(t, "spec.list.*", "status.conditions.*.lastHeartbeatTime"))
	for pointer, want := range map[string]bool{
		"/spec/list":         true,
		"/spec/list/0/more":  true, // under an ignored element
		"/spec/other":        false,
		"/status/conditions": false,
	} {
		if got := d.ignoresListElements(pointer); got != want {
			t.Errorf("ignoresListElements(%q) = %v, want %v", pointer, got, want)
		}
	}
}
