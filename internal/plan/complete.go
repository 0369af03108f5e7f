package plan

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/kubeevents/kubeevents/internal/checkpoint"
	"github.com/kubeevents/kubeevents/internal/kubectl"
)

// complete reads, in every cluster at once, what the watch needs besides its types: which
// of its namespaces exist, the printer columns of its custom resources, and what
// identifies it for a checkpoint.
func (p *Plan) complete(ctx context.Context, req Request, say Notices) {
	var wg sync.WaitGroup
	for _, c := range p.Clusters {
		warn, debug := say.Warn, say.Debug
		if p.Several {
			warn = prefixed(c.Name, say.Warn)
			debug = prefixed(c.Name, say.Debug)
		}
		wg.Go(func() {
			c.Missing = missingNamespaces(ctx, c, warn)
			if req.Columns {
				c.Columns = printerColumns(ctx, c, debug)
			}
			if req.Resume {
				c.Checkpoint = identity(ctx, c, req)
			}
		})
	}
	wg.Wait()
}

func prefixed(name string, say func(string, ...any)) func(string, ...any) {
	return func(format string, args ...any) {
		say(ClusterNotice+format, append([]any{name}, args...)...)
	}
}

// missingNamespaces says which of c's namespaces do not exist (yet), one line each; the
// watch goes on, since a namespace may be created later and its objects then show up.
// Only for namespaced types; a namespace that cannot be looked up (no right to, no
// answer within 5 s) is taken to exist.
func missingNamespaces(ctx context.Context, c *Cluster, warn func(string, ...any)) []string {
	namespaced := false
	for _, r := range c.Resources {
		namespaced = namespaced || r.Namespaced
	}
	if !namespaced || len(c.Namespaces) == 0 {
		return nil
	}
	client, err := metadata.NewForConfig(c.Config)
	if err != nil {
		return nil
	}
	var missing []string
	for _, ns := range c.Namespaces {
		getCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := client.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")).Get(getCtx, ns, metav1.GetOptions{})
		cancel()
		if apierrors.IsNotFound(err) {
			warn("namespace %q does not exist (yet); watching anyway, its objects will show up if it is created", ns)
			missing = append(missing, ns)
		}
	}
	return missing
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// printerColumns reads the additionalPrinterColumns of c's custom resources from their
// CustomResourceDefinitions (of the version watched), for pretty and wide output.
// Built-in groups have no dot; a type that is no CRD (an aggregated API), a CRD without
// columns, or one this user may not read, gets AGE, as without columns: never a reason
// to stop (said with -v=2).
func printerColumns(ctx context.Context, c *Cluster, debug func(string, ...any)) kubectl.PrinterColumns {
	var client dynamic.Interface
	columns := kubectl.PrinterColumns{}
	for _, res := range c.Resources {
		if !strings.Contains(res.GVR.Group, ".") {
			continue
		}
		if client == nil {
			var err error
			if client, err = dynamic.NewForConfig(c.Config); err != nil {
				return nil
			}
		}
		getCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		crd, err := client.Resource(crdGVR).Get(getCtx, res.GVR.Resource+"."+res.GVR.Group, metav1.GetOptions{})
		cancel()
		if err != nil {
			debug("no printer columns for %s: %v", res, oneLine(err))
			continue
		}
		var spec struct {
			Versions []struct {
				Name    string                  `json:"name"`
				Columns []kubectl.PrinterColumn `json:"additionalPrinterColumns"`
			} `json:"versions"`
		}
		raw, _ := json.Marshal(crd.Object["spec"])
		if json.Unmarshal(raw, &spec) != nil {
			continue
		}
		for _, v := range spec.Versions {
			if v.Name == res.GVR.Version {
				columns[res.GVK.GroupKind()] = v.Columns
			}
		}
	}
	return columns
}

// identity is what a checkpoint of c's watch belongs to: everything that changes which
// objects are watched, and how they are kept.
func identity(ctx context.Context, c *Cluster, req Request) checkpoint.Watch {
	w := checkpoint.Watch{
		Server:            c.Config.Host,
		Cluster:           clusterUID(ctx, c),
		LabelSelector:     req.LabelSelector,
		FieldSelector:     req.FieldSelector,
		Names:             req.Names,
		MetadataOnly:      req.MetadataOnly,
		ShowSecrets:       req.ShowSecrets,
		ExcludeNamespaces: req.ExcludeNamespaces,
	}
	if len(c.Namespaces) == 1 {
		w.Namespace = c.Namespaces[0]
	} else {
		w.Namespaces = c.Namespaces
	}
	for _, r := range c.Resources {
		w.Resources = append(w.Resources, checkpoint.ResourceName(r.GVR))
	}
	return w
}

// clusterUID is the cluster's identity for the checkpoint: the UID of its kube-system
// namespace, or "" if it cannot be read (no right to get namespaces).
func clusterUID(ctx context.Context, c *Cluster) string {
	client, err := metadata.NewForConfig(c.Config)
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ns, err := client.Resource(corev1.SchemeGroupVersion.WithResource("namespaces")).Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return string(ns.GetUID())
}
