package render

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/kubeevents/kubeevents/internal/attribution"
	"github.com/kubeevents/kubeevents/internal/event"
)

// appendYAML appends ev as a YAML document with the envelope of AppendEnvelopeWithDiff.
// The object (and old object and diff) are converted from their JSON to yaml.Nodes
// (yamlNode) rather than a map, so keys keep the order of the JSON (apiVersion, kind,
// metadata, spec, status; op, path, value, old) and numbers their digits.
func (p *Printer) appendYAML(dst []byte, ev *event.Event) ([]byte, error) {
	objectJSON, err := ev.ObjectJSON()
	if err != nil {
		return dst, fmt.Errorf("encoding %s %q as JSON: %w", ev.Kind, ev.Key(), err)
	}
	object, err := yamlNode(objectJSON)
	if err != nil {
		return dst, fmt.Errorf("converting %s %q to YAML: %w", ev.Kind, ev.Key(), err)
	}
	var old, changes *yaml.Node
	if p.showOld && ev.HasOld() {
		oldJSON, err := ev.OldJSON()
		if err != nil {
			return dst, fmt.Errorf("encoding the previous %s %q as JSON: %w", ev.Kind, ev.Key(), err)
		}
		if old, err = yamlNode(oldJSON); err != nil {
			return dst, fmt.Errorf("converting the previous %s %q to YAML: %w", ev.Kind, ev.Key(), err)
		}
	}
	diffJSON, by, err := attributedChanges(ev, p.differ)
	if err != nil {
		return dst, err
	}
	if diffJSON != nil {
		if changes, err = yamlNode(diffJSON); err != nil {
			return dst, fmt.Errorf("converting the diff of %s %q to YAML: %w", ev.Kind, ev.Key(), err)
		}
	}

	envelope := mapping(
		str("type"), str(string(ev.Type)),
		str("time"), str(ev.Time.UTC().Format(time.RFC3339Nano)),
	)
	if ev.Seq != 0 {
		envelope.Content = append(envelope.Content, str("seq"), scalar("!!int", strconv.FormatUint(ev.Seq, 10)))
	}
	if ev.Cluster != "" {
		envelope.Content = append(envelope.Content, str("cluster"), str(ev.Cluster))
	}
	envelope.Content = append(envelope.Content, onYAML(ev)...)
	envelope.Content = append(envelope.Content,
		str("resource"), mapping(
			str("group"), str(ev.Resource.Group),
			str("version"), str(ev.Resource.Version),
			str("resource"), str(ev.Resource.Resource),
		),
	)
	envelope.Content = append(envelope.Content, ownersYAML(ev)...)
	envelope.Content = append(envelope.Content, healthYAML(ev)...)
	envelope.Content = append(envelope.Content, foldedYAML(ev)...)
	envelope.Content = append(envelope.Content, str("object"), object)
	if old != nil {
		envelope.Content = append(envelope.Content, str("old"), old)
	}
	if changes != nil {
		envelope.Content = append(envelope.Content, str("diff"), changes)
	}
	if by != nil && len(by.By) > 0 {
		node, err := yamlNode(attribution.AppendJSON(nil, by.By))
		if err != nil {
			return dst, fmt.Errorf("converting the managers of %s %q to YAML: %w", ev.Kind, ev.Key(), err)
		}
		envelope.Content = append(envelope.Content, str("by"), node)
		if by.Ambiguous {
			envelope.Content = append(envelope.Content, str("byAmbiguous"), scalar("!!bool", "true"))
		}
	}
	if ev.FinalStateUnknown {
		envelope.Content = append(envelope.Content, str("finalStateUnknown"), scalar("!!bool", "true"))
	}
	if ev.Past {
		envelope.Content = append(envelope.Content, str("past"), scalar("!!bool", "true"))
	}
	if ev.Reason != "" {
		envelope.Content = append(envelope.Content, str("reason"), str(ev.Reason))
	}

	p.yamlBuf.Reset()
	if err := encodeYAML(&p.yamlBuf, envelope); err != nil {
		return dst, fmt.Errorf("encoding %s %q as YAML: %w", ev.Kind, ev.Key(), err)
	}
	dst = append(dst, "---\n"...)
	return append(dst, p.yamlBuf.Bytes()...), nil
}

// encodeYAML writes n as one YAML document, indented as kubectl writes YAML.
func encodeYAML(w io.Writer, n *yaml.Node) error {
	encoder := yaml.NewEncoder(w)
	encoder.SetIndent(2)
	encoder.CompactSeqIndent() // "- item" under its key, as kubectl writes it
	if err := encoder.Encode(n); err != nil {
		return err
	}
	return encoder.Close()
}

func mapping(content ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: content}
}

func str(value string) *yaml.Node { return scalar("!!str", value) }

func scalar(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}
