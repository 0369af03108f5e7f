package clientflags

import (
	"flag"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want schema.GroupVersionResource
		bad  bool
	}{
		{nil, schema.GroupVersionResource{Version: "v1", Resource: "pods"}, false},
		{[]string{"-resource", "bench.kubeevents.io/v1/widgets"}, schema.GroupVersionResource{Group: "bench.kubeevents.io", Version: "v1", Resource: "widgets"}, false},
		{[]string{"-resource", "widgets"}, schema.GroupVersionResource{}, true},
	} {
		fs := flag.NewFlagSet("client", flag.ContinueOnError)
		f := Register(fs, "the resource")
		if err := fs.Parse(append([]string{"-kubeconfig", "k", "-n", "ns"}, c.args...)); err != nil {
			t.Fatal(err)
		}
		gvr, err := f.GVR()
		if gvr != c.want || (err != nil) != c.bad || f.Kubeconfig != "k" || f.Namespace != "ns" {
			t.Errorf("%v: %+v, %v, %+v", c.args, gvr, err, f)
		}
	}
}
