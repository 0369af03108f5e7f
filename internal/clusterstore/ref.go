package clusterstore

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Kind is the kind of API object a checkpoint is kept in.
type Kind string

const (
	Secrets    Kind = "secret"    // Secrets: the default to recommend (a checkpoint may hold Secret values with --show-secrets, and the key of redacted values' fingerprints)
	ConfigMaps Kind = "configmap" // ConfigMaps, where the RBAC allows no Secrets
)

// Ref names a checkpoint kept in the cluster: --resume secret:NAME,
// secret:NAMESPACE/NAME, configmap:NAME or configmap:NAMESPACE/NAME. A value of another
// form is a file's path; a file whose name starts with "secret:" or "configmap:" is
// given as ./secret:... .
type Ref struct {
	Kind      Kind
	Namespace string // "" until the caller fills in the default (DefaultNamespace)
	Name      string // the index object's name; its shards are NAME-SLOT-a and NAME-SLOT-b
}

// MaxNameLength leaves room for the shards' suffix ("-4095-a") within an object name's
// 253 characters.
const MaxNameLength = 240

// String is the reference as --resume takes it, with its namespace once known.
func (r Ref) String() string {
	if r.Namespace == "" {
		return string(r.Kind) + ":" + r.Name
	}
	return string(r.Kind) + ":" + r.Namespace + "/" + r.Name
}

// IsRef reports whether value names a checkpoint in the cluster rather than a file: it
// starts with "secret:" or "configmap:".
func IsRef(value string) bool {
	_, ok := kindOf(value)
	return ok
}

func kindOf(value string) (Kind, bool) {
	for _, k := range []Kind{Secrets, ConfigMaps} {
		if strings.HasPrefix(value, string(k)+":") {
			return k, true
		}
	}
	return "", false
}

// ParseRef reads a --resume value that IsRef: ok is false for a file's path. A
// reference with a name or namespace the API server would refuse is an error that says
// which and what form to use.
func ParseRef(value string) (ref Ref, ok bool, err error) {
	kind, ok := kindOf(value)
	if !ok {
		return Ref{}, false, nil
	}
	rest := strings.TrimPrefix(value, string(kind)+":")
	ref = Ref{Kind: kind, Name: rest}
	if ns, name, found := strings.Cut(rest, "/"); found {
		ref.Namespace, ref.Name = ns, name
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return Ref{}, true, fmt.Errorf("--resume %s: namespace %q: %s; give %s:NAMESPACE/NAME or %s:NAME (the pod's namespace)",
				value, ns, errs[0], kind, kind)
		}
	}
	if ref.Name == "" {
		return Ref{}, true, fmt.Errorf("--resume %s: no name; give %s:NAME or %s:NAMESPACE/NAME", value, kind, kind)
	}
	if errs := validation.IsDNS1123Subdomain(ref.Name); len(errs) > 0 {
		return Ref{}, true, fmt.Errorf("--resume %s: name %q: %s", value, ref.Name, errs[0])
	}
	if len(ref.Name) > MaxNameLength {
		return Ref{}, true, fmt.Errorf("--resume %s: the name is %d characters long, at most %d (its shards add a suffix)", value, len(ref.Name), MaxNameLength)
	}
	return ref, true, nil
}
