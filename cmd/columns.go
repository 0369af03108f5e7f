package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kubeevents/kubeevents/internal/engine"
	"github.com/kubeevents/kubeevents/internal/render"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// printerColumns reads the additionalPrinterColumns of the watched custom resources
// from their CustomResourceDefinitions (of the version watched), for pretty and wide
// output. Built-in groups have no dot; a type that is no CRD (an aggregated API), a CRD
// without columns, or one this user may not read, gets AGE, as without columns: never
// a reason to stop.
func (o *WatchOptions) printerColumns(ctx context.Context) render.PrinterColumns {
	if !o.prettySink() {
		return nil
	}
	var client dynamic.Interface
	columns := render.PrinterColumns{}
	for _, res := range o.resources {
		if !strings.Contains(res.GVR.Group, ".") {
			continue
		}
		if client == nil {
			var err error
			if client, err = dynamic.NewForConfig(o.restConfig); err != nil {
				return nil
			}
		}
		getCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		crd, err := client.Resource(crdGVR).Get(getCtx, res.GVR.Resource+"."+res.GVR.Group, metav1.GetOptions{})
		cancel()
		if err != nil {
			o.verbosef("no printer columns for %s: %v", res, oneLine(err))
			continue
		}
		var spec struct {
			Versions []struct {
				Name    string                 `json:"name"`
				Columns []render.PrinterColumn `json:"additionalPrinterColumns"`
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

// prettySink reports whether a sink prints pretty or wide lines.
func (o *WatchOptions) prettySink() bool {
	for _, s := range o.sinks {
		if s.Format == string(render.FormatPretty) || s.Format == string(render.FormatWide) {
			return true
		}
	}
	return false
}

// verbosef prints a diagnostic only with -v=2 and up.
func (o *WatchOptions) verbosef(format string, args ...any) {
	if o.Verbosity != nil && *o.Verbosity >= 2 {
		o.warnf(format, args...)
	}
}

// headerPrinters are the terminal's printers, whose header lines are printed again after
// a re-sync notice on stderr (which scrolls the last header away).
type headerPrinters struct {
	mu       sync.Mutex
	printers []*render.Printer
}

func (h *headerPrinters) add(p *render.Printer) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.printers = append(h.printers, p)
}

// warned is told of every diagnostic line.
func (h *headerPrinters) warned(format string) {
	// One of several clusters' notices starts with engine.ClusterNotice.
	if h == nil || !strings.HasPrefix(strings.TrimPrefix(format, engine.ClusterNotice), "re-synced ") {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range h.printers {
		p.HeadersAgain()
	}
}
