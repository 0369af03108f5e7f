package timetravel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubeevents/kubeevents/internal/diag"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/kubectl"
	"github.com/kubeevents/kubeevents/internal/recording"
	"github.com/kubeevents/kubeevents/internal/store"
)

// GetConfig is `kubeevents get TYPE[,TYPE...] [NAME...] --at TIME --store FILE`.
type GetConfig struct {
	Store string
	// Types and Names as typed: pods, po, deploy, deployments.apps, a kind, all.
	Types, Names []string
	At           time.Time
	// Namespace selects namespaced objects, unless AllNamespaces.
	Namespace     string
	AllNamespaces bool
	LabelSelector string
	// Output is kubectl get's -o: "" (its table), wide, json, yaml, name, or a template
	// (custom-columns=, jsonpath=, go-template=, and their -file forms).
	Output      string
	Out, ErrOut io.Writer
}

// got is one object as it was at the time asked.
type got struct {
	res *store.Resource
	obj runtime.Object
	raw json.RawMessage // the object as recorded
	m   metav1.Object
}

// Get prints what `kubectl get` would have printed at cfg.At, from a store: the server's
// columns (AGE as of then), objects deleted since included.
func Get(ctx context.Context, cfg GetConfig) error {
	switch cfg.Output {
	case "", "wide", "json", "yaml", "name":
	default:
		if !kubectl.IsTemplateFormat(cfg.Output) {
			return diag.Usagef("-o %s: give wide, json, yaml, name, custom-columns=, jsonpath= or go-template= (as kubectl get)", cfg.Output)
		}
	}
	selector := labels.Everything()
	if cfg.LabelSelector != "" {
		var err error
		if selector, err = labels.Parse(cfg.LabelSelector); err != nil {
			return diag.Usagef("-l %q: %v", cfg.LabelSelector, err)
		}
	}
	r, err := openStore(ctx, cfg.Store)
	if err != nil {
		return err
	}
	defer r.Close()
	resources, err := resolveTypes(r, cfg.Types)
	if err != nil {
		return err
	}
	if from := r.RetainedFrom(ctx); cfg.At.Before(from) {
		fmt.Fprintf(cfg.ErrOut, "kubeevents: %s is before %s, from which retention kept every object's state: some may be missing\n", formatTime(cfg.At), formatTime(from))
	}
	var objects []got
	for _, res := range resources {
		q := store.Query{Resources: []*store.Resource{res}, Names: cfg.Names}
		if res.Namespaced && !cfg.AllNamespaces {
			q.Namespaces = []string{cfg.Namespace}
		}
		versions, err := r.At(ctx, q, cfg.At)
		if err != nil {
			return err
		}
		for _, v := range versions {
			g, err := decodeVersion(res, v)
			if err != nil {
				return err
			}
			if selector.Matches(labels.Set(g.m.GetLabels())) {
				objects = append(objects, g)
			}
		}
	}
	missing := missingNames(cfg.Names, objects)
	if len(objects) == 0 && len(missing) == 0 {
		where := ""
		if !cfg.AllNamespaces {
			where = " in " + cfg.Namespace + " namespace"
		}
		fmt.Fprintf(cfg.ErrOut, "No resources found%s at %s.\n", where, formatTime(cfg.At))
		return nil
	}
	if err := printGot(ctx, r, cfg, resources, objects); err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s not found at %s in %s", strings.Join(missing, ", "), formatTime(cfg.At), cfg.Store)
	}
	return nil
}

// decodeVersion makes the object of a stored version: client-go's typed object for a
// built-in type (kubectl's columns read those), an unstructured one otherwise.
func decodeVersion(res *store.Resource, v store.Version) (got, error) {
	rec, err := recording.Parse(v.Line)
	if err != nil {
		return got{}, err
	}
	g := got{res: res, raw: rec.Object}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(rec.Object, &tm); err != nil {
		return got{}, err
	}
	gvk := tm.GroupVersionKind()
	if scheme.Scheme.Recognizes(gvk) {
		if typed, err := scheme.Scheme.New(gvk); err == nil && json.Unmarshal(rec.Object, typed) == nil {
			typed.GetObjectKind().SetGroupVersionKind(gvk)
			g.obj = typed
		}
	}
	if g.obj == nil {
		// A custom resource, or a Secret whose values were redacted.
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(rec.Object); err != nil {
			return got{}, err
		}
		g.obj = u
	}
	if g.m, err = metaAccessor(g.obj); err != nil {
		return got{}, err
	}
	return g, nil
}

func metaAccessor(obj runtime.Object) (metav1.Object, error) {
	if m, ok := obj.(metav1.Object); ok {
		return m, nil
	}
	return nil, fmt.Errorf("a %T has no metadata", obj)
}

func missingNames(names []string, objects []got) []string {
	var missing []string
	for _, n := range names {
		if !slices.ContainsFunc(objects, func(g got) bool { return g.m.GetName() == n }) {
			missing = append(missing, fmt.Sprintf("%q", n))
		}
	}
	return missing
}

// printGot prints the objects in the format of cfg.Output, as kubectl get does.
func printGot(ctx context.Context, r *store.Reader, cfg GetConfig, resources []*store.Resource, objects []got) error {
	// kubectl prints a list unless one object was asked for by name.
	single := len(resources) == 1 && len(cfg.Names) == 1 && len(objects) == 1
	whole := func() (runtime.Object, error) {
		items := make([]any, len(objects))
		for i, g := range objects {
			if err := json.Unmarshal(g.raw, &items[i]); err != nil {
				return nil, err
			}
		}
		if single {
			return &unstructured.Unstructured{Object: items[0].(map[string]any)}, nil
		}
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "List", "items": items,
			"metadata": map[string]any{"resourceVersion": ""}}}, nil
	}
	var printer printers.ResourcePrinter
	switch {
	case cfg.Output == "json":
		printer = &printers.JSONPrinter{}
	case cfg.Output == "yaml":
		printer = &printers.YAMLPrinter{}
	case strings.HasPrefix(cfg.Output, "jsonpath"):
		p, err := genericclioptions.NewJSONPathPrintFlags("", true).ToPrinter(cfg.Output)
		if err != nil {
			return diag.Usagef("-o %s: %s", cfg.Output, strings.Join(strings.Fields(err.Error()), " "))
		}
		printer = p
	case strings.HasPrefix(cfg.Output, "go-template"):
		p, err := genericclioptions.NewGoTemplatePrintFlags().ToPrinter(cfg.Output)
		if err != nil {
			return diag.Usagef("-o %s: %s", cfg.Output, strings.Join(strings.Fields(err.Error()), " "))
		}
		printer = p
	}
	if printer != nil {
		obj, err := whole()
		if err != nil {
			return err
		}
		return printer.PrintObj(obj, cfg.Out)
	}
	switch {
	case cfg.Output == "name":
		for _, g := range objects {
			fmt.Fprintf(cfg.Out, "%s/%s\n", kindName(g.res), g.m.GetName())
		}
		return nil
	case strings.HasPrefix(cfg.Output, "custom-columns"):
		return printColumns(cfg, objects)
	}
	columns, err := crdColumns(ctx, r, cfg.At)
	if err != nil {
		return err
	}
	table, err := kubectl.NewTable(columns, cfg.Output == "wide")
	if err != nil {
		return err
	}
	withKind := len(cfg.Types) > 1 || len(resources) > 1 || slices.ContainsFunc(cfg.Types, func(t string) bool { return strings.EqualFold(t, "all") })
	first := true
	for _, res := range resources {
		var these []got
		for _, g := range objects {
			if g.res == res {
				these = append(these, g)
			}
		}
		if len(these) == 0 {
			continue
		}
		if !first {
			fmt.Fprintln(cfg.Out)
		}
		first = false
		if err := printTable(cfg, table, these, withKind); err != nil {
			return err
		}
	}
	return nil
}

// printTable prints objects of one type as kubectl get's table.
func printTable(cfg GetConfig, table *kubectl.Table, objects []got, withKind bool) error {
	tw := printers.GetNewTabWriter(cfg.Out)
	var cells kubectl.Cells
	namespaced := cfg.AllNamespaces && objects[0].res.Namespaced
	for i, g := range objects {
		ev := &event.Event{Type: event.Added, Time: cfg.At, Resource: g.res.GroupVersionResource, Kind: g.res.Kind, Object: g.obj}
		headers := table.Row(&cells, ev, g.m)
		if i == 0 {
			if namespaced {
				fmt.Fprint(tw, "NAMESPACE\t")
			}
			fmt.Fprintf(tw, "NAME\t%s\n", strings.Join(headers, "\t"))
		}
		if namespaced {
			fmt.Fprintf(tw, "%s\t", g.m.GetNamespace())
		}
		name := g.m.GetName()
		if withKind {
			name = kindName(g.res) + "/" + name
		}
		fmt.Fprint(tw, name)
		for c := 0; c < cells.Len(); c++ {
			fmt.Fprintf(tw, "\t%s", cells.Cell(c))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// printColumns prints -o custom-columns: one header, a row per object.
func printColumns(cfg GetConfig, objects []got) error {
	t, err := kubectl.NewTemplate(cfg.Output, false)
	if err != nil {
		return diag.Usage(err)
	}
	var out []byte
	for _, g := range objects {
		ev := &event.Event{Type: event.Added, Time: cfg.At, Resource: g.res.GroupVersionResource, Kind: g.res.Kind, Object: g.obj}
		if out, err = t.Append(out, ev, nil); err != nil {
			return err
		}
	}
	_, err = cfg.Out.Write(out)
	return err
}

// crdColumns are the printer columns of the custom resources whose definitions the store
// holds, as they were at t, for the version stored.
func crdColumns(ctx context.Context, r *store.Reader, t time.Time) (kubectl.PrinterColumns, error) {
	columns := kubectl.PrinterColumns{}
	var crds []*store.Resource
	for _, res := range r.Resources() {
		if res.Group == "apiextensions.k8s.io" && res.Resource == "customresourcedefinitions" {
			crds = append(crds, res)
		}
	}
	if len(crds) == 0 {
		return columns, nil
	}
	versions, err := r.At(ctx, store.Query{Resources: crds}, t)
	if err != nil {
		return nil, err
	}
	stored := map[schema.GroupKind]string{}
	for _, res := range r.Resources() {
		stored[schema.GroupKind{Group: res.Group, Kind: res.Kind}] = res.Version
	}
	for _, v := range versions {
		rec, err := recording.Parse(v.Line)
		if err != nil {
			return nil, err
		}
		var crd struct {
			Spec struct {
				Group string `json:"group"`
				Names struct {
					Kind string `json:"kind"`
				} `json:"names"`
				Versions []struct {
					Name    string                  `json:"name"`
					Columns []kubectl.PrinterColumn `json:"additionalPrinterColumns"`
				} `json:"versions"`
			} `json:"spec"`
		}
		if json.Unmarshal(rec.Object, &crd) != nil {
			continue
		}
		gk := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
		for _, ver := range crd.Spec.Versions {
			if ver.Name == stored[gk] {
				columns[gk] = ver.Columns
			}
		}
	}
	return columns, nil
}
