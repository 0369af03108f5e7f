package render

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kubeevents/kubeevents/internal/escape"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/jsonw"
)

// appendOwnersJSON appends the envelope's owner chain and rollout state (watch
// TYPE/NAME --owned), each only when the event has one (the followed object's own
// events have an empty chain):
//
//	,"owners":[{"kind":"Deployment","name":"web"},{"kind":"ReplicaSet","name":"web-5d9f"}],"rollout":{"state":"progressing","message":"..."}
func appendOwnersJSON(dst []byte, ev *event.Event) []byte {
	if ev.Owners != nil {
		dst = append(dst, `,"owners":[`...)
		for i, o := range ev.Owners {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonw.AppendJSONField(dst, `{"kind":`, o.Kind)
			dst = jsonw.AppendJSONField(dst, `,"name":`, o.Name)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if ev.Rollout != nil {
		dst = jsonw.AppendJSONField(dst, `,"rollout":{"state":`, string(ev.Rollout.State))
		dst = jsonw.AppendJSONField(dst, `,"message":`, ev.Rollout.Message)
		dst = append(dst, '}')
	}
	return dst
}

// ownersYAML is appendOwnersJSON for -o yaml: the keys and values to add to the
// envelope's mapping.
func ownersYAML(ev *event.Event) []*yaml.Node {
	var kv []*yaml.Node
	if ev.Owners != nil {
		chain := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, o := range ev.Owners {
			chain.Content = append(chain.Content, mapping(str("kind"), str(o.Kind), str("name"), str(o.Name)))
		}
		kv = append(kv, str("owners"), chain)
	}
	if ev.Rollout != nil {
		kv = append(kv, str("rollout"), mapping(str("state"), str(string(ev.Rollout.State)), str("message"), str(ev.Rollout.Message)))
	}
	return kv
}

// shortKinds are kubectl's short names of the kinds an owner chain usually holds, to keep
// the chain prefix short; other kinds are written in lower case.
var shortKinds = map[string]string{
	"Deployment":            "deploy",
	"ReplicaSet":            "rs",
	"StatefulSet":           "sts",
	"DaemonSet":             "ds",
	"CronJob":               "cj",
	"Service":               "svc",
	"ReplicationController": "rc",
	"Job":                   "job",
	"Pod":                   "pod",
}

// ShortKind is kind's short name in owner chains (deploy, rs, pod), lower case for
// kinds without one; not escaped.
func ShortKind(kind string) string {
	if s, ok := shortKinds[kind]; ok {
		return s
	}
	return strings.ToLower(kind)
}

// ownerSeparator separates the links of an owner chain in pretty output.
const ownerSeparator = " › "

// appendOwnersPrefix appends the owner chain of a followed object before its name, one
// link per owner: "deploy/web › rs/web-5d9f › ". Nothing for the followed object itself.
func appendOwnersPrefix(dst []byte, owners []event.Owner) []byte {
	for _, o := range owners {
		dst = escape.Append(dst, ShortKind(o.Kind))
		dst = append(dst, '/')
		dst = escape.Append(dst, o.Name)
		dst = append(dst, ownerSeparator...)
	}
	return dst
}

// appendRollout appends where an owner's rollout stands after its summary, in kubectl's
// words.
func appendRollout(dst []byte, r *event.Rollout) []byte {
	if r == nil {
		return dst
	}
	return appendRolloutText(append(dst, columnGap...), r)
}

// appendRolloutText appends a rollout's state, as a mark, and its message.
func appendRolloutText(dst []byte, r *event.Rollout) []byte {
	switch r.State {
	case event.RolloutComplete:
		dst = append(dst, "✓ "...)
	case event.RolloutFailed, event.RolloutDeleted:
		dst = append(dst, "✗ "...)
	default:
		dst = append(dst, "… "...)
	}
	return escape.Append(dst, r.Message)
}
