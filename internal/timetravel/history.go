package timetravel

import (
	"context"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/recording"
	"github.com/kubeevents/kubeevents/internal/replay"
	"github.com/kubeevents/kubeevents/internal/store"
)

// HistoryConfig is `kubeevents history TYPE/NAME --store FILE`.
type HistoryConfig struct {
	Store      string
	Type, Name string
	// Namespaces and Clusters narrow the objects of that name (none: every one).
	Namespaces, Clusters []string
}

// HistorySource opens the store and gives the replay of the object's versions, oldest
// first, for the engine (replay.Options.Records), and closes the store when done.
type HistorySource struct {
	r *store.Reader
	q store.Query
}

// OpenHistory opens the store for the history of one object.
func OpenHistory(ctx context.Context, cfg HistoryConfig) (*HistorySource, error) {
	r, err := openStore(ctx, cfg.Store)
	if err != nil {
		return nil, err
	}
	resources, err := resolveTypes(r, []string{cfg.Type})
	if err != nil {
		r.Close()
		return nil, err
	}
	return &HistorySource{r: r, q: store.Query{Resources: resources, Names: []string{cfg.Name}, Namespaces: cfg.Namespaces, Clusters: cfg.Clusters}}, nil
}

// Records are the object's recorded events, in time order.
func (h *HistorySource) Records(ctx context.Context) iter.Seq2[recording.Record, error] {
	return h.r.Records(ctx, h.q, time.Time{}, time.Time{})
}

// Close closes the store.
func (h *HistorySource) Close() error { return h.r.Close() }

// HistoryAt prints the object as it was at t, as kubectl get -o yaml (or json) printed
// it then. An object deleted by then, or not recorded before, is a
// *replay.NotRecordedError; a name in several namespaces an error asking for -n.
func HistoryAt(ctx context.Context, cfg HistoryConfig, t time.Time, format string, w io.Writer) error {
	h, err := OpenHistory(ctx, cfg)
	if err != nil {
		return err
	}
	defer h.Close()
	what := fmt.Sprintf("%s %s", cfg.Type, cfg.Name)
	at := formatTime(t)
	versions, err := h.r.At(ctx, h.q, t)
	if err != nil {
		return err
	}
	switch len(versions) {
	case 0:
		return &replay.NotRecordedError{What: h.notThere(ctx, what, at, t)}
	case 1:
	default:
		var where []string
		for _, v := range versions {
			where = append(where, strings.TrimPrefix(v.Object.Cluster+"/"+v.Object.Namespace, "/"))
		}
		slices.Sort(where)
		return fmt.Errorf("%s was recorded in several namespaces or clusters (%s): choose one with -n or --cluster", what, strings.Join(slices.Compact(where), ", "))
	}
	rec, err := recording.Parse(versions[0].Line)
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(rec.Object); err != nil {
		return err
	}
	var printer printers.ResourcePrinter = &printers.YAMLPrinter{}
	if format == "json" {
		printer = &printers.JSONPrinter{}
	}
	return printer.PrintObj(obj, w)
}

// notThere says why the object has no state at t: deleted before, or not recorded yet.
func (h *HistorySource) notThere(ctx context.Context, what, at string, t time.Time) string {
	var deleted time.Time
	for v, err := range h.r.Versions(ctx, h.q, time.Time{}, t) {
		if err != nil {
			break
		}
		if v.Type == event.Deleted {
			deleted = v.Time
		}
	}
	if !deleted.IsZero() {
		return fmt.Sprintf("%s: deleted at %s, before %s", what, formatTime(deleted), at)
	}
	return fmt.Sprintf("%s: not recorded at or before %s", what, at)
}
