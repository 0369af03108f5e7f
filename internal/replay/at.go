package replay

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/event"
)

// NotRecordedError says the object asked for has no recorded state at the time asked:
// not recorded before it, or deleted by then.
type NotRecordedError struct{ What string }

func (e *NotRecordedError) Error() string { return e.What }

// At writes to w the object opts select (one TYPE and NAME) as it was at t: its last
// version recorded at or before t, as `kubectl get -o yaml` (format "yaml") or `-o json`
// ("json") printed it then. An object deleted by then, or not recorded before then, is
// a *NotRecordedError; a name recorded in several namespaces is a usage error asking
// for -n.
func At(ctx context.Context, opts Options, t time.Time, format string, w io.Writer) error {
	opts.Select.Until = t
	s, err := New(opts)
	if err != nil {
		return err
	}
	s.quiet = true // what was not found is the error
	last := map[objectKey]*event.Event{}
	var keys []objectKey
	err = s.Run(ctx, func(ev *event.Event) bool {
		m := ev.Meta()
		key := objectKey{cluster: ev.Cluster, group: ev.Resource.Group, kind: ev.Kind, namespace: m.GetNamespace(), name: m.GetName()}
		if _, ok := last[key]; !ok {
			keys = append(keys, key)
		}
		last[key] = ev
		return true
	})
	if err != nil {
		return err
	}
	what := opts.Select.Types[0] + "/" + opts.Select.Names[0]
	at := t.Local().Format(time.RFC3339)
	switch {
	case len(keys) == 0:
		return &NotRecordedError{What: fmt.Sprintf("%s: not recorded at or before %s", what, at)}
	case len(keys) > 1:
		var found []Held
		for _, k := range keys {
			found = append(found, Held{Cluster: k.cluster, Namespace: k.namespace})
		}
		if namespaces := Namespaces(found); len(namespaces) > 1 && len(Clusters(found)) < 2 {
			return severalError(what, "namespaces", namespaces, "choose one with -n")
		}
		var where []string
		for _, k := range keys {
			where = append(where, strings.TrimSuffix(k.cluster+"/"+k.namespace, "/"))
		}
		slices.Sort(where)
		return diag.Usagef("%s was recorded in several namespaces or clusters (%s): choose one with -n or --cluster", what, strings.Join(slices.Compact(where), ", "))
	}
	ev := last[keys[0]]
	if ev.Type == event.Deleted && ev.Reason == "" {
		return &NotRecordedError{What: fmt.Sprintf("%s: deleted at %s, before %s", what, ev.Time.Local().Format(time.RFC3339), at)}
	}
	raw, err := ev.ObjectJSON()
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		return err
	}
	var printer printers.ResourcePrinter = &printers.YAMLPrinter{}
	if format == "json" {
		printer = &printers.JSONPrinter{}
	}
	return printer.PrintObj(obj, w)
}
