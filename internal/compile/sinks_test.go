package compile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubeevents/kubeevents/internal/config"
	"github.com/kubeevents/kubeevents/internal/sinkkind/jqsink"
	_ "github.com/kubeevents/kubeevents/internal/sinkkind/kinds" // every sink kind
)

// The command line decides what goes to stdout: the config file's stdout sinks give way
// to -o, --jq, --no-screen and --sink flags that write to stdout; its other sinks stay.
func TestConfigFileStdoutGivesWayToFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	content := `sinks:
  - {name: screen, type: terminal, format: pretty, resync: 30s}
  - {name: types, type: jq, expr: .type}
  - {name: archive, type: file, path: events.jsonl}
`
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	file, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		cl    SinkFlags
		sinks string // name:type:format-or-expr, in order
	}{
		{"no flags", SinkFlags{}, "screen:terminal:pretty types:jq:.type archive:file:json"},
		{"-o json", SinkFlags{Output: "json", OutputGiven: true}, "screen:terminal:json archive:file:json"},
		{"--jq", SinkFlags{JQ: ".object"}, "screen:jq:.object archive:file:json"},
		{"--no-screen", SinkFlags{NoScreen: true}, "archive:file:json"},
		{"--sink to stdout", SinkFlags{Specs: []string{"file=-"}}, "archive:file:json stdout:file:json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := c.cl
			cl.Buffer, cl.OnFull = 1024, "block"
			if cl.Output == "" {
				cl.Output = "pretty"
			}
			sinks, err := Sinks(file, cl)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range sinks {
				what := s.Format()
				if jq, ok := s.Settings.(*jqsink.Settings); ok {
					what = jq.Expr
				}
				got = append(got, s.Name+":"+s.Kind.Name+":"+what)
			}
			if strings.Join(got, " ") != c.sinks {
				t.Errorf("sinks %q, want %q", strings.Join(got, " "), c.sinks)
			}
			if c.name == "-o json" && sinks[0].Resync != 30*time.Second {
				t.Errorf("-o json lost the file's settings of its screen sink: %+v", sinks[0])
			}
		})
	}
}

// A sink writing to the device stdout is (cron's and nohup's /dev/null) is not the
// standard output: writing a device twice is harmless, so --no-screen allows it. A
// regular file that stdout is stays stdout.
func TestDeviceStdoutIsNotStdout(t *testing.T) {
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	cl := SinkFlags{Buffer: 1, OnFull: "block", Output: "pretty", NoScreen: true, Stdout: devNull,
		Specs: []string{"jq(output=/dev/null)=."}}
	sinks, err := Sinks(nil, cl)
	if err != nil || len(sinks) != 1 || sinks[0].Settings.(*jqsink.Settings).Output != os.DevNull {
		t.Fatalf("--no-screen with a jq sink to /dev/null, stdout /dev/null: %+v, %v", sinks, err)
	}
	regular, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer regular.Close()
	cl.Stdout, cl.Specs = regular, []string{"jq(output=" + regular.Name() + ")=."}
	if _, err := Sinks(nil, cl); err == nil || !strings.Contains(err.Error(), "--no-screen turns off the standard output stream") {
		t.Errorf("--no-screen with a jq sink to the file stdout is: %v", err)
	}
}
