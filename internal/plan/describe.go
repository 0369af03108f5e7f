package plan

import (
	"fmt"
	"strings"
)

// Describe says what is watched where, for the line at start-up: the namespaces only
// for namespaced types ("pods, configmaps in default; nodes (cluster-scoped)"), and in
// which clusters; for --owned, the object and what it owns.
func (p *Plan) Describe(req Request) string {
	if req.Owned {
		return p.followed(req)
	}
	var namespaced, cluster []string
	for _, r := range p.Resources() {
		if r.Namespaced {
			namespaced = append(namespaced, r.String())
		} else {
			cluster = append(cluster, r.String())
		}
	}
	var parts []string
	if len(namespaced) > 0 {
		parts = append(parts, strings.Join(namespaced, ", ")+" "+p.where())
	}
	if len(cluster) > 0 {
		parts = append(parts, strings.Join(cluster, ", ")+" (cluster-scoped)")
	}
	watched := strings.Join(parts, "; ")
	if p.Several {
		watched += ", in clusters " + strings.Join(p.Names(), ", ")
	}
	return watched
}

// where says which namespaces are watched: "in all namespaces", "in a, b", or "in each
// context's namespace" when several clusters watch different ones.
func (p *Plan) where() string {
	first := p.Clusters[0].Namespaces
	for _, c := range p.Clusters[1:] {
		if strings.Join(c.Namespaces, ",") != strings.Join(first, ",") {
			return "in each context's namespace"
		}
	}
	if len(first) == 0 {
		return "in all namespaces"
	}
	return "in " + strings.Join(first, ", ")
}

// followed says what --owned follows ("deployments.apps web in shop and what it owns:
// replicasets.apps, pods").
func (p *Plan) followed(req Request) string {
	c := p.Clusters[0]
	children := make([]string, len(c.Children))
	for i, child := range c.Children {
		children[i] = child.String()
	}
	where := " in " + c.Namespace()
	if !c.Resources[0].Namespaced {
		where = ""
	}
	owned := strings.Join(children, ", ")
	if c.ChildrenFound {
		owned = fmt.Sprintf("any of the %d namespaced types (their metadata)", len(children))
	}
	return fmt.Sprintf("%s %s%s and what it owns: %s", c.Resources[0], req.Names[0], where, owned)
}
