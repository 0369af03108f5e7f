package render

import (
	"fmt"
	"strconv"
	"time"

	"github.com/kubeevents/kubeevents/internal/attribution"
	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jsonw"
)

// AppendEnvelopeWithDiff appends ev as one compact JSON object, without a trailing
// newline:
//
//	{"type":"ADDED","time":"<RFC 3339, UTC>","seq":42,"resource":{"group":"","version":"v1","resource":"pods"},"object":{...},"finalStateUnknown":true}
//
// seq is left out for SYNC events (which have none), cluster unless several clusters are
// watched (the kubeconfig context the event came through), finalStateUnknown unless true, and
// reason unless the event has one ("selector": a DELETED object that still exists but no
// longer matches the selectors, written last). After seq and cluster come "on", the
// transitions that happened (--on, a sink's on=), and "unfolded", the seq a folded event
// had, for one a failed rollout unfolded (--fold-rollouts); after the owners and rollout,
// the object's "health" (package health, when the run computes it), then a ROLLOUT
// line's "folded", how many events it stands for (see signal.go).
// The object is copied from ev.ObjectJSON, so it is encoded once however many sinks
// write it. On error dst is returned unchanged. After "object" come the previous object
// as "old" (if showOld, for MODIFIED and SYNC events) and the changes as "diff" (if d is
// not nil, for MODIFIED events):
//
//	"old":{...},"diff":[{"op":"replace","path":"/spec/replicas","value":3,"old":1},{"op":"add","path":"/metadata/labels/tier","value":"web"},{"op":"remove","path":"/metadata/annotations/note","old":"x"}]
//
// Every MODIFIED event has "diff", empty if only ignored paths changed. An add or
// replace has "value", a remove or replace "old", a move "from"; numbers are
// written as they are in the object. Both are copied from per-event caches, so they are
// encoded once however many sinks write them.
func AppendEnvelopeWithDiff(dst []byte, ev *event.Event, d *diff.Differ, showOld bool) ([]byte, error) {
	object, err := ev.ObjectJSON()
	if err != nil {
		return dst, fmt.Errorf("encoding %s %q as JSON: %w", ev.Kind, ev.Key(), err)
	}
	var old []byte
	if showOld && ev.HasOld() {
		if old, err = ev.OldJSON(); err != nil {
			return dst, fmt.Errorf("encoding the previous %s %q as JSON: %w", ev.Kind, ev.Key(), err)
		}
	}
	changes, by, err := attributedChanges(ev, d)
	if err != nil {
		return dst, err
	}
	dst = jsonw.AppendJSONField(dst, `{"type":`, string(ev.Type))
	dst = append(dst, `,"time":"`...)
	dst = ev.Time.UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, '"')
	if ev.Seq != 0 {
		dst = append(dst, `,"seq":`...)
		dst = strconv.AppendUint(dst, ev.Seq, 10)
	}
	if ev.Cluster != "" {
		dst = jsonw.AppendJSONField(dst, `,"cluster":`, ev.Cluster)
	}
	dst = appendOnJSON(dst, ev)
	dst = jsonw.AppendJSONField(dst, `,"resource":{"group":`, ev.Resource.Group)
	dst = jsonw.AppendJSONField(dst, `,"version":`, ev.Resource.Version)
	dst = jsonw.AppendJSONField(dst, `,"resource":`, ev.Resource.Resource)
	dst = append(dst, '}')
	dst = appendOwnersJSON(dst, ev)
	dst = appendHealthJSON(dst, ev)
	dst = appendFoldedJSON(dst, ev)
	dst = append(dst, `,"object":`...)
	dst = append(dst, object...)
	if old != nil {
		dst = append(dst, `,"old":`...)
		dst = append(dst, old...)
	}
	if changes != nil {
		dst = append(dst, `,"diff":`...)
		dst = append(dst, changes...)
	}
	if by != nil && len(by.By) > 0 {
		dst = attribution.AppendJSON(append(dst, `,"by":`...), by.By)
		if by.Ambiguous {
			dst = append(dst, `,"byAmbiguous":true`...)
		}
	}
	if ev.FinalStateUnknown {
		dst = append(dst, `,"finalStateUnknown":true`...)
	}
	if ev.Past {
		dst = append(dst, `,"past":true`...)
	}
	if ev.Reason != "" {
		dst = jsonw.AppendJSONField(dst, `,"reason":`, ev.Reason)
	}
	return append(dst, '}'), nil
}

// attributedChanges are ev's diff as JSON and who made it (nil for nobody): the diff
// d caches, unless the changes were not all made by the same managers, when each change
// has its own "by" (written for each sink: it is rare).
func attributedChanges(ev *event.Event, d *diff.Differ) ([]byte, *attribution.Attribution, error) {
	by := attribution.Of(ev, d)
	if by == nil || !by.Differs() || !d.Diffs(ev) {
		changes, err := d.ChangesJSON(ev)
		return changes, by, err
	}
	changes, err := d.Changes(ev)
	if err != nil {
		return nil, nil, err
	}
	raw, err := diff.AppendChangesJSON(nil, changes, func(dst []byte, i int) []byte {
		if entries := by.ChangeBy(i); len(entries) > 0 {
			dst = attribution.AppendJSON(append(dst, `,"by":`...), entries)
		}
		return dst
	})
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the diff of %s %q as JSON: %w", ev.Kind, ev.Key(), err)
	}
	return raw, by, nil
}
