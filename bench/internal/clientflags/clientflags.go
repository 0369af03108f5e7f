// Package clientflags is the command line the benchmark's baseline clients share
// (bench/floor, bench/plaininformer): which cluster, which namespace, which resource.
package clientflags

import (
	"flag"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Flags are the values of -kubeconfig, -n and -resource.
type Flags struct {
	Kubeconfig string
	Namespace  string
	// Resource is "pods", or GROUP/VERSION/RESOURCE ("bench.kubeevents.io/v1/widgets").
	Resource string
}

// Register defines the flags on fs; resourceHelp is -resource's usage.
func Register(fs *flag.FlagSet, resourceHelp string) *Flags {
	f := &Flags{}
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "kubeconfig of the cluster")
	fs.StringVar(&f.Namespace, "n", "default", "namespace")
	fs.StringVar(&f.Resource, "resource", "pods", resourceHelp)
	return f
}

// GVR is -resource as a GroupVersionResource: core v1 pods, or GROUP/VERSION/RESOURCE.
func (f *Flags) GVR() (schema.GroupVersionResource, error) {
	if f.Resource == "pods" {
		return schema.GroupVersionResource{Version: "v1", Resource: "pods"}, nil
	}
	parts := strings.Split(f.Resource, "/")
	if len(parts) != 3 {
		return schema.GroupVersionResource{}, fmt.Errorf("-resource %q: give pods or GROUP/VERSION/RESOURCE", f.Resource)
	}
	return schema.GroupVersionResource{Group: parts[0], Version: parts[1], Resource: parts[2]}, nil
}
