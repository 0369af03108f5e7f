package main

import (
	"slices"
	"strings"
	"testing"
)

func TestParseVariants(t *testing.T) {
	names := func(vs []variant) []string {
		var out []string
		for _, v := range vs {
			out = append(out, v.name)
		}
		return out
	}
	all, err := parseVariants("all,other=KUBEEVENTS_X+KUBEEVENTS_Y")
	if err != nil {
		t.Fatal(err)
	}
	want := append(names(pieceVariants), "other", "alloff", "control")
	if got := names(all); !slices.Equal(got, want) {
		t.Errorf("all,other=...: %v, want %v", got, want)
	}
	alloff := all[len(all)-2]
	if !slices.Contains(alloff.envs, "KUBEEVENTS_Y") || !slices.Contains(alloff.envs, "KUBEEVENTS_FAST_PATHS") {
		t.Errorf("alloff turns off %v, want every piece's switch and the named ones", alloff.envs)
	}
	if c := all[len(all)-1]; len(c.env()) != 0 {
		t.Errorf("control sets %v, want nothing", c.env())
	}
	for _, bad := range []string{"nope", "x=", "=X"} {
		if _, err := parseVariants(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// A feature's variant turns it off by its flag, is run by name only (not by "all", the
// speed pieces), and gives its cost the other way round: with over without.
func TestFeatureVariant(t *testing.T) {
	vs, err := parseVariants("noby,control")
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[0].name != "noby" || !slices.Equal(vs[0].args, []string{"--no-by"}) || len(vs[0].env()) != 0 {
		t.Fatalf("noby: %+v", vs)
	}
	all, _ := parseVariants("all")
	if slices.ContainsFunc(all, func(v variant) bool { return v.name == "noby" }) {
		t.Error("all runs the noby variant: its switch is a feature's, not a speed piece's")
	}
	p := &phaseResult{Clients: map[string]*clientResult{
		"kubeevents_json":     {CPUPerEventUS: 110, RSSMB: 50, RSSWatchMB: 40},
		"kubeevents_off_noby": {CPUPerEventUS: 100, RSSMB: 50, RSSWatchMB: 32},
	}}
	f := map[string]float64{}
	variantFigures(p, vs, f)
	if f["by_cpu_ratio"] != 1.1 || f["by_peak_rss_ratio"] != 1 || f["by_watch_rss_ratio"] != 1.25 {
		t.Errorf("figures %v, want by_cpu_ratio 1.1, by_peak_rss_ratio 1, by_watch_rss_ratio 1.25", f)
	}
	ts := featureTargets(vs, "status", f)
	if len(ts) != 3 || ts[0].Name != "by_cpu_ratio_status" || !ts[0].Met || ts[2].Met {
		t.Errorf("targets %+v, want by_*_status, the CPU met and the watching RSS not", ts)
	}
}

// The store variant adds a store sink: its figures are with it over without, its
// target 1.3.
func TestStoreVariant(t *testing.T) {
	vs, err := parseVariants("store")
	if err != nil || len(vs) != 1 || vs[0].args[0] != "--sink" || !strings.HasPrefix(vs[0].args[1], "store(max-size=1GiB)=") {
		t.Fatalf("store: %+v, %v", vs, err)
	}
	p := &phaseResult{Clients: map[string]*clientResult{
		"kubeevents_json":      {CPUPerEventUS: 100, RSSMB: 50, RSSWatchMB: 40},
		"kubeevents_off_store": {CPUPerEventUS: 125, RSSMB: 60, RSSWatchMB: 40},
	}}
	f := map[string]float64{}
	variantFigures(p, vs, f)
	if f["store_cpu_ratio"] != 1.25 || f["store_peak_rss_ratio"] != 1.2 {
		t.Errorf("figures %v, want store_cpu_ratio 1.25, store_peak_rss_ratio 1.2", f)
	}
	if ts := featureTargets(vs, "status", f); len(ts) != 1 || !ts[0].Met || ts[0].Name != "store_cpu_ratio_status" {
		t.Errorf("targets %+v, want store_cpu_ratio_status met at 1.3", ts)
	}
}

// The control binary's client gives the first binary's CPU per event and RSS over its
// own, and nothing without it.
func TestControlFigures(t *testing.T) {
	p := &phaseResult{Clients: map[string]*clientResult{
		"kubeevents_json": {CPUPerEventUS: 99, RSSMB: 60, RSSWatchMB: 30}, "kubectl": {CPUPerEventUS: 300},
		"floor_typed": {CPUPerEventUS: 80}, "floor_dynamic": {CPUPerEventUS: 120}, "kubeevents_3sinks": {CPUPerEventUS: 120},
	}}
	if _, ok := modeFigures(p)["cpu_ratio_vs_control"]; ok {
		t.Error("without a control: a cpu_ratio_vs_control")
	}
	p.Clients[controlClient] = &clientResult{CPUPerEventUS: 90, RSSMB: 50, RSSWatchMB: 40}
	f := modeFigures(p)
	if f["cpu_ratio_vs_control"] != 1.1 || f["peak_rss_ratio_vs_control"] != 1.2 || f["watch_rss_ratio_vs_control"] != 0.75 {
		t.Errorf("figures %v, want cpu_ratio_vs_control 1.1, peak_rss_ratio_vs_control 1.2, watch_rss_ratio_vs_control 0.75", f)
	}
}

// Health's variant turns it on (--health): its figures are with (the variant) over
// without (the all-on client, which computes none), and its target is 5% of CPU per event.
func TestFeatureVariantOn(t *testing.T) {
	vs, err := parseVariants("health")
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || !vs[0].on || !slices.Equal(vs[0].args, []string{"--health"}) {
		t.Fatalf("health: %+v", vs)
	}
	p := &phaseResult{Clients: map[string]*clientResult{
		"kubeevents_json":       {CPUPerEventUS: 100, RSSMB: 50, RSSWatchMB: 40},
		"kubeevents_off_health": {CPUPerEventUS: 104, RSSMB: 50, RSSWatchMB: 40},
	}}
	f := map[string]float64{}
	variantFigures(p, vs, f)
	if f["health_cpu_ratio"] != 1.04 {
		t.Errorf("health_cpu_ratio %v, want 1.04 (with over without)", f["health_cpu_ratio"])
	}
	ts := featureTargets(vs, "status", f)
	if len(ts) != 1 || ts[0].Name != "health_cpu_ratio_status" || ts[0].Limit != 1.05 || !ts[0].Met {
		t.Errorf("targets %+v, want health_cpu_ratio_status met under 1.05", ts)
	}
	f["health_cpu_ratio"] = 1.06
	if ts := featureTargets(vs, "status", f); ts[0].Met {
		t.Errorf("1.06 met the 5%% target")
	}
}
