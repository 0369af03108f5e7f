package config

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kubeevents/kubeevents/internal/listener"
	"github.com/kubeevents/kubeevents/internal/render"
	"github.com/kubeevents/kubeevents/internal/sink"
	"github.com/kubeevents/kubeevents/internal/sinkkind"
	"github.com/kubeevents/kubeevents/internal/sinkkind/httpsink"
)

func TestParseSinkSpec(t *testing.T) {
	tests := []struct {
		spec string
		want Sink
	}{
		{`file=events.jsonl`, Sink{Name: "events.jsonl", AutoName: true, Type: "file", Format: "json", Path: "events.jsonl"}},
		{`file=logs/k8s/events.jsonl`, Sink{Name: "events.jsonl", AutoName: true, Type: "file", Format: "json", Path: "logs/k8s/events.jsonl"}},
		{`file(format=pretty,max-size=100,max-backups=5,compress)=events.log`, Sink{
			Name: "events.log", AutoName: true, Type: "file", Format: "pretty", Path: "events.log",
			Rotate: sink.Rotation{MaxSizeMB: 100, MaxBackups: 5, Compress: true},
		}},
		{`file(name=archive,format=yaml,max-size=1,max-age=7,compress=false,buffer=0,on-full=coalesce,resync=1s)=a b=c.log`, Sink{
			Name: "archive", Type: "file", Format: "yaml", Path: "a b=c.log",
			Rotate: sink.Rotation{MaxSizeMB: 1, MaxAgeDays: 7}, OnFull: listener.Coalesce, Resync: time.Second,
		}},
		{`file()=x`, Sink{Name: "x", AutoName: true, Type: "file", Format: "json", Path: "x"}},
		{`file( name = a , format = json )= spaced `, Sink{Name: "a", Type: "file", Format: "json", Path: " spaced "}},
		{`jq=select(.type=="DELETED")`, Sink{Name: "jq", AutoName: true, Type: "jq", Expr: `select(.type=="DELETED")`}},
		{`jq(raw,output=deletions.txt,on-full=drop-oldest,buffer=4096)=select(.type=="DELETED") | .object.metadata.name`, Sink{
			Name: "jq", AutoName: true, Type: "jq", Raw: true, Output: "deletions.txt", OnFull: listener.DropOldest, Buffer: 4096,
			Expr: `select(.type=="DELETED") | .object.metadata.name`,
		}},
		{`jq={a: .x, b: (.y, "p,q=r)")} | [.a, .b]`, Sink{Name: "jq", AutoName: true, Type: "jq", Expr: `{a: .x, b: (.y, "p,q=r)")} | [.a, .b]`}},
		{`jq(name=q)=(.a)`, Sink{Name: "q", Type: "jq", Expr: `(.a)`}},
		{`jq(output="a,b).txt",raw=true)=.`, Sink{Name: "jq", AutoName: true, Type: "jq", Output: "a,b).txt", Raw: true, Expr: "."}},
		{`jq(output="q\"uo\\te")=.`, Sink{Name: "jq", AutoName: true, Type: "jq", Output: `q"uo\te`, Expr: "."}},
		{`jq(output = "x" , raw=false)=.`, Sink{Name: "jq", AutoName: true, Type: "jq", Output: "x", Expr: "."}},
		{`jq(output=-)=.`, Sink{Name: "jq", AutoName: true, Type: "jq", Output: "-", Expr: "."}},
		{`terminal(format=json,resync=30s)`, Sink{Name: "screen", AutoName: true, Type: "terminal", Format: "json", Resync: 30 * time.Second}},
		{`terminal`, Sink{Name: "screen", AutoName: true, Type: "terminal"}},
		{`terminal=wide`, Sink{Name: "screen", AutoName: true, Type: "terminal", Format: "wide"}},
		{`terminal(name=tty,resync=0)=name`, Sink{Name: "tty", Type: "terminal", Format: "name"}},
		{`terminal(resync=1h30m)`, Sink{Name: "screen", AutoName: true, Type: "terminal", Resync: 90 * time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := ParseSinkSpec(tt.spec)
			if err != nil {
				t.Fatalf("ParseSinkSpec: %v", err)
			}
			tt.want.Origin = `--sink ` + quote(tt.spec)
			if want := tt.want.spec(); !reflect.DeepEqual(got, want) {
				t.Errorf("ParseSinkSpec(%q)\n got  %+v %+v\n want %+v %+v", tt.spec, got, got.Settings, want, want.Settings)
			}
		})
	}
}

func quote(s string) string { return strconv.Quote(s) }

func TestParseSinkSpecErrors(t *testing.T) {
	const syntax = " (syntax: KIND[(OPTIONS)][=TARGET])"
	const fileOpts = "file sinks take: name, format, buffer, on-full, resync, event-types, on, fold, group, cooldown, resolve-after, digest, max-size, max-backups, max-age, compress"
	tests := []struct {
		spec, want string
	}{
		// kind
		{`filez=x`, `unknown sink kind "filez"; use terminal, file, jq, exec, http or store` + syntax},
		{`File=x`, `unknown sink kind "File"; use terminal, file, jq, exec, http or store` + syntax},
		{`file)x`, `unknown sink kind "file)x"; use terminal, file, jq, exec, http or store` + syntax},
		{``, `missing sink kind; use terminal, file, jq, exec, http or store` + syntax},
		{`=x`, `missing sink kind; use terminal, file, jq, exec, http or store` + syntax},
		{`(name=a)`, `missing sink kind; use terminal, file, jq, exec, http or store` + syntax},
		// shape
		{`file(`, `missing ')' to close the option list` + syntax},
		{`file(format=json`, `missing ')' to close the option list` + syntax},
		{`file(compress`, `missing ')' to close the option list` + syntax},
		{`file(name=a,`, `missing ')' to close the option list` + syntax},
		{`jq(output="a)=.`, `unterminated quote in the value of option "output"; end it with '"'`},
		{`jq(output="a\`, `unterminated quote in the value of option "output"; end it with '"'`},
		{`jq(output="a\n")=.`, `invalid escape "\\n" in the value of option "output"; inside quotes only \" and \\ are escapes`},
		{`jq(output="a"b)=.`, `unexpected 'b' after the quoted value of option "output"; quote the whole value`},
		{`jq(output=a"b")=.`, `unexpected '"' inside the value of option "output"; quote the whole value: output="..."`},
		{"jq(0\n0=0\"", `unexpected '"' inside the value of option "0\n0"; quote the whole value`},
		{`jq("raw")=.`, `unexpected '"' in an option name; only values may be quoted` + syntax},
		{`file(,)=x`, `empty option in the option list; options are key=value separated by ','` + syntax},
		{`file(=a)=x`, `empty option in the option list; options are key=value separated by ','` + syntax},
		{`file(name=a)x`, `unexpected 'x' after the option list; put the target after '='` + syntax},
		{`file(name=a)(b)=x`, `unexpected '(' after the option list; put the target after '='` + syntax},
		// options
		{`file(fromat=json)=x`, `unknown option "fromat" (did you mean "format"?); ` + fileOpts},
		{`file(max_size=1)=x`, `unknown option "max_size" (did you mean "max-size"?); ` + fileOpts},
		{`file(colour=always)=x`, `unknown option "colour"; ` + fileOpts},
		{`terminal(Format=json)`, `unknown option "Format" (did you mean "format"?); terminal sinks take: name, format, buffer, on-full, resync, event-types, on, fold, group, cooldown, resolve-after, digest`},
		{`terminal(rwa)`, `unknown option "rwa"; terminal sinks take: name, format, buffer, on-full, resync, event-types, on, fold, group, cooldown, resolve-after, digest`},
		{`jq(rwa)=.`, `unknown option "rwa" (did you mean "raw"?); jq sinks take: name, buffer, on-full, resync, raw, output, event-types, on, fold, group, cooldown, resolve-after, digest`},
		{`file(path=x)`, `unknown option "path"; the path is the target: file(...)=PATH`},
		{`jq(expr=.)`, `unknown option "expr"; the expression is the target: jq(...)=EXPR`},
		{`file(raw)=x`, `option "raw" is for jq sinks only; ` + fileOpts},
		{`terminal(output=x)`, `option "output" is for jq sinks only; terminal sinks take: name, format, buffer, on-full, resync, event-types, on, fold, group, cooldown, resolve-after, digest`},
		{`jq(format=json)=.`, `option "format" is for terminal, file or http sinks only; jq sinks take: name, buffer, on-full, resync, raw, output, event-types, on, fold, group, cooldown, resolve-after, digest`},
		{`jq(compress)=.`, `option "compress" is for file sinks only; jq sinks take: name, buffer, on-full, resync, raw, output, event-types, on, fold, group, cooldown, resolve-after, digest`},
		{`file(name=a,name=b)=x`, `option "name" given twice; give it once`},
		{`file(compress,compress=false)=x`, `option "compress" given twice; give it once`},
		{`file(name=)=x`, `option "name" needs a value: name=VALUE`},
		{`file(format)=x`, `option "format" needs a value: format=VALUE`},
		{`jq(output="")=.`, `option "output" needs a value: output=VALUE`},
		{`jq(raw=yes)=.`, `option "raw": want true or false (or just "raw"), got "yes"`},
		{`file(max-size=1,compress=1)=x`, `option "compress": want true or false (or just "compress"), got "1"`},
		// values
		{`file(buffer=lots)=x`, `option "buffer": want a non-negative whole number, got "lots"`},
		{`file(buffer=-1)=x`, `option "buffer": want a non-negative whole number, got "-1"`},
		{`file(buffer=99999999999999999999)=x`, `option "buffer": want a non-negative whole number, got "99999999999999999999"`},
		{`file(buffer=16777217)=x`, `option "buffer": must be at most 16777216, got 16777217`},
		{`file(max-size=1.5)=x`, `option "max-size": want a non-negative whole number, got "1.5"`},
		{`file(max-size=1,max-backups=-2)=x`, `option "max-backups": want a non-negative whole number, got "-2"`},
		{`file(max-size=1,max-age=a week)=x`, `option "max-age": want a non-negative whole number, got "a week"`},
		{`file(resync=5x)=x`, `option "resync": invalid duration "5x"; use a number with a unit, e.g. 30s, 5m or 1h`},
		{`file(resync=30)=x`, `option "resync": invalid duration "30"; use a number with a unit, e.g. 30s, 5m or 1h`},
		{`terminal(resync=500ms)`, `option "resync": 500ms is too short; use at least 1s (client-go would raise it to that), or 0 for no resync`},
		{`terminal(resync=-1s)`, `option "resync": must not be negative, got -1s`},
		{`file(on-full=drop)=x`, `unknown on-full policy "drop"; use one of: block, drop-oldest, drop-newest, coalesce`},
		{`terminal(format=bogus)`, `unknown output format "bogus"; use one of: pretty, wide, json, yaml, name`},
		{`terminal=bogus`, `unknown output format "bogus"; use one of: pretty, wide, json, yaml, name`},
		{`file(format=wide)=x`, `format "wide" is not available for file sinks; use one of: json, pretty, yaml`},
		{`file(format=xml)=x`, `unknown output format "xml"; use one of: json, pretty, yaml`},
		{`file(compress)=x`, `option "compress" needs a maximum size; rotation is off without one: add max-size=MB`},
		{`file(max-backups=3)=x`, `option "max-backups" needs a maximum size; rotation is off without one: add max-size=MB`},
		{`file(max-size=0,max-age=3)=x`, `option "max-age" needs a maximum size; rotation is off without one: add max-size=MB`},
		// target
		{`file`, `file needs a path: file=PATH` + syntax},
		{`file=`, `file needs a path: file=PATH` + syntax},
		{`file(name=a)`, `file needs a path: file=PATH` + syntax},
		{`jq`, `jq needs an expression: jq=EXPR` + syntax},
		{`jq=`, `jq needs an expression: jq=EXPR` + syntax},
		{`jq(raw)= `, `jq needs an expression: jq=EXPR` + syntax},
		{`terminal=`, `terminal needs a format after '=': terminal=FORMAT` + syntax},
		{`terminal(format=json)=wide`, `format given twice, as option and as =TARGET; give it once`},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			got, err := ParseSinkSpec(tt.spec)
			if err == nil {
				t.Fatalf("ParseSinkSpec(%q) = %+v, want an error", tt.spec, got)
			}
			want := `--sink ` + quote(tt.spec) + `: ` + tt.want
			if err.Error() != want {
				t.Errorf("ParseSinkSpec(%q) error\n got  %s\n want %s", tt.spec, err, want)
			}
			if !reflect.DeepEqual(got, sinkkind.Spec{}) {
				t.Errorf("ParseSinkSpec(%q) returned %+v with its error, want a zero Sink", tt.spec, got)
			}
		})
	}
}

// TestParseSinkSpecReusesLists checks that every policy and format the listener and
// render packages know is accepted, so the lists are not copied here.
// TestParseSinkSpecLists: a list option takes the items after it, separated by commas
// as options are, up to an option of the kind; | separates them too.
func TestParseSinkSpecLists(t *testing.T) {
	type want struct {
		On, Format, EventTypes string
		Batch                  int
		Single                 bool
		Fold                   *bool
	}
	for spec, want := range map[string]want{
		`http(on=crashloop,oomkilled)=http://x`:                      {On: "crashloop|oomkilled"},
		`http(on=crashloop,oomkilled,single)=http://x`:               {On: "crashloop|oomkilled", Single: true},
		`http(format=slack,on=crashloop|not-ready,batch=5)=http://x`: {On: "crashloop|not-ready", Format: "slack", Batch: 5},
		`http(on="crashloop,deleted")=http://x`:                      {On: "crashloop|deleted"},
		`http(event-types=ADDED,DELETED,fold=false)=http://x`:        {EventTypes: "ADDED|DELETED", Fold: new(false)},
		`http(fold)=http://x`:                                        {Fold: new(true)},
	} {
		s, err := ParseSinkSpec(spec)
		if err != nil {
			t.Errorf("ParseSinkSpec(%s): %v", spec, err)
			continue
		}
		h := s.Settings.(*httpsink.Settings)
		if s.On != want.On || s.Format() != want.Format || h.Batch != want.Batch || h.Single != want.Single ||
			s.EventTypes != want.EventTypes || fmt.Sprint(deref(s.Fold)) != fmt.Sprint(deref(want.Fold)) {
			t.Errorf("ParseSinkSpec(%s) = %+v %+v, want %+v", spec, s, h, want)
		}
	}
	for spec, wantErr := range map[string]string{
		`http(on=crashloop,Bad)=http://x`: `--sink "http(on=crashloop,Bad)=http://x": option "on": transition name "Bad": use lower-case letters, digits and '-', starting with a letter`,
		`http(on=)=http://x`:              `--sink "http(on=)=http://x": option "on" needs a value: on=VALUE`,
		`file(raw,on=x)=y`:                `--sink "file(raw,on=x)=y": option "raw" is for jq sinks only; file sinks take: name, format, buffer, on-full, resync, event-types, on, fold, group, cooldown, resolve-after, digest, max-size, max-backups, max-age, compress`,
	} {
		if _, err := ParseSinkSpec(spec); err == nil || err.Error() != wantErr {
			t.Errorf("ParseSinkSpec(%s) error\n got  %v\n want %s", spec, err, wantErr)
		}
	}
}

func deref(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

func TestParseSinkSpecReusesLists(t *testing.T) {
	for _, p := range listener.Policies() {
		if _, err := ParseSinkSpec("terminal(on-full=" + p + ")"); err != nil {
			t.Errorf("on-full=%s: %v", p, err)
		}
	}
	for _, f := range render.Formats() {
		if _, err := ParseSinkSpec("terminal=" + f); err != nil {
			t.Errorf("terminal=%s: %v", f, err)
		}
	}
}

// TestSinkSyntaxHelp: the flag help names every kind with its target and every option
// with its value, among the kinds that take it, and its examples parse.
func TestSinkSyntaxHelp(t *testing.T) {
	help := SinkSyntaxHelp()
	for _, s := range sinkkind.Table() {
		if s.Flag == "" {
			continue
		}
		group := regexp.MustCompile(`(?:^|[:;] )([^;:]*\b` + regexp.QuoteMeta(s.Syntax()) + `(?:,|\s)[^;]*)`).FindStringSubmatch(help)
		if group == nil {
			t.Errorf("SinkSyntaxHelp does not give option %q as %s", s.Flag, s.Syntax())
			continue
		}
		for _, k := range sinkkind.Kinds() {
			if _, own := k.Own(s); own && !s.IsCommon() && !strings.Contains(group[1], "("+k.Name) && !strings.Contains(group[1], " "+k.Name) {
				t.Errorf("SinkSyntaxHelp gives option %q in %q, without kind %s, which takes it", s.Flag, group[1], k.Name)
			}
		}
	}
	for _, k := range sinkkind.Kinds() {
		if !strings.Contains(help, k.TargetDoc+" for "+k.Name) {
			t.Errorf("SinkSyntaxHelp does not say what %s's target is", k.Name)
		}
	}
	for _, ex := range sinkExamples {
		if !strings.Contains(help, ex) {
			t.Errorf("SinkSyntaxHelp lacks the example %s", ex)
		}
		if _, err := ParseSinkSpec(ex); err != nil {
			t.Errorf("the help's example does not parse: %v", err)
		}
	}
}
