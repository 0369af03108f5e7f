package sinkkind

import (
	"reflect"

	"github.com/kubeevents/kubeevents/internal/jq"
)

// Queries are the sink's compiled jq programs (a jq sink's expression, an http or exec
// sink's jq=), once Compile compiled them: what a run asks when it computes something
// only for the programs that read it.
func (s Spec) Queries() []*jq.Query {
	var qs []*jq.Query
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		for i := range v.NumField() {
			f := v.Type().Field(i)
			switch q, ok := v.Field(i).Interface().(*jq.Query); {
			case ok && f.IsExported() && q != nil:
				qs = append(qs, q)
			case f.Anonymous && f.Type.Kind() == reflect.Struct:
				walk(v.Field(i))
			}
		}
	}
	if s.Settings != nil {
		walk(reflect.ValueOf(s.Settings).Elem())
	}
	return qs
}
