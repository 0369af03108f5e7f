package render

import (
	"github.com/fatih/color"
	"go.yaml.in/yaml/v3"

	"github.com/kubeevents/kubeevents/internal/escape"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jsonw"
)

// An object's health (package health), where the run computes it: "health" in JSON and
// YAML, a mark on a pretty line where it changed, wide's HEALTH column.

// appendHealthJSON appends the envelope's health, when the event has one:
//
//	,"health":{"status":"InProgress","message":"Deployment does not have minimum availability.","previous":"Current"}
//
// previous is left out for an object's first event.
func appendHealthJSON(dst []byte, ev *event.Event) []byte {
	h := ev.Health
	if h == nil {
		return dst
	}
	dst = jsonw.AppendJSONField(dst, `,"health":{"status":`, string(h.Status))
	dst = jsonw.AppendJSONField(dst, `,"message":`, h.Message)
	if h.Previous != "" {
		dst = jsonw.AppendJSONField(dst, `,"previous":`, string(h.Previous))
	}
	return append(dst, '}')
}

// healthYAML is appendHealthJSON for -o yaml.
func healthYAML(ev *event.Event) []*yaml.Node {
	h := ev.Health
	if h == nil {
		return nil
	}
	value := mapping(str("status"), str(string(h.Status)), str("message"), str(h.Message))
	if h.Previous != "" {
		value.Content = append(value.Content, str("previous"), str(string(h.Previous)))
	}
	return []*yaml.Node{str("health"), value}
}

// healthStyles are the colours of the health marks.
var healthStyles = map[event.HealthStatus][]color.Attribute{
	event.HealthCurrent:     {color.FgGreen},
	event.HealthInProgress:  {color.FgYellow},
	event.HealthFailed:      {color.FgRed, color.Bold},
	event.HealthTerminating: {color.Faint},
	event.HealthUnknown:     {color.Faint},
}

// healthMarks lead the status in pretty lines, as the rollout marks do.
var healthMarks = map[event.HealthStatus]string{
	event.HealthCurrent:     "✓",
	event.HealthInProgress:  "…",
	event.HealthFailed:      "✗",
	event.HealthTerminating: "…",
	event.HealthUnknown:     "?",
}

// appendHealth appends, at the end of a pretty line, the object's health where it
// changed (or was first seen), and always on a STALLED line; not where a rollout's line
// says it already (a workload followed with --owned), nor on a DELETED line:
//
//	✗ Failed: ProgressDeadlineExceeded: ReplicaSet "web-5d9f" has timed out progressing.
func (p *Printer) appendHealth(dst []byte, ev *event.Event) []byte {
	h := ev.Health
	if h == nil || ev.Rollout != nil || h.Status == event.HealthNotFound || !h.Changed() && ev.Type != event.Stalled {
		return dst
	}
	text := append([]byte(healthMarks[h.Status]+" "), h.Status...)
	if h.Message != "" && h.Status != event.HealthCurrent && h.Status != event.HealthTerminating {
		text = escape.Append(append(text, ": "...), h.Message)
	}
	dst = append(dst, columnGap...)
	return append(dst, paint(p.color, string(text), healthStyles[h.Status]...)...)
}
