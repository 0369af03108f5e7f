package recordtest_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kubeevents/kubeevents/hack/sinkdoc"
	"github.com/kubeevents/kubeevents/internal/complete"
	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/event"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	_ "github.com/kubeevents/kubeevents/internal/sinkkind/kinds"
	"github.com/kubeevents/kubeevents/internal/sinkkind/recordtest"
)

// The one line that adds the kind: after the product's kinds, which package kinds
// registered before this package's init.
func init() { sinkkind.Register(recordtest.Kind) }

// A kind registered by one line goes through everything a sink kind does: --sink, its
// messages, the config file, completion, the --sink help, the docs and the run's Build.
func TestAKindIsItsPackageAndOneLine(t *testing.T) {
	s, err := config.ParseSinkSpec("recordtest(opt=1)=target")
	want := sinkkind.Spec{Name: "recordtest", AutoName: true, Kind: recordtest.Kind, Settings: &recordtest.Settings{Target: "target", Opt: 1},
		Origin: `--sink "recordtest(opt=1)=target"`}
	if err != nil || !reflect.DeepEqual(s, want) {
		t.Errorf("--sink: %+v %+v, %v", s, s.Settings, err)
	}
	const syntax = " (syntax: KIND[(OPTIONS)][=TARGET])"
	for spec, msg := range map[string]string{
		"recordtest(opts=1)=x": `unknown option "opts" (did you mean "opt"?); recordtest sinks take: name, buffer, on-full, resync, event-types, on, fold, group, cooldown, resolve-after, digest, opt`,
		"recordtest":           `recordtest needs a name: recordtest=NAME` + syntax,
		"file(opt=1)=x":        `option "opt" is for recordtest sinks only; file sinks take: name, format, buffer, on-full, resync, event-types, on, fold, group, cooldown, resolve-after, digest, max-size, max-backups, max-age, compress`,
		"recordtests=x":        `unknown sink kind "recordtests"; use terminal, file, jq, exec, http, store or recordtest` + syntax,
	} {
		if _, err := config.ParseSinkSpec(spec); err == nil || err.Error() != `--sink "`+spec+`": `+msg {
			t.Errorf("--sink %s: %v, want %s", spec, err, msg)
		}
	}

	f, err := config.Parse("c.yaml", []byte("sinks:\n  - {type: recordtest, target: target, opt: 1, buffer: 7}\n"))
	if err != nil || len(f.Sinks) != 1 || !reflect.DeepEqual(f.Sinks[0].Settings, want.Settings) || f.Sinks[0].Buffer != 7 {
		t.Errorf("config file: %+v, %v", f, err)
	}
	for yaml, msg := range map[string]string{
		"sinks:\n  - {type: recordtest, opt: 1}\n":             `c.yaml:2:5: sinks[0]: missing "target", which a recordtest sink needs`,
		"sinks:\n  - {type: file, path: x, opt: 1}\n":          `c.yaml:2:27: sinks[0].opt: not valid for file sinks (only for recordtest)`,
		"sinks:\n  - {type: recordtest, target: x, opts: 1}\n": `c.yaml:2:35: unknown field "opts" in sinks[0] (did you mean "opt"?)`,
	} {
		if _, err := config.Parse("c.yaml", []byte(yaml)); err == nil || err.Error() != msg {
			t.Errorf("config file %q: %v, want %s", yaml, err, msg)
		}
	}

	for toComplete, want := range map[string]string{
		"rec":               "recordtest=\ta recording in memory, for tests: recordtest=NAME",
		"recordtest(":       "recordtest(opt=\tevents recorded at most",
		"recordtest(opt=1)": "recordtest(opt=1)=\tthen the recording's NAME",
	} {
		if comps, _ := complete.Sink(nil, nil, toComplete); !slices.Contains(comps, want) {
			t.Errorf("completing %q: %q, want %q among them", toComplete, comps, want)
		}
	}

	help := config.SinkSyntaxHelp()
	for _, part := range []string{"KIND is terminal, file, jq, exec, http, store or recordtest;", "the recording's name for recordtest.", "; opt=N (recordtest);"} {
		if !strings.Contains(help, part) {
			t.Errorf("the --sink help lacks %q:\n%s", part, help)
		}
	}
	doc := sinkdoc.Markdown()
	for _, row := range []string{"| `recordtest` | a recording in memory, for tests | the recording's name |",
		"| `opt=N` | `opt` | recordtest | a whole number, 0 or more | 0: all | events recorded at most |"} {
		if !strings.Contains(doc, row) {
			t.Errorf("docs/sinks.md's tables lack %q", row)
		}
	}

	out, err := sinkkind.Build(s, sinkkind.Env{})
	if err != nil {
		t.Fatal(err)
	}
	first, second := &event.Event{Type: event.Added}, &event.Event{Type: event.Deleted}
	_ = out.Write(first)
	_ = out.Write(second) // opt=1: one at most
	if got := recordtest.Recorded("target"); len(got) != 1 || got[0] != first {
		t.Errorf("recorded %v, want the first event alone", got)
	}
}
