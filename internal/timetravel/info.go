package timetravel

import (
	"context"
	"fmt"
	"io"
	"time"

	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubeevents/kubeevents/internal/diag"
)

// InfoConfig is `kubeevents store info`.
type InfoConfig struct {
	Store string
	Out   io.Writer
}

// Info says what a store holds: its time range, objects, versions, and their size by
// type.
func Info(ctx context.Context, cfg InfoConfig) error {
	r, err := openStore(ctx, cfg.Store)
	if err != nil {
		return err
	}
	defer r.Close()
	info, err := r.Info(ctx)
	if err != nil {
		return err
	}
	out := cfg.Out
	fmt.Fprintf(out, "Store:     %s, %s (with its log), created %s\n", cfg.Store, bytesSize(info.Bytes), info.Created)
	if info.Versions == 0 {
		fmt.Fprintln(out, "Holds:     nothing yet")
		return nil
	}
	fmt.Fprintf(out, "Time:      %s to %s (%s)\n", formatTime(info.From), formatTime(info.To), info.To.Sub(info.From).Round(time.Second))
	if !info.RetainedFrom.IsZero() {
		fmt.Fprintf(out, "Retained:  every object's state from %s on (older versions dropped by retention)\n", formatTime(info.RetainedFrom))
	}
	fmt.Fprintf(out, "Objects:   %s (%s deleted)\n", diag.Count(int(info.Objects)), diag.Count(int(info.Deleted)))
	fmt.Fprintf(out, "Versions:  %s, %s a version on average\n", diag.Count(int(info.Versions)), bytesSize(info.Bytes/info.Versions))
	fmt.Fprintf(out, "Events:    %s (core Events, indexed by the object they are about)\n\n", diag.Count(int(info.Events)))
	tw := printers.GetNewTabWriter(out)
	fmt.Fprintln(tw, "TYPE\tKIND\tOBJECTS\tDELETED\tVERSIONS\tCOMPRESSED")
	for _, t := range info.Types {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", resourceName(t.Resource), t.Resource.Kind, t.Objects, t.Deleted, t.Versions, bytesSize(t.Bytes))
	}
	return tw.Flush()
}

// bytesSize is n in binary units, as 3.9 MiB.
func bytesSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
