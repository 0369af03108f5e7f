package switches

import (
	"strings"
	"testing"

	"github.com/kubeevents/kubeevents/internal/fastpath"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestOnUnlessOff(t *testing.T) {
	for value, want := range map[string]bool{"": true, "on": true, "ON": true, "off": false, "Off": false, "OFF": false} {
		for _, s := range All() {
			if got := s.On(env(map[string]string{s.Env: value})); got != want {
				t.Errorf("%s=%q: On = %v, want %v", s.Env, value, got, want)
			}
		}
	}
}

func TestCheckNamesTheBadSwitch(t *testing.T) {
	if err := Check(env(map[string]string{FastPaths.Env: "on", StartupPages.Env: "OFF"})); err != nil {
		t.Fatalf("on and off: %v", err)
	}
	for _, s := range All() {
		err := Check(env(map[string]string{s.Env: "no"}))
		if err == nil || !strings.Contains(err.Error(), s.Env+`="no"`) || !strings.Contains(err.Error(), "want on or off") {
			t.Errorf("%s=no: %v, want an error naming it", s.Env, err)
		}
	}
}

func TestEveryEnvOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range All() {
		if !strings.HasPrefix(s.Env, "KUBEEVENTS_") || s.Off == "" || seen[s.Env] {
			t.Errorf("switch %+v: want a KUBEEVENTS_ variable of its own and what off does", s)
		}
		seen[s.Env] = true
	}
}

// Settings turns each switch's off into its own field, and nothing else.
func TestSettingsOffOneByOne(t *testing.T) {
	if got, err := Settings(env(nil)); err != nil || got != (fastpath.Settings{}) {
		t.Fatalf("no variable set: %+v, %v; want every piece on", got, err)
	}
	for sw, want := range map[Switch]fastpath.Settings{
		FastPaths:          {NoFastPaths: true},
		WireDecoders:       {NoWireDecoders: true},
		OneProcessor:       {Runtime: fastpath.Runtime{NoOneProcessor: true}},
		StartupPages:       {Runtime: fastpath.Runtime{NoStartupPages: true}},
		RelistInPlace:      {Recovery: fastpath.Recovery{NoRelistInPlace: true}},
		EndedEarlyBookmark: {Recovery: fastpath.Recovery{NoEndedEarlyBookmark: true}},
		ReadinessProbe:     {Recovery: fastpath.Recovery{NoReadinessProbe: true}},
	} {
		if got, err := Settings(env(map[string]string{sw.Env: "Off"})); err != nil || got != want {
			t.Errorf("%s=Off: %+v, %v; want %+v", sw.Env, got, err, want)
		}
	}
	if got, _ := Settings(env(map[string]string{"GOMAXPROCS": "2"})); !got.Runtime.NoOneProcessor {
		t.Errorf("GOMAXPROCS=2: %+v, want the processors left to Go", got)
	}
	if _, err := Settings(env(map[string]string{StartupPages.Env: "no"})); err == nil {
		t.Errorf("%s=no: no error", StartupPages.Env)
	}
}
