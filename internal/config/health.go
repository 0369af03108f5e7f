package config

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kubeevents/kubeevents/internal/health"
)

// healthRules decodes the top level's health: a mapping of kinds (KIND.GROUP, or * for
// every custom resource) to a rule: a jq program, or a mapping with the program (jq)
// and the types the kind's controller creates (owns), either or both:
//
//	health:
//	  Database.db.example.com:
//	    jq: 'if .object.status.phase == "Failed" then {status: "Failed", message: .object.status.reason} else null end'
//	    owns: [statefulsets.apps, pods]
//	  Widget.example.com: '.object.status.state | {status: (if . == "ok" then "Current" else "InProgress" end)}'
func (d *decoder) healthRules(n *yaml.Node) (map[string]health.Rule, error) {
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, d.errorf(n, "health: want a mapping of kinds (KIND.GROUP) to rules, got %s", describe(n))
	}
	rules := map[string]health.Rule{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return nil, d.errorf(k, "health: want a kind, got %s", describe(k))
		}
		if err := health.CheckKey(k.Value); err != nil {
			return nil, d.errorf(k, "%v", err)
		}
		if _, ok := rules[k.Value]; ok {
			return nil, d.errorf(k, "health: %q is given twice", k.Value)
		}
		field := "health." + k.Value
		var rule health.Rule
		if v.Kind == yaml.ScalarNode {
			program, err := d.str(v, field)
			if err != nil {
				return nil, err
			}
			rule.Program = program
		} else {
			err := d.mapping(v, "in "+field, field+".", []string{"jq", "owns"}, func(key string, _, v *yaml.Node) error {
				var err error
				switch key {
				case "jq":
					rule.Program, err = d.str(v, field+".jq")
				case "owns":
					rule.Owns, err = d.typeList(v, field+".owns")
				}
				return err
			})
			if err != nil {
				return nil, err
			}
		}
		if strings.TrimSpace(rule.Program) == "" && len(rule.Owns) == 0 {
			return nil, d.errorf(v, "%s: want a jq program (jq) or the types its controller creates (owns), got nothing", field)
		}
		rules[k.Value] = rule
	}
	return rules, nil
}

// typeList decodes a list of types, or its items in one string: [deployments.apps, pods]
// or deployments.apps,pods.
func (d *decoder) typeList(n *yaml.Node, field string) ([]string, error) {
	var items []string
	if n.Kind == yaml.SequenceNode {
		for _, item := range n.Content {
			s, err := d.str(resolve(item), field)
			if err != nil {
				return nil, err
			}
			items = append(items, s)
		}
	} else {
		s, err := d.str(n, field)
		if err != nil {
			return nil, err
		}
		items = strings.Split(s, ",")
	}
	var types []string
	for _, t := range items {
		if t = strings.TrimSpace(t); t != "" {
			types = append(types, t)
		}
	}
	if len(types) == 0 {
		return nil, d.errorf(n, "%s: want a list of types (e.g. [deployments.apps, pods]), got nothing", field)
	}
	return types, nil
}
