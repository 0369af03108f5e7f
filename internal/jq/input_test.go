package jq

import (
	"slices"
	"strings"
	"testing"

	"github.com/itchyny/gojq"

	"github.com/kubeevents/kubeevents/internal/diff"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/event/eventtest"
	"github.com/kubeevents/kubeevents/internal/generic"
)

// projectionExprs cover every construct readPaths follows and some it gives up on.
var projectionExprs = []string{
	// reads the whole envelope
	".", "keys", "tojson | length", "[paths] | length", "[.. | numbers] | length", "to_entries | map(.key)",
	".object.metadata.name as $n | $n", "reduce (.diff[]?) as $c (0; . + 1)", "def f: .type; f",
	".object |= del(.spec)", "label $out | .type, break $out", "now | type",
	// who made it
	".by[0].manager", "[.by[]? | .subresource]", "select(.byAmbiguous) | .type", "[.diff[]?.by]", "{by, type}",
	// parts
	`select(.type=="DELETED") | .object.metadata.name`, `select(.type=="MODIFIED") | .object.metadata.name`,
	".object.metadata.name", ".object.metadata.labels.app", ".object.metadata.labels", ".object.metadata.labels | keys",
	".object", ".object | keys", ".object.metadata | keys", ".object.kind", ".object.apiVersion",
	".object.spec.containers[0].image", ".object.spec.containers[].image", ".object.spec.containers | length",
	".object.spec.replicas + 1", "-.object.spec.replicas?", ".object.spec.total - 1", ".object.spec.field03",
	".object.metadata.name.x", ".object.metadata.name.x?", "try .object.metadata.name.x catch .", ".type.x",
	".object.metadata.labels.app.x", "try (.object.metadata.labels | .[0]) catch .", ".object.metadata[0]",
	`.object["metadata"]["name"]`, `.object."metadata".name`, ".object[.type]", `.["object"].kind`, `.object["meta\(.type)"]`,
	".object.spec.containers[1:] | length", ".object.spec.containers[.object.spec.replicas // 0]",
	"{name: .object.metadata.name, type}", `{type, "kind": .object.kind}`, "{(.type): .object.metadata.uid}", `{"type"}`,
	"{\"\\(.type)\"}", "[.type, .object.metadata.resourceVersion]",
	`if .type == "DELETED" then .object.metadata.name else .object.status.phase end`,
	`if .object.metadata.deletionTimestamp then "going" end`,
	`if .type == "ADDED" then 1 elif .type == "MODIFIED" then .object.metadata.generation else .object end`,
	`.object.metadata.annotations // "none"`, ".object.metadata.missing // .type", ".object.status // .object.metadata.name",
	".object.status | type", ".object.status.phase | ascii_downcase", `"\(.type) \(.object.metadata.name)"`,
	`@json "x \(.object.metadata.labels)"`, ".object.metadata | tojson", ".object.metadata.name | @base64", ".object | @json",
	".diff | map(.path)", `[.diff[]? | select(.op == "replace") | .old]`, ".old.metadata.resourceVersion", ".old",
	".old.spec.containers[0]", "select(.object.metadata.labels.canary) | .type", `.object | has("status")`,
	".object.metadata | to_entries | map(.key)", ".object.spec | [.. | strings]", "$ENV | length", "env | length",
	`select(.type == "DELETED" or .object.metadata.name == "web")`, ".object.metadata.generation + 1",
	`[.object.metadata.name, .type] | join("/")`, "empty", ".object.metadata.name, .type", ".cluster", ".owners", ".rollout",
	".seq", ".time | length", ".resource.resource", ".resource", ".finalStateUnknown", ".reason",
	`getpath(["object","metadata","name"])`, ".object.metadata.ownerReferences[0].name",
	`.object.status.conditions[]? | select(.type=="Ready") | .status`, "first(.object.status.conditions[]?)",
	".object.metadata.labels | with_entries(.value |= ascii_upcase)", `.object.data.Corefile | split("\n") | length`,
	".object.status.conditions | map(.type)", "select(.object.metadata.name | startswith(\"w\")) | .object.metadata.uid",
	"[.object.metadata.name, .object.metadata.namespace] | @tsv", "(.object.metadata.name | length) > 2",
	"path(.object.metadata.name)", ".object.metadata | .name, .namespace", ".object | .metadata | .labels | .app",
	"select(.object.spec) | .object.spec.nodeName", ".object.spec?.nodeName?", "(.object, .old) | .metadata.resourceVersion",
}

// TestJQProjectionGivesTheSameOutputs is the fence of the jq input projection
// (input.go): every expression gives on Query.Input what it gives on the whole envelope,
// outputs and errors alike, on typed and unstructured objects, with and without "old".
func TestJQProjectionGivesTheSameOutputs(t *testing.T) {
	d := diff.NewDiffer(eventtest.MustParseAll(t, diff.ParseIgnorePath, eventtest.UserIgnores...))
	projected := 0
	for _, showOld := range []bool{false, true} {
		events := append(append(append(eventtest.DiffGoldenEvents(), eventtest.Events()...), eventtest.RolledPodEvent(), jqDeletedPodEvent()),
			eventtest.AttributedEvents()...)
		for _, expr := range projectionExprs {
			q := mustCompile(t, expr)
			if q.reads != nil {
				projected++
			}
			for i, ev := range events {
				envelope, err := EnvelopeValue(ev, d, showOld)
				if err != nil {
					t.Fatal(err)
				}
				input, err := q.Input(ev, d, showOld)
				if err != nil {
					t.Fatal(err)
				}
				if differ := differentRuns(t, q, input, envelope); differ != "" {
					t.Errorf("showOld %v, %s on event %d (%s %s %s), projected and whole:\n%s",
						showOld, expr, i, ev.Type, ev.Kind, ev.Key(), differ)
				}
			}
		}
	}
	if projected/2 < 80 { // 86 of 104 when written
		t.Errorf("only %d of %d expressions were projected: the test no longer exercises the projection", projected/2, len(projectionExprs))
	}
}

// jqDeletedPodEvent is the bench's case: a realistic pod deleted, in an owner chain and a cluster.
func jqDeletedPodEvent() *event.Event {
	pod := eventtest.RealisticPod()
	pod.Kind, pod.APIVersion = "Pod", "v1"
	return &event.Event{Type: event.Deleted, Time: eventtest.T0, Seq: 43, Resource: eventtest.Pods, Kind: "Pod", Object: pod,
		Cluster: "kind-a", Owners: []event.Owner{{Kind: "ReplicaSet", Name: "web-7d4b9c"}, {Kind: "Deployment", Name: "web"}},
		FinalStateUnknown: true, Reason: "gone while disconnected"}
}

// TestJQProjectionReads checks what the analysis finds an expression reads ("" for all
// of it): a change that reads less than it must fails here before it fails above.
func TestJQProjectionReads(t *testing.T) {
	for expr, want := range map[string]string{
		".":   "",
		"now": "", // a function is taken to read its input
		`select(.type=="DELETED") | .object.metadata.name`:       "object.metadata.name type",
		".object.metadata.labels.app":                            "object.metadata.labels.app",
		".object.spec.containers[0].image":                       "object.spec.containers",
		".object | keys":                                         "object",
		".object.metadata.name.x?":                               "object.metadata.name.x",
		"{name: .object.metadata.name, type}":                    "object.metadata.name type",
		".object[.type]":                                         "object type",
		`if .object.metadata.deletionTimestamp then "going" end`: "", // passes the input on
		".object.status // .type":                                "object.status type",
		`"\(.type) \(.object.metadata.name)"`:                    "object.metadata.name type",
		"try .type.x catch .":                                    "type.x",
		".diff | map(.path)":                                     "diff",
		".object.metadata.name as $n | $n":                       "",
		"def f: .type; f":                                        "",
		".object |= del(.spec)":                                  "",
		".object.metadata.name, .object.metadata":                "object.metadata",
		"(.object, .old) | .metadata.name":                       "object.metadata.name old.metadata.name",
	} {
		query, err := gojq.Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := readPathsString(readPaths(query)); got != want {
			t.Errorf("%s reads %q, want %q", expr, got, want)
		}
	}
}

// readPathsString lists the paths read whole, sorted; "" for a nil tree (all).
func readPathsString(t *generic.Part) string {
	var paths []string
	var walk func(t *generic.Part, prefix string)
	walk = func(t *generic.Part, prefix string) {
		if t.Whole || len(t.Keys) == 0 {
			paths = append(paths, strings.TrimPrefix(prefix, "."))
			return
		}
		for key, sub := range t.Keys {
			walk(sub, prefix+"."+key)
		}
	}
	if t != nil {
		walk(t, "")
	}
	slices.Sort(paths)
	return strings.Join(paths, " ")
}
