package jq

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
)

// selectedTypesExprs are expressions and the event types selectedTypes finds them to
// select ("" where it finds none: they run on every event).
var selectedTypesExprs = map[string]string{
	`select(.type=="DELETED")`:                                            "DELETED",
	`select(.type=="DELETED") | .object.metadata.name`:                    "DELETED",
	`select("ADDED" == .type) | .object | .metadata | .name`:              "ADDED",
	`select(.type == "ADDED" or .type == "DELETED") | .object.kind`:       "ADDED DELETED",
	`select((.type == "MODIFIED")) | .diff`:                               "MODIFIED",
	`(select(.type=="SYNC")) | .seq`:                                      "SYNC",
	`select(.type=="DELETED") | error("gone")`:                            "DELETED",
	`select(.type=="DELETED") as $x | $x.type`:                            "",
	`select(.type=="DELETED"), .type`:                                     "",
	`select(.type!="DELETED")`:                                            "",
	`select(.type=="DELETED" and .object.kind=="Pod")`:                    "",
	`select(.type=="DELETED" or .object.kind=="Pod")`:                     "",
	`select(.type=="\(.object.kind)")`:                                    "",
	`select(.type?=="DELETED")`:                                           "",
	`select(.["type"]=="DELETED")`:                                        "",
	`def select(f): .; select(.type=="DELETED")`:                          "",
	`.type | select(. == "DELETED")`:                                      "",
	`select(.object.type=="DELETED")`:                                     "",
	`select(.type=="DELETED")?`:                                           "",
	`error("x") | select(.type=="DELETED")`:                               "",
	`select(.type=="MODIFIED") | select(.object.metadata.name=="web-0")`:  "MODIFIED",
	`select(.type=="MODIFIED" or (.type=="ADDED")) | .object.metadata.ns`: "ADDED MODIFIED",
}

// An expression that selects event types is skipped on the others (types.go): the
// fence is that running it on an event of a type it does not select gives no output and
// no error, on events of every type. The types found are checked too, so that a change
// that filters less (or more) than written fails here.
func TestSelectedTypesGiveNothingElse(t *testing.T) {
	d := diff.NewDiffer(nil)
	filtered := 0
	for expr, want := range selectedTypesExprs {
		q := mustCompile(t, expr)
		var got []string
		for typ := range q.types {
			got = append(got, typ)
		}
		slices.Sort(got)
		if strings.Join(got, " ") != want {
			t.Errorf("%s: selects %q, want %q", expr, got, want)
		}
		if q.types == nil {
			continue
		}
		filtered++
		for _, base := range append(append(eventtest.DiffGoldenEvents(), eventtest.Events()...), eventtest.RolledPodEvent(), jqDeletedPodEvent()) {
			for _, typ := range []event.EventType{event.Added, event.Modified, event.Deleted, event.Sync, "BOOKMARK", ""} {
				if q.Selects(string(typ)) {
					continue
				}
				ev := &event.Event{Type: typ, Time: base.Time, Seq: base.Seq, Resource: base.Resource, Kind: base.Kind,
					Object: base.Object, Old: base.Old, Cluster: base.Cluster, Owners: base.Owners}
				envelope, err := EnvelopeValue(ev, d, false)
				if err != nil {
					t.Fatal(err)
				}
				if outputs, err := q.Run(t.Context(), envelope); len(outputs) > 0 || err != nil {
					t.Errorf("%s on a %s event: skipped, but it gives %v, %v", expr, typ, outputs, err)
				}
			}
		}
	}
	if filtered < 8 {
		t.Errorf("only %d expressions filtered by type: the test no longer exercises the filter", filtered)
	}
	// And a selected type is run as before.
	if q := mustCompile(t, `select(.type=="DELETED") | .object.metadata.name`); !q.Selects("DELETED") || q.Selects("MODIFIED") {
		t.Error(fmt.Sprint("the benchmark's jq sink is not filtered by type: ", q.types))
	}
}
