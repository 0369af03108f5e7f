package replay

import (
	"context"
	"errors"
	"io"
	"maps"
	"slices"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeevents/kubeevents/internal/recording"
)

// Held is one object a recording holds.
type Held struct {
	Cluster   string
	Resource  schema.GroupVersionResource
	Kind      string
	Namespace string
	Name      string
}

// Inventory is what recordings hold: every object recorded (once, however many events
// it has), in the order each was first recorded. It is read from the objects' kind and
// metadata alone, without decoding them: history reads it to know which objects a name
// selects before it replays one, and the shell's completion to offer the types, names,
// namespaces and clusters recorded.
type Inventory struct {
	Held []Held
}

// ReadInventory reads what the recordings args (files, directories, patterns; not the
// standard input, which can be read once only) hold, skipping the lines that are not
// events. When ctx ends first, it is what was read by then.
func ReadInventory(ctx context.Context, args []string) (*Inventory, error) {
	inputs, err := recording.Expand(args, false)
	if err != nil {
		return nil, err
	}
	return readInventory(ctx, inputs)
}

func readInventory(ctx context.Context, inputs []recording.Input) (*Inventory, error) {
	inputs = slices.DeleteFunc(slices.Clone(inputs), func(in recording.Input) bool { return in.Path == "-" })
	inv := &Inventory{}
	if len(inputs) == 0 {
		return inv, nil
	}
	r, err := recording.Open(inputs, recording.Options{SkipBadLines: true})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	kinds := map[schema.GroupVersionResource]string{}
	seen := map[Held]bool{}
	for {
		rec, err := r.Next(ctx)
		if errors.Is(err, io.EOF) || ctx.Err() != nil {
			return inv, nil
		}
		if err != nil {
			return nil, err
		}
		object := gjson.Parse(unsafe.String(unsafe.SliceData(rec.Object), len(rec.Object)))
		kind, ok := kinds[rec.Resource]
		if !ok {
			kind = object.Get("kind").String()
			kinds[rec.Resource] = kind
		}
		m := object.Get("metadata")
		h := Held{Cluster: rec.Cluster, Resource: rec.Resource, Kind: kind,
			Namespace: m.Get("namespace").String(), Name: m.Get("name").String()}
		if h.Name == "" || seen[h] {
			continue
		}
		seen[h] = true
		inv.Held = append(inv.Held, h)
	}
}

// Select is what of the inventory the selection's types, names, namespaces and clusters
// select (each, when given).
func (inv *Inventory) Select(sel Selection) []Held {
	types := parseTypes(sel.Types)
	var out []Held
	for _, h := range inv.Held {
		switch {
		case len(types) > 0 && !slices.ContainsFunc(types, func(t typeArg) bool { return t.matches(h.Resource, h.Kind) }),
			len(sel.Names) > 0 && !slices.Contains(sel.Names, h.Name),
			len(sel.Namespaces) > 0 && h.Namespace != "" && !slices.Contains(sel.Namespaces, h.Namespace),
			len(sel.Clusters) > 0 && !slices.Contains(sel.Clusters, h.Cluster):
			continue
		}
		out = append(out, h)
	}
	return out
}

// Type is a resource type an inventory holds.
type Type struct {
	Resource schema.GroupVersionResource
	Kind     string
	// Name is how it is typed: its plural, or plural.group where another group has a
	// resource of that plural.
	Name string
}

// Types are the resource types held, sorted by Name.
func (inv *Inventory) Types() []Type {
	groupsOf := map[string][]string{}
	var types []Type
	for _, h := range inv.Held {
		if slices.ContainsFunc(types, func(t Type) bool { return t.Resource == h.Resource }) {
			continue
		}
		types = append(types, Type{Resource: h.Resource, Kind: h.Kind})
		if !slices.Contains(groupsOf[h.Resource.Resource], h.Resource.Group) {
			groupsOf[h.Resource.Resource] = append(groupsOf[h.Resource.Resource], h.Resource.Group)
		}
	}
	for i, t := range types {
		types[i].Name = t.Resource.Resource
		if len(groupsOf[t.Resource.Resource]) > 1 && t.Resource.Group != "" {
			types[i].Name = resourceName(t.Resource)
		}
	}
	slices.SortFunc(types, func(a, b Type) int { return strings.Compare(a.Name, b.Name) })
	return types
}

// Namespaces are the namespaces of held, sorted.
func Namespaces(held []Held) []string {
	return distinct(held, func(h Held) string { return h.Namespace })
}

// Clusters are the clusters of held, sorted: none in a recording of one cluster.
func Clusters(held []Held) []string {
	return distinct(held, func(h Held) string { return h.Cluster })
}

// distinct are the values of held that are not "", sorted.
func distinct(held []Held, of func(Held) string) []string {
	seen := map[string]bool{}
	for _, h := range held {
		if v := of(h); v != "" {
			seen[v] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
