package timetravel

import (
	"context"
	"iter"
	"time"

	"github.com/kubeevents/kubeevents/internal/recording"
	"github.com/kubeevents/kubeevents/internal/replay"
	"github.com/kubeevents/kubeevents/internal/store"
)

// ReplayStore is `kubeevents replay --store FILE [selection]`: the store's records of
// the objects a selection may show, oldest first, for the replay source
// (replay.Options.Records), which selects from them as from a recording.
type ReplayStore struct {
	r     *store.Reader
	q     store.Query
	until time.Time
}

// untilSlack is how far past Until the records are read, as replay reads a recording
// (the replay source ends the window itself).
const untilSlack = time.Second

// OpenReplay opens the store for a replay of what sel selects. The store's indexes
// narrow the records to the objects sel can show: its types and names (unless --owned
// follows what an object owns, or --with-events adds the core Events about them), its
// namespaces (and the cluster-scoped objects, which -n keeps), its clusters; records
// before Since are read too, for each object's previous version.
func OpenReplay(ctx context.Context, path string, sel replay.Selection) (*ReplayStore, error) {
	r, err := openStore(ctx, path)
	if err != nil {
		return nil, err
	}
	q := store.Query{Clusters: sel.Clusters}
	if len(sel.Types) > 0 && !sel.Owned && !sel.WithEvents {
		if q.Resources, err = resolveTypes(r, sel.Types); err != nil {
			r.Close()
			return nil, err
		}
		if len(q.Resources) == 0 { // "all", of which the store holds nothing
			q.Names = []string{""}
		}
	}
	if len(sel.Names) > 0 && !sel.Owned {
		q.Names = sel.Names
	}
	if len(sel.Namespaces) > 0 {
		q.Namespaces = append(append([]string{}, sel.Namespaces...), "")
	}
	out := &ReplayStore{r: r, q: q}
	if !sel.Until.IsZero() {
		out.until = sel.Until.Add(untilSlack)
	}
	return out, nil
}

// Records are the records selected, in time order.
func (s *ReplayStore) Records(ctx context.Context) iter.Seq2[recording.Record, error] {
	return s.r.Records(ctx, s.q, time.Time{}, s.until)
}

// Close closes the store.
func (s *ReplayStore) Close() error { return s.r.Close() }
