package jq

import (
	"encoding/json"

	"github.com/itchyny/gojq"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubeevents/kubeevents/internal/owners"
)

// kubeevents' own jq functions, which every expression may use (--jq, --until, jq sinks,
// transitions, formats):
//
//	rollout_status   where the input object's rollout stands, by kubectl rollout
//	                 status's rules (package owners): {"state": "progressing" |
//	                 "complete" | "failed", "message": kubectl's words}, or null for an
//	                 object without a rollout (not a Deployment, StatefulSet, DaemonSet or
//	                 Job) and for null. E.g. (.object | rollout_status.state) == "failed".
var withFunctions = gojq.WithFunction("rollout_status", 0, 0, rolloutStatus)

// rolloutStatus is rollout_status: the rules are those of package owners, on the typed
// object decoded from the input's JSON (workloads are few and small).
func rolloutStatus(v any, _ []any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	if !owners.HasRollout(gvk.GroupKind()) {
		return nil
	}
	obj, err := scheme.Scheme.New(gvk)
	if err != nil {
		return nil // a version the scheme does not know
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, obj); err != nil {
		return err
	}
	r := owners.Rollout(obj)
	if r == nil {
		return nil
	}
	return map[string]any{"state": string(r.State), "message": r.Message}
}
