package render

import (
	"hash/fnv"
	"slices"
	"unicode/utf8"

	"github.com/fatih/color"

	"github.com/kubeevents/kubeevents/internal/escape"
)

// maxClusterColumn is the widest the cluster column gets: context names can be long
// (EKS's are ARNs), and the column is only there to tell a handful of clusters apart.
const maxClusterColumn = 20

// clusterPalette colours the cluster column: none of the event types' colours (green,
// yellow, red), so a cluster is never mistaken for what happened.
var clusterPalette = []color.Attribute{color.FgCyan, color.FgMagenta, color.FgBlue, color.FgHiCyan, color.FgHiMagenta, color.FgHiBlue}

// clusterColumn is the pretty output's cluster column when several clusters are watched:
// every cluster's label, short, padded to one width and maybe coloured, made once.
type clusterColumn struct {
	labels map[string]clusterLabel // by cluster (context) name
	width  int                     // of the widest label, without the gap
}

type clusterLabel struct {
	styled string // maybe coloured
	width  int    // in runes, without colour
}

// newClusterColumn makes the labels of names. Each is the name itself, shortened in the
// middle when longer than maxClusterColumn ("arn:aws:eks:…ster/prod") unless that makes
// two alike; its colour follows from the name alone (a hash), so a cluster keeps its
// colour whatever else is watched, unless two names fall on one colour, when the later
// one (in sorted order) takes the next free colour. Nil for fewer than two clusters.
func newClusterColumn(names []string, enabled bool) *clusterColumn {
	if len(names) < 2 {
		return nil
	}
	short := make(map[string]string, len(names))
	seen := map[string]bool{}
	for _, name := range names {
		s := string(escape.Append(nil, shortenMiddle(name, maxClusterColumn)))
		if seen[s] {
			short = nil // shortened alike: every label whole
			break
		}
		seen[s] = true
		short[name] = s
	}
	sorted := slices.Sorted(slices.Values(names))
	taken := map[color.Attribute]bool{}
	c := &clusterColumn{labels: make(map[string]clusterLabel, len(names))}
	for _, name := range sorted {
		label := string(escape.Append(nil, name))
		if short != nil {
			label = short[name]
		}
		width := utf8.RuneCountInString(label)
		c.width = max(c.width, width)
		attr := clusterColour(name, taken)
		taken[attr] = true
		c.labels[name] = clusterLabel{styled: paint(enabled, label, attr), width: width}
	}
	return c
}

// clusterColour is name's colour: its hash's, or the next one not taken.
func clusterColour(name string, taken map[color.Attribute]bool) color.Attribute {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	start := int(h.Sum32() % uint32(len(clusterPalette)))
	for i := range clusterPalette {
		if attr := clusterPalette[(start+i)%len(clusterPalette)]; !taken[attr] {
			return attr
		}
	}
	return clusterPalette[start] // more clusters than colours: they share
}

// append appends cluster's label padded to the column, and its gap; a cluster not
// announced (never the case) is shown whole, escaped.
func (c *clusterColumn) append(dst []byte, cluster string) []byte {
	l, ok := c.labels[cluster]
	if !ok {
		start := len(dst)
		dst = escape.Append(dst, cluster)
		l.width = utf8.RuneCount(dst[start:])
	} else {
		dst = append(dst, l.styled...)
	}
	return appendPadding(dst, l.width, c.width)
}
