package notify

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/kubeevents/kubeevents/internal/jq"
)

// WriteList prints the catalog as `kubeevents format` lists it: a line per format, its
// name, content type and description, marked when the config file defines it.
func (c *Catalog) WriteList(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, f := range c.List() {
		fmt.Fprintf(tw, "%s\t%s\t%s%s\n", f.Name, f.ContentType, f.Description, jq.FromFile(f.Shipped))
	}
	return tw.Flush()
}
