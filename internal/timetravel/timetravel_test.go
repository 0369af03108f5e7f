package timetravel

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/replay"
	"github.com/kubeevents/kubeevents/internal/store"
)

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

func TestParseTime(t *testing.T) {
	for in, want := range map[string]time.Time{
		"2026-11-23T09:00:00Z":      t0.Add(-time.Hour),
		"2026-11-23T10:00:00+01:00": t0.Add(-time.Hour),
		"10m":                       t0.Add(-10 * time.Minute),
		"2h ago":                    t0.Add(-2 * time.Hour),
		"1h30m ago":                 t0.Add(-90 * time.Minute),
	} {
		got, err := ParseTime("--at", in, t0)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"yesterday", "-5m", "5 minutes ago", ""} {
		if _, err := ParseTime("--at", in, t0); err == nil || !strings.Contains(err.Error(), `--at "`+in+`": give an RFC 3339 time`) {
			t.Errorf("ParseTime(%q): %v", in, err)
		}
	}
}

// line is an event of an object at t0+seconds.
func line(typ string, seconds int, group, version, resource, object string) string {
	return fmt.Sprintf(`{"type":%q,"time":%q,"seq":%d,"resource":{"group":%q,"version":%q,"resource":%q},"object":%s}`,
		typ, t0.Add(time.Duration(seconds)*time.Second).Format(time.RFC3339Nano), seconds+1, group, version, resource, object)
}

const crd = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com","uid":"crd","resourceVersion":"1","creationTimestamp":"2026-11-23T09:00:00Z"},` +
	`"spec":{"group":"example.com","names":{"kind":"Widget","plural":"widgets"},"scope":"Namespaced","versions":[{"name":"v1","served":true,"storage":true,` +
	`"additionalPrinterColumns":[{"name":"Size","type":"integer","jsonPath":".spec.size"},{"name":"Color","type":"string","jsonPath":".spec.color","priority":1}]}]}}`

func widget(name string, size int) string {
	return fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":%q,"namespace":"shop","uid":"w-%s","resourceVersion":"%d","creationTimestamp":"2026-11-23T09:59:00Z","labels":{"tier":"web"}},"spec":{"size":%d,"color":"blue"}}`,
		name, name, 10+size, size)
}

func configMap(name, mode string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"shop","uid":"cm-%s","resourceVersion":"5","creationTimestamp":"2026-11-23T09:00:00Z"},"data":{"mode":%q}}`,
		name, name, mode)
}

// TestGet: a custom resource's columns come from its CRD as stored, AGE is as of the
// time asked, objects deleted since are there, and the other formats are kubectl's.
func TestGet(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	w, err := store.Create(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{
		line("ADDED", 0, "apiextensions.k8s.io", "v1", "customresourcedefinitions", crd),
		line("ADDED", 0, "example.com", "v1", "widgets", widget("a", 1)),
		line("ADDED", 1, "example.com", "v1", "widgets", widget("b", 2)),
		line("MODIFIED", 5, "example.com", "v1", "widgets", widget("a", 3)),
		line("DELETED", 60, "example.com", "v1", "widgets", widget("b", 2)),
		line("ADDED", 0, "", "v1", "configmaps", configMap("settings", "fast")),
	} {
		if err := w.Write(ctx, []byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	get := func(at time.Duration, output string, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		cfg := GetConfig{Store: path, Types: strings.Split(args[0], ","), Names: args[1:], At: t0.Add(at), Namespace: "shop", Output: output, Out: &out, ErrOut: &errOut}
		if err := Get(ctx, cfg); err != nil {
			t.Fatalf("get %v -o %s: %v", args, output, err)
		}
		return out.String() + errOut.String()
	}
	for _, c := range []struct {
		at     time.Duration
		output string
		args   []string
		want   string
	}{
		{10 * time.Second, "", []string{"widgets"}, "NAME   SIZE\na      3\nb      2\n"},
		{10 * time.Second, "wide", []string{"widget"}, "NAME   SIZE   COLOR\na      3      blue\nb      2      blue\n"},
		{2 * time.Minute, "", []string{"Widget"}, "NAME   SIZE\na      3\n"},
		{2 * time.Second, "", []string{"widgets.example.com", "a"}, "NAME   SIZE\na      1\n"},
		{10 * time.Second, "", []string{"cm,widgets"}, "NAME                 DATA   AGE\nconfigmap/settings   1      60m\n\nNAME                   SIZE\nwidget.example.com/a   3\nwidget.example.com/b   2\n"},
		{10 * time.Second, "name", []string{"cm,widgets"}, "configmap/settings\nwidget.example.com/a\nwidget.example.com/b\n"},
		{10 * time.Second, "jsonpath={.items[*].spec.size}", []string{"widgets"}, "3 2"},
		{10 * time.Second, "jsonpath={.data.mode}", []string{"cm", "settings"}, "fast"},
		{-time.Minute, "", []string{"widgets"}, "No resources found in shop namespace at "},
	} {
		if got := get(c.at, c.output, c.args...); !strings.HasPrefix(got, c.want) {
			t.Errorf("get %v -o %q at %s:\n%s\nwant\n%s", c.args, c.output, c.at, got, c.want)
		}
	}
	if js := get(10*time.Second, "json", "cm", "settings"); !strings.HasPrefix(js, "{\n    \"apiVersion\": \"v1\",\n    \"data\": {") {
		t.Errorf("get cm settings -o json, one object by name:\n%s", js)
	}
	if js := get(10*time.Second, "json", "cm"); !strings.Contains(js, `"kind": "List"`) {
		t.Errorf("get cm -o json, a list:\n%s", js)
	}
	err = Get(ctx, GetConfig{Store: path, Types: []string{"widgets"}, Names: []string{"a", "zz"}, At: t0.Add(10 * time.Second), Namespace: "shop", Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	if err == nil || !strings.Contains(err.Error(), `"zz" not found at`) {
		t.Errorf("a name not in the store: %v", err)
	}
}

// TestGetBeforeRetention: a time before what retention kept is said, not hidden.
func TestGetBeforeRetention(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "events.db")
	w, err := store.Create(ctx, path, store.Options{MaxAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for m := range 200 {
		typ := "MODIFIED"
		if m == 0 {
			typ = "ADDED"
		}
		if err := w.Write(ctx, []byte(line(typ, m*60, "", "v1", "configmaps", configMap("settings", fmt.Sprint(m))))); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for at, warned := range map[time.Duration]bool{10 * time.Minute: true, 190 * time.Minute: false} {
		var out, errOut bytes.Buffer
		if err := Get(ctx, GetConfig{Store: path, Types: []string{"cm"}, At: t0.Add(at), Namespace: "shop", Out: &out, ErrOut: &errOut}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(errOut.String(), "from which retention kept every object's state: some may be missing"); got != warned {
			t.Errorf("at %s: warned %v, want %v: %q", at, got, warned, errOut.String())
		}
	}
}

// TestReplayStore: replay --store gives the events a replay of the same recording gives,
// for each selection: the store narrows what it reads, the replay source selects the
// rest as from a file (previous versions before --since, label selections, windows).
func TestReplayStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path, rec := filepath.Join(dir, "events.db"), filepath.Join(dir, "events.jsonl")
	w, err := store.Create(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"shop","uid":"ns","resourceVersion":"2","creationTimestamp":"2026-11-23T09:00:00Z"}}`
	lines := []string{
		line("ADDED", 0, "", "v1", "namespaces", ns),
		line("ADDED", 0, "apiextensions.k8s.io", "v1", "customresourcedefinitions", crd),
		line("ADDED", 1, "example.com", "v1", "widgets", widget("a", 1)),
		line("ADDED", 2, "example.com", "v1", "widgets", widget("b", 2)),
		line("ADDED", 3, "", "v1", "configmaps", configMap("settings", "fast")),
		line("MODIFIED", 5, "example.com", "v1", "widgets", widget("a", 3)),
		line("MODIFIED", 6, "", "v1", "configmaps", configMap("settings", "slow")),
		line("MODIFIED", 7, "example.com", "v1", "widgets", strings.Replace(widget("b", 4), `"tier":"web"`, `"tier":"db"`, 1)),
		line("DELETED", 60, "", "v1", "configmaps", configMap("settings", "slow")),
	}
	var file strings.Builder
	for _, l := range lines {
		if err := w.Write(ctx, []byte(l)); err != nil {
			t.Fatal(err)
		}
		file.WriteString(l + "\n")
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rec, []byte(file.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, sel := range []replay.Selection{
		{},
		{Types: []string{"cm"}},
		{Types: []string{"widgets"}, Names: []string{"a"}},
		{Types: []string{"widgets", "namespaces"}, Namespaces: []string{"shop"}},
		{Since: t0.Add(5 * time.Second)},
		{Until: t0.Add(5 * time.Second)},
		{Types: []string{"widgets"}, LabelSelector: "tier=web"},
		{Namespaces: []string{"elsewhere"}},
	} {
		fromFile := replayed(t, replay.Options{Args: []string{rec}, Select: sel, Diffs: true})
		st, err := OpenReplay(ctx, path, sel)
		if err != nil {
			t.Fatalf("%+v: %v", sel, err)
		}
		fromStore := replayed(t, replay.Options{Select: sel, Diffs: true, Records: st.Records(ctx)})
		st.Close()
		if !slices.Equal(fromStore, fromFile) || len(fromFile) == 0 && len(sel.Namespaces) == 0 {
			t.Errorf("%+v:\nfrom the store: %q\nfrom the file:  %q", sel, fromStore, fromFile)
		}
	}
	if _, err := OpenReplay(ctx, path, replay.Selection{Types: []string{"gadgets"}}); err == nil || !strings.Contains(err.Error(), "gadgets: the store "+path+" holds no such type") {
		t.Errorf("a type the store does not hold: %v", err)
	}
}

// replayed runs a replay source and says each event: type, time, kind/name, reason,
// and whether it has the previous version.
func replayed(t *testing.T, opts replay.Options) []string {
	t.Helper()
	src, err := replay.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	err = src.Run(context.Background(), func(ev *event.Event) bool {
		m, _ := meta.Accessor(ev.Object)
		out = append(out, fmt.Sprintf("%s %s %s/%s %s old=%v", ev.Type, ev.Time.Sub(t0), ev.Kind, m.GetName(), ev.Reason, ev.Old != nil))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
