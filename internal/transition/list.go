package transition

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/kubeevents/kubeevents/internal/jq"
)

// WriteList prints the catalog as `kubeevents on` lists it: a line per transition, its
// name and description, marked when the config file defines it.
func (c *Catalog) WriteList(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, t := range c.List() {
		fmt.Fprintf(tw, "%s\t%s%s\n", t.Name, t.Description, jq.FromFile(t.Shipped))
	}
	return tw.Flush()
}
