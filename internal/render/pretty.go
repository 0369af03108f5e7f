package render

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fatih/color"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubeevents/kubeevents/internal/informer"
)

// terminating is shown instead of MODIFIED once an object has a deletionTimestamp: the
// change that matters to the reader is that the object is going away.
const terminating = "TERMINATING"

const (
	typeColumnWidth  = len(terminating)
	nameColumnWidth  = 40
	phaseColumnWidth = len(corev1.PodSucceeded)
	columnGap        = "  "
	// spaces is long enough for any padding: columns are at most nameColumnWidth wide.
	spaces = "                                                  "
)

const (
	clockLayout     = "15:04:05"
	timestampLayout = "2006-01-02T15:04:05.000Z07:00"
)

// newTypeLabels builds the type column for every known type: the type, coloured if
// enabled, padded to the column width plus the gap to the next column. The colours are
// switched on each color.Color instance so the package-global NoColor, which reflects
// stdout only, never decides for a stream it does not describe.
func newTypeLabels(enabled bool) map[string]string {
	styles := map[string]*color.Color{
		string(informer.Added):    color.New(color.FgGreen),
		string(informer.Modified): color.New(color.FgYellow),
		string(informer.Deleted):  color.New(color.FgRed),
		string(informer.Sync):     color.New(color.Faint),
		terminating:               color.New(color.FgRed),
		relatedEvent:              color.New(color.FgCyan),
		relatedWarning:            color.New(color.FgRed, color.Bold),
	}
	labels := make(map[string]string, len(styles))
	for label, style := range styles {
		if enabled {
			style.EnableColor()
		} else {
			style.DisableColor()
		}
		labels[label] = style.Sprint(label) + spaces[:typeColumnWidth-len(label)] + columnGap
	}
	return labels
}

// appendLine renders ev in the pretty or wide format, with its changes below when
// diffs are on:
//
//	15:04:05  ADDED        default/web-7d9f8-abc12                 Pending   0/1  restarts 0  node -
//	15:04:07  MODIFIED     default/web-7d9f8-abc12                 Running   1/1  restarts 0  node worker-1
//	          ~ status.phase: Pending → Running
func (p *Printer) appendLine(dst []byte, ev *informer.Event) ([]byte, error) {
	m, err := eventMeta(ev)
	if err != nil {
		return dst, err
	}
	layout := clockLayout
	if p.timestamps {
		layout = timestampLayout
	}
	lineStart := len(dst)
	dst = ev.Time.In(p.location).AppendFormat(dst, layout)
	dst = append(dst, columnGap...)
	timeColumnWidth := len(dst) - lineStart // times are ASCII

	if related, ok := ev.Object.(*corev1.Event); ok && ev.Related {
		return p.appendRelatedEvent(dst, related), nil
	}
	label := string(ev.Type)
	isTerminating := ev.Type == informer.Modified && m.GetDeletionTimestamp() != nil
	if isTerminating {
		label = terminating
	}
	if column, ok := p.typeLabels[label]; ok {
		dst = append(dst, column...)
	} else {
		start := len(dst)
		dst = appendEscaped(dst, label)
		dst = padColumn(dst, start, typeColumnWidth+len(columnGap))
	}

	start := len(dst)
	if p.showKind {
		dst = append(dst, p.kindPrefix(ev)...)
		dst = append(dst, '/')
	}
	if ns := m.GetNamespace(); ns != "" {
		dst = appendEscaped(dst, ns)
		dst = append(dst, '/')
	}
	dst = appendEscaped(dst, m.GetName())
	dst = padColumn(dst, start, nameColumnWidth)

	dst = p.appendSummary(dst, ev, m, isTerminating)
	dst = append(dst, '\n')
	if p.differ.diffs(ev) {
		return p.appendChanges(dst, ev, timeColumnWidth)
	}
	return dst, nil
}

// Labels of core Events interleaved with --with-events, in place of the event type.
const (
	relatedEvent   = "EVENT"
	relatedWarning = "WARNING"
)

// appendRelatedEvent renders a core Event about a watched object (--with-events) as a
// line of its own, marked EVENT, or WARNING for Warning events, and naming the object it
// is about rather than the Event itself:
//
//	15:04:09  WARNING      pod/default/web-1                       BackOff: Back-off restarting failed container (x3)
func (p *Printer) appendRelatedEvent(dst []byte, ev *corev1.Event) []byte {
	label := relatedEvent
	if ev.Type == corev1.EventTypeWarning {
		label = relatedWarning
	}
	dst = append(dst, p.typeLabels[label]...)
	start := len(dst)
	obj := ev.InvolvedObject
	dst = appendEscaped(dst, strings.ToLower(obj.Kind))
	dst = append(dst, '/')
	if obj.Namespace != "" {
		dst = appendEscaped(dst, obj.Namespace)
		dst = append(dst, '/')
	}
	dst = appendEscaped(dst, obj.Name)
	dst = padColumn(dst, start, nameColumnWidth)
	dst = appendEscaped(dst, ev.Reason)
	dst = append(dst, ": "...)
	dst = appendEscaped(dst, shortenMiddle(ev.Message, 120))
	if ev.Count > 1 {
		dst = append(dst, " (x"...)
		dst = strconv.AppendInt(dst, int64(ev.Count), 10)
		dst = append(dst, ')')
	}
	return append(dst, '\n')
}

// appendSummary appends the columns after the name: what the kind's status says at a
// glance, then how the object's life ends, then wide-only details.
func (p *Printer) appendSummary(dst []byte, ev *informer.Event, m metav1.Object, isTerminating bool) []byte {
	wide := p.format == FormatWide
	deleted := ev.Type == informer.Deleted
	start := len(dst)
	switch o := ev.Object.(type) {
	case *corev1.Pod:
		dst = appendPodStatus(dst, o, wide)
		if isTerminating && o.DeletionGracePeriodSeconds != nil {
			dst = append(dst, columnGap+"grace "...)
			dst = strconv.AppendInt(dst, *o.DeletionGracePeriodSeconds, 10)
			dst = append(dst, 's')
		}
	case *appsv1.Deployment:
		dst = appendReplicas(dst, o.Status.ReadyReplicas, replicasOrOne(o.Spec.Replicas))
		dst = appendCount(dst, "updated", o.Status.UpdatedReplicas)
		dst = appendCount(dst, "available", o.Status.AvailableReplicas)
	case *appsv1.StatefulSet:
		dst = appendReplicas(dst, o.Status.ReadyReplicas, replicasOrOne(o.Spec.Replicas))
		dst = appendCount(dst, "updated", o.Status.UpdatedReplicas)
		dst = appendCount(dst, "available", o.Status.AvailableReplicas)
	case *appsv1.DaemonSet:
		dst = appendReplicas(dst, o.Status.NumberReady, o.Status.DesiredNumberScheduled)
		dst = appendCount(dst, "updated", o.Status.UpdatedNumberScheduled)
		dst = appendCount(dst, "available", o.Status.NumberAvailable)
	case *appsv1.ReplicaSet:
		dst = appendReplicas(dst, o.Status.ReadyReplicas, replicasOrOne(o.Spec.Replicas))
		dst = appendCount(dst, "available", o.Status.AvailableReplicas)
	case *corev1.ConfigMap:
		keys := len(o.Data) + len(o.BinaryData)
		dst = strconv.AppendInt(append(dst, "data "...), int64(keys), 10)
		if keys == 1 {
			dst = append(dst, " key"...)
		} else {
			dst = append(dst, " keys"...)
		}
	case *corev1.Namespace:
		dst = appendOrDash(dst, string(o.Status.Phase))
	default:
		// For a deleted object its age is how long it lived, printed below.
		if !deleted {
			dst = appendAge(append(dst, "age "...), ev.Time, m.GetCreationTimestamp())
		}
	}
	if deleted {
		if len(dst) > start {
			dst = append(dst, columnGap...)
		}
		if ev.Reason == informer.ReasonSelector {
			// Still alive: how long it lived would be wrong, and DELETED alone misleading.
			dst = append(dst, "no longer matches the selector"...)
		} else {
			dst = appendAge(append(dst, "lived "...), ev.Time, m.GetCreationTimestamp())
		}
		if ev.FinalStateUnknown {
			dst = append(dst, columnGap+"(final state unknown)"...)
		}
	}
	if wide {
		dst = append(dst, columnGap+"rv "...)
		dst = appendOrDash(dst, m.GetResourceVersion())
	}
	return dst
}

// appendPodStatus appends phase, ready/total containers, restarts and node (and the pod
// IP when wide), the columns of `kubectl get pods -o wide` that change during a rollout.
func appendPodStatus(dst []byte, pod *corev1.Pod, wide bool) []byte {
	start := len(dst)
	dst = appendOrDash(dst, string(pod.Status.Phase))
	dst = padColumn(dst, start, phaseColumnWidth)
	dst = append(dst, ' ')

	var ready, restarts int64
	for i := range pod.Status.ContainerStatuses {
		status := &pod.Status.ContainerStatuses[i]
		if status.Ready {
			ready++
		}
		restarts += int64(status.RestartCount)
	}
	dst = strconv.AppendInt(dst, ready, 10)
	dst = append(dst, '/')
	dst = strconv.AppendInt(dst, int64(len(pod.Spec.Containers)), 10)
	dst = appendCount(dst, "restarts", int32(restarts))
	dst = append(dst, columnGap+"node "...)
	dst = appendOrDash(dst, pod.Spec.NodeName)
	if wide {
		dst = append(dst, columnGap+"ip "...)
		dst = appendOrDash(dst, pod.Status.PodIP)
	}
	return dst
}

// appendReplicas appends "ready R/D".
func appendReplicas(dst []byte, ready, desired int32) []byte {
	dst = strconv.AppendInt(append(dst, "ready "...), int64(ready), 10)
	dst = append(dst, '/')
	return strconv.AppendInt(dst, int64(desired), 10)
}

// appendCount appends a further column "name N".
func appendCount(dst []byte, name string, n int32) []byte {
	dst = append(dst, columnGap...)
	dst = append(dst, name...)
	dst = append(dst, ' ')
	return strconv.AppendInt(dst, int64(n), 10)
}

// replicasOrOne is spec.replicas, which the API server defaults to 1 when unset.
func replicasOrOne(replicas *int32) int32 {
	if replicas == nil {
		return 1
	}
	return *replicas
}

// appendAge appends the time from created to now in kubectl's AGE style ("3m12s"), or
// "-" if the object has no creation time.
func appendAge(dst []byte, now time.Time, created metav1.Time) []byte {
	if created.IsZero() {
		return append(dst, '-')
	}
	return append(dst, duration.HumanDuration(now.Sub(created.Time))...)
}

// appendOrDash appends s escaped, or "-" for an empty value so columns never vanish.
func appendOrDash(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, '-')
	}
	return appendEscaped(dst, s)
}

// padColumn pads the text written since start with spaces to width runes, and always
// adds at least one space so an overlong value is never glued to the next column;
// values are never truncated.
func padColumn(dst []byte, start, width int) []byte {
	n := width - utf8.RuneCount(dst[start:])
	if n < 1 {
		n = 1
	}
	return append(dst, spaces[:n]...)
}

// eventMeta is ev's object metadata; informers always deliver objects that have it.
func eventMeta(ev *informer.Event) (metav1.Object, error) {
	if m := ev.Meta(); m != nil {
		return m, nil
	}
	return nil, fmt.Errorf("%s event for a %s has no object metadata", ev.Type, ev.Kind)
}
