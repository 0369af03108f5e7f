package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kubeevents/kubeevents/internal/clusterstore"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/suggest"
	"github.com/kubeevents/kubeevents/internal/transition"
)

// Load reads and parses the config file at path; see Parse. If the file cannot be read
// the error starts with path and wraps the cause, so errors.Is(err, fs.ErrNotExist)
// tells a missing file. Relative file paths in it (a file sink's path, a jq sink's
// output) are made relative to the file's directory, as kubectl does for the paths in a
// kubeconfig: the files a config file names are the same wherever kubeevents runs.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pathErr *os.PathError
		if errors.As(err, &pathErr) {
			err = pathErr.Err
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !clusterstore.IsRef(f.Resume) { // secret:NAME is no path
		f.Resume = relativeTo(dir, f.Resume)
	}
	f.Store = relativeTo(dir, f.Store)
	for _, s := range f.Sinks {
		for _, set := range s.Kind.Rows {
			if p := s.Text(set.Key()); p != nil && set.Value == sinkkind.Path {
				*p = relativeTo(dir, *p)
			}
		}
	}
	return f, nil
}

// relativeTo makes a relative path relative to dir; "" and Stdout ("-") stay as they are.
func relativeTo(dir, path string) string {
	if path == "" || path == sinkkind.Stdout || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

// Parse decodes and checks a config file's contents; name is the file's path, used in
// messages. Decoding is strict, and every error is one line of the form
// "NAME:LINE:COLUMN: message" (or "NAME:LINE: message" for YAML syntax errors). An
// empty file, or one with only comments, has no sinks. The sinks are returned as
// written, with default names (AutoName), their kinds' default format and Origin
// ("NAME:LINE:COLUMN") filled in; Defaults are not applied (see Resolved).
func Parse(name string, data []byte) (*File, error) {
	d := &decoder{name: name}
	return d.parse(data)
}

type decoder struct {
	name string
}

// errorf returns an error located at n.
func (d *decoder) errorf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%s:%d:%d: %s", d.name, n.Line, n.Column, fmt.Sprintf(format, args...))
}

// yamlError turns an error from the YAML parser into one in "NAME:LINE: message" form.
func (d *decoder) yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if _, err := strconv.Atoi(num); err == nil {
				return fmt.Errorf("%s:%s: %s", d.name, num, oneLine(text))
			}
		}
	}
	if isSyntaxProblem(msg) {
		// The parser leaves the line out when it is the first (its lines count from 0).
		return fmt.Errorf("%s:1: %s", d.name, oneLine(msg))
	}
	return fmt.Errorf("%s: %s", d.name, oneLine(msg))
}

// isSyntaxProblem recognises the YAML parser's and scanner's messages, which always
// have a position; others (an unknown anchor, bad UTF-8) may not.
func isSyntaxProblem(msg string) bool {
	for _, prefix := range []string{"did not find expected", "could not find expected", "found ", "mapping values are not allowed", "block sequence entries are not allowed"} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func (d *decoder) parse(data []byte) (*File, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return &File{}, nil
		}
		return nil, d.yamlError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		if err != nil {
			return nil, d.yamlError(err)
		}
		return nil, d.errorf(&extra, "a second YAML document; the config file holds one")
	}

	f := &File{}
	root := &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return f, nil
		}
		root = root.Content[0]
	}
	root = resolve(root)
	if isNull(root) {
		return f, nil
	}
	err := d.mapping(root, "at the top level", "", []string{"defaults", "sinks", "resume", "store", "metricsAddr", "transitions", "formats", "health"}, func(key string, k, v *yaml.Node) error {
		switch key {
		case "health":
			var err error
			f.Health, err = d.healthRules(v)
			return err
		case "transitions":
			var err error
			f.Transitions, err = d.programs(v, key, transition.CheckName)
			return err
		case "formats":
			var err error
			f.Formats, err = d.programs(v, key, checkFormatName)
			return err
		case "metricsAddr":
			var err error
			f.MetricsAddr, err = d.str(v, "metricsAddr")
			if err == nil && f.MetricsAddr == "" {
				err = d.errorf(v, "metricsAddr: want HOST:PORT, e.g. 127.0.0.1:9090, got nothing")
			}
			return err
		case "resume":
			var err error
			f.Resume, err = d.str(v, "resume")
			if err == nil && f.Resume == "" {
				err = d.errorf(v, "resume: want the path of a checkpoint file, got nothing")
			}
			return err
		case "store":
			var err error
			f.Store, err = d.str(v, "store")
			if err == nil && f.Store == "" {
				err = d.errorf(v, "store: want the path of a history store (kubeevents store import), got nothing")
			}
			return err
		case "defaults":
			return d.defaults(v, &f.Defaults)
		case "sinks":
			return d.sinks(v, f)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// programs decodes the top level's transitions or formats: a mapping of names, each a
// jq program (compiled by the run, or by config validate).
func (d *decoder) programs(n *yaml.Node, field string, checkName func(string) error) (map[string]string, error) {
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, d.errorf(n, "%s: want a mapping of names to jq programs, got %s", field, describe(n))
	}
	programs := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return nil, d.errorf(k, "%s: want a name, got %s", field, describe(k))
		}
		if err := checkName(k.Value); err != nil {
			return nil, d.errorf(k, "%s: %v", field, err)
		}
		if _, ok := programs[k.Value]; ok {
			return nil, d.errorf(k, "%s: %q is given twice", field, k.Value)
		}
		program, err := d.str(v, field+"."+k.Value)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(program) == "" {
			return nil, d.errorf(v, "%s.%s: want a jq program, got nothing", field, k.Value)
		}
		programs[k.Value] = program
	}
	return programs, nil
}

// checkFormatName checks a name of the config file's formats as the kind whose formats
// they add to (http) checks the names of its formats.
func checkFormatName(name string) error {
	for _, k := range sinkkind.Kinds() {
		if k.NamedFormats {
			return k.CheckFormat(k, name)
		}
	}
	return nil
}

// resolve follows an alias to the node it stands for.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe names what n is, for "got ..." in messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "nothing"
		}
		return strconv.Quote(sinkkind.Clip(n.Value))
	}
	return "something else"
}

// mapping calls fn for each key of the mapping n, in order, after checking that n is a
// mapping whose keys are known strings, each given once. where says where n is in
// messages ("at the top level", `in sink "archive"`), and path is the prefix of its
// keys' paths ("sinks[1].", "" at the top level).
func (d *decoder) mapping(n *yaml.Node, where, path string, keys []string, fn func(key string, k, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		if path == "" {
			return d.errorf(n, "want a mapping with \"defaults\" and \"sinks\" %s, got %s", where, describe(n))
		}
		return d.errorf(n, "%s: want a mapping, got %s", strings.TrimSuffix(path, "."), describe(n))
	}
	seen := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return d.errorf(k, "want a field name %s, got %s", where, describe(k))
		}
		key := k.Value
		if first, ok := seen[key]; ok {
			return d.errorf(k, "duplicate key %q %s (first at line %d)", key, where, first.Line)
		}
		seen[key] = k
		known := false
		for _, name := range keys {
			if key == name {
				known = true
				break
			}
		}
		if !known {
			return d.errorf(k, "unknown field %q %s%s", key, where, suggest.DidYouMean(key, keys))
		}
		if err := fn(key, k, v); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) defaults(n *yaml.Node, def *Defaults) error {
	if isNull(n) {
		return nil
	}
	// The defaults are sink settings, read as a sink's are.
	var s sinkkind.Spec
	err := d.mapping(n, "in defaults", "defaults.", []string{"buffer", "onFull", "resync"}, func(key string, k, v *yaml.Node) error {
		set, _ := sinkkind.YAMLRow(key)
		val, err := d.value(nil, set, v, "defaults."+key)
		if err == nil {
			s.Set(set, val)
		}
		return err
	})
	*def = Defaults{Buffer: s.Buffer, OnFull: s.OnFull, Resync: s.Resync}
	return err
}

func (d *decoder) sinks(n *yaml.Node, f *File) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return d.errorf(n, "sinks: want a list of sinks, got %s", describe(n))
	}
	names := make(map[string]*yaml.Node)
	for i, item := range n.Content {
		item = resolve(item)
		s, nameNode, err := d.sink(item, i)
		if err != nil {
			return err
		}
		if nameNode != nil {
			if first, ok := names[s.Name]; ok {
				return d.errorf(nameNode, "duplicate sink name %q (also at line %d); give each sink its own name", s.Name, first.Line)
			}
			names[s.Name] = nameNode
		}
		f.Sinks = append(f.Sinks, s)
	}
	return nil
}

// sink decodes the i'th sink. It also returns the node of the name the user gave, if any.
func (d *decoder) sink(n *yaml.Node, i int) (sinkkind.Spec, *yaml.Node, error) {
	path := fmt.Sprintf("sinks[%d]", i)
	if n.Kind != yaml.MappingNode {
		return sinkkind.Spec{}, nil, d.errorf(n, "%s: want a mapping with a sink's settings, got %s", path, describe(n))
	}
	// Find the name and type first: messages name the sink, and the type says which
	// fields are allowed.
	who := path // how sink-level messages name the sink
	var typeNode *yaml.Node
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := resolve(n.Content[j]), resolve(n.Content[j+1])
		if k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode || isNull(v) {
			continue
		}
		switch k.Value {
		case "name":
			if v.Value != "" {
				who = fmt.Sprintf("sink %q", v.Value)
			}
		case "type":
			typeNode = v
		}
	}
	// Without a type the settings are still read, for their errors, and only the
	// common ones kept.
	var s sinkkind.Spec
	if typeNode != nil {
		kind, ok := sinkkind.Lookup(typeNode.Value)
		if !ok {
			return sinkkind.Spec{}, nil, d.errorf(typeNode, "%s.type: unknown sink type %q; use %s", path, typeNode.Value, sinkkind.NameList())
		}
		s = sinkkind.New(kind)
	}
	s.Origin = fmt.Sprintf("%s:%d:%d", d.name, n.Line, n.Column)
	var nameNode *yaml.Node
	groups := map[string]*yaml.Node{}
	err := d.mapping(n, "in "+who, path+".", sinkkind.YAMLKeys(""), func(key string, k, v *yaml.Node) error {
		field := path + "." + key
		set, _ := sinkkind.YAMLRow(key)
		if s.Kind != nil {
			own, ok := s.Kind.YAMLRow(key)
			if !ok {
				return d.errorf(k, "%s: not valid for %s sinks (only for %s)", field, s.Kind.Name, set.KindsTaking())
			}
			set = own
		}
		switch set.Value {
		case sinkkind.KindName:
			if typeNode == nil {
				return d.errorf(v, "%s: want one of %s, got %s", field, sinkkind.NameList(), describe(v))
			}
			return nil
		case sinkkind.Group:
			groups[key] = v
			return d.group(&s, v, field, key+".")
		}
		val, err := d.value(s.Kind, set, v, field)
		if err != nil {
			return err
		}
		s.Set(set, val)
		if key == "name" && s.Name != "" {
			nameNode = v
		}
		return nil
	})
	if err != nil {
		return sinkkind.Spec{}, nil, err
	}
	if s.Kind == nil {
		return sinkkind.Spec{}, nil, d.errorf(n, "%s: missing \"type\"; use %s", who, sinkkind.NameList())
	}
	kind := s.Kind
	if target := kind.TargetRow(); !kind.OptionalTarget && blank(*s.Text(target.Key())) {
		return sinkkind.Spec{}, nil, d.errorf(n, "%s: missing %q, which %s %s sink needs", who, target.YAML, article(kind.Name), kind.Name)
	}
	defaultFormat(&s)
	for _, set := range kind.Rows {
		if set.Needs != "" && s.IsSet(set.Key()) && !s.IsSet(set.Needs) {
			group, _, _ := strings.Cut(set.YAML, ".")
			needed, _ := kind.Row(set.Needs)
			return sinkkind.Spec{}, nil, d.errorf(groups[group], "%s.%s %s: add %s", path, group, set.NeedsWhy, strings.TrimPrefix(needed.YAML, group+"."))
		}
	}
	if s.Name == "" {
		s.Name, s.AutoName = kind.NameOf(s.Settings), true
	}
	return s, nameNode, nil
}

// group decodes a mapping of settings, such as rotate, whose keys are the rows keyed
// prefix+KEY.
func (d *decoder) group(s *sinkkind.Spec, n *yaml.Node, path, prefix string) error {
	if isNull(n) {
		return nil
	}
	return d.mapping(n, "in "+path, path+".", sinkkind.YAMLKeys(prefix), func(key string, k, v *yaml.Node) error {
		set, _ := sinkkind.YAMLRow(prefix + key)
		val, err := d.value(s.Kind, set, v, path+"."+key)
		if err != nil {
			return err
		}
		s.Set(set, val)
		return nil
	})
}

// value reads a config file value as its setting says: booleans and numbers from YAML's
// own types, the rest from a string, as --sink reads them (Setting.ParseText).
func (d *decoder) value(k *sinkkind.Kind, set *sinkkind.Setting, n *yaml.Node, field string) (sinkkind.Value, error) {
	var v sinkkind.Value
	var err error
	switch set.Value {
	case sinkkind.Bool:
		v.On, err = d.bool(n, field)
	case sinkkind.Count:
		v.N, err = d.count(n, field)
	case sinkkind.Buffer:
		v.N, err = d.buffer(n, field)
	default:
		var text string
		if set.Value != sinkkind.EventTypes && set.Value != sinkkind.Transitions || n.Kind != yaml.SequenceNode {
			text, err = d.str(n, field)
		} else {
			// A list, or its items in one string: [ADDED, DELETED] or ADDED,DELETED.
			var items []string
			for _, item := range n.Content {
				s, err := d.str(resolve(item), field)
				if err != nil {
					return sinkkind.Value{}, err
				}
				items = append(items, s)
			}
			text = strings.Join(items, ",")
		}
		if err != nil {
			return sinkkind.Value{}, err
		}
		if v, err = set.ParseText(k, text); err != nil {
			return sinkkind.Value{}, d.errorf(n, "%s: %v", field, err)
		}
	}
	return v, err
}

// article is "a" or "an", for "a file sink", "an xyz sink".
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

// str decodes a string. Any scalar will do (a path may look like a number); null is "".
func (d *decoder) str(n *yaml.Node, field string) (string, error) {
	if isNull(n) {
		return "", nil
	}
	if n.Kind != yaml.ScalarNode {
		return "", d.errorf(n, "%s: want a string, got %s", field, describe(n))
	}
	return n.Value, nil
}

func (d *decoder) bool(n *yaml.Node, field string) (bool, error) {
	if isNull(n) {
		return false, nil
	}
	var b bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
		return false, d.errorf(n, "%s: want true or false, got %s", field, describe(n))
	}
	return b, nil
}

func (d *decoder) int(n *yaml.Node, field string) (int, error) {
	if isNull(n) {
		return 0, nil
	}
	var i int
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&i) != nil {
		return 0, d.errorf(n, "%s: want an integer, got %s", field, describe(n))
	}
	return i, nil
}

// count decodes a non-negative integer.
func (d *decoder) count(n *yaml.Node, field string) (int, error) {
	i, err := d.int(n, field)
	if err == nil && i < 0 {
		err = d.errorf(n, "%s: must not be negative, got %d", field, i)
	}
	return i, err
}

func (d *decoder) buffer(n *yaml.Node, field string) (int, error) {
	i, err := d.int(n, field)
	if err != nil {
		return 0, err
	}
	if err := sinkkind.CheckBuffer(i); err != nil {
		return 0, d.errorf(n, "%s: %v", field, err)
	}
	return i, nil
}
