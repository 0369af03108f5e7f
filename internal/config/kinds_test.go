package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/sinkkind/filesink"
	"github.com/kubeevents/kubeevents/internal/sinkkind/terminalsink"
)

// sampleValue is a valid value of each setting type, as a --sink option value and as
// YAML, for a sink of kind k.
func sampleValue(k *sinkkind.Kind, set *sinkkind.Setting) (flag, yaml string) {
	switch {
	case set.Key() == "url":
		return "https://hooks.example.com/x?a=1", "https://hooks.example.com/x?a=1"
	case set.Key() == "command":
		return `./notify.sh --to "on call"`, `'./notify.sh --to "on call"'`
	case k.Name == "store" && set.Key() == "max-age":
		return "14d", "14d"
	case k.Name == "store" && set.Key() == "max-size":
		return "5GiB", "5GiB"
	}
	switch set.Value {
	case sinkkind.Text:
		return "my-sink", `"my-sink"`
	case sinkkind.Path:
		return "out.txt", "out.txt"
	case sinkkind.Expr:
		if set.Flag != "" { // an option, not the target: quoted
			return `"select(.type==\"DELETED\")"`, `'select(.type=="DELETED")'`
		}
		return `select(.type=="DELETED")`, `'select(.type=="DELETED")'`
	case sinkkind.Bool:
		return "true", "true"
	case sinkkind.Count:
		return "3", "3"
	case sinkkind.Buffer:
		return "77", "77"
	case sinkkind.Policy:
		return "coalesce", "coalesce"
	case sinkkind.Period:
		return "30s", "30s"
	case sinkkind.EventTypes:
		return "ADDED|DELETED", "ADDED,DELETED"
	case sinkkind.Transitions:
		return "crashloop,oomkilled", "[crashloop, oomkilled]" // a bare item after on= continues its list
	case sinkkind.Format:
		last := k.Formats[len(k.Formats)-1]
		return last, last
	case sinkkind.Duration:
		return "250ms", "250ms"
	}
	panic(fmt.Sprintf("no sample for setting %q", set.Key()))
}

// TestKindsParseTheSameFromFlagAndFile: a sink of every kind with every option it takes
// parses to the same Spec from --sink and from the config file.
func TestKindsParseTheSameFromFlagAndFile(t *testing.T) {
	for _, k := range sinkkind.Kinds() {
		t.Run(k.Name, func(t *testing.T) {
			var opts []string
			yaml := "sinks:\n  - type: " + k.Name + "\n"
			var rotate []string
			target := k.TargetRow()
			for _, set := range sinkkind.Table() {
				if _, own := k.Own(set); set.Flag == "" || !own || set.Key() == target.Key() {
					continue
				}
				f, y := sampleValue(k, set)
				opts = append(opts, set.Flag+"="+f)
				if key, ok := strings.CutPrefix(set.YAML, "rotate."); ok {
					rotate = append(rotate, key+": "+y)
				} else {
					yaml += "    " + set.YAML + ": " + y + "\n"
				}
			}
			if len(rotate) > 0 {
				yaml += "    rotate: {" + strings.Join(rotate, ", ") + "}\n"
			}
			spec := k.Name + "(" + strings.Join(opts, ",") + ")"
			if target.Flag == "" {
				f, y := sampleValue(k, target)
				spec += "=" + f
				yaml += "    " + target.YAML + ": " + y + "\n"
			}
			fromFlag, err := ParseSinkSpec(spec)
			if err != nil {
				t.Fatalf("ParseSinkSpec(%s): %v", spec, err)
			}
			file, err := Parse("c.yaml", []byte(yaml))
			if err != nil {
				t.Fatalf("Parse(%s): %v", yaml, err)
			}
			fromFile := file.Sinks[0]
			fromFlag.Origin, fromFile.Origin = "", ""
			if !reflect.DeepEqual(fromFlag, fromFile) {
				t.Errorf("--sink %s\n  = %+v %+v\nconfig file:\n%s  = %+v %+v", spec, fromFlag, fromFlag.Settings, yaml, fromFile, fromFile.Settings)
			}
			if fromFlag.Buffer != 77 || fromFlag.OnFull != listener.Coalesce || fromFlag.Resync != 30*time.Second {
				t.Errorf("--sink %s: the common settings did not arrive: %+v", spec, fromFlag)
			}
			for _, set := range k.Rows {
				if set.Value != sinkkind.Group && set != target && !fromFlag.IsSet(set.Key()) {
					t.Errorf("--sink %s: setting %q did not arrive: %+v", spec, set.Key(), fromFlag.Settings)
				}
			}
		})
	}
}

// TestKindsComplete: completion offers every option a kind takes, with its help, and
// the values the parser accepts.
func TestKindsComplete(t *testing.T) {
	for _, k := range sinkkind.Kinds() {
		keys := k.FlagKeys()
		if len(keys) == 0 {
			t.Errorf("%s: no options to complete", k.Name)
		}
		for _, key := range keys {
			if set, _ := k.Row(key); set.Help == "" {
				t.Errorf("%s: option %q has no help", k.Name, key)
			}
			values, isPath := k.OptionValues(key)
			set, _ := k.Row(key)
			for _, v := range values {
				spec := k.Name + "(" + key + "=" + v + ")"
				if set.Needs != "" {
					spec = k.Name + "(" + set.Needs + "=1," + key + "=" + v + ")"
				}
				if !k.OptionalTarget {
					f, _ := sampleValue(k, k.TargetRow())
					spec += "=" + f
				}
				if _, err := ParseSinkSpec(spec); err != nil {
					t.Errorf("%s: completion offers %s, which does not parse: %v", k.Name, spec, err)
				}
			}
			if isPath != (set.Value == sinkkind.Path) {
				t.Errorf("%s: option %q completes as a path: %v", k.Name, key, isPath)
			}
		}
	}
	if v, _ := filesink.Kind.OptionValues("format"); !slices.Equal(v, []string{"json", "pretty", "yaml"}) {
		t.Errorf("file formats to complete = %v", v)
	}
	if v, _ := terminalsink.Kind.OptionValues("raw"); v != nil {
		t.Errorf("terminal sinks take no raw, yet it completes %v", v)
	}
}
